#!/usr/bin/env bash
# capacity.sh: how many users a serving shape serves within an SLO, found by `sweep --find` for
# the arena's closed and open workloads, one sentence each, with the capacity and pareto charts.
#
#   recipes/capacity.sh URL [MODEL]
#
# Workloads (seed 000's arena, its lengths):
#   chat     closed loop, 1,024 prompt tokens → 1,024 out (arena 01): N users, each with one
#            request in flight; sweep --find concurrency=1..MAX_USERS
#   rag      closed loop, 8,192 → 512 (arena 02); the same search
#   office   open loop, 4,000 → 500 at R requests/s with burstiness 0.7 (arena 06); sweep
#            --find rate=MIN_RATE..MAX_RATE, to a relative resolution of 5 %
# Each point is `arrivals | fire` with PER_USER requests per user (closed loop, at least
# MIN_PROMPTS) or DURATION seconds of arrivals (open loop, at least MIN_PROMPTS), reduced by
# sweep with reduce's library. A point meets the SLO when every bound's 95 % bootstrap interval
# lies within it; a point whose interval straddles a bound is run again (up to REPEAT runs), then
# decided by its estimate, which the sentence says (docs/sweep.md).
#
# Parameters (environment): SLO ('ttft.p99<=2s,tpot.p50<=100ms': seed 000's 2 s TTFT
# threshold, and 10 tokens/s per user), SHAPES ("chat rag office"), MAX_USERS (256), MIN_RATE
# (0.25: the search starts there, and a point at the lowest rate lasts MIN_PROMPTS / MIN_RATE
# seconds), MAX_RATE (16), PER_USER (4), DURATION (60), MIN_PROMPTS (20), REPEAT (3), SEED (42),
# BETWEEN (a command run between points, e.g. "curl -s -X POST $BASE/reset_prefix_cache"),
# MAX_TIME (per workload, e.g. 30m; none by default), FIRE_ARGS. QUICK=1: users 1..8, rates
# 2..8, lengths ÷ 64, 2 requests per user, 1 s of arrivals, 4 prompts at least, 1 run a
# point.
#
# Reading the output: one sentence per workload, e.g.
#   chat: serves 24 concurrent users (bracket 24–25, 9 runs) within TTFT p99 ≤ 2s and TPOT p50 ≤ 100ms
#   office: sustains 1.4 requests/s (bracket 1.4–1.47, 8 runs) within …
# ("not sure" when the boundary point was decided by its estimate), then each workload's points
# (capacity.md: load, status, the bounded figures, output tok/s), and the charts: capacity.svg
# (each bound's figure against load, the bound and the capacity marked) and pareto-SHAPE.svg
# (per-user against total output tok/s, one point per load). Everything sweep wrote is kept in
# $OUT/summaries/SHAPE.ndjson (each point's headers and summaries, then the `sweep` record), the
# raw events in $OUT/runs/SHAPE-LOAD.ndjson.
#
# Exit status: 0 when every search ended with an answer; 1 when one failed (the server went
# down, a command failed) or none of its loads met the SLO; 130 after Ctrl-C (sweep writes what
# it measured and its record first).
. "$(dirname "$0")/lib.sh"

recipe_init "recipes/capacity.sh URL [MODEL]" "$@"
SWEEP=$(tool sweep)
SLO=${SLO:-ttft.p99<=2s,tpot.p50<=100ms}
SHAPES=${SHAPES:-chat rag office}
MAX_USERS=${MAX_USERS:-$(quick 256 8)}
MIN_RATE=${MIN_RATE:-$(quick 0.25 2.0)}
MAX_RATE=${MAX_RATE:-$(quick 16 8.0)}
PER_USER=${PER_USER:-$(quick 4 2)}
DURATION=${DURATION:-$(quick 60 1)}
MIN_PROMPTS=${MIN_PROMPTS:-$(quick 20 4)}
REPEAT=${REPEAT:-$(quick 3 1)}
SEED=${SEED:-42}
scale=$(quick 1 64)

# The SLO as a sentence reads it: `ttft.p99<=2s,tpot.p50<=100ms` → `TTFT p99 ≤ 2s and TPOT p50 ≤ 100ms`.
slo_words=$(echo "$SLO" | sed -E 's/([a-z_]+)\.p([0-9.]+)<=/\U\1\E p\2 ≤ /g; s/,/ and /g')


# shape NAME: the sweep flags and the point command of workload NAME.
shape() {
  local len_in len_out
  case $1 in
    chat) len_in=1024 len_out=1024 ;;
    rag) len_in=8192 len_out=512 ;;
    office) len_in=4000 len_out=500 ;;
    *) usage_error "unknown workload $1 in SHAPES (chat, rag, office)" ;;
  esac
  len_in=$((len_in / scale)) len_out=$((len_out / scale))
  local lengths="--input-tokens $len_in --output-tokens $len_out --seed $SEED"
  local keep="tee -a $(printf '%q' "$OUT/runs/$1")"
  if [ "$1" = office ]; then
    FIND="rate=$MIN_RATE..$MAX_RATE"
    COMMAND="$(printf '%q' "$ARRIVALS") --rate {rate} --burstiness 0.7 -n \$(awk 'BEGIN { n = int({rate} * $DURATION); print (n < $MIN_PROMPTS ? $MIN_PROMPTS : n) }') $lengths | $(fire_line)| $keep-{rate}.ndjson"
  else
    FIND="concurrency=1..$MAX_USERS"
    COMMAND="$(printf '%q' "$ARRIVALS") --concurrency {concurrency} -n \$(( {concurrency} * $PER_USER < $MIN_PROMPTS ? $MIN_PROMPTS : {concurrency} * $PER_USER )) $lengths | $(fire_line)| $keep-c{concurrency}.ndjson"
  fi
}

# sentence NAME FILE: what the sweep in FILE found, in one line.
sentence() {
  jq -r --arg name "$1" --arg slo "$slo_words" '
    select(.type == "sweep")
    | (if .variable == "rate" then "requests/s" else "concurrent users" end) as $unit
    | (if .variable == "rate" then "sustains" else "serves" end) as $verb
    | (if .sure then "" else ", not sure: a bound was decided by its estimate" end) as $sure
    | if .capacity != null and .bracket.first_fail == null then
        "\($name): \($verb) at least \(.capacity) \($unit) (the top of the range, \(.runs) runs\($sure)) within \($slo)"
      elif .capacity != null then
        "\($name): \($verb) \(.capacity) \($unit) (bracket \(.bracket.last_pass)–\(.bracket.first_fail), \(.runs) runs\($sure)) within \($slo)"
      else
        "\($name): no load met \($slo) (\(.reason))"
      end' "$2"
}

# finish: the sentences, the points and the charts of the searches that ran.
finish() {
  [ ${#swept[@]} -gt 0 ] || { say "no search ran"; return 0; }
  local f name
  {
    echo "Capacity within $slo_words:"
    echo
    for f in "${swept[@]}"; do sentence "$(basename "$f" .ndjson)" "$f"; done
  } | tee "$OUT/capacity.md"
  for f in "${swept[@]}"; do
    printf '\n%s:\n\n' "$(basename "$f" .ndjson)" | tee -a "$OUT/capacity.md"
    "$TABLE" --layout long --format markdown --spread none "$f" | tee -a "$OUT/capacity.md"
  done
  "$TABLE" --format svg --chart capacity "${swept[@]}" >"$OUT/capacity.svg" \
    || say "no capacity chart (no search had an SLO point)"
  for f in "${swept[@]}"; do
    name=$(basename "$f" .ndjson)
    "$TABLE" --format svg --chart pareto "$f" >"$OUT/pareto-$name.svg" 2>/dev/null \
      || rm -f "$OUT/pareto-$name.svg"
  done
  say "charts: $OUT/capacity.svg and pareto-WORKLOAD.svg"
}

swept=()
status=0
for s in $SHAPES; do
  shape "$s"
  flags=(--find "$FIND" --slo "$SLO" --repeat "$REPEAT")
  [ -n "${BETWEEN:-}" ] && flags+=(--between "$BETWEEN")
  [ -n "${MAX_TIME:-}" ] && flags+=(--max-time "$MAX_TIME")
  say "$s: sweep ${flags[*]}"
  st=0
  "$SWEEP" "${flags[@]}" --label "$s" -- "$COMMAND" >"$OUT/summaries/$s.ndjson" || st=$?
  [ -s "$OUT/summaries/$s.ndjson" ] && swept+=("$OUT/summaries/$s.ndjson")
  interrupted_by "$st"
  if [ "$st" -ne 0 ]; then
    say "$s: sweep exited $st; going on"
    FAILED+=("$s: did not finish (sweep exited $st)")
    status=1
  elif ! jq -e 'select(.type == "sweep") | .capacity != null' "$OUT/summaries/$s.ndjson" >/dev/null; then
    status=1
  fi
done
finish
for f in "${FAILED[@]}"; do say "$f"; done
exit "$status"
