#!/usr/bin/env bash
# Runs every recipe in recipes/ against the built-in simulated server with QUICK=1 (short counts
# and durations), so a user sees what each produces before aiming it at a cluster. The results
# stay in results/demo-recipes/ (one folder per recipe).
# Usage: scripts/demo-recipes.sh [DIR-WITH-BINARIES]   (default target/release)
set -euo pipefail
bin=$(cd "${1:-target/release}" && pwd)
for b in arrivals fire reduce table simserve; do
  [ -x "$bin/$b" ] || { echo "demo-recipes: $bin/$b not built (run: make build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$bin/simserve" --port 0 --profile small-gpu > "$tmp/url" &
server=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
url=$(head -n 1 "$tmp/url")
[ -n "$url" ] || { echo "demo-recipes: simserve did not start" >&2; exit 1; }
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
SHAREGPT=${SHAREGPT:-crates/arrivals/tests/fixtures/sharegpt.json} recipe arena "$url"
recipe sweep "$url"
recipe closed-loop "$url"
# two "models" on the one simulated server, then the cross-model report over both folders
OUT="$results/matrix-a" recipes/matrix.sh "$url" model-a "1x sim" >/dev/null
OUT="$results/matrix-b" recipes/matrix.sh "$url" model-b "2x sim" >/dev/null
printf '\n### recipes/matrix.sh --report %s %s\n\n' "$results/matrix-a" "$results/matrix-b"
REPORT="$results/matrix-report.md" recipes/matrix.sh --report "$results/matrix-a" "$results/matrix-b"
echo >&2
echo "demo-recipes: every run's events, summaries, tables and charts are in $results/" >&2
