// Package hotproxy builds, for the profile tests, a stand-in proxy whose
// CPU goes to a function it names (HotFunc): run without arguments it
// spins in it; run as tinyproxy is (-d -c CONF, the adapter's rendered
// configuration: Listen, Port, Bind) it is an HTTP forward proxy that
// spins in it for every request it passes on, so that a profile of its
// CPUs under load must find that function at the leaf of nearly every
// sample of the proxy's.
package hotproxy

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"bench/internal/child"
)

// HotFunc is the function the stand-in spends its CPU in, as a profile
// names it.
const HotFunc = "main.benchHotLoop"

// Version is what the stand-in prints for -v, as tinyproxy does.
const Version = "tinyproxy 0.0-hotproxy"

// source is the stand-in: the standard library only.
const source = `package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

var sink uint64

// benchHotLoop spins for d; d < 0 spins for ever.
//
//go:noinline
func benchHotLoop(d time.Duration) {
	start := time.Now()
	for i := 0; ; i++ {
		sink += uint64(i) * uint64(i)
		if i%4096 == 0 && d >= 0 && time.Since(start) >= d {
			return
		}
	}
}

// spinPerRequest is a time, not a count of rounds, so that on any
// machine it is many times what passing a request of 1 kB on costs the
// proxy, the kernel's work included: about nine samples in ten of the
// stand-in's are this function's however fast the CPU or costly the
// kernel (264 of 288 on a machine whose kernel's interrupt handling
// under a hypervisor took the count of 800,000 rounds down to 183 of 292).
const spinPerRequest = 2 * time.Millisecond

func main() {
	if len(os.Args) == 1 {
		benchHotLoop(-1)
	}
	if os.Args[1] == "-v" {
		fmt.Println("` + Version + `")
		return
	}
	conf := map[string]string{}
	for i, a := range os.Args {
		if a == "-c" && i+1 < len(os.Args) {
			f, err := os.Open(os.Args[i+1])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " "); ok {
					conf[k] = strings.Trim(v, "\"")
				}
			}
			f.Close()
		}
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 4096, DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(conf["Bind"])}}).DialContext}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		benchHotLoop(spinPerRequest)
		r.RequestURI = ""
		resp, err := tr.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	err := http.ListenAndServe(net.JoinHostPort(conf["Listen"], conf["Port"]), h)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
`

// Build builds the stand-in in a folder of the test's and returns its
// path.
func Build(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hotproxy")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := child.CombinedOutput(cmd); err != nil {
		t.Fatalf("go build hotproxy: %v\n%s", err, out)
	}
	// The session runs the proxy as root from its own folder, and
	// a test's temporary folder is the test's user's.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
