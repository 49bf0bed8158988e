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
# Reading the output. Measuring: one row per profile (requests ok and failed, output tok/s,
# TTFT and TPOT, mean and p99) and whether it is comparable (reduce's verdict, and why not), in
# $OUT/profiles.md; each profile's summary in $OUT/summaries/PROFILE.ndjson and its events in
# $OUT/runs/. A profile whose run fails does not stop the others; the recipe exits 1 when one
# did not finish or is incomplete. Reporting (--report): seed 003's section 3 as Markdown,
# printed and written to ./matrix-report.md (REPORT=path to change it): the top 3 models per
# profile by output tok/s, every model side by side (model, hardware shape, one column per
# profile), and a mermaid bar chart per profile, best first (GitHub renders them). Only
# comparable runs (seed 003: "complete result files and successful traces") are ranked and
# charted; the others are listed after the charts with their reason, as the seed lists its
# fallback-shape runs, and so are the profiles of the matrix a folder lacks. --report exits 1
# when a profile is missing or incomplete (a request failed, was cancelled or not sent), after
# writing the report.
#
# Failures and Ctrl-C: a benchmark whose run fails does not stop the next; Ctrl-C stops the run
# in progress and prints the tables of the benchmarks that finished (exit 130). Exit status 1
# when a benchmark did not finish or is incomplete (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

PROFILE_SPECS=(
  "latency-1024x256-c1 1024 256 1"
  "serve-1024x256-c16 1024 256 16"
  "longctx-8192x256-c4 8192 256 4"
)

# model_of DIR: the model a result folder measured (its summaries' `model`), else the folder.
model_of() {
  local f
  for f in "$1"/summaries/*.ndjson; do
    [ -e "$f" ] || break
    jq -rs '[.[] | select(.type == "summary")] | last | .meta.model // .label // empty' "$f" && return
  done
  echo "$1"
}

report() {
  [ $# -gt 0 ] || usage_error "usage: recipes/matrix.sh --report DIR..."
  TABLE=$(tool table)
  need_jq
  local files=() good=() excluded=() missing=() dir spec name f ok complete reason bad=0
  for dir in "$@"; do
    [ -d "$dir/summaries" ] || usage_error "$dir: not a result folder of matrix.sh (no summaries/)"
    for spec in "${PROFILE_SPECS[@]}"; do
      read -r name _ <<<"$spec"
      if [ ! -e "$dir/summaries/$name.ndjson" ]; then
        missing+=("$(model_of "$dir") ($dir), $name: no summary (its run did not finish, or PROFILES left it out)")
        bad=1
      fi
    done
    for f in "$dir"/summaries/*.ndjson; do
      [ -e "$f" ] || continue
      files+=("$f")
      IFS=$'\t' read -r name ok complete reason < <(verdict "$f")
      if [ "$ok" = true ]; then
        good+=("$f")
      else
        excluded+=("$(jq -rs '[.[] | select(.type == "summary")] | last
          | "\(.meta.model // .label // "?") (\(.meta.shape // "?"))"' "$f"), $name: $reason")
      fi
      [ "$complete" = true ] || bad=1
    done
  done
  local out=${REPORT:-matrix-report.md}
  {
    echo "## Top 3 by output throughput per profile"
    echo
    if [ ${#good[@]} -gt 0 ]; then
      "$TABLE" --rows model --cols profile --top 3 --format markdown "${good[@]}"
    else
      echo "No comparable run."
    fi
    echo
    if [ ${#files[@]} -gt 0 ]; then
      echo "## Every model side by side (output tok/s)"
      echo
      if [ ${#excluded[@]} -gt 0 ]; then
        echo "Every run, those not comparable (listed at the end) included."
        echo
      fi
      "$TABLE" --rows model --cols profile --columns shape --format markdown "${files[@]}"
      echo
    fi
    if [ ${#good[@]} -gt 0 ]; then
      echo "## Output throughput per profile"
      echo
      "$TABLE" --rows model --cols profile --format mermaid "${good[@]}"
      echo
    fi
    if [ ${#excluded[@]} -gt 0 ]; then
      echo "## Not comparable (left out of the top 3 and the charts)"
      echo
      printf -- '- %s\n' "${excluded[@]}"
      echo
    fi
    if [ ${#missing[@]} -gt 0 ]; then
      echo "## Missing profiles"
      echo
      printf -- '- %s\n' "${missing[@]}"
      echo
    fi
  } | tee "$out"
  say "report written to $out"
  if [ "$bad" -ne 0 ]; then
    say "a profile of the matrix is missing or incomplete (see the report's last sections)"
    exit 1
  fi
}

# finish: the table of the profiles measured so far, and their verdicts.
finish() {
  if [ ${#summaries[@]} -eq 0 ]; then
    say "no profile finished"
    return 0
  fi
  show profiles.md --layout long --format markdown --spread none --sort concurrency \
    --columns profile,shape,engine,ok,failed,output_tps,ttft.mean,ttft.p99,tpot.mean,tpot.p99 \
    "${summaries[@]}"
  comparable profiles.md "${summaries[@]}"
}

summaries=()
measure() {
  recipe_init "recipes/matrix.sh URL MODEL SHAPE (or --report DIR...)" "$@"
  [ $# -ge 3 ] || usage_error "usage: recipes/matrix.sh URL MODEL SHAPE (or --report DIR...)"
  local shape=$3
  local served=${SERVED_MODEL:-$MODEL}
  MODEL=$served
  local engine=${ENGINE:-}
  if [ -z "$engine" ] && command -v curl >/dev/null; then
    engine=$(curl -fsS --max-time 5 "$URL/models" 2>/dev/null \
      | jq -r --arg m "$served" '[.data[] | select(.id == $m)][0].owned_by // .data[0].owned_by // empty' \
        2>/dev/null || true)
  fi
  engine=${engine:-unknown}
  local rounds=${ROUNDS:-$(quick 8 2)} seed=${SEED:-42} stamp
  stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local spec name input output c
  for spec in "${PROFILE_SPECS[@]}"; do
    read -r name input output c <<<"$spec"
    case " ${PROFILES:-$name} " in *" $name "*) ;; *) continue ;; esac
    if [ "${QUICK:-0}" = 1 ]; then input=64 output=16; fi
    local lengths=(--input-tokens "$input" --output-tokens "$output")
    [ -n "${TOKENIZER:-}" ] && lengths+=(--tokenizer "$TOKENIZER")
    run "$name" --concurrency "$c" -n $((rounds * c)) "${lengths[@]}" --seed "$seed" || continue
    summarize "$name" "$2" "$OUT/runs/$name.ndjson" -- --meta "model=$2" --meta "shape=$shape" \
      --meta "engine=$engine" --meta "profile=$name" --meta "timestamp=$stamp" || continue
    summaries+=("$OUT/summaries/$name.ndjson")
  done
  finish
  recipe_end "${summaries[@]}"
}

if [ "${1:-}" = --report ]; then
  shift
  report "$@"
else
  measure "$@"
fi
