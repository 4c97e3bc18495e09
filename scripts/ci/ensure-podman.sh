#!/usr/bin/env bash
# Makes sure podman, buildah, runc, podman-compose and debootstrap (Debian's packages) are installed for
# `make image-test`, writes the containers.conf this machine needs, and prints the environment to use them
# as shell assignments (eval "$(bash scripts/ci/ensure-podman.sh)").
#
# The settings: runc (crun fails here), cgroupfs (no systemd cgroup manager), no default ulimits (raising
# them is refused in an unprivileged VM), chroot isolation for builds. Only host networking works here, so
# the image test runs every container with --network host.
set -euo pipefail
log() { echo "ensure-podman: $*" >&2; }
conf_dir=/var/cache/lms-image
conf=$conf_dir/containers.conf

missing=()
for tool in podman:podman buildah:buildah runc:runc podman-compose:podman-compose debootstrap:debootstrap; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || [ -x "/usr/sbin/${tool%%:*}" ] || missing+=("${tool##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then log "missing ${missing[*]}; installing them needs root: apt-get install ${missing[*]}"; exit 1; fi
  log "installing ${missing[*]}"
  for attempt in 1 2 3 4 5 6; do
    # Another install on the machine may hold the dpkg lock for a while.
    if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      podman buildah runc podman-compose debootstrap; } >&2; then break; fi
    [ "$attempt" = 6 ] && { log "apt-get install failed"; exit 1; }
    log "apt-get failed (the dpkg lock?), retrying in 10 s"; sleep 10
  done
fi

mkdir -p "$conf_dir"
cat > "$conf.new" <<'CONF'
# Written by scripts/ci/ensure-podman.sh for `make image-test` (used through CONTAINERS_CONF).
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
CONF
mv "$conf.new" "$conf"
echo "CONTAINERS_CONF=$conf"
echo "BUILDAH_ISOLATION=chroot"
