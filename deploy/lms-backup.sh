#!/usr/bin/env bash
# Nightly backup of one service (run by lms-backup@.timer, or by hand):
#   deploy/lms-backup.sh central            # or: classroom
# Writes $LMS_BACKUP_DIR/<service>-<UTC date-time>/ with `npm run backup`, refuses to count a backup
# much smaller than the previous one as good (a database emptied by mistake must not rotate the good
# backups away), and keeps the newest $LMS_BACKUP_KEEP good ones. Objects unchanged since the previous good
# backup are hard-linked from it rather than downloaded again (`--link-from`): each folder stays whole.
set -euo pipefail
service=${1:?usage: lms-backup.sh central|classroom}
root=${LMS_BACKUP_DIR:-/var/backups/lms}
keep=${LMS_BACKUP_KEEP:-14}
# A backup smaller than this percentage of the previous one is kept but marked suspect, and nothing is pruned.
min_percent=${LMS_BACKUP_MIN_PERCENT:-50}
app=${LMS_APP_DIR:-/opt/lms/current}
# node_exporter's textfile folder (Debian's prometheus-node-exporter reads this one): the time and size of
# the last good backup, for the LmsBackupTooOld alert. Empty: no metrics file.
metrics_dir=${LMS_BACKUP_METRICS_DIR-/var/lib/prometheus/node-exporter}

size_of() { du -sb "$1" | cut -f1; }
dest="$root/$service-$(date -u +%Y%m%d-%H%M%S)"
# The newest good backup: not marked suspect, and finished (its manifest is written last).
previous=$(ls -1d "$root/$service"-* 2>/dev/null | grep -v '\.suspect$' | sort \
  | while read -r d; do [ -f "$d/manifest.json" ] && echo "$d"; done | tail -n 1 || true)
mkdir -p "$root"
link=()
# backup checks the previous manifest's signature itself and links nothing from a folder changed since.
[ -n "$previous" ] && link=(--link-from "$previous")
(cd "$app" && npm run --silent backup -w "$service" -- --to "$dest" ${link[@]+"${link[@]}"})

size=$(size_of "$dest")
if [ -n "$previous" ]; then
  before=$(size_of "$previous")
  if [ "$before" -gt 0 ] && [ $((size * 100 / before)) -lt "$min_percent" ]; then
    mv "$dest" "$dest.suspect"
    echo "lms-backup: $service backup is $size bytes, under ${min_percent}% of the previous ($previous, $before bytes): kept as $dest.suspect, nothing pruned" >&2
    exit 1
  fi
fi
echo "lms-backup: $dest ($size bytes)"
if [ -n "$metrics_dir" ] && [ -d "$metrics_dir" ] && [ -w "$metrics_dir" ]; then
  prom="$metrics_dir/lms_backup_$service.prom"
  printf '# HELP lms_backup_last_success_timestamp_seconds When the last good backup of the service ended\n# TYPE lms_backup_last_success_timestamp_seconds gauge\nlms_backup_last_success_timestamp_seconds{service="%s"} %s\n# HELP lms_backup_size_bytes Size of the last good backup\n# TYPE lms_backup_size_bytes gauge\nlms_backup_size_bytes{service="%s"} %s\n' \
    "$service" "$(date -u +%s)" "$service" "$size" > "$prom.tmp" && mv "$prom.tmp" "$prom"
fi
ls -1d "$root/$service"-* | grep -v '\.suspect$' | sort | head -n -"$keep" | while read -r old; do
  rm -rf -- "$old"
  echo "lms-backup: pruned $old"
done
