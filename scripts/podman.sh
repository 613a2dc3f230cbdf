#!/usr/bin/env bash
# The container harness for machines with no Docker engine: Debian's podman, used by .ci/run, by
# developers and by the container tests (test/support/containers.ts).
#
#   scripts/podman.sh install             # apt-get install podman runc, when missing (as root)
#   scripts/podman.sh base                # the local stand-in of node:24-slim: localhost/payment-sdk-node-base:24
#   scripts/podman.sh image [--no-build]  # `npm run image` with podman against that base
#   eval "$(scripts/podman.sh socket start)"  # podman serving the Docker API on a socket (prints export lines)
#   scripts/podman.sh socket stop         # stops what that start started, by pid, and removes its folder
#   scripts/podman.sh env                 # the export line of CONTAINERS_CONF, for podman calls of your own
#
# Every podman call here uses scripts/containers.conf (runc, lower rlimits; see that file) unless
# CONTAINERS_CONF names another. `socket stop` takes the folder from PAYMENT_SDK_PODMAN_DIR
# (exported by `socket start`) or as its argument, and stops only the service it started.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/scripts/containers.conf}
BASE_IMAGE=localhost/payment-sdk-node-base:24

say() { echo "podman.sh: $*" >&2; }
die() {
  say "$*"
  exit 1
}

install() {
  local packages=()
  command -v podman >/dev/null 2>&1 || packages+=(podman)
  command -v runc >/dev/null 2>&1 || packages+=(runc)
  [ ${#packages[@]} -eq 0 ] && return
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    die "missing ${packages[*]}: install them (apt-get install ${packages[*]}) and run again"
  fi
  say "installing ${packages[*]} (apt-get)"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
}

need_podman() { command -v podman >/dev/null 2>&1 || die "podman is not installed: run scripts/podman.sh install"; }

# Copies file $1 and the shared libraries ldd lists for it into folder $2, each at its own path.
copy_with_libraries() {
  local file=$1 dir=$2 library
  for library in $(ldd "$file" | grep -oE '/[^ ]+' || true); do
    [ -e "$library" ] && cp -L --parents "$library" "$dir"
  done
}

# The local stand-in of the official node:24-slim, which cannot be pulled here: the pinned node
# devDependency's binary at /usr/local/bin/node with its shared libraries, a `node` user (uid and
# gid 1000, home /home/node), /bin/sh (Debian's dash), /tmp. Rebuilt only when the node version changed.
base() {
  need_podman
  local node version dir
  node=$(readlink -f "$root/node_modules/.bin/node" 2>/dev/null) || true
  [ -n "$node" ] && [ -x "$node" ] || die "no node binary in node_modules/.bin: run npm ci first"
  version=$("$node" --version)
  if podman image exists "$BASE_IMAGE" &&
    [ "$(podman image inspect --format '{{ index .Labels "node.version" }}' "$BASE_IMAGE")" = "$version" ]; then
    say "$BASE_IMAGE (node $version) is there"
    return
  fi
  dir=$(mktemp -d /tmp/payment-sdk-base.XXXXXX)
  trap 'rm -rf "$dir"' RETURN
  mkdir -p "$dir/rootfs/usr/local/bin" "$dir/rootfs/bin" "$dir/rootfs/etc" "$dir/rootfs/tmp" "$dir/rootfs/home/node"
  cp "$node" "$dir/rootfs/usr/local/bin/node"
  copy_with_libraries "$node" "$dir/rootfs"
  cp "$(readlink -f /bin/sh)" "$dir/rootfs/bin/sh"
  copy_with_libraries /bin/sh "$dir/rootfs"
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' >"$dir/rootfs/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\n' >"$dir/rootfs/etc/group"
  chmod 1777 "$dir/rootfs/tmp"
  chown 1000:1000 "$dir/rootfs/home/node"
  tar -C "$dir/rootfs" -cf "$dir/base.tar" .
  podman import --quiet \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    --change "LABEL node.version=$version" \
    --change 'CMD ["node"]' \
    "$dir/base.tar" "$BASE_IMAGE" >/dev/null
  say "built $BASE_IMAGE (node $version)"
}

image() {
  need_podman
  podman image exists "$BASE_IMAGE" || base
  (cd "$root" && BASE=${BASE:-$BASE_IMAGE} PAYMENT_SDK_IMAGE_ENGINE=podman npm run --silent image -- "$@")
}

# True when a unix socket at $1 answers the Docker API's ping.
answers() { [ -S "$1" ] && podman --url "unix://$1" version >/dev/null 2>&1; }

socket_start() {
  need_podman
  local dir pid
  dir=$(mktemp -d /tmp/payment-sdk-podman.XXXXXX)
  # Its own process group (setsid), its output in the folder: a caller's $(...) does not wait for it.
  setsid podman system service --time 0 "unix://$dir/podman.sock" >"$dir/service.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/service.pid"
  for _ in $(seq 1 100); do
    answers "$dir/podman.sock" && break
    kill -0 "$pid" 2>/dev/null || die "podman system service exited: $(tail -5 "$dir/service.log")"
    sleep 0.1
  done
  answers "$dir/podman.sock" || {
    socket_stop "$dir"
    die "podman system service did not answer on $dir/podman.sock within 10 s"
  }
  say "podman serving the Docker API on $dir/podman.sock (pid $pid)"
  echo "export PAYMENT_SDK_PODMAN_DIR=$dir"
  echo "export DOCKER_HOST=unix://$dir/podman.sock"
  # testcontainers: its reaper image cannot be pulled here, and tests reach containers on loopback.
  echo "export TESTCONTAINERS_RYUK_DISABLED=true"
  echo "export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1"
  echo "export CONTAINERS_CONF=$CONTAINERS_CONF"
}

socket_stop() {
  local dir=${1:-${PAYMENT_SDK_PODMAN_DIR:-}} pid
  [ -n "$dir" ] || die "socket stop: no folder (set PAYMENT_SDK_PODMAN_DIR, as socket start exports it, or pass it)"
  case "$dir" in
    /tmp/payment-sdk-podman.*) ;;
    *) die "socket stop: $dir is not a folder socket start made" ;;
  esac
  [ -d "$dir" ] || return 0
  pid=$(cat "$dir/service.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  say "stopped the podman API service of $dir"
}

case "${1:-}" in
  install) install ;;
  base) base ;;
  image) image "${@:2}" ;;
  socket)
    case "${2:-}" in
      start) socket_start ;;
      stop) socket_stop "${3:-}" ;;
      *) die "usage: scripts/podman.sh socket start|stop [folder]" ;;
    esac
    ;;
  env) echo "export CONTAINERS_CONF=$CONTAINERS_CONF" ;;
  *) die "usage: scripts/podman.sh install|base|image [--no-build]|socket start|stop|env" ;;
esac
