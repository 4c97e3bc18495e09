#!/usr/bin/env bash
# Starts the central API and the classroom server in the foreground; Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/../.."
CENTRAL_PORT=${CENTRAL_PORT:-3000}
CLASSROOM_PORT=${CLASSROOM_PORT:-3001}
export NODE_ENV=${NODE_ENV:-development}

pids=()
stop() { trap - INT TERM EXIT; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop INT TERM EXIT

# Each service its own database (the Makefile's defaults are the two SQLite files under data/).
if [ -n "${DATABASE_URL:-}" ]; then
  echo "DATABASE_URL is set: it would give both services one database. Set CENTRAL_DATABASE_URL and CLASSROOM_DATABASE_URL instead." >&2
  exit 2
fi
CENTRAL_DATABASE_URL=${CENTRAL_DATABASE_URL:-sqlite:data/central.sqlite}
CLASSROOM_DATABASE_URL=${CLASSROOM_DATABASE_URL:-sqlite:data/classroom.sqlite}

# Both listen on loopback only unless HOST says otherwise.
export HOST=${HOST:-127.0.0.1}
# Each service starts as its `npm start` does (its allocator setting and node's flags), without npm in between; run in
# the background, the subshell becomes the service itself (exec), so that stopping its pid stops it.
start() { cd "$1" && eval "exec env $(node -p "require('./package.json').scripts.start")"; }
DATABASE_URL=$CENTRAL_DATABASE_URL PORT=$CENTRAL_PORT RPI_CLOUD=${RPI_CLOUD:-http://127.0.0.1:$CLASSROOM_PORT} start central &
pids+=($!)
DATABASE_URL=$CLASSROOM_DATABASE_URL RPI_PORT=$CLASSROOM_PORT start classroom &
pids+=($!)

cat <<MSG

  Central API       http://127.0.0.1:$CENTRAL_PORT   (API docs: http://127.0.0.1:$CENTRAL_PORT/docs)
  Classroom server  http://127.0.0.1:$CLASSROOM_PORT   (API docs: http://127.0.0.1:$CLASSROOM_PORT/docs)
  Demo sign-ins are listed above (make seed-demo). Ctrl-C stops both.

MSG
wait -n "${pids[@]}"
