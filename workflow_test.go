package bench_test

import (
	"bench/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// TestWorkflowsLint: the GitHub Actions workflows are valid for the
// schema of workflows and their expressions, as actionlint checks them;
// the run: scripts go through shellcheck too (make test-deps installs it).
func TestWorkflowsLint(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(".github", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflow under .github/workflows: %v", err)
	}
	var out strings.Builder
	// The configuration names the self-hosted runners' labels.
	opts := &actionlint.LinterOptions{ConfigFile: filepath.Join(".github", "actionlint.yaml")}
	testenv.NeedProgram(t, "shellcheck")
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatal(err)
	}
	opts.Shellcheck = sc
	l, err := actionlint.NewLinter(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}

// TestNightlyWorkflow: the nightly job runs a whole session on each
// machine, keeps its files, compares it with the previous night and fails
// on a regression the history's trend finds (TestNightlyHistory runs the
// history's steps).
func TestNightlyWorkflow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(".github", "workflows", "nightly.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"arch: [arm64, x86_64]",
		"runs-on: [self-hosted, linux,",
		"sudo make deps",
		"sudo bench run --scenario all",
		"uses: actions/upload-artifact@v4",
		"gh run download",
		"bench compare previous/*.csv -- results/*.csv",
		"bench history add",
		"bench trend --fail-new 10%",
		// a session that completed with failed runs (exit 3) goes on to
		// the report, the upload and the comparison
		"|| status=$?",
		"3) echo \"::warning::",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("nightly.yml lacks %q", want)
		}
	}
	// the comparison is for the summary page; the trend fails the job
	if strings.Contains(string(b), "--fail-over") {
		t.Errorf("nightly.yml fails on bench compare --fail-over; the trend is the fail rule")
	}
}
