#!/usr/bin/env bash
# image.sh builds the VM test's Debian 13 root: systemd as init, the
# kernel, and the packages of harness/packages.txt installed by
# scripts/deps as a user's `make deps` installs them. It is cached by the
# hash of what goes into it, so a second run with the same inputs only
# prints where the image is.
#
#   vmtest/image.sh CACHE_DIR     prints the image's directory
#
# The directory holds root.img (ext4, the root file system), vmlinuz and
# initrd.img. The packages come from the mirror the host's apt sources
# name; nothing else is fetched. Needs root, debootstrap, mke2fs and
# unshare; one build runs at a time, and a killed one leaves nothing
# mounted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cache=${1:?usage: vmtest/image.sh CACHE_DIR}
suite=trixie

# The mirror: the first Debian archive the host's apt sources name.
mirror=$(grep -rhoE '(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
	/etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
	grep -oE 'https?://[^[:space:]]+' | head -n 1 || true)
if [ -z "$mirror" ]; then
	echo "vmtest: no Debian archive in the host's apt sources to build the VM's root from" >&2
	exit 1
fi

key=$(cat "$here/image.sh" "$top/scripts/deps" "$top/harness/packages.txt" | sha256sum | cut -c1-16)
dir="$cache/$suite-$key"
if [ -z "${VMTEST_PRIVATE_MOUNTS:-}" ]; then
	mkdir -p "$cache"
	# One builder at a time: the lock is held, through the exec below,
	# until the image is in place, so any build.* found here is a
	# killed builder's.
	exec 9>"$cache/.lock"
	flock 9
	for old in "$cache"/build.*; do
		[ -d "$old" ] || continue
		# A builder from before the private namespace below left its
		# bind mounts of the host's /proc, /sys and /dev when it was
		# killed: a plain rm -rf would go through them and delete the
		# host's device nodes. Unmount them (deepest first), and never
		# cross into another file system.
		findmnt -rn -o TARGET | { grep -F "$old/" || true; } | sort -r | while read -r m; do umount -l "$m"; done
		echo "vmtest: removing $old, left by a build that did not finish" >&2
		rm -rf --one-file-system "$old"
	done
	if [ -s "$dir/root.img" ] && [ -s "$dir/vmlinuz" ] && [ -s "$dir/initrd.img" ]; then
		echo "$dir"
		exit 0
	fi
	for p in debootstrap mke2fs unshare; do
		command -v "$p" >/dev/null || { echo "vmtest: $p not found: apt-get install debootstrap e2fsprogs util-linux" >&2; exit 1; }
	done
	# The build mounts /proc, /sys and /dev inside the root it makes
	# (debootstrap does, and so does the chroot below): in a mount
	# namespace of its own, those mounts are never the host's and end
	# with the build however it ends, SIGKILL included.
	VMTEST_PRIVATE_MOUNTS=1 exec unshare --mount --propagation private bash "$here/image.sh" "$@"
fi
work=$(mktemp -d "$cache/build.XXXXXX")
root="$work/root"
mounted=()
cleanup() {
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT

echo "vmtest: building the $suite root from $mirror (once per change of its inputs)" >&2
# systemd as init; logind, D-Bus and PAM's systemd module make the login
# sessions a user's sudo runs in; sudo for that user; OpenSSH's server
# for the hosts' lab, whose hosts each run one of their own.
debootstrap --variant=minbase \
	--include=systemd,systemd-sysv,udev,dbus,libpam-systemd,sudo,linux-image-amd64,kmod,procps,iproute2,e2fsprogs,openssh-server \
	"$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -n 30 "$work/debootstrap.log" >&2
	exit 1
}

# The packages of a session, installed as make deps installs them on a
# user's machine, skipping (with a warning) what the release lacks.
mkdir -p "$root/tmp/bench/scripts" "$root/tmp/bench/harness"
cp "$top/scripts/deps" "$root/tmp/bench/scripts/"
cp "$top/harness/packages.txt" "$root/tmp/bench/harness/"
for m in proc sys dev; do
	mount --bind "/$m" "$root/$m"
	mounted+=("$root/$m")
done
chroot "$root" sh /tmp/bench/scripts/deps >&2
chroot "$root" apt-get clean
for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}"; done
mounted=()
rm -rf "$root/tmp/bench"

echo bench-vm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 bench-vm\n' >"$root/etc/hosts"
printf '/dev/vda / ext4 defaults 0 1\n' >"$root/etc/fstab"
# root logs in on the serial console without a password (the VM has no
# network device); a user of its own runs sudo from a login session.
chroot "$root" passwd -d root >/dev/null
chroot "$root" useradd -m -s /bin/bash tester
printf 'tester ALL=(ALL) NOPASSWD: ALL\n' >"$root/etc/sudoers.d/tester"
# The test's own unit: it runs the script of the second disk, the
# runner's way (a service), and powers the VM off when it ends (qemu
# runs with -no-reboot, so that ends qemu).
cat >"$root/etc/systemd/system/benchtest.service" <<'UNIT'
[Unit]
Description=bench's VM test
After=systemd-logind.service dbus.service
[Service]
Type=oneshot
ExecStartPre=/bin/mkdir -p /mnt/io
ExecStartPre=/bin/mount /dev/vdb /mnt/io
ExecStart=/bin/bash /mnt/io/guest.sh
ExecStopPost=/bin/sh -c 'sync; umount /mnt/io; systemctl poweroff --force --force'
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
[Install]
WantedBy=multi-user.target
UNIT
chroot "$root" systemctl enable benchtest.service >/dev/null 2>&1
# Units a VM with no network and no real hardware has no use for.
for u in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer man-db.timer dpkg-db-backup.timer; do
	chroot "$root" systemctl mask "$u" >/dev/null 2>&1 || true
done

kernel=$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n 1)
initrd=$(ls "$root"/boot/initrd.img-* | sort -V | tail -n 1)
cp "$kernel" "$work/vmlinuz"
cp "$initrd" "$work/initrd.img"
size=$(($(du -sm "$root" | cut -f1) + 1536))
mke2fs -q -t ext4 -L bench-root -d "$root" "$work/root.img" "${size}M" >&2
rm -rf --one-file-system "$root"
rm -rf "$dir"
mv "$work" "$dir"
trap - EXIT
# Images of earlier inputs are of no further use.
for old in "$cache/$suite"-*; do
	[ "$old" = "$dir" ] || rm -rf --one-file-system "$old"
done
echo "$dir"
