#!/usr/bin/env bash
# Makes sure a PostgreSQL server (with a streaming replica, see ensure-pg-replica.sh) and a Redis server
# answer on loopback, installing and starting them when they are absent (a bare CI machine), then prints
# the URLs the tests use as shell assignments.
set -euo pipefail

PG_USER=lms_test
PG_PASS=lms_test
PG_DB=lms_test

log() { echo "ensure-services: $*" >&2; }

apt_install() {
  if [ "$(id -u)" -ne 0 ]; then log "need root to install $*"; return 1; fi
  if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >&2; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

pg_ready() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }

ensure_postgres() {
  if ! command -v pg_isready >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    log "installing PostgreSQL"
    apt_install postgresql postgresql-client
  fi
  if ! pg_ready; then
    local ver
    ver=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
    if ! pg_lsclusters -h 2>/dev/null | grep -q .; then
      log "creating PostgreSQL cluster $ver/main"
      pg_createcluster "$ver" main >&2
    fi
    local cluster
    # The cluster of port 5432, not the replica's (which may sort first).
    cluster=$(pg_lsclusters -h | awk '$3 == 5432 { print $1" "$2; exit }')
    [ -n "$cluster" ] || cluster=$(pg_lsclusters -h | head -n 1 | awk '{print $1" "$2}')
    log "starting PostgreSQL $cluster"
    pg_ctlcluster --skip-systemctl-redirect $cluster start >&2 || pg_ctlcluster $cluster start >&2
    for _ in $(seq 1 30); do pg_ready && break; sleep 1; done
  fi
  pg_ready || { log "PostgreSQL does not answer on 127.0.0.1:5432"; return 1; }
  # A role and database of our own, with a password, work whatever the server's auth method.
  if ! psql -h 127.0.0.1 -U postgres -d postgres -qAt -c "select 1" >/dev/null 2>&1; then
    run_sql() { su postgres -c "psql -d postgres -v ON_ERROR_STOP=1 -qAt -c \"$1\""; }
  else
    run_sql() { psql -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt -c "$1"; }
  fi
  if [ "$(run_sql "select 1 from pg_roles where rolname='$PG_USER'")" != "1" ]; then
    run_sql "create role $PG_USER login superuser password '$PG_PASS'" >&2
  fi
  if [ "$(run_sql "select 1 from pg_database where datname='$PG_DB'")" != "1" ]; then
    run_sql "create database $PG_DB owner $PG_USER" >&2
  fi
  echo "TEST_DATABASE_URL=postgres://$PG_USER:$PG_PASS@127.0.0.1:5432/$PG_DB"
}

redis_ready() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

ensure_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    log "installing Redis"
    apt_install redis-server
  fi
  if ! redis_ready; then
    log "starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >&2
    for _ in $(seq 1 30); do redis_ready && break; sleep 0.5; done
  fi
  redis_ready || { log "Redis does not answer on 127.0.0.1:6379"; return 1; }
  echo "TEST_REDIS_URL=redis://127.0.0.1:6379"
}

ensure_postgres
# A streaming replica of that PostgreSQL on port 5433, for the tests of reads from a replica; outside CI a
# machine without it skips those tests.
bash "$(dirname "$0")/ensure-pg-replica.sh" || [ -z "${CI:-}" ]
ensure_redis
# MariaDB for the takeover tests (migrate-from-mysql); outside CI a machine without it skips those tests.
bash "$(dirname "$0")/ensure-mariadb.sh" || [ -z "${CI:-}" ]
# Chromium for the browser tests of the log-sync pages (prints nothing on stdout).
bash "$(dirname "$0")/ensure-chromium.sh"
