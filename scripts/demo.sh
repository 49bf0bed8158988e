#!/usr/bin/env bash
# Runs the whole pipe against the built-in simulated server on a free loopback port:
#   arrivals | fire | reduce | table
# Usage: scripts/demo.sh [DIR-WITH-BINARIES]   (default target/release)
set -euo pipefail
bin=${1:-target/release}
. "$(dirname "$0")/simserve-up.sh"
simserve_up demo "$bin" --profile small-gpu
echo "demo: simulated server at $url (profile small-gpu: a continuous-batching engine, see docs/simserve.md)" >&2
echo "demo: arrivals --rate 20 --burstiness 0.7 --num-prompts 100 --input-tokens 256 --output-tokens 64 | fire --url $url | reduce | table" >&2

"$bin/arrivals" --rate 20 --burstiness 0.7 --num-prompts 100 --input-tokens 256 --output-tokens 64 --seed 42 \
  | "$bin/fire" --url "$url" \
  | "$bin/reduce" --label simserve \
  | "$bin/table"
