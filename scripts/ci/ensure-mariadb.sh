#!/usr/bin/env bash
# Makes sure a MariaDB server answers on 127.0.0.1:3306 (installing and starting it when absent, as on a bare
# CI machine) with an account the takeover tests may create and drop databases with, then prints the URL they
# use as a shell assignment: TEST_MYSQL_URL=mysql://lms_test:lms_test@127.0.0.1:3306/test
set -euo pipefail

USER_NAME=lms_test
USER_PASS=lms_test

log() { echo "ensure-mariadb: $*" >&2; }

# mysqladmin ping succeeds whenever the server answers, whatever the account.
ready() { mysqladmin --protocol=tcp -h 127.0.0.1 -P 3306 --connect-timeout=2 ping >/dev/null 2>&1; }

if ! command -v mariadbd >/dev/null 2>&1 && ! command -v mysqld >/dev/null 2>&1 && ! ready; then
  if [ "$(id -u)" -ne 0 ]; then log "need root to install mariadb-server"; exit 1; fi
  log "installing MariaDB"
  if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >&2; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >&2
fi

if ! ready; then
  log "starting MariaDB"
  if ! service mariadb start >&2 2>&1; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    (mysqld_safe --bind-address=127.0.0.1 --port=3306 >/dev/null 2>&1 &)
  fi
  for _ in $(seq 1 60); do ready && break; sleep 1; done
fi
ready || { log "MariaDB does not answer on 127.0.0.1:3306"; exit 1; }

SQL="CREATE USER IF NOT EXISTS '$USER_NAME'@'127.0.0.1' IDENTIFIED BY '$USER_PASS';
CREATE USER IF NOT EXISTS '$USER_NAME'@'localhost' IDENTIFIED BY '$USER_PASS';
GRANT ALL PRIVILEGES ON *.* TO '$USER_NAME'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO '$USER_NAME'@'localhost';
CREATE DATABASE IF NOT EXISTS test;"
# As root through the socket (Debian's default), else as root without a password over TCP.
if ! mysql -uroot -e "$SQL" >/dev/null 2>&1 && ! mysql --protocol=tcp -h 127.0.0.1 -uroot -e "$SQL" >&2; then
  if mysql --protocol=tcp -h 127.0.0.1 -u"$USER_NAME" -p"$USER_PASS" -e "select 1" >/dev/null 2>&1; then
    log "using the existing $USER_NAME account"
  else
    log "cannot create the $USER_NAME account"; exit 1
  fi
fi
echo "TEST_MYSQL_URL=mysql://$USER_NAME:$USER_PASS@127.0.0.1:3306/test"
