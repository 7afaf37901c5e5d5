#!/bin/bash
# guest.sh runs inside the VM, from the service benchtest.service, with
# the test's disk mounted at /mnt/io (bench, this script, the settings
# the host chose in /mnt/io/env). It runs bench the ways users run it,
# without --cgroup-parent, and leaves what the host checks in /mnt/io/out:
#
#   service/  a session run from this service, as a CI runner runs it
#   login/    a session run with sudo from a login session of user tester
#   stopped/  a session from a service stopped mid-run (systemctl stop),
#             and next/ the short session run right after it
#   cpus.log  a session from a service in a slice of CPUs 0-3: refused
#   killed/   a session killed with SIGKILL mid-run, then bench clean
#   lab.log   bench's test of the hosts' lab under systemd
#   *.left    what was left after each (namespaces, cgroups, units,
#             processes): empty files when nothing was
#   info      the VM's CPUs, kernel, cgroup mounts, OpenSSL
#   check     what bench check says; plan, what bench run --dry-run does
#
# Every step's output goes to the console, which the host keeps.
set -u
io=/mnt/io
out=$io/out
mkdir -p "$out"
# shellcheck source=/dev/null
. "$io/env"
install -m 0755 "$io/bench" /usr/local/bin/bench
cp "$io/columns.conf" /etc/bench-columns.conf

echo "vmtest: guest up after $(cut -d' ' -f1 /proc/uptime) s"
{
	echo "cpus $(nproc)"
	echo "kernel $(uname -r)"
	echo "cgroup $(stat -f -c %T /sys/fs/cgroup)"
	echo "openssl $(openssl version)"
	echo "own $(cat /proc/self/cgroup)"
} | tee "$out/info"

# The test of the test: with BREAK=delegation bench cannot reach systemd,
# so it gets no delegated scope; the host must then see the test fail.
if [ "${BREAK:-}" = delegation ]; then
	mount --bind /dev/null /run/systemd/private
	mount --bind /dev/null /run/dbus/system_bus_socket
fi

# programs: the processes of the programs a session runs, one line each;
# the distribution's own services (nginx.service, haproxy.service, ...)
# run from boot, and are in the baseline.
programs() {
	for p in nginx haproxy stunnel4 stunnel squid tinyproxy iperf3 wrk openssl proxychains4; do
		pgrep -x "$p" | sed "s/^/process $p /"
	done
}
programs >"$out/baseline"

# left NAME: what a session with the default prefix left, one line each.
left() {
	{
		ip netns list | grep '^bench-' | sed 's/^/namespace /'
		ip -o link show | grep -o 'bench-[a-z0-9-]*' | sed 's/^/link /'
		find /sys/fs/cgroup -name 'bench-*' -type d | sed 's/^/cgroup /'
		systemctl list-units --all --no-legend --plain 'bench-*' | sed 's/^/unit /'
		programs | grep -vxF -f "$out/baseline"
		ls /run | grep '^bench-run' | sed 's/^/run directory /'
	} >"$out/$1.left" 2>&1
	echo "vmtest: left after $1: $(wc -l <"$out/$1.left")"
	cat "$out/$1.left"
}

# What a user sees first: bench check, and the plan of a whole session.
bench check >"$out/check" 2>&1
bench run --dry-run >"$out/plan" 2>&1
cat "$out/check" "$out/plan"

# what both sessions' runs share; each names its scenarios and columns
common=(--columns /etc/bench-columns.conf --machine vm --reps 1
	--duration "$DURATION" --warmup "$WARMUP" --mix-conns "$MIX_CONNS")
flags=("${common[@]}" --scenario "$SCENARIOS" --proxy "$PROXIES")

echo "vmtest: session from the service (bench in $(cut -d: -f3 /proc/self/cgroup))"
bench run "${flags[@]}" --out "$out/service" --session service --proxy-cpu "$PROXY_CPU" 2>&1 |
	tee "$out/service.log"
echo "vmtest: service session exited ${PIPESTATUS[0]}"
bench clean >>"$out/service.log" 2>&1
left service

echo "vmtest: session from a login session"
# su -l opens a login session (pam_systemd: session-N.scope in
# user-1000.slice) holding su, the shell, sudo and bench.
login=("${common[@]}" --scenario "$LOGIN_SCENARIOS" --proxy "$LOGIN_PROXIES")
su -l tester -c "cat /proc/self/cgroup; sudo bench run ${login[*]@Q} --out $out/login --session login" 2>&1 |
	tee "$out/login.log"
echo "vmtest: login session exited ${PIPESTATUS[0]}"
bench clean >>"$out/login.log" 2>&1
left login

# measuring: whether a wrk of a 30 s window is running (the warm-up's
# wrk of 1 s ends before the state of the scope is read).
measuring() {
	for p in $(pgrep -x wrk); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- '-d 30s ' && return 0
	done
	return 1
}

# waitload PID: waits until a session's measured load is running, or its
# bench has gone.
waitload() {
	for _ in $(seq 600); do
		measuring && break
		kill -0 "$1" 2>/dev/null || break # it did not start
		sleep 0.5
	done
}

echo "vmtest: a session from a service stopped in the middle"
# A CI runner's job: a service whose main process is a shell running
# bench. Stopping the service stops the session's scope, bound to it,
# first: systemctl returns once bench has torn down.
mkdir -p "$out/stopped"
systemd-run --quiet --collect --unit=benchjob /bin/sh -c "bench run --machine vm --reps 3 --duration 30s \
	--warmup 1s --scenario http-ka-1k --proxy nginx --out $out/stopped --session stopped >$out/stopped.log 2>&1"
waitload "$(systemctl show -P MainPID benchjob.service)"
{
	systemctl show -p Slice -p BindsTo -p After -p ActiveState bench-session.scope
	pgrep -x wrk | sed 's/^/wrk /'
} >"$out/stopped.scope"
start=$(date +%s)
systemctl stop benchjob.service
echo "vmtest: systemctl stop took $(($(date +%s) - start)) s" >>"$out/stopped.scope"
cat "$out/stopped.log" "$out/stopped.scope"
left stopped
# The next session: the lock is free and nothing is in the way.
bench run --machine vm --reps 1 --duration 2s --warmup 1s --scenario http-ka-1k --proxy 'no proxy' \
	--out "$out/next" --session next >"$out/next.log" 2>&1
echo "vmtest: next session exited $?" | tee -a "$out/next.log"

echo "vmtest: a session from a service in a slice of CPUs 0-3"
# The default layout wants CPUs 4-7 too: refused, naming the cpuset.
systemctl set-property --runtime vmtest-cpus.slice AllowedCPUs=0-3
systemd-run --quiet --collect --wait --unit=benchcpus --slice=vmtest-cpus.slice /bin/sh -c \
	"bench run --machine vm --reps 1 --scenario http-ka-1k --proxy nginx --out $out/cpus --session cpus >$out/cpus.log 2>&1; \
	echo \"vmtest: cpus session exited \$?\" >>$out/cpus.log"
cat "$out/cpus.log"
left cpus

echo "vmtest: a session killed with SIGKILL in the middle"
mkdir -p "$out/killed"
bench run --machine vm --reps 3 --duration 30s --warmup 1s --scenario http-ka-1k --proxy nginx \
	--out "$out/killed" --session killed >"$out/killed.log" 2>&1 &
pid=$!
# In the middle: its proxy is up and the load is running.
waitload "$pid"
sleep 2
{
	echo "before the kill:"
	systemctl list-units --all --no-legend --plain 'bench-*'
	find /sys/fs/cgroup -name 'bench-*' -type d
} >>"$out/killed.log"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
echo "vmtest: bench clean after the kill" >>"$out/killed.log"
bench clean >>"$out/killed.log" 2>&1
echo "vmtest: bench clean exited $?" >>"$out/killed.log"
cat "$out/killed.log"
left killed

echo "vmtest: the hosts' lab under systemd"
# Three hosts, each a network namespace running its own sshd, sharing
# this systemd: a session across them, then one whose service is stopped
# (cmd/bench/vmlab_test.go).
"$io/bench.test" -test.run '^TestLabUnderSystemd$' -test.v -test.count 1 -test.timeout 30m >"$out/lab.log" 2>&1
echo "vmtest: lab test exited $?" >>"$out/lab.log"
cat "$out/lab.log"
echo "vmtest: done"
