#!/usr/bin/env bash
# Makes sure a streaming replica of the local PostgreSQL cluster (the one on 127.0.0.1:5432, see
# ensure-services.sh) answers on 127.0.0.1:5433, in recovery and streaming, then prints its URL as a shell
# assignment (TEST_DATABASE_REPLICA_URL=...). Idempotent: a replica that streams is left alone, a stopped
# one is started, and one that does not stream again (it fell behind the WAL the primary keeps) is made
# anew. Made with Debian's cluster tools (pg_createcluster, pg_ctlcluster) and `pg_basebackup -R`, as root
# or as the postgres user; tests create their schemas on the primary and replication brings them here.
set -euo pipefail

PRIMARY_PORT=5432
PORT=${LMS_REPLICA_PORT:-5433}
CLUSTER=${LMS_REPLICA_CLUSTER:-lms_replica}
# The role and database ensure-services.sh creates (a superuser: it may connect for replication and the
# tests may pause the replica's replay).
PG_USER=lms_test
PG_PASS=lms_test
PG_DB=lms_test
URL="postgres://$PG_USER:$PG_PASS@127.0.0.1:$PORT/$PG_DB"

log() { echo "ensure-pg-replica: $*" >&2; }
fail() { log "$*"; exit 1; }

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}

primary_sql() {
  PGPASSWORD=$PG_PASS psql -h 127.0.0.1 -p "$PRIMARY_PORT" -U "$PG_USER" -d postgres -v ON_ERROR_STOP=1 -qAtX -c "$1"
}

replica_sql() {
  PGPASSWORD=$PG_PASS PGCONNECT_TIMEOUT=3 psql -h 127.0.0.1 -p "$PORT" -U "$PG_USER" -d "$PG_DB" -qAtX -c "$1" 2>/dev/null
}

# In recovery and receiving the primary's WAL now (not merely replaying what it copied once).
streaming() {
  [ "$(replica_sql "select pg_is_in_recovery() and exists (select 1 from pg_stat_wal_receiver where status = 'streaming')")" = t ]
}

wait_streaming() {
  for _ in $(seq 1 "$1"); do streaming && return 0; sleep 1; done
  return 1
}

cluster_status() { pg_lsclusters -h | awk -v v="$1" -v n="$2" '$1 == v && $2 == n { print $4 }'; }

# Two runs at once (two test runs on one machine) would both make the cluster. The server started here
# must not inherit the lock's descriptor (it would hold the lock as long as it runs): see start_replica.
exec 9>"${TMPDIR:-/tmp}/lms-pg-replica.lock"
flock 9
start_replica() { pg_ctlcluster --skip-systemctl-redirect "$VER" "$CLUSTER" start 9>&- >&2; }

command -v pg_lsclusters >/dev/null 2>&1 || fail "Debian's PostgreSQL cluster tools are missing (run ensure-services.sh first)"
read -r VER PRIMARY < <(pg_lsclusters -h | awk -v p="$PRIMARY_PORT" '$3 == p { print $1, $2; exit }') \
  || fail "no PostgreSQL cluster on port $PRIMARY_PORT (run ensure-services.sh first)"
primary_sql "select 1" >/dev/null || fail "the primary does not answer as $PG_USER on 127.0.0.1:$PRIMARY_PORT"

if streaming; then
  echo "TEST_DATABASE_REPLICA_URL=$URL"
  exit 0
fi

status=$(cluster_status "$VER" "$CLUSTER")
if [ -n "$status" ]; then
  if [ "$status" != online ]; then
    log "starting the replica $VER/$CLUSTER"
    start_replica || true
  fi
  if wait_streaming 20; then
    echo "TEST_DATABASE_REPLICA_URL=$URL"
    exit 0
  fi
  log "the replica $VER/$CLUSTER does not stream: making it anew"
  pg_dropcluster --stop "$VER" "$CLUSTER" >&2
elif pg_isready -h 127.0.0.1 -p "$PORT" -q 2>/dev/null; then
  fail "port $PORT is taken by a server that is not the replica $VER/$CLUSTER"
fi

[ "$(primary_sql "show wal_level")" != minimal ] || fail "the primary's wal_level is minimal: set it to replica and restart it"
[ "$(primary_sql "show max_wal_senders")" -gt 0 ] || fail "the primary's max_wal_senders is 0: raise it and restart it"

# A replication connection from loopback, with the role's password, whatever the primary's pg_hba.conf says of it.
can_replicate() {
  PGPASSWORD=$PG_PASS psql "host=127.0.0.1 port=$PRIMARY_PORT user=$PG_USER dbname=replication replication=true" \
    -qAtX -c IDENTIFY_SYSTEM >/dev/null 2>&1
}
if ! can_replicate; then
  hba=$(primary_sql "show hba_file")
  log "allowing replication connections of $PG_USER from 127.0.0.1 in $hba"
  # md5 also accepts a password stored as SCRAM (and then authenticates with SCRAM).
  printf '%s\n' "host replication $PG_USER 127.0.0.1/32 md5" >>"$hba"
  primary_sql "select pg_reload_conf()" >/dev/null
  for _ in $(seq 1 10); do can_replicate && break; sleep 0.5; done
  can_replicate || fail "the primary refuses replication connections of $PG_USER from 127.0.0.1 (see $hba)"
fi

log "making the replica $VER/$CLUSTER on port $PORT"
pg_createcluster "$VER" "$CLUSTER" -p "$PORT" -- --no-sync >&2
conf=/etc/postgresql/$VER/$CLUSTER
data=$(pg_lsclusters -h | awk -v v="$VER" -v n="$CLUSTER" '$1 == v && $2 == n { print $6 }')
# A hot standby refuses to start with fewer of these than the primary has.
{
  echo "listen_addresses = '127.0.0.1'"
  for setting in max_connections max_worker_processes max_prepared_transactions max_locks_per_transaction max_wal_senders; do
    echo "$setting = $(primary_sql "show $setting")"
  done
  echo "hot_standby = on"
} >"$conf/conf.d/lms-replica.conf"
find "$data" -mindepth 1 -delete
as_postgres env PGPASSWORD=$PG_PASS "/usr/lib/postgresql/$VER/bin/pg_basebackup" \
  -h 127.0.0.1 -p "$PRIMARY_PORT" -U "$PG_USER" -D "$data" -R -X stream -c fast >&2
start_replica
wait_streaming 60 || fail "the replica $VER/$CLUSTER does not stream (see /var/log/postgresql/postgresql-$VER-$CLUSTER.log)"
log "the replica $VER/$CLUSTER streams from $VER/$PRIMARY"
echo "TEST_DATABASE_REPLICA_URL=$URL"
