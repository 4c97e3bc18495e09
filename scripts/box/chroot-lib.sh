# Shared by the box's chroot tests (package-test.sh, release-test.sh): the caller sets root, work and fail().
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
wait_up() { # port pid
  for _ in $(seq 1 600); do
    curl -fsS "http://127.0.0.1:$1/" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}
hexsecret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# Starts the server as the unit does: its user, working directory, Environment= lines, then its
# EnvironmentFile over them, then ExecStart; only the port and address are the test's.
start_box() { # port
  local unit=$root/lib/systemd/system/lms-classroom.service
  local user wd exec_start envfile
  user=$(sed -n 's/^User=//p' "$unit"); wd=$(sed -n 's/^WorkingDirectory=//p' "$unit")
  exec_start=$(sed -n 's/^ExecStart=//p' "$unit"); envfile=$(sed -n 's/^EnvironmentFile=//p' "$unit")
  local -a envs fileenvs
  mapfile -t envs < <(sed -n 's/^Environment=//p' "$unit")
  mapfile -t fileenvs < <(grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$root$envfile")
  chroot "$root" setpriv --reuid="$user" --regid="$user" --init-groups env -i PATH=/usr/bin:/bin \
    "${envs[@]}" "${fileenvs[@]}" RPI_PORT="$1" HOST=127.0.0.1 sh -c "cd $wd && exec $exec_start" \
    > "$work/box.log" 2>&1 &
  server_pid=$!
  wait_up "$1" "$server_pid" || { cat "$work/box.log" >&2; fail "the installed server did not start"; }
}
stop_box() {
  kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
}
