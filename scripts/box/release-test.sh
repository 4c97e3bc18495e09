#!/usr/bin/env bash
# Staged releases on a box, in a fresh Debian 12 root filesystem (chroot, no systemd):
#   scripts/box/release-test.sh <amd64|arm64> lms-classroom_<version>_<arch>.deb
# A box on release N, enrolled at a central of this checkout's build, is offered:
#   1. a release from a repository signed by another key than the one central names: refused, the release paused;
#   2. N+1 from the organisation's signed repository (make box-release's layout): installed in its window while
#      a learner keeps submitting results, healthy, reported installed;
#   3. N+2, whose server does not start: installed, unhealthy, and the box returns to N+1 by itself, with every
#      result acknowledged before, during and after kept, and the rollout paused at central.
# Exits non-zero on the first difference.
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:?usage: release-test.sh <amd64|arm64> DEB}
deb=${2:?usage: release-test.sh <amd64|arm64> DEB}
t0=$SECONDS
log() { echo "release-test [$((SECONDS - t0)) s]: $*" >&2; }
fail() { echo "release-test: FAILED: $*" >&2; exit 1; }
for t in apt-ftparchive gpg; do command -v "$t" >/dev/null || fail "$t is missing (scripts/ci/ensure-box-tools.sh)"; done
work=$(mktemp -d /var/tmp/lms-release-test-XXXXXX)
root=$work/root
server_pid=
cleanup() {
  [ -n "${writer_pid:-}" ] && kill "$writer_pid" 2>/dev/null || true
  [ -n "${central_pid:-}" ] && kill "$central_pid" 2>/dev/null || true
  [ -n "${repo_pid:-}" ] && kill "$repo_pid" 2>/dev/null || true
  [ -s "$root/run/lms-test-box.pid" ] && kill "$(cat "$root/run/lms-test-box.pid")" 2>/dev/null || true
  sleep 0.5
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=scripts/box/chroot-lib.sh
. scripts/box/chroot-lib.sh
in_root() { chroot "$root" "$@"; }

# Three releases: N (the package under test), N+1 (the same, a later version), N+2 (a server that exits).
version=$(dpkg-deb -f "$deb" Version)
v0=${version}.0
v1=${version}.1
v2=${version}.2
repack() { # version [broken]
  rm -rf "$work/repack"
  dpkg-deb -R "$deb" "$work/repack"
  sed -i "s/^Version: .*/Version: $1/" "$work/repack/DEBIAN/control"
  [ "${2:-}" = broken ] && echo 'process.exit(3);' > "$work/repack/opt/lms/classroom/dist/server.js"
  dpkg-deb --root-owner-group -Zxz -z0 -b "$work/repack" "$work/lms-classroom_$1_$arch.deb" >/dev/null
  rm -rf "$work/repack"
}
repack "$v0"
repack "$v1"
repack "$v2" broken

# The organisation's key and a stranger's; the stranger's repository carries the organisation's public key.
export GNUPGHOME=$work/gnupg
mkdir -m 0700 "$GNUPGHOME"
gpg --batch --quiet --pinentry-mode loopback --passphrase '' --quick-gen-key 'LMS box releases <releases@lms.test>' ed25519 sign never
gpg --batch --quiet --pinentry-mode loopback --passphrase '' --quick-gen-key 'Someone else <other@lms.test>' ed25519 sign never
fpr=$(BOX_RELEASE_KEY=releases@lms.test bash scripts/box/box-release.sh "$work/repo" "$deb" "$work/lms-classroom_${v1}_$arch.deb" \
  "$work/lms-classroom_${v2}_$arch.deb" | tail -n 1)
BOX_RELEASE_KEY=other@lms.test bash scripts/box/box-release.sh "$work/stranger" "$work/lms-classroom_${v0}_$arch.deb" \
  >/dev/null
cp "$work/repo/key.gpg" "$work/stranger/key.gpg"
repo_port=$(free_port)
node -e '
  const http=require("http"),fs=require("fs"),path=require("path");const dir=process.argv[1];
  http.createServer((q,s)=>{const f=path.join(dir,decodeURIComponent(q.url.split("?")[0]));
    if(!f.startsWith(dir)||!fs.existsSync(f)||fs.statSync(f).isDirectory()){s.writeHead(404);s.end();return}
    s.writeHead(200,{"content-length":fs.statSync(f).size});fs.createReadStream(f).pipe(s)}).listen(+process.argv[2],"127.0.0.1")' \
  "$work" "$repo_port" &
repo_pid=$!
log "repositories on :$repo_port, key $fpr"

# Central of this checkout's build, with the demo data (its superadmin publishes and stages releases).
cw=$work/central
mkdir -p "$cw"
central_env=(NODE_ENV=test DATABASE_URL="sqlite:$cw/central.sqlite" OBJECT_DIR="$cw/objects")
env "${central_env[@]}" node central/dist/cli.js migrate >/dev/null
env "${central_env[@]}" node central/dist/cli.js seed-demo >/dev/null
central_port=$(free_port)
env "${central_env[@]}" PORT="$central_port" HOST=127.0.0.1 node central/dist/server.js > "$work/central.log" 2>&1 &
central_pid=$!
wait_up "$central_port" "$central_pid" || { cat "$work/central.log" >&2; fail "central did not start"; }
api() { # method path [json]
  curl -sS -X "$1" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' ${3:+-d "$3"} \
    "http://127.0.0.1:$central_port$2"
}
token=$(curl -sS -H 'Content-Type: application/json' -d '{"lmsusername":"superadmin@demo.lms","lmsuserpassword":"DemoSuper1"}' \
  "http://127.0.0.1:$central_port/auth/login" | node -pe 'JSON.parse(require("fs").readFileSync(0)).data.accessToken')
json() { node -pe "const d=JSON.parse(require('fs').readFileSync(0,'utf8')); $1"; }

log "box on $version"
bash scripts/ci/debian-rootfs.sh "$arch" "$root" >/dev/null
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/"
in_root dpkg --force-unsafe-io -i "/tmp/$(basename "$deb")" > "$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "dpkg -i"; }
[ -e "$root/lib/systemd/system/lms-classroom-update.timer" ] || fail "the package has no updater timer"
port=$(free_port)
printf 'RPI_PORT=%s\nHOST=127.0.0.1\nFLEET_SYNC=off\nFLEET_UPDATE_HEALTH_SECONDS=40\n' "$port" >> "$root/etc/lms/classroom.env"
in_root setpriv --reuid=lms --regid=lms --init-groups env -i PATH=/usr/bin:/bin NODE_ENV=test \
  DATA_DIR=/var/lib/lms-classroom sh -c 'cd /opt/lms && exec /opt/lms/node/bin/node classroom/dist/cli.js seed-demo' >/dev/null
# The unit's start, from inside the root filesystem, so that the updater can restart the server as systemd would.
cat > "$root/usr/local/sbin/lms-test-restart" <<'EOF'
#!/bin/bash
unit=/lib/systemd/system/lms-classroom.service
pidf=/run/lms-test-box.pid
if [ -s "$pidf" ]; then
  old=$(cat "$pidf"); kill -TERM "$old" 2>/dev/null || true
  for _ in $(seq 1 200); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
fi
user=$(sed -n 's/^User=//p' "$unit"); wd=$(sed -n 's/^WorkingDirectory=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit"); envfile=$(sed -n 's/^EnvironmentFile=//p' "$unit")
mapfile -t envs < <(sed -n 's/^Environment=//p' "$unit")
mapfile -t fileenvs < <(grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$envfile")
setsid setpriv --reuid="$user" --regid="$user" --init-groups env -i PATH=/usr/bin:/bin "${envs[@]}" "${fileenvs[@]}" \
  sh -c "cd $wd && exec $exec_start" >> /var/log/lms-test-box.log 2>&1 < /dev/null &
echo $! > "$pidf"
EOF
chmod 0755 "$root/usr/local/sbin/lms-test-restart"
in_root /usr/local/sbin/lms-test-restart
wait_up "$port" "$(cat "$root/run/lms-test-box.pid")" || { cat "$root/var/log/lms-test-box.log" >&2; fail "the box did not start"; }

schoolid=$(node -p 'require("./shared/dist").DEMO_IDS.schoolid')
reg=$(api POST /fleet/boxes "{\"schoolid\":\"$schoolid\",\"name\":\"Release test box\"}")
echo "$reg" | grep -q '"enrolmentcode"' || fail "registering the box at central: $reg"
code=$(echo "$reg" | json 'd.data.enrolmentcode')
boxid=$(echo "$reg" | json 'd.data.box.boxid')
in_root lms-classroom enroll --central "http://127.0.0.1:$central_port" --code "$code" >&2 || fail "enroll"
update() { # the updater as its timer runs it, at once, restarting the server as its unit would
  in_root env LMS_UPDATE_RESTART=/usr/local/sbin/lms-test-restart /usr/sbin/lms-classroom-update --now
}
running() { in_root dpkg-query -W -f '${Version}' lms-classroom; }
release() { # version repo → releaseid, staged for this box
  local id answer
  answer=$(api POST /fleet/releases "{\"version\":\"$1\",\"repourl\":\"http://127.0.0.1:$repo_port/$2\",\"keyfingerprint\":\"$fpr\"}")
  echo "$answer" | grep -q '"releaseid"' || fail "publishing $1: $answer"
  id=$(echo "$answer" | json 'd.data.releaseid')
  api POST "/fleet/releases/$id/stage" "{\"boxids\":[\"$boxid\"]}" >/dev/null
  echo "$id"
}
state() { api GET "/fleet/releases/$1" | json "d.data.$2"; }

log "1. $v0 from a repository another key signed"
r0=$(release "$v0" stranger)
in_root lms-classroom fleet-sync >&2 || fail "fleet-sync"
if update > "$work/update0.log" 2>&1; then cat "$work/update0.log" >&2; fail "the updater installed from a repository another key signed"; fi
grep -q 'signature was refused' "$work/update0.log" || fail "the updater did not say the signature was refused"
cat "$work/update0.log" >&2
[ "$(running)" = "$version" ] || fail "the box left $version for a package another key signed"
in_root lms-classroom fleet-sync >&2 || fail "fleet-sync"
[ "$(state "$r0" state)" = paused ] || fail "the refused release was not paused"
state "$r0" pausedreason | grep -qi 'signature' || fail "the pause does not name the signature: $(state "$r0" pausedreason)"
api POST "/fleet/releases/$r0/withdraw" >/dev/null

# A learner submits results all along (the walk's quiz result); each acknowledged one must survive.
acked=$work/acked
: > "$acked"
( while true; do
    if node scripts/dist/box/walk.js "http://127.0.0.1:$port" 2>/dev/null | grep -q '^quiz result: 200 '; then echo ok >> "$acked"; fi
    sleep 0.5
  done ) &
writer_pid=$!
results() { in_root sqlite3 /var/lib/lms-classroom/classroom.sqlite 'select count(*) from studentprogress'; }
before=$(results)

log "2. $v1 from the organisation's repository"
r1=$(release "$v1" repo)
in_root lms-classroom fleet-sync >&2 || fail "fleet-sync"
update > "$work/update1.log" 2>&1 || { cat "$work/update1.log" >&2; fail "the updater did not install $v1"; }
cat "$work/update1.log" >&2
[ "$(running)" = "$v1" ] || fail "the box runs $(running), not $v1"
in_root lms-classroom fleet-sync >&2 || fail "fleet-sync"
[ "$(state "$r1" 'boxes.installed')" = 1 ] || fail "central has no installed report for $v1"
sleep 3

log "3. $v2, whose server does not start"
r2=$(release "$v2" repo)
in_root lms-classroom fleet-sync >&2 || fail "fleet-sync"
if update > "$work/update2.log" 2>&1; then cat "$work/update2.log" >&2; fail "the updater reported success for $v2"; fi
cat "$work/update2.log" >&2
[ "$(running)" = "$v1" ] || fail "the box did not return to $v1 (runs $(running))"
wait_up "$port" "$(cat "$root/run/lms-test-box.pid")" || fail "the box does not answer after the rollback"
sleep 3
kill "$writer_pid"; wait "$writer_pid" 2>/dev/null || true; writer_pid=
in_root lms-classroom fleet-sync >&2 || fail "fleet-sync"
[ "$(state "$r2" state)" = paused ] || fail "the rolled-back release was not paused"
[ "$(state "$r2" 'boxes.rolledback')" = 1 ] || fail "central has no rollback report for $v2"
after=$(results)
n=$(wc -l < "$acked")
[ "$n" -ge 3 ] || fail "only $n results were acknowledged during the test"
[ "$after" -ge $((before + n)) ] || fail "results: $before before, $n acknowledged since, $after now"
log "passed: another key refused; $v1 installed; $v2 rolled back to $v1; $n results acknowledged meanwhile, all kept ($before → $after)"
