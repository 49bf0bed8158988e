#!/usr/bin/env bash
# serve.sh: seed 002's `vllm bench serve` runs, printed as vLLM's own result blocks.
#
#   recipes/serve.sh URL [MODEL]
#
# Reproduces: `vllm bench serve --backend vllm --endpoint /v1/completions --num-prompts N` with
# vLLM's defaults, for N = 1, 10 and 100: random prompts of 1,024 tokens, 128-token answers
# (`ignore_eos`), every request sent at once (no --request-rate: infinite), seed 0. Each run is
# reduced by vLLM's definitions (`reduce --vllm-compatible`: numpy's percentiles, vLLM's
# duration, peak output throughput and peak concurrency) and printed as vLLM prints it
# (`table --style vllm`), so the blocks can be pasted beside published ones.
#
# Parameters (environment): PROMPTS ("1 10 100"), INPUT (1024), OUTPUT (128), SEED (0),
# TOKENIZER (the model's tokenizer.json, for prompts of exact token lengths; without it prompts
# are plain words, which a real tokenizer may count as more tokens: the block's "Total input
# tokens" says what the server counted). QUICK=1: 1, 4 and 8 prompts of 64 → 16 tokens.
#
# Reading the output: one "Serving Benchmark Result" block per run, as vLLM prints it, then
# whether each run is comparable (reduce's verdict); the same blocks are in $OUT/blocks.txt, the raw events in $OUT/runs/, the summaries (every figure, not
# just the block's) in $OUT/summaries/. `table $OUT/summaries/*.ndjson` compares them side by
# side.
#
# Failures and Ctrl-C: a benchmark whose run fails does not stop the next; Ctrl-C stops the run
# in progress and prints the tables of the benchmarks that finished (exit 130). Exit status 1
# when a benchmark did not finish or is incomplete (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

recipe_init "recipes/serve.sh URL [MODEL]" "$@"
PROMPTS=${PROMPTS:-$(quick "1 10 100" "1 4 8")}
INPUT=${INPUT:-$(quick 1024 64)}
OUTPUT=${OUTPUT:-$(quick 128 16)}
SEED=${SEED:-0}
lengths=(--input-tokens "$INPUT" --output-tokens "$OUTPUT" --seed "$SEED")
[ -n "${TOKENIZER:-}" ] && lengths+=(--tokenizer "$TOKENIZER")

# finish: the blocks of the runs that finished, and their verdicts.
finish() {
  if [ ${#summaries[@]} -eq 0 ]; then
    say "no run finished"
    return 0
  fi
  show blocks.txt --style vllm "${summaries[@]}"
  comparable blocks.txt "${summaries[@]}"
}

summaries=()
for n in $PROMPTS; do
  run "prompts-$n" --rate inf -n "$n" "${lengths[@]}" -- --api completions || continue
  summarize "prompts-$n" "prompts-$n" "$OUT/runs/prompts-$n.ndjson" -- --vllm-compatible || continue
  summaries+=("$OUT/summaries/prompts-$n.ndjson")
done
finish
recipe_end "${summaries[@]}"
