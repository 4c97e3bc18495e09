#!/usr/bin/env bash
# A Debian 12 (bookworm) root filesystem for the box's tests, made with debootstrap from Debian's packages:
#   scripts/ci/debian-rootfs.sh <amd64|arm64> <dest> [vm]
# Built once per machine and kept in /var/cache/lms-rootfs/ (LMS_ROOTFS_CACHE), then copied to <dest>, which
# must not exist yet. `vm` adds Debian's kernel (linux-image-amd64 or -arm64) and its initramfs, for a virtual
# machine that boots the folder as its disk. arm64 on another machine runs under qemu-user (qemu-user-static,
# installed here when absent). Prints the destination.
set -euo pipefail
arch=${1:?usage: debian-rootfs.sh <amd64|arm64> <dest> [vm]}
dest=${2:?usage: debian-rootfs.sh <amd64|arm64> <dest> [vm]}
variant=${3:-base}
log() { echo "debian-rootfs: $*" >&2; }
case "$arch" in amd64|arm64) ;; *) log "unknown architecture $arch"; exit 2 ;; esac
case "$variant" in base|vm) ;; *) log "unknown variant $variant"; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { log "needs root (debootstrap, chroot)"; exit 1; }
[ ! -e "$dest" ] || { log "$dest exists"; exit 1; }
cache=${LMS_ROOTFS_CACHE:-/var/cache/lms-rootfs}
mirror=${LMS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What the package and its tests use in the root filesystem: the backup script's sqlite3 and rsync, the
# server's ca-certificates, `ip` for the virtual machine's network.
include=ca-certificates,sqlite3,rsync,iproute2,procps,passwd
mkdir -p "$cache"
exec 9>"$cache/.lock-$arch"
flock 9

apt_install() { # host packages, when missing
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

host_arch=$(dpkg --print-architecture)
foreign() { [ "$arch" != "$host_arch" ]; }

ensure_binfmt() {
  foreign || return 0
  apt_install qemu-user-static binfmt-support
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 >&2 || true
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { log "qemu-aarch64 is not registered with binfmt_misc"; exit 1; }
}

build_base() {
  local out=$cache/bookworm-$arch
  [ -e "$out/.complete" ] && return 0
  apt_install debootstrap
  ensure_binfmt
  rm -rf "$out" "$out.tmp"
  log "debootstrap bookworm $arch (once per machine)"
  local t0=$SECONDS
  debootstrap --arch="$arch" --variant=minbase --include="$include" bookworm "$out.tmp" "$mirror" >&2
  rm -rf "$out.tmp"/var/cache/apt/archives/*.deb
  mv "$out.tmp" "$out"
  touch "$out/.complete"
  log "bookworm-$arch built in $((SECONDS - t0)) s"
}

build_vm() {
  local base=$cache/bookworm-$arch out=$cache/bookworm-$arch-vm
  [ -e "$out/.complete" ] && return 0
  rm -rf "$out" "$out.tmp"
  cp -a "$base" "$out.tmp"
  rm -f "$out.tmp/.complete"
  log "adding linux-image-$arch"
  local t0=$SECONDS
  cp /etc/resolv.conf "$out.tmp/etc/resolv.conf" 2>/dev/null || true
  mount -t proc proc "$out.tmp/proc"
  trap 'umount "$out.tmp/proc" 2>/dev/null || true' EXIT
  chroot "$out.tmp" apt-get update -qq >&2
  # Only the virtual disk's and network's modules in the initramfs: a smaller image that boots faster.
  mkdir -p "$out.tmp/etc/initramfs-tools/conf.d"
  printf 'virtio_pci\nvirtio_blk\nvirtio_net\next4\n' >> "$out.tmp/etc/initramfs-tools/modules"
  echo MODULES=list > "$out.tmp/etc/initramfs-tools/conf.d/lms-vm.conf"
  DEBIAN_FRONTEND=noninteractive chroot "$out.tmp" apt-get install -y -qq --no-install-recommends "linux-image-$arch" >&2
  chroot "$out.tmp" apt-get clean
  rm -rf "$out.tmp"/var/lib/apt/lists/*
  umount "$out.tmp/proc"; trap - EXIT
  mv "$out.tmp" "$out"
  touch "$out/.complete"
  log "bookworm-$arch-vm built in $((SECONDS - t0)) s"
}

build_base
src=$cache/bookworm-$arch
if [ "$variant" = vm ]; then build_vm; src=$cache/bookworm-$arch-vm; fi
flock -u 9
ensure_binfmt
cp -a "$src" "$dest"
rm -f "$dest/.complete"
echo "$dest"
