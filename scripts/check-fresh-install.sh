#!/usr/bin/env bash
# The README's first command in a fresh clone: `npm install` must be quiet (no warning line) and
# leave the tree clean (`git status --porcelain` empty: no rewritten package-lock.json), both with the
# machine's Node 20 (npm itself then runs on Node 20, below the devDependencies' engines) and with
# Node 24 (the pinned `node` devDependency of this checkout, first on PATH). It clones the committed
# HEAD into a temporary folder, so run it after `npm ci` (the npm cache is warm: --prefer-offline).
# Prints what each `npm install` printed. Used by .ci/run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/payment-sdk-fresh-install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

node24="$(readlink -f "$root/node_modules/.bin/node" 2>/dev/null || true)"
if [ -z "$node24" ] || [ ! -x "$node24" ]; then
  echo "check-fresh-install: $root/node_modules/.bin/node is missing: run npm ci first" >&2
  exit 1
fi

# One fresh clone, one `npm install` with the `node` that PATH gives; writes what happened to
# $work/$2.log and fails on a warning line or a dirty tree.
install_in_clone() {
  local label="$1" dir="$work/$2" log="$work/$2.log"
  git clone --quiet "$root" "$dir"
  local version started output status=0
  version="$(node --version)"
  started=$(date +%s)
  output="$(cd "$dir" && npm install --prefer-offline 2>&1)" || status=$?
  {
    echo "npm install with $label (node $version, npm $(npm --version)): exit $status, $(($(date +%s) - started)) s, printed:"
    printf '%s\n' "$output" | sed 's/^/  | /'
    if grep -qi 'warn' <<<"$output"; then
      echo "FAILED: npm install printed a warning"
      status=1
    fi
    local dirty
    dirty="$(git -C "$dir" status --porcelain)"
    if [ -n "$dirty" ]; then
      echo "FAILED: the clone is not clean afterwards (git status --porcelain):"
      printf '%s\n' "$dirty" | sed 's/^/  | /'
      status=1
    fi
  } >"$log"
  rm -rf "$dir"
  return $status
}

system_major="$(/usr/bin/env node -p 'process.versions.node.split(".")[0]')"
if [ "$system_major" != 20 ]; then
  echo "check-fresh-install: the machine's node is $(/usr/bin/env node --version), not 20: its run below stands for Node 20"
fi
# Both at once: each mostly waits on the disk and the cache, so together they take little more than one.
install_in_clone "the machine's node" system &
system_job=$!
PATH="$(dirname "$node24"):$PATH" install_in_clone "the pinned Node 24 ($node24)" node24 &
node24_job=$!
failed=0
wait "$system_job" || failed=1
wait "$node24_job" || failed=1
cat "$work/system.log" "$work/node24.log"
if [ "$failed" != 0 ]; then
  echo "check-fresh-install: npm install in a fresh clone is not clean and quiet (see above)" >&2
  exit 1
fi
echo "check-fresh-install: a fresh clone installs quietly and stays clean, on Node $system_major and on Node 24"
