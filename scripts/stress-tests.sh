#!/usr/bin/env bash
# The JS suite on a busy machine: `npm run test:js` N times (default 5) with two busy CPU loops
# (`yes > /dev/null`) beside it, and with --demos also both demos as a user runs them
# (`node examples/demo.mjs` and `node examples/demo.mjs --fleet`) N times each. A test that only
# passes on an idle machine is a broken test; this is how to find one.
#
#   scripts/stress-tests.sh [runs] [--demos] [--demos-only]
#
# Needs the addon built (`npm run build`, or one `npm test`) and redis-server on PATH. Prints one
# line per run and a summary; the logs of failed runs stay in the directory it names. Exit 0 only
# when every run passed.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=5 suite=1 demos=0
for arg in "$@"; do
  case "$arg" in
    --demos) demos=1 ;;
    --demos-only) demos=1 suite=0 ;;
    ''|*[!0-9]*) echo "usage: scripts/stress-tests.sh [runs] [--demos] [--demos-only]" >&2; exit 2 ;;
    *) runs="$arg" ;;
  esac
done
if ! ls spend-sentinel.*.node >/dev/null 2>&1; then
  echo "the addon is not built: run npm run build (or npm test) first" >&2
  exit 2
fi

logs="$(mktemp -d "${TMPDIR:-/tmp}/spend-sentinel-stress.XXXXXX")"
busy=()
stop_busy() { for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done; }
trap stop_busy EXIT
for _ in 1 2; do
  yes >/dev/null &
  busy+=("$!")
done
echo "two busy loops (pids ${busy[*]}) on $(nproc) cores; logs in $logs"

failed=0 passed=0
# run <label> <log name> <command...>: runs it, prints "label: pass|FAIL in Ns", keeps failed logs.
run() {
  local label="$1" log="$logs/$2.log"
  shift 2
  local start=$SECONDS
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "$label: pass in $((SECONDS - start)) s$(summary "$log")"
    rm -f "$log"
  else
    failed=$((failed + 1))
    echo "$label: FAIL in $((SECONDS - start)) s$(summary "$log") (log: $log)"
    grep -E '^\s*not ok ' "$log" | head -n 10 | sed 's/^/    /'
  fi
}
# ", 772 tests" from node:test's closing lines, when there are any.
summary() {
  local tests fails
  tests=$(grep -E "^# tests " "$1" | awk "{print \$3}")
  fails=$(grep -E '^# fail ' "$1" | awk '{print $3}')
  [ -n "$tests" ] && echo ", $tests tests, $fails failed"
}

for i in $(seq 1 "$runs"); do
  [ "$suite" = 1 ] && run "suite run $i/$runs" "suite-$i" npm run test:js
  if [ "$demos" = 1 ]; then
    out="$logs/demo-$i"
    run "demo run $i/$runs" "demo-$i" node examples/demo.mjs --out "$out.svg"
    run "fleet demo run $i/$runs" "fleet-demo-$i" node examples/demo.mjs --fleet --out "$out-fleet.svg"
  fi
done
echo "$passed passed, $failed failed (two busy loops beside every run)"
[ "$failed" = 0 ] && rm -rf "$logs"
[ "$failed" = 0 ]
