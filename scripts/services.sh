#!/usr/bin/env bash
# The real servers the webhook store tests need: PostgreSQL and Redis from Debian's packages, on
# 127.0.0.1, free ports, in a throw-away folder under /tmp. Used by .ci/run and by developers:
#
#   eval "$(scripts/services.sh start)"   # prints the export lines (URLs and the folder)
#   scripts/services.sh stop              # stops what that start started, by pid, and removes the folder
#
# `stop` takes the folder from PAYMENT_SDK_SERVICES_DIR (exported by `start`) or as its argument.
# Only the servers whose pids it recorded are stopped: never a server it did not start.
# Missing packages are installed with apt-get when running as root; otherwise it says what to install.
set -euo pipefail

say() { echo "services.sh: $*" >&2; }
die() {
  say "$*"
  exit 1
}

# Runs a command as the `postgres` user when root (PostgreSQL refuses to run as root), else as is.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

postgres_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
    echo "$dir"
  elif command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  fi
}

install_missing() {
  local packages=()
  [ -n "$(postgres_bin)" ] || packages+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || packages+=(redis-server)
  [ ${#packages[@]} -eq 0 ] && return
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    die "missing ${packages[*]}: install them (apt-get install ${packages[*]}) and run again"
  fi
  say "installing ${packages[*]} (apt-get)"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
  # Debian's package starts a cluster and a redis-server of its own: those are not ours to use or stop.
}

# True when something listens on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 40000))
    if ! listening "$port"; then
      echo "$port"
      return
    fi
  done
  die "no free port found"
}

wait_for() {
  local port=$1 what=$2
  for _ in $(seq 1 100); do
    listening "$port" && return
    sleep 0.1
  done
  die "$what did not listen on 127.0.0.1:$port within 10 s"
}

start() {
  install_missing
  local bin dir pg_port redis_port
  bin=$(postgres_bin)
  dir=$(mktemp -d /tmp/payment-sdk-services.XXXXXX)
  # A start that fails half-way stops what it had started.
  trap 'stop "$dir"' EXIT
  # The postgres user must reach its data folder inside.
  chmod 755 "$dir"
  mkdir -p "$dir/postgres" "$dir/redis"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir/postgres"

  pg_port=$(free_port)
  as_postgres "$bin/initdb" -D "$dir/postgres/data" -A trust -U postgres --no-sync >"$dir/postgres/initdb.log" 2>&1 ||
    die "initdb failed: $(tail -5 "$dir/postgres/initdb.log")"
  as_postgres "$bin/pg_ctl" -D "$dir/postgres/data" -l "$dir/postgres/log" -w -t 20 \
    -o "-p $pg_port -k $dir/postgres -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null ||
    die "PostgreSQL did not start: $(tail -5 "$dir/postgres/log")"
  head -1 "$dir/postgres/data/postmaster.pid" >"$dir/postgres.pid"

  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir/redis" \
    --daemonize yes --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/log" >/dev/null ||
    die "redis-server did not start"
  wait_for "$redis_port" "redis-server"
  cp "$dir/redis/redis.pid" "$dir/redis.pid"

  trap - EXIT
  say "PostgreSQL on 127.0.0.1:$pg_port (pid $(cat "$dir/postgres.pid")), Redis on 127.0.0.1:$redis_port (pid $(cat "$dir/redis.pid")), in $dir"
  echo "export PAYMENT_SDK_SERVICES_DIR=$dir"
  echo "export PAYMENT_SDK_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$pg_port/postgres"
  echo "export PAYMENT_SDK_TEST_REDIS_URL=redis://127.0.0.1:$redis_port"
}

# Stops the process whose pid is in file $1 (signal $2), waiting up to 10 s, then SIGKILL.
stop_pid() {
  local file=$1 signal=$2 pid
  [ -f "$file" ] || return 0
  pid=$(head -1 "$file")
  [ -n "$pid" ] || return 0
  kill "-$signal" "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  local dir=${1:-${PAYMENT_SDK_SERVICES_DIR:-}}
  [ -n "$dir" ] || die "stop: no folder (set PAYMENT_SDK_SERVICES_DIR, as start exports it, or pass it)"
  case "$dir" in
    /tmp/payment-sdk-services.*) ;;
    *) die "stop: $dir is not a folder start made" ;;
  esac
  [ -d "$dir" ] || return 0
  # SIGINT is PostgreSQL's fast shutdown. A start that failed half-way left only the servers' own pid files.
  stop_pid "$dir/postgres.pid" INT
  stop_pid "$dir/postgres/data/postmaster.pid" INT
  stop_pid "$dir/redis.pid" TERM
  stop_pid "$dir/redis/redis.pid" TERM
  rm -rf "$dir"
  say "stopped the servers of $dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *) die "usage: scripts/services.sh start|stop [folder]" ;;
esac
