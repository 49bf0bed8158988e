#!/usr/bin/env bash
# closed-loop.sh: seed 004's closed-loop study: six scenarios at a list of concurrencies, each
# with fill, stabilize, measure and drain, measured over the measure phase only.
#
#   recipes/closed-loop.sh URL [MODEL]
#
# Reproduces: the closed-loop framework's run over scenarios A1 (identical 50-token prompts),
# A2 (identical 2,500-token prompts), B1 (distinct 50-token), B2 (distinct 2,500-token), C (a
# 2,000-token shared prefix before distinct 50-token queries) and D (five-turn conversations
# whose history grows), `arrivals --scenario`, at each concurrency N: N requests kept in flight,
# the slots opened one per FILL (the fill phase, no burst), then STABILIZE (caches and JIT warm,
# not measured), MEASURE (the figures) and a drain in which the requests in flight finish.
# `reduce` summarises each run over its measure phase (a request belongs to the window it was
# sent in and is measured whole).
#
# Parameters (environment): SCENARIOS ("A1 A2 B1 B2 C D"), CONCURRENCY ("1 2 8 16 32 64 128
# 256", the framework's batch sizes), FILL (1s: one more slot a second), STABILIZE (60s),
# MEASURE (120s), MAX_TOKENS (512), SEED (42). QUICK=1: concurrencies 2 and 4, 16 tokens, a
# 100 ms fill, 1 s to stabilize and 2 s to measure.
#
# Reading the output: one row per scenario and concurrency (closed-loop.md, closed-loop.csv):
# - "Output [tok/s]": tokens counted over the measure phase; "from users" is the framework's
#   server throughput, mean user throughput × N (it avoids the window's edges, and overstates
#   when requests are cut by them);
# - "User [tok/s]": n / E2EL per request (TTFT included: what a user waits for the whole
#   answer), and "gen": n / (E2EL − TTFT) (the streaming speed once tokens flow);
# - TTFT and TPOT medians and p99, and jitter = ITL p99 / p50 (about 1: steady streaming; above
#   3: visible pauses);
# - "Cache hit ratio": the share of prompt tokens the server's prefix cache served, from each
#   answer's usage (`prompt_tokens_details.cached_tokens`: vLLM with
#   --enable-prompt-tokens-details, llama.cpp, SGLang); A1 high, B1 zero. "-" where the server
#   does not say; with FIRE_ARGS=--server-metrics the summaries also hold the server's own
#   ratio from its counters (server_prefix_cache_hit_ratio).
# The SVG charts (load-SCENARIO.svg, one per scenario, and load.svg with every scenario) put
# throughput and latency against concurrency. Then whether each run is comparable (reduce's
# verdict). A run that fails is left out, and the next one runs. Raw events:
# $OUT/runs/SCENARIO-cN.ndjson.
#
# Failures and Ctrl-C: a benchmark whose run fails does not stop the next; Ctrl-C stops the run
# in progress and prints the tables of the benchmarks that finished (exit 130). Exit status 1
# when a benchmark did not finish or is incomplete (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

recipe_init "recipes/closed-loop.sh URL [MODEL]" "$@"
SCENARIOS=${SCENARIOS:-A1 A2 B1 B2 C D}
CONCURRENCY=${CONCURRENCY:-$(quick "1 2 8 16 32 64 128 256" "2 4")}
FILL=${FILL:-$(quick 1s 100ms)}
STABILIZE=${STABILIZE:-$(quick 60s 1s)}
MEASURE=${MEASURE:-$(quick 120s 2s)}
MAX_TOKENS=${MAX_TOKENS:-$(quick 512 16)}
SEED=${SEED:-42}

# finish: the tables and charts of the runs that finished, and their verdicts.
finish() {
  if [ ${#summaries[@]} -eq 0 ]; then
    say "no run finished"
    return 0
  fi
  local columns=label,concurrency,ok,output_tps,server_tps_from_users,user_tps.mean
  columns+=,user_gen_tps.mean,ttft.p50,ttft.p99,tpot.p50,tpot.p99,jitter,cache_hit_ratio
  show closed-loop.md --layout long --format markdown --spread none --sort label,concurrency \
    --columns "$columns" "${summaries[@]}"
  "$TABLE" --layout long --format csv --columns "$columns" "${summaries[@]}" >"$OUT/closed-loop.csv"
  "$TABLE" --format svg --chart load "${summaries[@]}" >"$OUT/load.svg"
  local s f mine
  for s in $SCENARIOS; do
    mine=()
    for f in "${summaries[@]}"; do
      case $(basename "$f") in "$s"-c*.ndjson) mine+=("$f") ;; esac
    done
    [ ${#mine[@]} -eq 0 ] || "$TABLE" --format svg --chart load "${mine[@]}" >"$OUT/load-$s.svg"
  done
  say "charts: $OUT/load.svg and one per scenario (load-SCENARIO.svg)"
  comparable closed-loop.md "${summaries[@]}"
}

summaries=()
for s in $SCENARIOS; do
  for c in $CONCURRENCY; do
    name="$s-c$c"
    run "$name" --scenario "$s" --concurrency "$c" --fill "$FILL" --stabilize "$STABILIZE" \
      --measure "$MEASURE" --output-tokens "$MAX_TOKENS" --seed "$SEED" || continue
    summarize "$name" "$s" "$OUT/runs/$name.ndjson" || continue
    summaries+=("$OUT/summaries/$name.ndjson")
  done
done
finish
recipe_end "${summaries[@]}"
