package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/internal/testenv"

	"github.com/rhysd/actionlint"

	"bench/internal/child"
)

// nightlyStep is the step of the nightly job whose id is id.
func nightlyStep(t *testing.T, id string) *actionlint.Step {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(".github", "workflows", "nightly.yml"))
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatalf("nightly.yml: %v", errs[0])
	}
	for _, st := range wf.Jobs["session"].Steps {
		if st.ID != nil && st.ID.Value == id {
			return st
		}
	}
	t.Fatalf("nightly.yml has no step %q in its job session", id)
	return nil
}

// stepScript writes the run: script of the nightly step id to a file
// and returns its path; every variable in vars is one the step's env:
// sets, and the script reads nothing else of the workflow's expressions.
func stepScript(t *testing.T, id string, vars ...string) string {
	t.Helper()
	st := nightlyStep(t, id)
	run, ok := st.Exec.(*actionlint.ExecRun)
	if !ok || run.Run == nil {
		t.Fatalf("the nightly step %q runs no script", id)
	}
	if strings.Contains(run.Run.Value, "${{") {
		t.Fatalf("the nightly step %q has an expression in its script; give it in its env:", id)
	}
	for _, v := range vars {
		if st.Env == nil || st.Env.Vars[strings.ToLower(v)] == nil {
			t.Errorf("the nightly step %q does not set %s", id, v)
		}
	}
	p := filepath.Join(t.TempDir(), id+".sh")
	if err := os.WriteFile(p, []byte(run.Run.Value), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// nightlyRunner is a runner's workspace after a night's session: the
// session in results/, bench on PATH (built from this checkout, bench
// trend a stand-in that records its arguments and exits $TREND_STATUS),
// a sudo that runs its command, and a server of bare repositories that
// GITHUB_SERVER_URL names.
type nightlyRunner struct {
	work, server string
	env          []string
}

func newNightlyRunner(t *testing.T) *nightlyRunner {
	t.Helper()
	testenv.NeedProgram(t, "git")
	root := t.TempDir()
	r := &nightlyRunner{work: filepath.Join(root, "work"), server: filepath.Join(root, "server")}
	bin := filepath.Join(root, "bin")
	if out, err := child.CombinedOutput(exec.Command("go", "build", "-o", filepath.Join(bin, "bench.real"), "./cmd/bench")); err != nil {
		t.Fatalf("go build ./cmd/bench: %v\n%s", err, out)
	}
	for name, script := range map[string]string{
		"bench": `#!/bin/bash
if [ "$1" = trend ]; then echo "$*" >> "$TREND_ARGS"; echo "trend of $*"; exit "${TREND_STATUS:-0}"; fi
exec "$(dirname "$0")/bench.real" "$@"
`,
		"sudo": "#!/bin/sh\nexec \"$@\"\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	results := filepath.Join(r.work, "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	session, _ := filepath.Glob(filepath.Join("data", "epyc-2-cpus-2026-12-05*"))
	if out, err := child.CombinedOutput(exec.Command("cp", append(append([]string{"-r"}, session...), results)...)); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	home := filepath.Join(root, "home")
	r.env = []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GITHUB_SERVER_URL=file://" + r.server, "GITHUB_REPOSITORY=owner/bench", "GITHUB_RUN_ID=42",
		"GITHUB_OUTPUT=" + filepath.Join(root, "output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(root, "summary"),
		"TREND_ARGS=" + filepath.Join(root, "trend-args"),
		"HISTORY_REPO=owner/history", "HISTORY_BRANCH=results", "HISTORY_TOKEN=not-a-token",
		"PROXY_COMMITS=haproxy splice-auto=abc123\n",
	}
	return r
}

// bare makes the bare repository owner/history on the server and returns
// its path.
func (r *nightlyRunner) bare(t *testing.T) string {
	t.Helper()
	p := filepath.Join(r.server, "owner", "history.git")
	r.git(t, "", "init", "--quiet", "--bare", p)
	return p
}

// git runs git in dir with the runner's environment and returns its output.
func (r *nightlyRunner) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, r.env
	out, err := child.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// run runs the script as Actions runs a step's (bash -eo pipefail) in the
// workspace, with extra in its environment; it returns what the step
// printed and its exit status.
func (r *nightlyRunner) run(t *testing.T, script string, extra ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir, cmd.Env = r.work, append(slices.Clone(r.env), extra...)
	out, err := child.CombinedOutput(cmd)
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// output is what the steps wrote to a file GITHUB_* names.
func (r *nightlyRunner) output(t *testing.T, name string) string {
	t.Helper()
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			b, _ := os.ReadFile(v)
			return string(b)
		}
	}
	t.Fatalf("no %s", name)
	return ""
}

// The night's folder in the history, as bench history add files the
// session in data/.
const nightFolder = "epyc-2-cpus/2026-12-05-2026-12-05/"

// TestNightlyHistory: the nightly step that keeps the night clones the
// history's branch (or begins it), files the session with bench history
// add and pushes it; the step after it runs bench trend --fail-new 10%
// over the clone and fails as it does.
func TestNightlyHistory(t *testing.T) {
	history := stepScript(t, "history", "HISTORY_REPO", "HISTORY_BRANCH", "HISTORY_TOKEN", "PROXY_COMMITS")
	trend := stepScript(t, "trend", "HISTORY_DIR")
	const before, racing = "arm64/2026-11-29-2026-11-29-nightly/arm64-2026-11-29-nightly.csv", "arm64/2026-11-30-2026-11-30-nightly/arm64-2026-11-30-nightly.csv"
	for _, c := range []struct {
		name   string
		others []string // the nights the branch holds before, if any
		race   bool     // the last of them lands between the clone and the push
	}{
		{"the first night begins the branch", nil, false},
		{"a night goes on top of the branch", []string{before}, false},
		{"a night goes on top of the other machine's that came first", []string{before, racing}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newNightlyRunner(t)
			bare := r.bare(t)
			if len(c.others) > 0 {
				seed := t.TempDir()
				r.git(t, seed, "init", "--quiet", "-b", "results")
				for _, night := range c.others {
					if err := os.MkdirAll(filepath.Join(seed, filepath.Dir(night)), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(seed, night), []byte("machine\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					r.git(t, seed, "add", ".")
					r.git(t, seed, "-c", "user.name=n", "-c", "user.email=n@example.com", "commit", "--quiet", "-m", night)
				}
				if !c.race {
					r.git(t, seed, "push", "--quiet", bare, "HEAD:refs/heads/results")
				} else {
					// The racing night waits as the branch racing; the
					// first push moves results to it and is refused, as
					// the server refuses one that is not a fast-forward.
					r.git(t, seed, "push", "--quiet", bare, "HEAD~1:refs/heads/results", "HEAD:refs/heads/racing")
					hook := "#!/bin/sh\nif [ ! -e raced ]; then\n  touch raced\n  env -u GIT_QUARANTINE_PATH git update-ref refs/heads/results refs/heads/racing\n  echo 'not a fast-forward' >&2\n  exit 1\nfi\n"
					if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, status := r.run(t, history)
			if status != 0 || strings.Contains(out, "::warning::") {
				t.Fatalf("the history step: exit %d; want 0 and no warning\n%s", status, out)
			}
			files := strings.Fields(r.git(t, "", "--git-dir", bare, "ls-tree", "-r", "--name-only", "results"))
			for _, want := range []string{
				nightFolder + "history.json",
				nightFolder + "epyc-2-cpus-2026-12-05.csv",
				nightFolder + "epyc-2-cpus-2026-12-05.csv.meta.json",
				nightFolder + "epyc-2-cpus-2026-12-05.html",
				nightFolder + "epyc-2-cpus-2026-12-05.runs/0001-no-proxy-http-ka-1k-1.load.wrk.out",
			} {
				if !slices.Contains(files, want) {
					t.Errorf("the branch results lacks %s; it holds %d files: %q...", want, len(files), files[:min(len(files), 8)])
				}
			}
			for _, night := range c.others {
				if !slices.Contains(files, night) {
					t.Errorf("the branch results lost the night before, %s", night)
				}
			}
			if entry := r.git(t, "", "--git-dir", bare, "show", "results:"+nightFolder+"history.json"); !strings.Contains(entry, `"haproxy splice-auto": "abc123"`) {
				t.Errorf("history.json = %s; want the commit PROXY_COMMITS gives", entry)
			}
			if got := r.output(t, "GITHUB_OUTPUT"); got != "dir=history\n" {
				t.Fatalf("the history step's outputs: %q; want dir=history", got)
			}

			// The trend over the clone: the job fails when bench trend
			// does, and the summary has what it printed either way.
			for _, trendStatus := range []int{0, 1} {
				out, status := r.run(t, trend, "HISTORY_DIR=history", "TREND_STATUS="+string(rune('0'+trendStatus)))
				if status != trendStatus {
					t.Errorf("the trend step, bench trend exiting %d: exit %d\n%s", trendStatus, status, out)
				}
			}
			if got := r.output(t, "TREND_ARGS"); got != "trend --fail-new 10% history\ntrend --fail-new 10% history\n" {
				t.Errorf("bench trend ran as %q; want trend --fail-new 10%% history, twice", got)
			}
			if got := r.output(t, "GITHUB_STEP_SUMMARY"); !strings.Contains(got, "trend of trend --fail-new 10% history") {
				t.Errorf("the summary lacks the trend:\n%s", got)
			}
		})
	}
}

// TestNightlyHistoryRefused: a history that refuses the push gives a
// warning and does not fail the job, and the night is in the clone for
// the trend; a history that cannot be read gives a warning, and no trend.
func TestNightlyHistoryRefused(t *testing.T) {
	history := stepScript(t, "history")
	t.Run("push refused", func(t *testing.T) {
		r := newNightlyRunner(t)
		bare := r.bare(t)
		// a server that refuses every push, as one does a token without
		// contents: write
		hook := filepath.Join(bare, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'permission denied' >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		out, status := r.run(t, history)
		if status != 0 || !strings.Contains(out, "::warning::the night could not be pushed to results of owner/history") {
			t.Fatalf("the history step, its push refused: exit %d; want 0 and a warning\n%s", status, out)
		}
		if heads := r.git(t, "", "--git-dir", bare, "branch", "--list"); heads != "" {
			t.Errorf("the refused history has branches %q", heads)
		}
		if _, err := os.Stat(filepath.Join(r.work, "history", nightFolder, "history.json")); err != nil {
			t.Errorf("the night is not in the clone for the trend: %v", err)
		}
		if got := r.output(t, "GITHUB_OUTPUT"); got != "dir=history\n" {
			t.Errorf("the history step's outputs: %q; want dir=history, for the trend", got)
		}
	})
	t.Run("no history to read", func(t *testing.T) {
		r := newNightlyRunner(t)
		out, status := r.run(t, history)
		if status != 0 || !strings.Contains(out, "::warning::the history owner/history cannot be read") {
			t.Fatalf("the history step, no repository: exit %d; want 0 and a warning\n%s", status, out)
		}
		if got := r.output(t, "GITHUB_OUTPUT"); got != "" {
			t.Errorf("the history step's outputs: %q; want none, and no trend", got)
		}
	})
}
