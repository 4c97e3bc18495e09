#!/usr/bin/env bash
# The classroom package's install, upgrade and removal in a fresh Debian 12 root filesystem of the
# package's architecture (chroot, no systemd: the server is started as its unit starts it):
#   scripts/box/package-test.sh <amd64|arm64> [lms-classroom_<version>_<arch>.deb]
# Without a package, builds one (scripts/box/build-deb.sh). The upgrade goes from the same build repacked
# with an older version and a database one migration behind, to the package itself. A learner's and a
# teacher's walk on the installed box must answer as the same walk on this checkout's build (node on this
# machine): statuses and bodies, tokens, ids and times masked. Exits non-zero on the first difference.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
arch=${1:?usage: package-test.sh <amd64|arm64> [deb]}
deb=${2:-}
t0=$SECONDS
log() { echo "package-test [$((SECONDS - t0)) s]: $*" >&2; }
fail() { echo "package-test: FAILED: $*" >&2; exit 1; }
[ -n "$deb" ] || deb=$(bash scripts/box/build-deb.sh "$arch" | tail -n 1)
[ -e scripts/dist/box/walk.js ] || fail "scripts/dist/box/walk.js is missing: run npx tsc -b"
work=$(mktemp -d /var/tmp/lms-package-test-XXXXXX)
root=$work/root
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "${ref_pid:-}" ] && kill "$ref_pid" 2>/dev/null || true
  [ -n "${central_pid:-}" ] && kill "$central_pid" 2>/dev/null || true
  sleep 0.5
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=scripts/box/chroot-lib.sh
. scripts/box/chroot-lib.sh

# Two packages: the one under test, and the same build repacked as an older version to upgrade from.
version=$(dpkg-deb -f "$deb" Version)
older=$work/lms-classroom_${version}~older_${arch}.deb
dpkg-deb -R "$deb" "$work/repack"
sed -i "s/^Version: .*/Version: ${version}~older/" "$work/repack/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz -z0 -b "$work/repack" "$older" >/dev/null
rm -rf "$work/repack"

log "fresh root filesystem (bookworm $arch)"
bash scripts/ci/debian-rootfs.sh "$arch" "$root" >/dev/null
mount -t proc proc "$root/proc"
cp "$deb" "$older" "$root/tmp/"
in_root() { chroot "$root" "$@"; }

as_lms_test() { # the demo data, which only development and test load
  in_root setpriv --reuid=lms --regid=lms --init-groups env -i PATH=/usr/bin:/bin NODE_ENV=test \
    DATA_DIR=/var/lib/lms-classroom sh -c "cd /opt/lms && exec /opt/lms/node/bin/node classroom/dist/cli.js $*"
}

log "install $(basename "$older")"
in_root dpkg --force-unsafe-io -i "/tmp/$(basename "$older")" > "$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "dpkg -i"; }
cat "$work/install.log" >&2
grep -q 'classroom: applied 0001_schema' "$work/install.log" || fail "the install applied no migration"
in_root getent passwd lms | grep -q ':/var/lib/lms-classroom:/usr/sbin/nologin$' || fail "no system user lms"
[ "$(in_root stat -c '%U:%G %a' /etc/lms/classroom.env)" = "root:lms 640" ] || fail "classroom.env owner or mode"
[ "$(in_root stat -c '%U:%G %a' /var/lib/lms-classroom)" = "lms:lms 750" ] || fail "data folder owner or mode"
grep -Eq '^JWT_SECRET=[0-9a-f]{64}$' "$root/etc/lms/classroom.env" || fail "JWT_SECRET not generated"
grep -Eq '^SERVER_SYNC_KEY=[0-9a-f]{64}$' "$root/etc/lms/classroom.env" || fail "SERVER_SYNC_KEY not generated"
secrets_before=$(grep -E '^(JWT_SECRET|SERVER_SYNC_KEY)=' "$root/etc/lms/classroom.env")
du -sk "$root/opt/lms" | awk '{printf "package-test: installed size %d MB\n", $1/1024}' >&2

as_lms_test seed-demo >/dev/null
port=$(free_port)
start_box "$port"
node scripts/dist/box/walk.js "http://127.0.0.1:$port" > "$work/walk-box.txt" || fail "the walk on the installed box"
stop_box

log "the same walk on this checkout's build"
ref=$work/ref
mkdir -p "$ref"
ref_env=(NODE_ENV=production DATA_DIR="$ref" JWT_SECRET="$(hexsecret)" SERVER_SYNC_KEY="$(hexsecret)" RPI_OFFLINE=false)
env "${ref_env[@]}" NODE_ENV=test node classroom/dist/cli.js migrate >/dev/null
env "${ref_env[@]}" NODE_ENV=test node classroom/dist/cli.js seed-demo >/dev/null
ref_port=$(free_port)
env "${ref_env[@]}" RPI_PORT="$ref_port" HOST=127.0.0.1 MALLOC_MMAP_THRESHOLD_=1048576 \
  node --max-semi-space-size=1 --max-old-space-size=160 classroom/dist/server.js > "$work/ref.log" 2>&1 &
ref_pid=$!
wait_up "$ref_port" "$ref_pid" || { cat "$work/ref.log" >&2; fail "the reference server did not start"; }
node scripts/dist/box/walk.js "http://127.0.0.1:$ref_port" > "$work/walk-ref.txt" || fail "the walk on the reference"
kill "$ref_pid"; wait "$ref_pid" 2>/dev/null || true; ref_pid=
cat "$work/walk-box.txt" >&2
diff -u "$work/walk-ref.txt" "$work/walk-box.txt" >&2 || fail "the installed box answered differently from this checkout's build"
grep -q '^quiz result: 200 ' "$work/walk-box.txt" || fail "the quiz result was not taken"
log "walk: $(wc -l < "$work/walk-box.txt") steps, the same answers as this checkout's build"

log "lms-classroom sync-content from a central of this checkout's build, and lms-classroom backup"
cw=$work/central
mkdir -p "$cw"
central_env=(NODE_ENV=test DATABASE_URL="sqlite:$cw/central.sqlite" OBJECT_DIR="$cw/objects")
env "${central_env[@]}" node central/dist/cli.js migrate >/dev/null
env "${central_env[@]}" node central/dist/cli.js seed-demo >/dev/null
central_port=$(free_port)
env "${central_env[@]}" PORT="$central_port" HOST=127.0.0.1 node central/dist/server.js > "$work/central.log" 2>&1 &
central_pid=$!
wait_up "$central_port" "$central_pid" || { cat "$work/central.log" >&2; fail "the reference central did not start"; }
port=$(free_port)
start_box "$port"
media=/var/lib/lms-classroom/media
rm -rf "${root:?}$media"
in_root env LMS_CENTRAL_PASSWORD=DemoSuper1 lms-classroom sync-content --central "http://127.0.0.1:$central_port" \
  --central-user superadmin@demo.lms --classroom "http://127.0.0.1:$port" > "$work/sync.log" 2>&1 \
  || { cat "$work/sync.log" >&2; fail "lms-classroom sync-content"; }
grep -E 'Classroom server applied the package|Media: ' "$work/sync.log" >&2
grep -q 'Classroom server applied the package' "$work/sync.log" || fail "sync-content did not apply the package"
grep -Eq '^Media: [1-9][0-9]* files? transferred' "$work/sync.log" || fail "sync-content brought no media"
[ -z "$(in_root find "$media" ! -user lms)" ] || fail "sync-content left files in $media not owned by lms"
[ "$(in_root find "$media" -type f ! -name '.*' | wc -l)" -ge 10 ] || fail "sync-content brought fewer than 10 media files"
kill "$central_pid"; wait "$central_pid" 2>/dev/null || true; central_pid=
in_root install -d -o root -g root -m 0755 /srv/box-backups
if in_root lms-classroom backup --to /srv/box-backups/today > "$work/backup.log" 2>&1; then
  fail "a backup into a folder lms cannot write succeeded"
fi
cat "$work/backup.log" >&2
grep -q 'install -d -o lms -g lms -m 0700 /srv/box-backups/today' "$work/backup.log" \
  || fail "the backup into a folder lms cannot write did not name the fix"
in_root install -d -o lms -g lms -m 0700 /srv/box-backups/today
in_root lms-classroom backup --to /srv/box-backups/today >&2 || fail "the backup into the folder the message named"
stop_box
log "sync-content: package and media as lms; backup: the message names the fix, which works"

log "upgrade to $(basename "$deb") from a database one migration behind"
results_before=$(in_root sqlite3 /var/lib/lms-classroom/classroom.sqlite 'select count(*) from studentprogress')
in_root lms-classroom rollback --step >&2
in_root dpkg --force-unsafe-io -i "/tmp/$(basename "$deb")" > "$work/upgrade.log" 2>&1 || { cat "$work/upgrade.log" >&2; fail "upgrade"; }
cat "$work/upgrade.log" >&2
grep -q 'classroom: applied ' "$work/upgrade.log" || fail "the upgrade applied no migration"
[ "$(grep -E '^(JWT_SECRET|SERVER_SYNC_KEY)=' "$root/etc/lms/classroom.env")" = "$secrets_before" ] || fail "the upgrade changed the secrets"
[ "$(in_root sqlite3 /var/lib/lms-classroom/classroom.sqlite 'select count(*) from studentprogress')" = "$results_before" ] \
  || fail "the upgrade lost results"
[ "$(in_root dpkg-query -W -f '${Version}' lms-classroom)" = "$version" ] || fail "version after the upgrade"
port=$(free_port)
start_box "$port"
node scripts/dist/box/walk.js "http://127.0.0.1:$port" > "$work/walk-upgraded.txt" || fail "the walk after the upgrade"
grep -q '^quiz result: 200 ' "$work/walk-upgraded.txt" || fail "the quiz result after the upgrade"
stop_box
log "upgraded: secrets, $results_before results kept; the walk answers"

log "remove, purge, purge with the data"
in_root dpkg -r lms-classroom >&2
[ ! -e "$root/opt/lms" ] && [ ! -e "$root/usr/sbin/lms-classroom" ] || fail "remove left the code"
[ -e "$root/etc/lms/classroom.env" ] && [ -e "$root/var/lib/lms-classroom/classroom.sqlite" ] || fail "remove took settings or data"
in_root dpkg -P lms-classroom > "$work/purge.log" 2>&1; cat "$work/purge.log" >&2
[ ! -e "$root/etc/lms/classroom.env" ] || fail "purge kept the settings"
[ -e "$root/var/lib/lms-classroom/classroom.sqlite" ] || fail "purge took the data without being asked"
grep -q 'kept the data in /var/lib/lms-classroom' "$work/purge.log" || fail "purge did not say it kept the data"
in_root dpkg --force-unsafe-io -i "/tmp/$(basename "$deb")" > "$work/reinstall.log" 2>&1 || { cat "$work/reinstall.log" >&2; fail "reinstall"; }
[ "$(in_root sqlite3 /var/lib/lms-classroom/classroom.sqlite 'select count(*) from studentprogress')" -ge "$results_before" ] \
  || fail "the reinstall did not find the kept data"
in_root env LMS_CLASSROOM_PURGE_DATA=yes dpkg -P lms-classroom >&2
[ ! -e "$root/var/lib/lms-classroom" ] || fail "purge with LMS_CLASSROOM_PURGE_DATA=yes kept the data"
! in_root getent passwd lms >/dev/null || fail "purge with LMS_CLASSROOM_PURGE_DATA=yes kept the user"
# After a plain purge the package is gone: the command it printed removes the data and the user.
in_root dpkg --force-unsafe-io -i "/tmp/$(basename "$deb")" > "$work/reinstall.log" 2>&1 || { cat "$work/reinstall.log" >&2; fail "reinstall"; }
in_root dpkg -P lms-classroom > "$work/purge.log" 2>&1; cat "$work/purge.log" >&2
rest=$(sed -n 's/^  \(rm -rf .*\)$/\1/p' "$work/purge.log")
[ -n "$rest" ] || fail "the purge did not say how to remove the data and the user later"
in_root sh -c "$rest" || fail "the command the purge printed: $rest"
[ ! -e "$root/var/lib/lms-classroom" ] || fail "the command the purge printed kept the data"
! in_root getent passwd lms >/dev/null || fail "the command the purge printed kept the user"
! in_root getent group lms >/dev/null || fail "the command the purge printed kept the group"
log "passed: install, walk (as this checkout's build), sync-content, backup, upgrade, remove, purge ($arch)"
