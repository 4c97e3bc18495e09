#!/usr/bin/env bash
# Makes sure the box's package and power-cut tests have their tools: debootstrap (root filesystems),
# qemu-system-x86 (the power-cut virtual machine), e2fsprogs (its disk image), dpkg-dev's dpkg-deb, curl,
# apt-utils' apt-ftparchive and gnupg (the signed release repository of the release test).
set -euo pipefail
log() { echo "ensure-box-tools: $*" >&2; }
need=()
for p in debootstrap qemu-system-x86 e2fsprogs curl file apt-utils gnupg; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then log "missing ${need[*]}; installing them needs root"; exit 1; fi
log "installing ${need[*]}"
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
