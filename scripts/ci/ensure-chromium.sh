#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed at /usr/bin/chromium for the browser tests (the tests drive
# it through playwright-core, which never downloads a browser of its own).
set -euo pipefail

log() { echo "ensure-chromium: $*" >&2; }

# The Khmer font lets the pages' Khmer text render (and be checked) in the headless browser.
if [ -x /usr/bin/chromium ] && dpkg -s fonts-khmeros >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then log "need root to install chromium"; exit 1; fi
log "installing chromium"
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-khmeros >&2
[ -x /usr/bin/chromium ] || { log "/usr/bin/chromium is missing after the install"; exit 1; }
