# BENCHMARKS.md "Cluster": what `MEASURE=1 make test-cluster` measures once its checks have
# passed, on the same namespace hosts and Slurm (test.sh's T, URL and in_ns). Sourced, not run;
# asserts nothing, prints one line per figure.
#
#   measure_spread     the parts' start spread over LAUNCHES (10) Slurm launches of
#                      recipes/cluster/slurm.sh, with --start-at +1s and without
#   measure_merged     step 2's merged run beside step 1's unsharded one
#   measure_scale      one host's closed loop against three hosts' (each host the same
#                      concurrency): the aggregate request rate and its ratio

# spread_of MERGED: the latest part's started_at minus the earliest's, in ms, from the parts'
# own headers (the same definition as reduce's start_spread_ms, read here from the part files so
# that it does not depend on reduce).
spread_of() {
  jq -s '[.[] | select(.type == "header" and .tool == "fire") | .started_at
          | capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$")
          | ((.s + "Z") | fromdateiso8601) * 1000 + ("0." + (.f // "0") | tonumber) * 1000]
         | (max - min) * 1000 | round / 1000' "$@"
}

# stats: min, median, max and mean of the numbers on stdin, one a line.
stats() {
  sort -g | jq -s '{n: length, min: min, median: (if length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end), max: max,
    mean: (add / length * 1000 | round / 1000)}' -c
}

measure_spread() {
  local launches=${LAUNCHES:-10} mode i delay
  for mode in start-at none; do
    delay=1s
    [ "$mode" = none ] && delay=none
    for i in $(seq "$launches"); do
      in_ns ctl env OUT="$T/m-$mode-$i" START_DELAY=$delay NUM_PROMPTS=30 RATE=30 \
        recipes/cluster/slurm.sh "$URL" > /dev/null 2>&1 || true
      spread_of "$T/m-$mode-$i"/parts/part*.ndjson
    done > "$T/spread-$mode.txt"
    echo "cluster: measured: start spread (ms) over $launches Slurm launches, --start-at $delay:" \
      "$(stats < "$T/spread-$mode.txt"); each: $(tr '\n' ' ' < "$T/spread-$mode.txt")" >&2
  done
}

# measure_scale: for each concurrency C in SCALES ("16 64 256"), one host keeping C requests in
# flight (40 C requests) against three hosts keeping C each (one plan of 3 C in flight and 120 C
# requests, sharded by slurm.sh): their aggregate request rates and the ratio.
measure_scale() {
  local c n one three
  for c in ${SCALES:-16 64 256}; do
    n=$((40 * c))
    bg in_ns h1 bash -c '"$TOKENPIPE_BIN/arrivals" --concurrency "$1" -n "$2" --seed 3 \
      --output-tokens 16 | "$TOKENPIPE_BIN/fire" --url "$3" -q' _ "$c" "$n" "$URL" \
      > "$T/one-$c.ndjson" 2>/dev/null
    "$T/bin/reduce" "$T/one-$c.ndjson" > "$T/one-$c.summary.ndjson" 2>/dev/null || true
    in_ns ctl env OUT="$T/three-$c" START_DELAY=1s RATE=none NUM_PROMPTS=$((3 * n)) \
      OUTPUT_TOKENS=16 SEED=3 ARRIVALS_ARGS="--concurrency $((3 * c))" \
      recipes/cluster/slurm.sh "$URL" > /dev/null 2>&1 || true
    one=$(summary "$T/one-$c.summary.ndjson" | jq '.request_throughput_per_s | round')
    three=$(summary "$T/three-$c/merged.ndjson" | jq '.request_throughput_per_s | round')
    echo "cluster: measured: closed loop, $c in flight per host, 16 tokens at 5 ms: one host" \
      "$one requests/s ($n requests); three hosts $three requests/s ($((3 * n)) requests);" \
      "ratio $(jq -n "$three / $one * 100 | round / 100")" >&2
  done
}

# measure_merged: step 2's merged figures beside the unsharded run's.
measure_merged() {
  local fields='{requests_ok, output_tokens, ttft_p50_ms, tpot_mean_ms, request_throughput_per_s,
    output_throughput_tokens_per_s, start_spread_ms}'
  echo "cluster: measured: merged (step 2) $(summary "$T/slurm-ok/merged.ndjson" | jq -c "$fields")" >&2
  echo "cluster: measured: unsharded (step 1) $(summary "$T/full.summary.ndjson" | jq -c "$fields")" >&2
}

measure_all() {
  measure_merged
  measure_spread
  measure_scale
}
