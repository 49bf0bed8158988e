#!/usr/bin/env bash
# Runs the whole pipe against the built-in simulated server on a free loopback port:
#   arrivals | fire | reduce | table
# Usage: scripts/demo.sh [DIR-WITH-BINARIES]   (default target/release)
set -euo pipefail
bin=${1:-target/release}
for b in arrivals fire reduce table simserve; do
  [ -x "$bin/$b" ] || { echo "demo: $bin/$b not built (run: make build)" >&2; exit 1; }
done

out=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$out"' EXIT

# The server prints its base URL on its first stdout line once it listens.
"$bin/simserve" --port 0 --profile small-gpu > "$out/url" &
server=$!
for _ in $(seq 100); do [ -s "$out/url" ] && break; sleep 0.05; done
url=$(head -n 1 "$out/url")
[ -n "$url" ] || { echo "demo: simserve did not start" >&2; exit 1; }
echo "demo: simulated server at $url (profile small-gpu: a continuous-batching engine, see docs/simserve.md)" >&2
echo "demo: arrivals --rate 20 --burstiness 0.7 --num-prompts 100 --input-tokens 256 --output-tokens 64 | fire --url $url | reduce | table" >&2

"$bin/arrivals" --rate 20 --burstiness 0.7 --num-prompts 100 --input-tokens 256 --output-tokens 64 --seed 42 \
  | "$bin/fire" --url "$url" \
  | "$bin/reduce" --label simserve \
  | "$bin/table"
