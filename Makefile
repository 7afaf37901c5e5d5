BENCH_FLAGS ?= --scenario all

# The Go toolchain: GO if given, else the one scripts/find-go finds (on PATH,
# in the sudo user's login shell, in /usr/local/go/bin, ...), looked up once
# and only by the targets that build. Without one, make stops with one line.
GO ?=
go_found = $(eval go_found := $$(shell sh scripts/find-go $$(GO)))$(go_found)
go = $(if $(filter error:,$(firstword $(go_found))),$(error $(wordlist 2,999,$(go_found))),$(go_found))

.PHONY: all toolchain build install deps test-deps modules vet test test-unloaded test-handicap vm-deps vm-image vm-test bench report

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
# Built without cgo: a session copies bench to the hosts of a hosts file
# (docs/hosts.md), which need only the same architecture, not this libc.
build: toolchain
	CGO_ENABLED=0 $(go) build -buildvcs=auto -ldflags "-X bench/harness.linkedCommit=$(git_commit) -X bench/harness.linkedModified=$(git_modified)" -o bin/bench ./cmd/bench

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
# for the report's pages, shellcheck for the workflows' scripts, OpenSSH's
# server for the hosts' lab), from
# internal/testenv/packages.txt, the same way.
test-deps:
	@sh scripts/deps --tests

# modules downloads the Go modules the build needs.
modules: toolchain
	$(go) mod download

# The test lanes: every package of the module is in exactly one of the
# two lists below, one package a line (TestTestLanes holds them to
# go list ./...). A package whose tests measure time or CPU, sample a
# process, or run namespaces, cgroups, proxies or sessions goes in
# HANDICAPPED_PKGS: it runs one package at a time (they share the CPUs
# they measure, and the ports and prefixes of the host) under the
# handicap below, as a benchmark's load makes the machine. Every other
# package goes in UNLOADED_PKGS: its tests measure nothing, and it runs
# unloaded, two packages at a time.
HANDICAPPED_PKGS += ./cmd/bench
HANDICAPPED_PKGS += ./harness
HANDICAPPED_PKGS += ./harness/host
HANDICAPPED_PKGS += ./harness/mix
HANDICAPPED_PKGS += ./harness/mix/mixtest
HANDICAPPED_PKGS += ./harness/tlswrap
HANDICAPPED_PKGS += ./internal/hotproxy
HANDICAPPED_PKGS += ./internal/nettest
HANDICAPPED_PKGS += ./internal/testenv
HANDICAPPED_PKGS += ./internal/testenv/rthog
HANDICAPPED_PKGS += ./proxies
HANDICAPPED_PKGS += ./scenarios

UNLOADED_PKGS += .
UNLOADED_PKGS += ./harness/pace
UNLOADED_PKGS += ./harness/sweep
UNLOADED_PKGS += ./history
UNLOADED_PKGS += ./inputerr
UNLOADED_PKGS += ./internal/accept
UNLOADED_PKGS += ./internal/child
UNLOADED_PKGS += ./internal/chromium
UNLOADED_PKGS += ./internal/golden
UNLOADED_PKGS += ./internal/hostlab
UNLOADED_PKGS += ./internal/nights
UNLOADED_PKGS += ./internal/text
UNLOADED_PKGS += ./profile
UNLOADED_PKGS += ./report
UNLOADED_PKGS += ./report/changepoint
UNLOADED_PKGS += ./report/chart
UNLOADED_PKGS += ./report/compare
UNLOADED_PKGS += ./report/htmldoc
UNLOADED_PKGS += ./report/internal/reporttest
UNLOADED_PKGS += ./report/page
UNLOADED_PKGS += ./report/profiles
UNLOADED_PKGS += ./report/trend
UNLOADED_PKGS += ./results

# test runs go vet and every test once: the unloaded lane, then the
# handicapped lane (test-unloaded, then test-handicap with its defaults).
# Run it as root (sudo make test): the handicap's loops are real-time,
# and the namespace, cgroup and proxy tests run only as root.
test: toolchain deps test-deps
	$(go) vet ./...
	$(unloaded_lane)
	$(go) build -o bin/rthog ./internal/testenv/rthog
	$(handicapped_lane) -count=1 $(HANDICAPPED_PKGS)

# vet is go vet of every package.
vet: toolchain
	$(go) vet ./...

# test-unloaded runs the tests of UNLOADED_PKGS, two packages at a time,
# with no handicap.
unloaded_lane = $(go) test -p 2 -count=1 -timeout 30m $(UNLOADED_PKGS)
test-unloaded: toolchain deps test-deps
	$(unloaded_lane)

# test-handicap runs the tests of HANDICAPPED_PKGS with the machine made
# slow and noisy on purpose, as a benchmark's load makes it: real-time
# busy loops (internal/testenv/rthog) hold CPU 0 175 ms of every 700 ms
# and CPU 1 275 ms of every 1100 ms, so that their phases move against
# each other and against the tests' own periods. It fails when a loop
# could not be made real-time or ran less than 90% of its hold, rather
# than passing unloaded. Nothing else may load the machine meanwhile.
# PKGS, RUN and COUNT narrow or widen it by hand, e.g.
#   make test-handicap PKGS=./harness/mix RUN=Sweep COUNT=20
#   make test-handicap PKGS=./...
HANDICAP ?= -hold 0:175ms/700ms -hold 1:275ms/1100ms
handicapped_lane = bin/rthog $(HANDICAP) -for 75m -- $(go) test -p 1 -timeout 70m
PKGS ?= $(HANDICAPPED_PKGS)
RUN ?= .
COUNT ?= 1
test-handicap: toolchain deps test-deps
	$(go) build -o bin/rthog ./internal/testenv/rthog
	$(handicapped_lane) -count=$(COUNT) -run '$(RUN)' $(PKGS)

# vm-test boots Debian 13 under qemu (systemd, cgroup v2 only, 8 vCPUs,
# no network device) and runs bench there as users do: from a systemd
# service and from a login session's sudo, a service stopped in the
# middle of its session, one in a slice of fewer CPUs, a killed session
# followed by bench clean, and a session across the hosts' lab, each
# host's roles in a scope of its own (vmtest/). Its root image (vm-image)
# is built once per change of its inputs and kept in VMTEST_CACHE.
VMTEST_CACHE ?= /var/cache/bench-vm
vm-test: toolchain vm-image
	$(go) vet -tags vmtest ./vmtest ./cmd/bench
	cd vmtest && VMTEST_CACHE=$(VMTEST_CACHE) $(go) test -tags vmtest -count=1 -timeout 80m -v .

# vm-deps installs what the VM test needs on the host: qemu, debootstrap,
# e2fsprogs.
vm-deps:
	@sh scripts/vm-deps

# vm-image builds the VM test's root image into VMTEST_CACHE, or finds
# it there (vmtest/image.sh: one build at a time, under a lock), and
# prints its directory. It needs nothing of Go.
vm-image: vm-deps
	bash vmtest/image.sh $(VMTEST_CACHE)

# bench is the main job: install what is missing, build, run a session.
bench: toolchain deps install
	bench run $(BENCH_FLAGS)

report: build
	./bin/bench report data/*.csv
