#!/usr/bin/env bash
# The search of `sweep --find` against an exhaustive scan, and the saturation knee, on simserve's
# batching profiles (a benchmark, not a test; BENCHMARKS.md "sweep" keeps its figures):
#
#   scripts/sweep-bench.sh [DIR-WITH-BINARIES]     (default target/release)
#
# For each case (a profile, an SLO, a range): `sweep --find` over the range, then `sweep --scan`
# of every whole number of the range, which gives the true capacity (the largest value with
# every lower one passing) and each value's pass or fail. It prints the capacity each found,
# the runs find took, and the runs a plain bisection without repeats takes on the scan's own
# pass/fail answers (the low end, the high end, then halving to a step of 1). Then a doubling
# scan of the spark profile to where its throughput stops growing (--stop-at-knee), with the
# output tok/s and median E2EL of each load. Takes about ten minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cd "${1:-target/release}" && pwd)
out=${OUT:-results/sweep-bench}
mkdir -p "$out"
. scripts/simserve-up.sh
simserve_down() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }

# bisection_runs FILE: the runs of a plain bisection without repeats over the scan in FILE.
bisection_runs() {
  jq -rs '[.[] | select(.type == "sweep")] | last | .points
    | (map({key: (.value | tostring), value: (.status == "pass")}) | from_entries) as $pass
    | (map(.value) | min) as $lo | (map(.value) | max) as $hi
    | def ok($v): $pass[$v | tostring];
      if (ok($lo) | not) then 1
      elif ok($hi) then 2
      else {lo: $lo, hi: $hi, runs: 2}
        | until(.hi - .lo <= 1;
            (((.lo + .hi) / 2) | floor) as $m
            | if ok($m) then .lo = $m else .hi = $m end | .runs += 1)
        | .runs end' "$1"
}

# case NAME PROFILE_FLAGS SLO RANGE_HIGH POINT_COMMAND
case_() {
  local name=$1 flags=$2 slo=$3 high=$4 point=$5
  simserve_up "sweep-bench-$name" "$bin" $flags
  export URL=$url PATH="$bin:$PATH"
  "$bin/sweep" --find "concurrency=1..$high" --slo "$slo" --label "$name" -- "$point" >"$out/$name-find.ndjson" \
    2>"$out/$name-find.log"
  "$bin/sweep" --scan "concurrency=1..$high" --slo "$slo" --label "$name" -- "$point" \
    >"$out/$name-scan.ndjson" 2>"$out/$name-scan.log"
  simserve_down
  local find scan
  find=$(jq -r 'select(.type == "sweep") | "\(.capacity) \(.runs) \(.sure)"' "$out/$name-find.ndjson")
  scan=$(jq -r 'select(.type == "sweep") | "\(.capacity)"' "$out/$name-scan.ndjson")
  read -r fcap fruns fsure <<<"$find"
  printf '| %s | `%s` | 1..%s | %s | %s | %s (%s) | %s | %.2f |\n' "$name" "$slo" "$high" "$scan" \
    "$fcap" "$fruns" "sure: $fsure" "$(bisection_runs "$out/$name-scan.ndjson")" \
    "$(echo "$fruns $(bisection_runs "$out/$name-scan.ndjson")" | awk '{print $1 / $2}')"
}

echo "| case | SLO | range | scan capacity | find capacity | find runs | bisection runs | ratio |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
case_ spark "--profile spark-gpt-oss-120b" 'tpot.p50<=50ms' 16 \
  'arrivals --concurrency {concurrency} -n $(({concurrency} * 2)) --input-tokens 256 --output-tokens 32 | fire --url "$URL"'
case_ small-gpu "--profile small-gpu" 'tpot.p50<=16ms' 40 \
  'arrivals --concurrency {concurrency} -n $(({concurrency} * 2)) --input-tokens 256 --output-tokens 32 | fire --url "$URL"'

# The knee: a doubling scan of the spark profile, seed 001's shape (1,024 in, 128 out).
simserve_up sweep-bench-knee "$bin" --profile spark-gpt-oss-120b
export URL=$url
"$bin/sweep" --scan concurrency=1..512x2 --stop-at-knee --label spark-gpt-oss-120b -- \
  'arrivals --concurrency {concurrency} -n $(({concurrency} * 2)) --input-tokens 1024 --output-tokens 128 | fire --url "$URL"' \
  >"$out/knee.ndjson" 2>"$out/knee.log"
simserve_down
echo
echo "| concurrency | output tok/s | gain per doubling | E2EL p50 (ms) |"
echo "|---:|---:|---:|---:|"
jq -r 'select(.type == "sweep") | .points as $p | range(0; $p | length) as $i | $p[$i]
  | "| \(.value) | \(.output_tps | . * 10 | round / 10) | \(if $i > 0 then ((.output_tps / $p[$i - 1].output_tps - 1) * 100 | round | tostring) + " %" else "" end) | \(.e2el_p50_ms | round) |"' \
  "$out/knee.ndjson"
jq -r 'select(.type == "sweep") | "knee: \(.knee // "none"), ended: \(.ended)"' "$out/knee.ndjson"
