#!/usr/bin/env bash
# arena.sh: seed 000's DGX Spark arena, nine benchmarks in one table of mean ± sd over runs.
#
#   recipes/arena.sh URL [MODEL]
#
# Reproduces the arena's benchmarks with its parameters, each run RUNS times with seed 42:
#
#   01 chat          closed loop, 10 in flight, 1024 → 1024 tokens
#   02 rag 8k        closed loop, 10 in flight, 8192 → 512
#   03 long output   closed loop, 10 in flight, 256 → 4096
#   04 context 25k   closed loop, 10 in flight, 25000 → 256
#   05 multi-turn    closed loop, 10 conversations at once, five turns of 2048 → 512 each
#                    (the arena's "depth 4": four turns of history before the last)
#   06 office        open loop, 0.3 req/s, burstiness 0.7, 200 prompts, 4000 → 500
#   07 sharegpt      open loop, 0.3 req/s, burstiness 0.7, 250 ShareGPT prompts (needs SHAREGPT)
#   08 peak          open loop, 1.5 req/s, burstiness 1.0, 300 prompts, at most 25 in flight,
#                    4000 → 500
#   09 reasoning     open loop, 0.2 req/s, burstiness 1.0, 50 prompts, 1000 → 4000
#
# The arena runs 01–05 with llama-benchy (`--concurrency 10 --runs 3`: three batches of ten
# requests). Here they are closed loops, as the arena describes them ("the moment a request
# finishes, I fire off the next one"): one run is CL_REQUESTS requests (30: as many as
# llama-benchy's three batches of ten) with 10 in flight, and 05's run is ten five-turn
# conversations (50 requests). 06–09 are `vllm bench serve`'s open loops, one run being the
# arena's prompt count. Every benchmark is run RUNS times with the same seed (fire salts the
# prompts of each run, so no run finds the last one's in a prefix cache), and its row is the
# mean ± sample sd over the runs.
#
# Parameters (environment): RUNS (3), SEED (42), ONLY (benchmarks to run, e.g. "01 06"; default
# all), SHAREGPT (a ShareGPT-format JSON file, e.g. ShareGPT_V3_unfiltered_cleaned_split.json;
# without it 07 is skipped), CL_REQUESTS (30), FIRE_ARGS (e.g. "--api chat"). QUICK=1: 2 runs,
# 4 in flight, lengths ÷ 64, 8 prompts per open loop at 50× the rate, 08 capped at 2.
#
# Reading the output: one row per benchmark, `mean ± sd` over its runs (the Runs column says how
# many), printed as Markdown and kept as $OUT/arena.md and $OUT/arena.csv (every figure at full
# precision, with `_sd` and `_cv_pct` columns), then whether each benchmark is comparable (the
# verdict of its runs together: all their requests ended, the client kept up). A benchmark one
# of whose runs fails is left out, and the next one runs. The columns are the arena's figures:
#   Output [tok/s]            tokens/s: output tokens over the run's duration
#   TTFT p50/p95/p99 [ms]     time to first token (reduce --percentiles 50,95,99)
#   User generation mean      per-user tokens/s: a request's tokens over its streaming time
#                             (E2EL − TTFT), the speed a user reads at once tokens flow
#   Mean/Peak concurrency     queue depth: requests sent and not yet answered, so running in
#                             the server's batch or waiting in its queue; it grows when arrivals
#                             outpace the server (08's question: does the queue grow?)
#   Dispatch lag p99 [ms]     the queue in front of 08's cap: how long a request waited in the
#                             client for one of the 25 slots (0 without a cap)
# The raw events of every run are in $OUT/runs/, each benchmark's summaries (its runs and their
# group) in $OUT/summaries/; `table $OUT/summaries/01-chat.ndjson` shows every figure of one.
#
# Failures and Ctrl-C: a benchmark whose run fails does not stop the next; Ctrl-C stops the run
# in progress and prints the tables of the benchmarks that finished (exit 130). Exit status 1
# when a benchmark did not finish or is incomplete (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

recipe_init "recipes/arena.sh URL [MODEL]" "$@"
RUNS=${RUNS:-$(quick 3 2)}
SEED=${SEED:-42}
ONLY=${ONLY:-01 02 03 04 05 06 07 08 09}
C=$(quick 10 4)
CL_REQUESTS=${CL_REQUESTS:-$(quick 30 8)}

# tokens N: a length of the arena, or N ÷ 64 (at least 4) under QUICK.
tokens() { quick "$1" "$(($1 / 64 > 4 ? $1 / 64 : 4))"; }
# lengths IN OUT: sets LENGTHS to arrivals' length flags.
lengths() { LENGTHS=(--input-tokens "$(tokens "$1")" --output-tokens "$(tokens "$2")"); }
# open_loop RATE BURSTINESS PROMPTS: sets OPEN to arrivals' flags of an open loop (under QUICK,
# 8 prompts at 50 times the rate).
open_loop() {
  local rate
  rate=$(quick "$1" "$(awk -v r="$1" 'BEGIN { print r * 50 }')")
  OPEN=(--rate "$rate" --burstiness "$2" -n "$(quick "$3" 8)")
}

# bench ID: sets NAME (the benchmark's row) and ARGS (its arrivals flags); returns 1 when it
# cannot run here (07 without SHAREGPT).
bench() {
  case $1 in
    01) NAME="01 chat"; lengths 1024 1024 ;;
    02) NAME="02 rag 8k"; lengths 8192 512 ;;
    03) NAME="03 long output"; lengths 256 4096 ;;
    04) NAME="04 context 25k"; lengths 25000 256 ;;
    05) NAME="05 multi-turn"; lengths 2048 512 ;;
    06) NAME="06 office"; lengths 4000 500; open_loop 0.3 0.7 200 ;;
    07) NAME="07 sharegpt"; open_loop 0.3 0.7 250 ;;
    08) NAME="08 peak"; lengths 4000 500; open_loop 1.5 1.0 300 ;;
    09) NAME="09 reasoning"; lengths 1000 4000; open_loop 0.2 1.0 50 ;;
  esac
  case $1 in
    01 | 02 | 03 | 04) ARGS=(--concurrency "$C" -n "$CL_REQUESTS" "${LENGTHS[@]}") ;;
    05) ARGS=(--concurrency "$C" -n "$C" --turns 5 "${LENGTHS[@]}") ;;
    06 | 09) ARGS=("${OPEN[@]}" "${LENGTHS[@]}") ;;
    07)
      if [ -z "${SHAREGPT:-}" ]; then
        say "07 skipped: it needs ShareGPT V3; give it as SHAREGPT=path/to/ShareGPT_V3_unfiltered_cleaned_split.json"
        return 1
      fi
      [ -r "$SHAREGPT" ] || usage_error "SHAREGPT=$SHAREGPT: no such file"
      ARGS=("${OPEN[@]}" --dataset "sharegpt:$SHAREGPT") ;;
    08) ARGS=("${OPEN[@]}" --max-concurrency "$(quick 25 2)" "${LENGTHS[@]}") ;;
  esac
  ARGS+=(--seed "$SEED")
}

for id in $ONLY; do
  case $id in 0[1-9]) ;; *) usage_error "ONLY: no benchmark $id (they are 01 to 09)" ;; esac
done
# finish: the table of the benchmarks that finished, and their verdicts.
finish() {
  if [ ${#summaries[@]} -eq 0 ]; then
    say "no benchmark finished"
    return 0
  fi
  local columns=label,runs,workload,failed,output_tps,ttft.p50,ttft.p95,ttft.p99,user_gen_tps.mean
  columns+=,mean_concurrency,peak_concurrency,dispatch_lag.p99
  "$TABLE" --format csv --spread sd --columns "$columns" "${summaries[@]}" >"$OUT/arena.csv"
  show arena.md --format markdown --layout long --spread sd --columns "$columns" "${summaries[@]}"
  comparable arena.md "${summaries[@]}"
}

summaries=()
ran=0
for id in $ONLY; do
  bench "$id" || continue
  ran=1
  slug=${NAME// /-}
  files=()
  for i in $(seq "$RUNS"); do
    # A run that fails ends its benchmark: the next one runs.
    run "$slug-$i" "${ARGS[@]}" || continue 2
    files+=("$OUT/runs/$slug-$i.ndjson")
  done
  summarize "$slug" "$NAME" "${files[@]}" -- --percentiles 50,95,99 || continue
  summaries+=("$OUT/summaries/$slug.ndjson")
done
[ "$ran" = 1 ] || die "no benchmark to run (ONLY=$ONLY)"

finish
recipe_end "${summaries[@]}"
