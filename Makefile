# The packaged proxies and load tools a session uses (Debian and Ubuntu names).
PACKAGES := nginx-light libnginx-mod-stream haproxy squid tinyproxy dante-server \
	stunnel4 wrk iperf3 proxychains4 openssl iproute2 ca-certificates

GO ?= go
BENCH_FLAGS ?= --scenario all

.PHONY: all build install deps test bench report

all: build

build:
	$(GO) build -o bin/bench ./cmd/bench

# install puts bench on the PATH.
install: build
	install -m 0755 bin/bench /usr/local/bin/bench

# deps installs the packaged proxies and tools without starting their
# services (a session starts its own instances in namespaces).
deps:
	@if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (sudo make deps)" >&2; exit 1; fi
	@set -e; \
	missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq; \
		ours=; \
		if [ ! -e /usr/sbin/policy-rc.d ]; then \
			printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; ours=1; \
		fi; \
		status=0; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing || status=$$?; \
		if [ -n "$$ours" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
		exit $$status; \
	fi

# test runs every test; as root the namespace, cgroup and proxy tests run too,
# one package at a time since they share the CPUs they measure.
test: deps
	$(GO) vet ./...
	$(GO) test -p 1 -count=1 -timeout 60m ./...

# bench is the main job: install what is missing, build, run a session.
bench: deps install
	bench run $(BENCH_FLAGS)

report: build
	./bin/bench report data/*.csv
