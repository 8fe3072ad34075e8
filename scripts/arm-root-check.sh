#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/arm-root-check.sh — the README's first command as a 64-bit ARM
# board runs it, natively, with no board: a Debian bookworm arm64 root made
# by debootstrap, whose programs this machine's kernel hands to qemu-user
# (binfmt_misc), this repository's HEAD cloned into it, and scripts/train.sh
# run there as written: Debian's arm64 packages installed by apt, ember
# built by the arm64 gcc, SimpleCNN trained on Fashion-MNIST. Then whether
# every Debian package that scripts/setup.sh --tests asks for on arm64
# exists there (apt-get --simulate): the suite itself would take days under
# emulation. docs/embedded.md has what it found.
#
#   scripts/arm-root-check.sh [ROOT]      (default: /srv/ember-arm64, kept for
#                                          the next run; remove it to start over)
#
# Needs root (debootstrap, chroot, binfmt_misc), Debian's mirror, about 2 GB
# and time: the build and the epoch run emulated (about 30 minutes on 2 cores).
# Installs debootstrap and qemu-user-static when they are missing.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
root=${1:-/srv/ember-arm64}
mirror=http://deb.debian.org/debian
say() { echo "arm-root-check: $*"; }
[ "$(id -u)" -eq 0 ] || { say "needs root (debootstrap and chroot)" >&2; exit 2; }

missing=""
for p in debootstrap qemu-user-static; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    say "installing$missing"
    # shellcheck disable=SC2086 # a list of packages
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

# arm64 programs run by qemu-aarch64-static, as the kernel finds them: the
# F flag of Debian's rule has the kernel open the emulator once, so that it
# works inside the root too
binfmt=/proc/sys/fs/binfmt_misc
[ -f $binfmt/register ] || mount -t binfmt_misc binfmt_misc $binfmt ||
    { say "cannot mount binfmt_misc (a container without the right?): arm64 programs cannot run here" >&2; exit 1; }
[ -f $binfmt/qemu-aarch64 ] || cat /usr/lib/binfmt.d/qemu-aarch64.conf >$binfmt/register

if [ ! -x "$root/usr/bin/apt-get" ] || [ -d "$root/debootstrap" ]; then
    say "making a Debian bookworm arm64 root in $root (debootstrap, minbase)"
    [ -d "$root/debootstrap" ] || debootstrap --arch=arm64 --foreign --variant=minbase bookworm "$root" $mirror
    chroot "$root" /debootstrap/debootstrap --second-stage
fi
[ "$(chroot "$root" uname -m)" = aarch64 ] || { say "$root does not run as aarch64" >&2; exit 1; }

cp /etc/resolv.conf "$root/etc/resolv.conf"
mounted=""
trap 'for d in $mounted; do umount "$root/$d"; done' EXIT
for d in proc sys dev dev/pts; do
    mountpoint -q "$root/$d" || { mount --bind "/$d" "$root/$d" && mounted="$d $mounted"; }
done

# git is what a user clones with; the root has none, so the clone is made here
rm -rf "$root/root/ember"
git clone -q . "$root/root/ember"
say "scripts/train.sh in the arm64 root (emulated: slow)"
start=$(date +%s)
chroot "$root" sh -c 'cd /root/ember && scripts/train.sh' 2>&1 | tee "$root/root/train.out"
say "scripts/train.sh took $(($(date +%s) - start)) s of the clock, emulated"
grep -q "test accuracy" "$root/root/train.out" || { say "FAILED: no test accuracy from the epoch" >&2; exit 1; }
chroot "$root" sh -c 'cd /root/ember && build/ember devices'

packages=$(chroot "$root" sh -c 'cd /root/ember && scripts/setup.sh --tests --packages')
say "the test suite's Debian packages for arm64: $packages"
# shellcheck disable=SC2086 # a list of packages
if chroot "$root" apt-get install --simulate -q $packages >"$root/root/simulate.out" 2>&1; then
    say "every one of them installs on arm64 ($(grep -c '^Inst ' "$root/root/simulate.out") packages with their dependencies)"
else
    tail -5 "$root/root/simulate.out"
    say "FAILED: the test suite's packages do not install on arm64" >&2
    exit 1
fi
say "ok"
