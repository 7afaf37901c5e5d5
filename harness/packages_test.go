package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"bench/internal/golden"
)

// readOSRelease reads a sample /etc/os-release file of the repository's
// testdata, which the test of scripts/deps reads too.
func readOSRelease(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "os-release", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPackageTableCoversPrograms: every program a session may run has a
// row, with packages in every family.
func TestPackageTableCoversPrograms(t *testing.T) {
	for _, p := range programs {
		for _, f := range families {
			if len(programPackages(f, p.Name)) == 0 {
				t.Errorf("harness/packages.txt has no %s package for %s", f, p.Name)
			}
		}
	}
	for _, r := range packageRows {
		if r.Program != "-" && !slices.ContainsFunc(programs, func(p program) bool { return p.Name == r.Program }) {
			t.Errorf("harness/packages.txt names %s, which is no program of a session (\"-\" for a package the host needs)", r.Program)
		}
	}
	if got := Packages(Debian); !slices.Contains(got, "nginx-light") || !slices.Contains(got, "libnginx-mod-stream") || !slices.Contains(got, "iproute2") {
		t.Errorf("Packages(Debian) = %v", got)
	}
}

func TestOSFamilyAndAdvice(t *testing.T) {
	for _, c := range []struct {
		file   string
		family Family
		advice string // for tinyproxy and wrk
	}{
		{"debian-12", Debian, "apt-get install tinyproxy wrk"},
		{"ubuntu-24.04", Debian, "apt-get install tinyproxy wrk"},
		{"almalinux-10", RHEL, "dnf install tinyproxy wrk (from EPEL: dnf install epel-release first)"},
		{"rocky-9", RHEL, "dnf install tinyproxy wrk (from EPEL: dnf install epel-release first)"},
		{"fedora-42", RHEL, "dnf install tinyproxy wrk"},
		{"alpine-3.20", "", "sudo make deps"},
	} {
		rel := readOSRelease(t, c.file)
		if got := OSFamily(rel); got != c.family {
			t.Errorf("%s: family %q; want %q", c.file, got, c.family)
		}
		if got := InstallAdvice(rel, []string{"tinyproxy", "wrk"}); got != c.advice {
			t.Errorf("%s: advice %q; want %q", c.file, got, c.advice)
		}
	}
	rel := readOSRelease(t, "almalinux-10")
	if got := InstallAdvice(rel, []string{"nginx", "danted", "iperf3"}); got != "dnf install nginx nginx-mod-stream dante-server iperf3 (from EPEL: dnf install epel-release first)" {
		t.Errorf("advice for nginx, danted, iperf3 on AlmaLinux: %q", got)
	}
	if got := InstallAdvice(rel, []string{"iperf3", "no-such-tool"}); got != "dnf install iperf3 no-such-tool" {
		t.Errorf("advice without EPEL: %q", got)
	}
}

func TestPackageVersionArgv(t *testing.T) {
	if got := packageVersionArgv(Debian, "proxychains4"); !slices.Equal(got, []string{"dpkg-query", "-W", "-f=${Version}", "proxychains4"}) {
		t.Errorf("Debian: %q", got)
	}
	if got := packageVersionArgv(RHEL, "proxychains4"); !slices.Equal(got, []string{"rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", "proxychains-ng"}) {
		t.Errorf("RHEL: %q", got)
	}
	if got := packageVersionArgv("", "proxychains4"); got != nil {
		t.Errorf("unknown family: %q", got)
	}
}

// TestPackageTableFile: harness/packages.txt, which scripts/deps reads,
// is the table the declarations make (packageTableText); -update rewrites
// it from them.
func TestPackageTableFile(t *testing.T) {
	golden.Check(t, "packages.txt", []byte(packageTableText()))
}
