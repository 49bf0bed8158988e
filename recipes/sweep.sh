#!/usr/bin/env bash
# sweep.sh: seed 001's llama-benchy concurrency sweep beside `vllm bench serve` at each
# concurrency, and the seed's tables.
#
#   recipes/sweep.sh URL [MODEL]
#
# Reproduces both halves of seed 001 at 1,024 input and 128 output tokens:
#
#   llama-benchy       `llama-benchy --pp 1024 --tg 128 --depth 0 --concurrency 1 2 4 8 16 32 64
#                      --runs 50`: at each concurrency C, batches of C requests sent together,
#                      each batch awaited before the next (`arrivals --batch C --runs RUNS`, which
#                      as llama-benchy does also sends one warm-up batch first that reduce leaves
#                      out). Its figures are llama-benchy's own (reduce's `llama_benchy`
#                      member: per batch above concurrency 1, per request at 1; ± is the
#                      population sd over the batches, as llama-benchy prints it).
#   vllm bench serve   `vllm bench serve --request-rate inf --max-concurrency C` at each C:
#                      every request due at once and at most C in flight, so a new one is sent
#                      the moment one ends and C stay in flight until the prompts run out
#                      (`arrivals --rate inf --max-concurrency C`, C × RUNS prompts unless
#                      PROMPTS is set). The seed's figures say so: vLLM's TTFT p50 stays
#                      near one request's prefill at every C (304 ms at c1, 307 ms at c64), its
#                      TPOT near llama-benchy's, and its output throughput 0.85–0.98 of
#                      llama-benchy's t/s, which an open loop at the batch run's request rate
#                      (fewer than C in flight: 0.81 on average at c1) does not give.
#
# Tables, one row per concurrency, the seed's in its order:
#   llama-benchy       the decode and prefill tables llama-benchy users post (`table --style
#                      llama-bench`)
#   decode             llama-benchy's t/s beside vllm bench serve's output throughput and
#                      their ratio (vllm bench serve ÷ llama-benchy; the seed's 0.85–0.98):
#                      the seed's "Decode Throughput — Side by Side"
#   TTFT               llama-benchy's TTFR (from each batch's start: it includes the wait behind
#                      the rest of the batch) beside vllm bench serve's TTFT p50
#   per token          time per output token, p50, in both: the seed's "Per-Token Latency"
#   peak               llama-benchy's t/s beside vllm bench serve's peak output throughput (the
#                      most tokens in any 1 s) and their ratio: the seed's 775 against 452 t/s at
#                      c64. A run shorter than 1 s has no peak; when none has one the table is
#                      left out, saying so.
#
# Parameters (environment): CONCURRENCY ("1 2 4 8 16 32 64"), RUNS (50), INPUT (1024),
# OUTPUT (128), DEPTH (0: llama-benchy's --depth, tokens of context sent as a system message
# and counted as prompt; vllm bench serve's prompts are then INPUT + DEPTH tokens), PROMPTS
# (vllm bench serve's --num-prompts at every concurrency; default C × RUNS, as many as the
# llama-benchy run measures), SEED (0), FIRE_ARGS. QUICK=1: concurrency 1 2 4, 2 runs, 64 → 64
# tokens (long enough for a peak on `simserve`).
#
# Reading the output: llama-benchy's tables as Markdown, in $OUT/llama-bench.md; then the four
# side-by-side tables, in $OUT/decode.md (and $OUT/decode.csv, full precision), $OUT/ttft.md,
# $OUT/tpot.md and $OUT/peak.md, and whether each run is comparable (reduce's verdict, kept
# under the last table). A run that fails is left out and the next one runs. The raw events are
# in $OUT/runs/ (batch-cC for llama-benchy, serve-cC for vllm bench serve), the summaries in
# $OUT/summaries/; `table $OUT/summaries/*-c4.ndjson` compares every figure of the two runs at
# concurrency 4.
#
# Failures and Ctrl-C: a benchmark whose run fails does not stop the next; Ctrl-C stops the run
# in progress and prints the tables of the benchmarks that finished (exit 130). Exit status 1
# when a benchmark did not finish or is incomplete (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

recipe_init "recipes/sweep.sh URL [MODEL]" "$@"
CONCURRENCY=${CONCURRENCY:-$(quick "1 2 4 8 16 32 64" "1 2 4")}
RUNS=${RUNS:-$(quick 50 2)}
INPUT=${INPUT:-$(quick 1024 64)}
OUTPUT=${OUTPUT:-$(quick 128 64)}
DEPTH=${DEPTH:-0}
PROMPTS=${PROMPTS:-}
SEED=${SEED:-0}
for setting in "INPUT=$INPUT" "OUTPUT=$OUTPUT" "DEPTH=$DEPTH" "PROMPTS=${PROMPTS:-1}"; do
  case ${setting#*=} in
    '' | *[!0-9]*) usage_error "$setting: a whole number of tokens or prompts" ;;
  esac
done
lengths=(--input-tokens "$INPUT" --output-tokens "$OUTPUT" --seed "$SEED")
# vllm bench serve has no depth: its prompts are as long as llama-benchy's prompt and context.
serve_lengths=(--input-tokens "$((INPUT + DEPTH))" --output-tokens "$OUTPUT" --seed "$SEED")
depth=()
if [ "$DEPTH" != 0 ]; then
  need_flag "$ARRIVALS" --depth "DEPTH=$DEPTH (llama-benchy's --depth)"
  depth=(--depth "$DEPTH")
fi

BENCHY="llama-benchy"
SERVE="vllm bench serve"

# finish: the tables of the runs that finished, and their verdicts.
finish() {
  if [ ${#batches[@]} -gt 0 ]; then
    show llama-bench.md --style llama-bench "${batches[@]}"
  fi
  local summaries=("${batches[@]}" "${serves[@]}")
  if [ ${#summaries[@]} -eq 0 ]; then
    say "no run finished"
    return 0
  fi
  local pivot=(--rows concurrency --cols label --spread none --format markdown)
  local last=tpot.md
  echo
  show decode.md "${pivot[@]}" --cell 'tg_tps|output_tps' --baseline "$BENCHY" "${summaries[@]}"
  "$TABLE" --rows concurrency --cols label --spread none --format csv \
    --cell 'tg_tps|output_tps' --baseline "$BENCHY" "${summaries[@]}" >"$OUT/decode.csv"
  echo
  show ttft.md "${pivot[@]}" --cell 'ttfr|ttft.p50' "${summaries[@]}"
  echo
  show tpot.md "${pivot[@]}" --cell tpot.p50 "${summaries[@]}"
  if has_field peak_output_tps "${serves[@]}"; then
    echo
    show peak.md "${pivot[@]}" --cell 'tg_tps|peak_output_tps' --baseline "$BENCHY" \
      "${summaries[@]}"
    last=peak.md
  else
    say "no peak table: no $SERVE run lasted the 1 s a peak output throughput needs"
  fi
  comparable "$last" "${summaries[@]}"
}

batches=()
serves=()
for c in $CONCURRENCY; do
  run "batch-c$c" --batch "$c" --runs "$RUNS" "${lengths[@]}" "${depth[@]}" || continue
  summarize "batch-c$c" "$BENCHY" "$OUT/runs/batch-c$c.ndjson" -- --meta "concurrency=$c" \
    || continue
  batches+=("$OUT/summaries/batch-c$c.ndjson")
done

for c in $CONCURRENCY; do
  run "serve-c$c" --rate inf --max-concurrency "$c" -n "${PROMPTS:-$((c * RUNS))}" \
    "${serve_lengths[@]}" || continue
  summarize "serve-c$c" "$SERVE" "$OUT/runs/serve-c$c.ndjson" -- --meta "concurrency=$c" \
    || continue
  serves+=("$OUT/summaries/serve-c$c.ndjson")
done

finish
recipe_end "${batches[@]}" "${serves[@]}"
