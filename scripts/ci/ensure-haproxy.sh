#!/usr/bin/env bash
# Makes sure HAProxy (Debian's `haproxy` package) is installed for `make deploy-test`. The package's own
# service is left alone: the test runs its own HAProxy on loopback ports.
set -euo pipefail
log() { echo "ensure-haproxy: $*" >&2; }
if command -v haproxy >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then log "haproxy is not installed and installing it needs root: apt-get install haproxy"; exit 1; fi
log "installing HAProxy"
apt-get update -qq >&2
# policy-rc.d: no service started by the package (there may be no init system, and port 80 may be taken).
had_policy=0; [ -e /usr/sbin/policy-rc.d ] && had_policy=1
[ "$had_policy" = 1 ] || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >&2 || { [ "$had_policy" = 1 ] || rm -f /usr/sbin/policy-rc.d; exit 1; }
[ "$had_policy" = 1 ] || rm -f /usr/sbin/policy-rc.d
command -v haproxy >/dev/null 2>&1 || { log "haproxy still missing after apt-get install"; exit 1; }
