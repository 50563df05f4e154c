#!/usr/bin/env bash
# Run the test suite on a deliberately busy machine: N busy loops (default 2, one per core of
# the project's machines) compete for the CPU while `cargo test` runs, so a test that depends on
# how fast the machine is fails here. Not run in CI (it doubles the suite's time).
#
# Usage: scripts/busy-suite.sh [cargo test arguments...]   (default: --workspace)
#   HOGS=4 scripts/busy-suite.sh -p copilot-eval-e2e --test budgets
# Exit status: cargo test's. The busy loops are stopped on every exit (their pids only).
set -euo pipefail

hogs=${HOGS:-2}
pids=()
stop_hogs() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}
trap stop_hogs EXIT INT TERM

for _ in $(seq 1 "$hogs"); do
    ( while :; do :; done ) &
    pids+=("$!")
done
echo "busy-suite: ${hogs} busy loops running (pids ${pids[*]})" >&2

if [ "$#" -eq 0 ]; then
    set -- --workspace
fi
cargo test "$@"
