#!/usr/bin/env bash
# Power cuts of a classroom box in a virtual machine: scripts/box/vm-power-cut.sh [deb] [rounds]
# Debian 12 with Debian's kernel (linux-image-amd64) boots under qemu-system-x86_64 (no KVM needed) from a
# raw disk image file opened with cache=none: what the guest synced is in the file, what sat in the
# guest's page cache is lost when qemu is killed (SIGKILL: the machine's memory goes, as in a power cut).
# The package is installed in the image with the demo data; scripts/dist/box/power-cut-vm.js boots it
# again and again, hands in quiz results through a forwarded loopback port, kills the machine, and checks
# on every boot (inside the machine, before the server starts) that every acknowledged result is there with
# all its answers and that PRAGMA integrity_check says ok.
set -euo pipefail
cd "$(dirname "$0")/../.."
deb=${1:-}
rounds=${2:-${VM_POWER_CUT_ROUNDS:-8}}
t0=$SECONDS
log() { echo "vm-power-cut [$((SECONDS - t0)) s]: $*" >&2; }
fail() { echo "vm-power-cut: FAILED: $*" >&2; exit 1; }
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 is missing (scripts/ci/ensure-box-tools.sh)"
[ -e scripts/dist/box/power-cut-vm.js ] || fail "scripts/dist/box/power-cut-vm.js is missing: run npx tsc -b"
[ -n "$deb" ] || deb=$(bash scripts/box/build-deb.sh amd64 | tail -n 1)
# Not in /tmp: a tmpfs cannot open a file with O_DIRECT, which cache=none needs.
work=$(mktemp -d /var/tmp/lms-vm-power-cut-XXXXXX)
root=$work/root
# LMS_VM_KEEP=1 keeps the disk image, kernel and initramfs (the folder is printed) for a look by hand.
trap 'umount "$root/proc" 2>/dev/null || true; if [ -n "${LMS_VM_KEEP:-}" ]; then log "kept $work"; else rm -rf "$work"; fi' EXIT
bash scripts/ci/debian-rootfs.sh amd64 "$root" vm >/dev/null
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/box.deb"
chroot "$root" dpkg --force-unsafe-io -i /tmp/box.deb >&2
chroot "$root" setpriv --reuid=lms --regid=lms --init-groups env -i PATH=/usr/bin:/bin NODE_ENV=test \
  DATA_DIR=/var/lib/lms-classroom sh -c 'cd /opt/lms && exec /opt/lms/node/bin/node classroom/dist/cli.js seed-demo' >/dev/null
umount "$root/proc"
cp "$root"/boot/vmlinuz-* "$work/vmlinuz"
cp "$root"/boot/initrd.img-* "$work/initrd.img"
mkdir -p "$root/opt/lms-vm"
cp scripts/dist/box/vm-agent.js "$root/opt/lms-vm/agent.js"

# PID 1 of the machine: network, the check of what the last power cut left, then the server as its unit
# starts it (user, working directory, Environment=, EnvironmentFile=, ExecStart), then the agent.
unit=$root/lib/systemd/system/lms-classroom.service
user=$(sed -n 's/^User=//p' "$unit"); wd=$(sed -n 's/^WorkingDirectory=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit"); envfile=$(sed -n 's/^EnvironmentFile=//p' "$unit")
envs=$(sed -n 's/^Environment=//p' "$unit" | tr '\n' ' ')
quiz=$(node -p 'require("./shared/dist").DEMO_IDS.lessons[0].lessonquizid')
cat > "$root/sbin/lms-vm-init" <<INIT
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# The initramfs has mounted /proc, /sys and /dev already.
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
echo "LMS-INIT"
ip link set lo up; ip link set eth0 up; ip addr add 10.0.2.15/24 dev eth0; ip route add default via 10.0.2.2
db=/var/lib/lms-classroom/classroom.sqlite
q() { setpriv --reuid=lms --regid=lms --init-groups sqlite3 -batch "\$db" "\$1"; }
echo "LMS-CHECK-BEGIN"
echo "LMS-INTEGRITY \$(q 'PRAGMA integrity_check;' | tr '\n' ' ')"
q "select 'LMS-ROW ' || p.studentid || '|' || p.starttime || '|' || (select count(*) from studentprogressquestions a
   where a.studentprogressid = p.studentprogressid) from studentprogress p where p.studentprogressreferenceid = '$quiz';"
echo "LMS-CHECK-END"

setpriv --reuid=$user --regid=$user --init-groups env $envs \$(grep -E '^[A-Za-z_][A-Za-z0-9_]*=' $envfile) \
  RPI_PORT=3000 HOST=0.0.0.0 sh -c "cd $wd && exec $exec_start" &
echo "LMS-SERVER-PID \$!"
/opt/lms/node/bin/node /opt/lms-vm/agent.js \$! \$db 3001 &
while :; do sleep 3600; done
INIT
chmod 0755 "$root/sbin/lms-vm-init"
# The kernel modules are in the initramfs; the rest of them and the documentation only lengthen the copy.
rm -rf "$root"/usr/lib/modules "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/locale "$root"/boot/*
size_mb=$(( $(du -sm "$root" | cut -f1) + 512 ))
mkfs.ext4 -q -F -L lmsroot -d "$root" "$work/disk.img" "${size_mb}M"
rm -rf "$root"
log "disk image ${size_mb} MB, kernel $(basename "$(ls "$work"/vmlinuz)")"
node scripts/dist/box/power-cut-vm.js --kernel "$work/vmlinuz" --initrd "$work/initrd.img" --disk "$work/disk.img" \
  --rounds "$rounds" --quiz "$quiz"
log "done"
