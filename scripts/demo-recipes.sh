#!/usr/bin/env bash
# Runs every recipe in recipes/ against the built-in simulated server with QUICK=1 (short counts
# and durations), so a user sees what each produces before aiming it at a cluster. The results
# stay in results/demo-recipes/ (one folder per recipe).
# Usage: scripts/demo-recipes.sh [DIR-WITH-BINARIES]   (default target/release)
set -euo pipefail
bin=$(cd "${1:-target/release}" && pwd)
. "$(dirname "$0")/simserve-up.sh"
simserve_up demo-recipes "$bin" --profile small-gpu
echo "demo-recipes: simulated server at $url (profile small-gpu)" >&2

results=results/demo-recipes
rm -rf "$results"
export QUICK=1 TOKENPIPE_BIN="$bin"

# recipe NAME ARGS...: one recipe, its output under a heading.
recipe() {
  local name=$1; shift
  printf '\n### recipes/%s.sh %s\n\n' "$name" "$*"
  OUT="$results/$name" "recipes/$name.sh" "$@"
}

recipe serve "$url"
# arena 07 reads ShareGPT: the small file of the tests stands in for ShareGPT V3.
SHAREGPT=${SHAREGPT:-tests/fixtures/arrivals/sharegpt.json} recipe arena "$url"
recipe sweep "$url"
recipe closed-loop "$url"
# small-gpu's decode step grows 0.2 ms per sequence: within TPOT p50 <= 11 ms it serves a few
# users of the shortened workloads, not all 8 of the QUICK range
SLO='ttft.p99<=2s,tpot.p50<=11ms' recipe capacity "$url"
# two "models" on the one simulated server, one of them on two shapes (seed 003's main
# comparison), then the cross-model report over the three folders
OUT="$results/matrix-a" recipes/matrix.sh "$url" model-a "1x sim" >/dev/null
OUT="$results/matrix-a2" NOTE="the same server: no scaling" \
  recipes/matrix.sh "$url" model-a "2x sim" >/dev/null
OUT="$results/matrix-b" recipes/matrix.sh "$url" model-b "1x sim" >/dev/null
printf '\n### recipes/matrix.sh --report %s %s %s\n\n' \
  "$results/matrix-a" "$results/matrix-a2" "$results/matrix-b"
REPORT="$results/matrix-report.md" recipes/matrix.sh --report \
  "$results/matrix-a" "$results/matrix-a2" "$results/matrix-b"
echo >&2
echo "demo-recipes: every run's events, summaries, tables and charts are in $results/" >&2
