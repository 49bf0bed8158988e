#!/usr/bin/env bash
# `make soak`: a long closed loop against the simulated server, with the resident memory of
# fire, reduce and simserve sampled at a fixed interval into a CSV, then drawn as an SVG chart.
# A benchmark, not a test: it asserts nothing; BENCHMARKS.md keeps what it showed.
#
#   scripts/soak.sh [DIR-WITH-BINARIES]          (default target/release)
#
# Settings (environment):
#   SOAK_SECONDS   how long the closed loop sends (default 3600)
#   SOAK_STREAMS   requests in flight (default 1000)
#   SOAK_EVERY     seconds between memory samples (default 10)
#   SOAK_TTFT_MS, SOAK_ITL_MS, SOAK_TOKENS   the server's timing and the answer length
#                  (default 50 ms, 50 ms, 128 tokens: 1,000 streams stream ≈ 16,000 tokens/s,
#                  which two shared cores serve with room to spare)
#   SOAK_OUT       where the CSV, the chart, the summary and the logs go (default results/soak)
#
# Out: $SOAK_OUT/rss.csv (elapsed_s, fire_kib, reduce_kib, simserve_kib, fire_cpu_s,
# reduce_cpu_s), rss.svg, summary.json (reduce's), and each tool's stderr.
set -euo pipefail
bin=${1:-target/release}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/simserve-up.sh"

seconds=${SOAK_SECONDS:-3600}
streams=${SOAK_STREAMS:-1000}
every=${SOAK_EVERY:-10}
ttft=${SOAK_TTFT_MS:-50}
itl=${SOAK_ITL_MS:-50}
tokens=${SOAK_TOKENS:-128}
out=${SOAK_OUT:-results/soak}
mkdir -p "$out"

simserve_up soak "$bin" --ttft-ms "$ttft" --itl-ms "$itl" --workers 1
echo "soak: $streams streams for ${seconds}s against $url (TTFT $ttft ms, ITL $itl ms, $tokens tokens); samples every ${every}s into $out/rss.csv" >&2

# The pipe's three stages in the background, each PID kept so that its memory can be read.
fifo_a=$tmp/arrivals.ndjson fifo_f=$tmp/fire.ndjson
mkfifo "$fifo_a" "$fifo_f"
"$bin/arrivals" --concurrency "$streams" --duration "${seconds}s" --input-tokens 32 \
  --output-tokens "$tokens" --seed 1 > "$fifo_a" 2> "$out/arrivals.err" &
arrivals=$!
"$bin/fire" --url "$url" < "$fifo_a" > "$fifo_f" 2> "$out/fire.err" &
fire=$!
"$bin/reduce" --label soak < "$fifo_f" > "$out/summary.json" 2> "$out/reduce.err" &
reduce=$!

# VmRSS in KiB and user + system CPU seconds of a live process; empty once it has ended.
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true; }
cpu_s() {
  local tck
  tck=$(getconf CLK_TCK)
  awk -v t="$tck" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat" 2>/dev/null || true
}

echo "elapsed_s,fire_kib,reduce_kib,simserve_kib,fire_cpu_s,reduce_cpu_s" > "$out/rss.csv"
start=$(date +%s)
while kill -0 "$reduce" 2>/dev/null; do
  now=$(( $(date +%s) - start ))
  echo "$now,$(rss_kib "$fire"),$(rss_kib "$reduce"),$(rss_kib "$server"),$(cpu_s "$fire"),$(cpu_s "$reduce")" >> "$out/rss.csv"
  # Sleep in short steps so that the loop ends soon after the pipe does.
  for _ in $(seq $(( every * 5 ))); do kill -0 "$reduce" 2>/dev/null || break; sleep 0.2; done
done
status=0
wait "$arrivals" || status=$?
wait "$fire" || status=$?
wait "$reduce" || status=$?

python3 "$here/soak-chart.py" "$out/rss.csv" > "$out/rss.svg"
echo "soak: done after $(( $(date +%s) - start ))s (exit $status); $out/rss.csv, $out/rss.svg, $out/summary.json" >&2
python3 - "$out/rss.csv" <<'PY' >&2
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["fire_kib"] and r["reduce_kib"]]
if rows:
    for tool in ("fire", "reduce", "simserve"):
        xs = [int(r[f"{tool}_kib"]) for r in rows if r[f"{tool}_kib"]]
        tail = [int(r[f"{tool}_kib"]) for r in rows if r[f"{tool}_kib"] and int(r["elapsed_s"]) >= 300]
        print(f"soak: {tool}: first {xs[0]/1024:.1f} MiB, max {max(xs)/1024:.1f} MiB, last {xs[-1]/1024:.1f} MiB"
              + (f"; after 5 min {min(tail)/1024:.1f}..{max(tail)/1024:.1f} MiB" if tail else ""))
PY
exit "$status"
