#!/usr/bin/env bash
# sweep.sh: seed 001's llama-benchy concurrency sweep, then the same sweep under sustained load.
#
#   recipes/sweep.sh URL [MODEL]
#
# Reproduces: `llama-benchy --concurrency 1 2 4 8 16 32 64 --runs 50` with 1,024 input and 128
# output tokens: at each concurrency C, batches of C requests sent together, each batch awaited
# before the next (`arrivals --batch C --runs RUNS`). Its decode and prefill tables are
# llama-benchy's own figures (reduce's `llama_benchy` member: per batch above concurrency 1, per
# request at 1; ± is the population sd over the batches, as llama-benchy prints it).
#
# Then the sustained-load counterpart of each batch run, as seed 001 set `vllm bench serve`
# beside llama-benchy: an open loop of Poisson arrivals at the request rate the batch run
# sustained at that concurrency (its completed requests over its duration), at most C in flight,
# C × RUNS requests. So the server gets the same requests per second as in the batch run, but one
# at a time as users would send them rather than C at the same instant; by Little's law about C
# are in flight, and the cap keeps a burst from going above C (the wait for a slot is queue
# time). Three tables set the two side by side, one row per concurrency:
#   decode     llama-benchy's t/s (batch) beside the open loop's output throughput, and their
#              ratio (open loop ÷ batch), seed 001's "llama-benchy vs vLLM bench" table
#   TTFT       llama-benchy's TTFR (from each batch's start: it includes the wait behind the rest
#              of the batch) beside the open loop's TTFT p50
#   TPOT       time per output token, p50, in both
#
# Parameters (environment): CONCURRENCY ("1 2 4 8 16 32 64"), RUNS (50), INPUT (1024),
# OUTPUT (128), SEED (0), FIRE_ARGS. QUICK=1: concurrency 1 2 4, 2 runs, 64 → 16 tokens.
#
# Reading the output: the two llama-benchy tables (decode: t/s, ± stddev, CV %; prefill: pp t/s,
# ± stddev) as Markdown, in $OUT/llama-bench.md; then the three side-by-side tables, in
# $OUT/decode.md, $OUT/ttft.md and $OUT/tpot.md (and $OUT/decode.csv, full precision), and
# whether each run is comparable (reduce's verdict, kept under the TPOT table). A run that
# fails is left out and the next one runs (a batch run's open loop is then skipped). The raw
# events are in $OUT/runs/ (batch-cC and poisson-cC), the summaries in $OUT/summaries/;
# `table $OUT/summaries/*-c4.ndjson` compares every figure of the two runs at concurrency 4.
#
# Failures and Ctrl-C: a benchmark whose run fails does not stop the next; Ctrl-C stops the run
# in progress and prints the tables of the benchmarks that finished (exit 130). Exit status 1
# when a benchmark did not finish or is incomplete (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

recipe_init "recipes/sweep.sh URL [MODEL]" "$@"
CONCURRENCY=${CONCURRENCY:-$(quick "1 2 4 8 16 32 64" "1 2 4")}
RUNS=${RUNS:-$(quick 50 2)}
INPUT=${INPUT:-$(quick 1024 64)}
OUTPUT=${OUTPUT:-$(quick 128 16)}
SEED=${SEED:-0}
lengths=(--input-tokens "$INPUT" --output-tokens "$OUTPUT" --seed "$SEED")

# finish: the tables of the runs that finished, and their verdicts.
finish() {
  if [ ${#batches[@]} -gt 0 ]; then
    show llama-bench.md --style llama-bench "${batches[@]}"
  fi
  local summaries=("${batches[@]}" "${poissons[@]}")
  if [ ${#summaries[@]} -eq 0 ]; then
    say "no run finished"
    return 0
  fi
  local pivot=(--rows concurrency --cols label --spread none)
  echo
  show decode.md "${pivot[@]}" --cell 'tg_tps|output_tps' --baseline batch --format markdown \
    "${summaries[@]}"
  "$TABLE" "${pivot[@]}" --cell 'tg_tps|output_tps' --baseline batch --format csv \
    "${summaries[@]}" >"$OUT/decode.csv"
  echo
  show ttft.md "${pivot[@]}" --cell 'ttfr|ttft.p50' --format markdown "${summaries[@]}"
  echo
  show tpot.md "${pivot[@]}" --cell tpot.p50 --format markdown "${summaries[@]}"
  comparable tpot.md "${summaries[@]}"
}

batches=()
poissons=()
for c in $CONCURRENCY; do
  run "batch-c$c" --batch "$c" --runs "$RUNS" "${lengths[@]}" || continue
  summarize "batch-c$c" batch "$OUT/runs/batch-c$c.ndjson" -- --meta "concurrency=$c" || continue
  batches+=("$OUT/summaries/batch-c$c.ndjson")
done

for c in $CONCURRENCY; do
  if [ ! -e "$OUT/summaries/batch-c$c.ndjson" ]; then
    skipped "poisson-c$c" "its rate is the one batch-c$c sustained, and batch-c$c did not finish"
    continue
  fi
  # The batch run's request rate, at full precision (the CSV's only row, after the label).
  rate=$("$TABLE" --format csv --columns request_rate "$OUT/summaries/batch-c$c.ndjson" |
    tail -n 1 | cut -d, -f2)
  run "poisson-c$c" --rate "$rate" --max-concurrency "$c" -n $((c * RUNS)) "${lengths[@]}" \
    || continue
  summarize "poisson-c$c" poisson "$OUT/runs/poisson-c$c.ndjson" -- --meta "concurrency=$c" || continue
  poissons+=("$OUT/summaries/poisson-c$c.ndjson")
done

finish
recipe_end "${batches[@]}" "${poissons[@]}"
