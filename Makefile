BENCH_FLAGS ?= --scenario all

# The Go toolchain: GO if given, else the one scripts/find-go finds (on PATH,
# in the sudo user's login shell, in /usr/local/go/bin, ...), looked up once
# and only by the targets that build. Without one, make stops with one line.
GO ?=
go_found = $(eval go_found := $$(shell sh scripts/find-go $$(GO)))$(go_found)
go = $(if $(filter error:,$(firstword $(go_found))),$(error $(wordlist 2,999,$(go_found))),$(go_found))

.PHONY: all toolchain build install deps test-deps modules test test-handicap vm-test bench report

all: build

# toolchain stops at once when there is no Go to build with.
toolchain:
	@: $(go)

# build records the checkout's commit in the binary (a session's metadata
# keeps it), even where GOFLAGS turns that off; and links it in as well
# (harness.linkedCommit), for a build whose VCS settings are absent (a
# tree whose .git go build cannot read). Outside a checkout, none.
git_commit = $(shell git rev-parse HEAD 2>/dev/null)
git_modified = $(shell git status --porcelain 2>/dev/null | grep -q . && echo true)
build: toolchain
	$(go) build -buildvcs=auto -ldflags "-X bench/harness.linkedCommit=$(git_commit) -X bench/harness.linkedModified=$(git_modified)" -o bin/bench ./cmd/bench

# install puts bench on the PATH.
install: build
	install -m 0755 bin/bench /usr/local/bin/bench

# deps installs the packaged proxies and tools of harness/packages.txt
# that are missing, with apt-get or dnf as /etc/os-release says, without
# starting their services (a session starts its own instances in
# namespaces). It needs nothing built.
deps:
	@sh scripts/deps

# test-deps installs the programs only the tests run (headless Chromium
# for the report's pages, shellcheck for the workflows' scripts), from
# internal/testenv/packages.txt, the same way.
test-deps:
	@sh scripts/deps --tests

# modules downloads the Go modules the build needs.
modules: toolchain
	$(go) mod download

# test runs every test; as root the namespace, cgroup and proxy tests run too,
# one package at a time since they share the CPUs they measure.
test: toolchain deps test-deps
	$(go) vet ./...
	$(go) test -p 1 -count=1 -timeout 60m ./...

# test-handicap runs every test once more with the machine made slow and
# noisy on purpose, as a benchmark's load makes it: real-time busy loops
# (internal/testenv/rthog) hold CPU 0 175 ms of every 700 ms and CPU 1
# 275 ms of every 1100 ms, so that their phases move against each other
# and against the tests' own periods. It fails when a loop could not be
# made real-time or ran less than 90% of its hold, rather than passing
# unloaded. PKGS, RUN and COUNT narrow it by hand, e.g.
#   make test-handicap PKGS=./harness/mix RUN=Sweep COUNT=20
HANDICAP ?= -hold 0:175ms/700ms -hold 1:275ms/1100ms
PKGS ?= ./...
RUN ?= .
COUNT ?= 1
test-handicap: toolchain deps test-deps
	$(go) build -o bin/rthog ./internal/testenv/rthog
	bin/rthog $(HANDICAP) -for 75m -- $(go) test -p 1 -count=$(COUNT) -run '$(RUN)' -timeout 70m $(PKGS)

# vm-test boots Debian 13 under qemu (systemd, cgroup v2 only, 8 vCPUs,
# no network device) and runs bench there as users do: from a systemd
# service and from a login session's sudo, a service stopped in the
# middle of its session, one in a slice of fewer CPUs, and a killed
# session followed by bench clean (vmtest/). The root image is built once per change of
# its inputs and kept in VMTEST_CACHE.
VMTEST_CACHE ?= /var/cache/bench-vm
vm-test: toolchain
	@sh scripts/vm-deps
	$(go) vet -tags vmtest ./vmtest
	cd vmtest && VMTEST_CACHE=$(VMTEST_CACHE) $(go) test -tags vmtest -count=1 -timeout 80m -v .

# bench is the main job: install what is missing, build, run a session.
bench: toolchain deps install
	bench run $(BENCH_FLAGS)

report: build
	./bin/bench report data/*.csv
