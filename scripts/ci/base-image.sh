#!/usr/bin/env bash
# Makes the two base images of deploy/image/Containerfile locally, for a machine that reaches Debian's
# mirror and the npm registry but no image registry:
#   localhost/lms-base/node:20-bookworm-slim   Debian 12 minbase (debootstrap) + Node.js 20   (BASE_IMAGE)
#   localhost/lms-base/node:20-bookworm        the same + npm, Node's headers, python3, make, g++  (BUILD_IMAGE)
# They stand in for the public node:20-bookworm-slim and node:20-bookworm. Node.js 20 comes from the npm
# registry's node-linux-<arch> package (Debian 12 ships Node 18), npm from the npm package.
# Cached once per machine: the debootstrap tree and the packages under /var/cache/lms-image, the images in
# podman's store; a second run prints the names and returns at once.
# Needs root, podman and debootstrap (scripts/ci/ensure-podman.sh) and CONTAINERS_CONF from it.
# Prints BASE_IMAGE=… and BUILD_IMAGE=… as shell assignments.
set -euo pipefail
log() { echo "base-image: $*" >&2; }
node_version=${LMS_NODE_VERSION:-20.20.2}
npm_version=${LMS_NPM_VERSION:-10.8.2}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=/var/cache/lms-image
base=localhost/lms-base/node:20-bookworm-slim
build=localhost/lms-base/node:20-bookworm
arch=$(dpkg --print-architecture)
case "$arch" in amd64) node_arch=x64 ;; arm64) node_arch=arm64 ;; *) log "no Node.js package for $arch"; exit 1 ;; esac

if podman image exists "$base" && podman image exists "$build"; then
  echo "BASE_IMAGE=$base"; echo "BUILD_IMAGE=$build"; exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Node.js and npm from the npm registry (tarballs kept in the cache).
fetch() {  # package@version -> path of its tarball in the cache
  local name=${1%@*} version=${1##*@} file
  file="$cache/$name-$version.tgz"
  if [ ! -s "$file" ]; then
    log "fetching $1 from the npm registry"
    (cd "$work" && npm pack --silent "$1" >/dev/null && mv "$name-$version.tgz" "$file")
  fi
  echo "$file"
}
node_tgz=$(fetch "node-linux-$node_arch@$node_version")
npm_tgz=$(fetch "npm@$npm_version")

rootfs_tar="$cache/bookworm-minbase-$arch.tar"
if [ ! -s "$rootfs_tar" ]; then
  log "debootstrap --variant=minbase bookworm ($arch)"
  debootstrap --variant=minbase --arch "$arch" bookworm "$work/rootfs" "$mirror" >&2
  # What an image does without: package caches and lists, documentation, logs.
  rm -rf "$work/rootfs"/var/cache/apt/*.bin "$work/rootfs"/var/cache/apt/archives/*.deb "$work/rootfs"/var/lib/apt/lists/* \
    "$work/rootfs"/usr/share/doc/* "$work/rootfs"/usr/share/man/* "$work/rootfs"/usr/share/info/* "$work/rootfs"/var/log/*.log
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
    "$mirror" "$mirror" > "$work/rootfs/etc/apt/sources.list"
  tar -C "$work/rootfs" -cf "$rootfs_tar.new" . && mv "$rootfs_tar.new" "$rootfs_tar"
  rm -rf "$work/rootfs"
fi

# The runtime base: Debian minbase + the node binary, as node:20-bookworm-slim puts it (/usr/local/bin/node).
mkdir -p "$work/node"
tar -xzf "$node_tgz" -C "$work/node"
if ! podman image exists "$base"; then
  mkdir -p "$work/runtime/usr/local/bin"
  install -m 755 "$work/node/package/bin/node" "$work/runtime/usr/local/bin/node"
  cp "$rootfs_tar" "$work/runtime.tar"
  tar -C "$work/runtime" -rf "$work/runtime.tar" ./usr/local/bin/node
  log "importing $base"
  podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_VERSION='"$node_version" --change 'CMD ["node"]' "$work/runtime.tar" "$base" >/dev/null
fi

# The build base: npm, Node's headers (node-gyp builds better-sqlite3 with them: nothing is downloaded) and
# the compilers, as node:20-bookworm (buildpack-deps) has them. It also trusts the certificate authorities this
# machine adds to its own (/usr/local/share/ca-certificates: a TLS-inspecting proxy's) so that npm reaches the
# registry from inside the build; only the build stages use this image, none of it reaches the service image.
mkdir -p "$work/ctx/usr/local/lib/node_modules" "$work/ctx/usr/local/include" "$work/ctx/usr/local/share/ca-certificates"
cp -a "$work/node/package/include/node" "$work/ctx/usr/local/include/node"
tar -xzf "$npm_tgz" -C "$work/ctx/usr/local/lib/node_modules"
mv "$work/ctx/usr/local/lib/node_modules/package" "$work/ctx/usr/local/lib/node_modules/npm"
cp /usr/local/share/ca-certificates/*.crt "$work/ctx/usr/local/share/ca-certificates/" 2>/dev/null || true
cat > "$work/ctx/Containerfile" <<CF
FROM $base
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 make g++ ca-certificates && rm -rf /var/lib/apt/lists/*
COPY usr /usr
RUN update-ca-certificates >/dev/null \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CF
log "building $build"
podman build --network host -q -t "$build" -f "$work/ctx/Containerfile" "$work/ctx" >/dev/null
echo "BASE_IMAGE=$base"; echo "BUILD_IMAGE=$build"
