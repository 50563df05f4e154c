#!/usr/bin/env bash
# Run the test suite on a deliberately busy machine: N busy loops (default 2, one per core of
# the project's machines) compete for the CPU while the tests run, so a test that depends on how
# fast the machine is fails here. Not run in CI (it makes the suite slower).
#
# Usage: scripts/busy-suite.sh [cargo test arguments...]   (default: --workspace)
#        scripts/busy-suite.sh --ci                         (the whole of .ci/run instead)
#   HOGS=4 scripts/busy-suite.sh -p copilot-eval-e2e --test budgets
#   NICE=10 scripts/busy-suite.sh ...   (the hogs' priority; default 0, the tests' own)
# Exit status: the tests' (cargo test's, or .ci/run's). The busy loops are stopped on every exit
# (their pids only).
set -euo pipefail

hogs=${HOGS:-2}
niceness=${NICE:-0}
pids=()
stop_hogs() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}
trap stop_hogs EXIT INT TERM

for _ in $(seq 1 "$hogs"); do
    nice -n "$niceness" bash -c 'while :; do :; done' &
    pids+=("$!")
done
echo "busy-suite: ${hogs} busy loops at nice ${niceness} running (pids ${pids[*]})" >&2

if [ "${1:-}" = "--ci" ]; then
    shift
    bash "$(dirname "$0")/../.ci/run" "$@"
    exit $?
fi
if [ "$#" -eq 0 ]; then
    set -- --workspace --no-fail-fast
fi
cargo test "$@"
