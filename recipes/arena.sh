#!/usr/bin/env bash
# arena.sh: seed 000's DGX Spark arena: 01–05 as llama-benchy batches, 06–09 as `vllm bench
# serve` runs them, each half in its tool's table.
#
#   recipes/arena.sh URL [MODEL]
#
# Reproduces the arena's benchmarks with its parameters and seed 42:
#
#   01 chat          llama-benchy, pp 1024, tg 1024, depth 0, concurrency 10, runs 3
#   02 rag 8k        llama-benchy, pp 8192, tg 512, depth 0, concurrency 10, runs 3
#   03 long output   llama-benchy, pp 256, tg 4096, depth 0, concurrency 10, runs 3
#   04 context 25k   llama-benchy, pp 25000, tg 256, depth 0, concurrency 10, runs 3
#   05 multi-turn    llama-benchy, pp 2048, tg 512, depth 4, concurrency 10, runs 3
#   06 office        vllm bench serve, random, 0.3 req/s, burstiness 0.7, 200 prompts,
#                    4000 → 500
#   07 sharegpt      vllm bench serve, ShareGPT V3, 0.3 req/s, burstiness 0.7, 250 prompts
#                    (needs SHAREGPT)
#   08 peak          vllm bench serve, random, 1.5 req/s, burstiness 1.0, 300 prompts, at most
#                    25 in flight (--max-concurrency 25), 4000 → 500
#   09 reasoning     vllm bench serve, random, 0.2 req/s, burstiness 1.0, 50 prompts,
#                    1000 → 4000
#
# 01–05 are run as llama-benchy runs them (`llama-benchy --pp P --tg T --depth D
# --concurrency 10 --runs 3`), so that their numbers sit beside the community's: RUNS batches of
# 10 requests sent together, each awaited before the next (`arrivals --batch 10 --runs RUNS`,
# with llama-benchy's discarded warm-up batch first), on the chat API. Their figures are
# llama-benchy's (reduce's `llama_benchy` member: t/s per batch, mean ± sd over the batches).
# 05's "depth 4" is llama-benchy's `--depth 4`: four tokens of earlier context, sent as a system
# message before the 2,048-token prompt (`arrivals --depth 4`), not four turns of history,
# whatever the arena's prose says of five-turn conversations; it is what the arena's numbers
# measured.
#
# 06–09 are `vllm bench serve`'s open loops (`--request-rate R --burstiness B --num-prompts N
# --seed 42`, `--max-concurrency 25` for 08): vLLM's own schedule for seed 42 (`arrivals
# --vllm-compatible`), on the completions API as its default backend sends them. Each is run
# RUNS times (fire salts the prompts of each run, so no run finds the last one's in a prefix
# cache), and its row is the mean ± sample sd over the runs.
#
# Parameters (environment): RUNS (3: llama-benchy's --runs for 01–05, runs of each of 06–09),
# SEED (42), ONLY (benchmarks to run, e.g. "01 06"; default all), SCALE (1: 06–09's prompt
# counts, so their durations, times SCALE, at least 1 prompt, with rates, burstiness, caps and
# lengths kept: SCALE=0.1 sends 06's 20 prompts over about 67 s instead of 200 over 11 min;
# 01–05 are sized by RUNS alone), SHAREGPT (a ShareGPT-format JSON file, e.g.
# ShareGPT_V3_unfiltered_cleaned_split.json; without it 07 is skipped), FIRE_ARGS. QUICK=1: 2
# runs, batches of 4, lengths ÷ 64 (depth kept), 8 prompts per open loop whatever SCALE, at 50×
# the rate, 08 capped at 2.
#
# Reading the output: 01–05 first, a line per benchmark saying what it sends (pp, tg, depth,
# concurrency, runs), then llama-benchy's tables (`table --style llama-bench`, a row per
# benchmark, named in the Model column when there are several), kept as $OUT/llama-bench.md,
# with their llama-benchy figures at full precision in $OUT/llama-benchy.csv; then 06–09 in one
# table of `mean ± sd` over their runs (the Runs column says how many), kept as $OUT/vllm.md and
# $OUT/arena.csv (every figure at full precision, with `_sd` and `_cv_pct` columns); then
# whether each benchmark is comparable (the verdict of its runs together: all their requests
# ended, the client kept up). Everything printed is also in $OUT/arena.md. A benchmark one of
# whose runs fails is left out, and the next one runs. The open-loop columns are the arena's
# figures:
#   Output [tok/s]            tokens/s: output tokens over the run's duration
#   TTFT p50/p95/p99 [ms]     time to first token (reduce --percentiles 50,95,99)
#   User generation mean      per-user tokens/s: a request's tokens over its streaming time
#                             (E2EL − TTFT), the speed a user reads at once tokens flow
#   Mean/Peak concurrency     queue depth: requests sent and not yet answered, so running in
#                             the server's batch or waiting in its queue; it grows when arrivals
#                             outpace the server (08's question: does the queue grow?)
#   Dispatch lag p99 [ms]     the queue in front of 08's cap: how long a request waited in the
#                             client for one of the 25 slots (0 without a cap)
# The raw events of every run are in $OUT/runs/ (01-chat.ndjson, 06-office-1.ndjson, ...),
# each benchmark's summaries (its runs and their group) in $OUT/summaries/; `table
# $OUT/summaries/01-chat.ndjson` shows every figure of one.
#
# Failures and Ctrl-C: a benchmark whose run fails does not stop the next; Ctrl-C stops the run
# in progress and prints the tables of the benchmarks that finished (exit 130). Exit status 1
# when a benchmark did not finish or is incomplete (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

recipe_init "recipes/arena.sh URL [MODEL]" "$@"
RUNS=${RUNS:-$(quick 3 2)}
SEED=${SEED:-42}
ONLY=${ONLY:-01 02 03 04 05 06 07 08 09}
SCALE=${SCALE:-1}
C=$(quick 10 4)

for id in $ONLY; do
  case $id in 0[1-9]) ;; *) usage_error "ONLY: no benchmark $id (they are 01 to 09)" ;; esac
done
case $RUNS in '' | *[!0-9]* | 0) usage_error "RUNS=$RUNS: a whole number of runs, at least 1" ;; esac
awk -v s="$SCALE" 'BEGIN { exit !(s ~ /^([0-9]+[.]?[0-9]*|[.][0-9]+)$/ && s > 0) }' \
  || usage_error "SCALE=$SCALE: a number above 0 (0.1 runs a tenth of 06–09's prompts)"
case " $ONLY " in
  *" 05 "*) need_flag "$ARRIVALS" --depth "arena 05 (llama-benchy's --depth 4)" ;;
esac

# tokens N: a length of the arena, or N ÷ 64 (at least 4) under QUICK.
tokens() { quick "$1" "$(($1 / 64 > 4 ? $1 / 64 : 4))"; }
# lengths IN OUT: sets LENGTHS to arrivals' length flags.
lengths() { LENGTHS=(--input-tokens "$(tokens "$1")" --output-tokens "$(tokens "$2")"); }
# batch IN OUT DEPTH: sets ARGS to a llama-benchy batch run of C requests, RUNS times, and
# DESC to its parameters as the arena gives them.
batch() {
  lengths "$1" "$2"
  ARGS=(--batch "$C" --runs "$RUNS" "${LENGTHS[@]}")
  [ "$3" = 0 ] || ARGS+=(--depth "$3")
  DESC="pp ${LENGTHS[1]}, tg ${LENGTHS[3]}, depth $3, concurrency $C, runs $RUNS"
}
# open_loop RATE BURSTINESS PROMPTS: sets OPEN to arrivals' flags of `vllm bench serve`'s open
# loop: PROMPTS × SCALE prompts (at least 1) at RATE; under QUICK, 8 prompts at 50 times it.
open_loop() {
  local rate prompts
  rate=$(quick "$1" "$(awk -v r="$1" 'BEGIN { print r * 50 }')")
  prompts=$(awk -v n="$3" -v s="$SCALE" 'BEGIN { p = int(n * s + 0.5); print (p < 1 ? 1 : p) }')
  OPEN=(--vllm-compatible --rate "$rate" --burstiness "$2" -n "$(quick "$prompts" 8)")
}

# bench ID: sets NAME (the benchmark's row), KIND (batch or open) and ARGS (its arrivals flags);
# returns 1 when it cannot run here (07 without SHAREGPT).
bench() {
  KIND=batch
  case $1 in
    01) NAME="01 chat"; batch 1024 1024 0 ;;
    02) NAME="02 rag 8k"; batch 8192 512 0 ;;
    03) NAME="03 long output"; batch 256 4096 0 ;;
    04) NAME="04 context 25k"; batch 25000 256 0 ;;
    05) NAME="05 multi-turn"; batch 2048 512 4 ;;
    06) NAME="06 office"; KIND=open; lengths 4000 500; open_loop 0.3 0.7 200
      ARGS=("${OPEN[@]}" "${LENGTHS[@]}") ;;
    07) NAME="07 sharegpt"; KIND=open; open_loop 0.3 0.7 250
      if [ -z "${SHAREGPT:-}" ]; then
        say "07 skipped: it needs ShareGPT V3; give it as SHAREGPT=path/to/ShareGPT_V3_unfiltered_cleaned_split.json"
        return 1
      fi
      [ -r "$SHAREGPT" ] || usage_error "SHAREGPT=$SHAREGPT: no such file"
      ARGS=("${OPEN[@]}" --dataset "sharegpt:$SHAREGPT") ;;
    08) NAME="08 peak"; KIND=open; lengths 4000 500; open_loop 1.5 1.0 300
      ARGS=("${OPEN[@]}" --max-concurrency "$(quick 25 2)" "${LENGTHS[@]}") ;;
    09) NAME="09 reasoning"; KIND=open; lengths 1000 4000; open_loop 0.2 1.0 50
      ARGS=("${OPEN[@]}" "${LENGTHS[@]}") ;;
  esac
  ARGS+=(--seed "$SEED")
}

# tables: the tables of the benchmarks that finished, and their verdicts.
tables() {
  if [ ${#batches[@]} -gt 0 ]; then
    echo "Batches, as llama-benchy runs them (Model: the benchmark):"
    printf '%s\n' "${legend[@]}"
    echo
    show llama-bench.md --style llama-bench "${batches[@]}"
    "$TABLE" --format csv --spread none --columns label,workload,failed,pp_tps,tg_tps,ttfr \
      "${batches[@]}" >"$OUT/llama-benchy.csv"
  fi
  local last=llama-bench.md
  if [ ${#opens[@]} -gt 0 ]; then
    [ ${#batches[@]} -gt 0 ] && echo
    local columns=label,runs,workload,failed,output_tps,ttft.p50,ttft.p95,ttft.p99
    columns+=,user_gen_tps.mean,mean_concurrency,peak_concurrency,dispatch_lag.p99
    "$TABLE" --format csv --spread sd --columns "$columns" "${opens[@]}" >"$OUT/arena.csv"
    echo "Open loops, as vllm bench serve runs them (mean ± sd over runs):"
    echo
    show vllm.md --format markdown --layout long --spread sd --columns "$columns" "${opens[@]}"
    last=vllm.md
  fi
  comparable "$last" "${batches[@]}" "${opens[@]}"
}
# finish: the tables, also kept whole in $OUT/arena.md.
finish() {
  if [ $((${#batches[@]} + ${#opens[@]})) -eq 0 ]; then
    say "no benchmark finished"
    return 0
  fi
  tables | tee "$OUT/arena.md"
}

batches=()
legend=()
opens=()
ran=0
for id in $ONLY; do
  bench "$id" || continue
  ran=1
  slug=${NAME// /-}
  if [ "$KIND" = batch ]; then
    run "$slug" "${ARGS[@]}" || continue
    summarize "$slug" "$NAME" "$OUT/runs/$slug.ndjson" -- --meta "concurrency=$C" || continue
    batches+=("$OUT/summaries/$slug.ndjson")
    legend+=("- $NAME: $DESC")
    continue
  fi
  files=()
  for i in $(seq "$RUNS"); do
    # A run that fails ends its benchmark: the next one runs.
    run "$slug-$i" "${ARGS[@]}" || continue 2
    files+=("$OUT/runs/$slug-$i.ndjson")
  done
  summarize "$slug" "$NAME" "${files[@]}" -- --percentiles 50,95,99 || continue
  opens+=("$OUT/summaries/$slug.ndjson")
done
[ "$ran" = 1 ] || die "no benchmark to run (ONLY=$ONLY)"

finish
recipe_end "${batches[@]}" "${opens[@]}"
