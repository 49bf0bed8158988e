#!/usr/bin/env bash
# matrix.sh: seed 003's fixed three-profile matrix, one model and hardware shape at a time, and
# the cross-model report over several such result folders.
#
#   recipes/matrix.sh URL MODEL SHAPE          measure one model on one shape
#   recipes/matrix.sh --report DIR...          compare the result folders of several models
#
# Reproduces: the study that holds hardware and methodology fixed and runs every model through
# the same three closed-loop profiles:
#   latency-1024x256-c1    1,024 prompt tokens, 256 out, 1 in flight   (single-user latency)
#   serve-1024x256-c16     1,024 prompt tokens, 256 out, 16 in flight  (loaded serving)
#   longctx-8192x256-c4    8,192 prompt tokens, 256 out, 4 in flight   (long context)
# Each profile sends ROUNDS × its concurrency requests (ROUNDS 8: 8, 128 and 32 requests), so
# every slot turns over several times. Every summary carries the metadata the report groups by
# (`reduce --meta`): model, shape (SHAPE, e.g. "8x H200" or "16x H200 (TP=8, PP=2)"), engine
# (ENGINE, else what the server's /v1/models says owns the model), profile and a UTC timestamp.
# MODEL is sent to the server as the model name unless SERVED_MODEL names it otherwise.
#
# Parameters (environment): ROUNDS (8), PROFILES (all three), ENGINE, SERVED_MODEL, SEED (42),
# TOKENIZER (the model's tokenizer.json, for prompts of exact token lengths). QUICK=1: 2 rounds
# of 64 → 16-token profiles (the names stay).
#
# Reading the output. Measuring: one row per profile (output tok/s, TTFT and TPOT, mean and
# p99), in $OUT/profiles.md; each profile's summary in $OUT/summaries/PROFILE.ndjson and its
# events in $OUT/runs/. Reporting (--report): seed 003's section 3 as Markdown, printed and
# written to ./matrix-report.md (REPORT=path to change it): the top 3 models per profile by
# output tok/s, every model side by side (model, hardware shape, one column per profile), and a
# mermaid bar chart per profile, best first (GitHub renders them).
. "$(dirname "$0")/lib.sh"

PROFILE_SPECS=(
  "latency-1024x256-c1 1024 256 1"
  "serve-1024x256-c16 1024 256 16"
  "longctx-8192x256-c4 8192 256 4"
)

report() {
  [ $# -gt 0 ] || usage_error "usage: recipes/matrix.sh --report DIR..."
  TABLE=$(tool table)
  local files=() dir
  for dir in "$@"; do
    [ -d "$dir/summaries" ] || usage_error "$dir: not a result folder of matrix.sh (no summaries/)"
    files+=("$dir"/summaries/*.ndjson)
  done
  local out=${REPORT:-matrix-report.md}
  {
    echo "## Top 3 by output throughput per profile"
    echo
    "$TABLE" --rows model --cols profile --top 3 --format markdown "${files[@]}"
    echo
    echo "## Every model side by side (output tok/s)"
    echo
    "$TABLE" --rows model --cols profile --columns shape --format markdown "${files[@]}"
    echo
    echo "## Output throughput per profile"
    echo
    "$TABLE" --rows model --cols profile --format mermaid "${files[@]}"
    echo
  } | tee "$out"
  say "report written to $out"
}

measure() {
  recipe_init "recipes/matrix.sh URL MODEL SHAPE (or --report DIR...)" "$@"
  [ $# -ge 3 ] || usage_error "usage: recipes/matrix.sh URL MODEL SHAPE (or --report DIR...)"
  local shape=$3
  local served=${SERVED_MODEL:-$MODEL}
  MODEL=$served
  local engine=${ENGINE:-}
  if [ -z "$engine" ] && command -v curl >/dev/null && command -v jq >/dev/null; then
    engine=$(curl -fsS --max-time 5 "$URL/models" 2>/dev/null \
      | jq -r --arg m "$served" '[.data[] | select(.id == $m)][0].owned_by // .data[0].owned_by // empty' \
        2>/dev/null || true)
  fi
  engine=${engine:-unknown}
  local rounds=${ROUNDS:-$(quick 8 2)} seed=${SEED:-42} stamp
  stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local summaries=() spec name input output c
  for spec in "${PROFILE_SPECS[@]}"; do
    read -r name input output c <<<"$spec"
    case " ${PROFILES:-$name} " in *" $name "*) ;; *) continue ;; esac
    if [ "${QUICK:-0}" = 1 ]; then input=64 output=16; fi
    local lengths=(--input-tokens "$input" --output-tokens "$output")
    [ -n "${TOKENIZER:-}" ] && lengths+=(--tokenizer "$TOKENIZER")
    run "$name" --concurrency "$c" -n $((rounds * c)) "${lengths[@]}" --seed "$seed"
    summarize "$name" "$2" "$OUT/runs/$name.ndjson" -- --meta "model=$2" --meta "shape=$shape" \
      --meta "engine=$engine" --meta "profile=$name" --meta "timestamp=$stamp"
    summaries+=("$OUT/summaries/$name.ndjson")
  done
  show profiles.md --layout long --format markdown --spread none --sort concurrency \
    --columns profile,shape,engine,ok,output_tps,ttft.mean,ttft.p99,tpot.mean,tpot.p99 "${summaries[@]}"
}

if [ "${1:-}" = --report ]; then
  shift
  report "$@"
else
  measure "$@"
fi
