#!/usr/bin/env bash
#SBATCH --job-name=tokenpipe
#SBATCH --nodes=3
#SBATCH --ntasks-per-node=1
#SBATCH --output=tokenpipe-%j.log
# slurm.sh: one arrivals plan split across the tasks of a Slurm job, each task's part sent by its
# own fire on its own node, all starting at one instant, then merged by reduce into one run.
#
#   sbatch --nodes=4 recipes/cluster/slurm.sh URL [MODEL]     in a batch job
#   salloc --nodes=4 recipes/cluster/slurm.sh URL [MODEL]     in an interactive allocation
#   recipes/cluster/slurm.sh URL [MODEL]                      srun makes the allocation (NODES)
#
# Each task runs `arrivals … --shard auto | fire --url URL --host NODE --start-at +DELAY`:
# `--shard auto` reads SLURM_PROCID/SLURM_NTASKS, so task I of N sends part I of the one plan;
# `--start-at +DELAY` counts from TOKENPIPE_START_BASE, an instant this script takes before
# srun and every task inherits, so every fire does its setup (connections included) first and
# sends its first request at the same instant on every node (docs/fire/start.md). Each task's
# stdout goes to its own file, `srun -o part%t.ndjson`: never pipe srun into reduce, the tasks'
# lines would interleave. Then `reduce` merges the parts (lost or missing parts counted, start
# spread and clock skew judged: docs/cluster.md) and `table` prints the run.
#
# Parameters (environment; sbatch passes it to the job):
#   NUM_PROMPTS (1000), RATE (10, requests/s over the whole plan, all nodes together; "none"
#   for a closed loop, with ARRIVALS_ARGS="--concurrency N", N split across the parts),
#   OUTPUT_TOKENS (256), SEED (0), ARRIVALS_ARGS (more arrivals flags, e.g. "--input-tokens
#   1024"), FIRE_ARGS (more fire flags, e.g. "--api chat"), START_DELAY (10s: how long after
#   this script's instant the parts start; long enough for the slowest node to start fire and
#   connect; "none" starts each part as soon as it is up), NODES (3, when srun must allocate;
#   inside an allocation its node count), NTASKS (NODES: one part per node), OUT (results
#   folder, default ./results/slurm-YYYYmmdd-HHMMSS), TOKENPIPE_BIN (the tools' directory on
#   every node: a shared filesystem, or the same path on each; default: PATH).
#
# Output: $OUT/parts/partI.ndjson (fire's events of part I) and partI.err (its stderr),
# $OUT/merged.ndjson (reduce's merged run), $OUT/table.md (its figures) and
# $OUT/parts.md (`table --by shard`: a row per part, its host, status, start, lost requests), both
# printed on stdout too.
#
# Exit status: 0 when every part ended and the merged run is comparable; 1 when a part failed
# or was lost, or the run is not comparable (the table is printed all the same); 2 for bad
# usage; 3 when there was nothing to merge (no part wrote a run: their stderr is printed).
set -euo pipefail

say() { echo "slurm.sh: $*" >&2; }

case ${1:-} in
  '' | -h | --help)
    sed -n '/^# slurm.sh/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
URL=$1
MODEL=${2:-}

tool() {
  if [ -n "${TOKENPIPE_BIN:-}" ]; then echo "$TOKENPIPE_BIN/$1"; else echo "$1"; fi
}
for b in reduce table; do
  command -v "$(tool "$b")" >/dev/null || { say "no $b (install the tools, or set TOKENPIPE_BIN)"; exit 2; }
done
command -v jq >/dev/null || { say "no jq: the recipe reads the merged verdict with it"; exit 2; }
command -v srun >/dev/null || { say "no srun: run this on a Slurm login node or in a job"; exit 2; }

NUM_PROMPTS=${NUM_PROMPTS:-1000}
RATE=${RATE:-10}
OUTPUT_TOKENS=${OUTPUT_TOKENS:-256}
SEED=${SEED:-0}
START_DELAY=${START_DELAY:-10s}
NODES=${NODES:-${SLURM_JOB_NUM_NODES:-3}}
NTASKS=${NTASKS:-$NODES}
OUT=${OUT:-results/slurm-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/parts"
OUT=$(cd "$OUT" && pwd)

# What every task runs. Single-quoted: each task expands its own SLURM_* variables; srun passes
# this script's environment (--export=ALL, its default), so the exports below reach every task.
PART='
  set -o pipefail
  bin() { if [ -n "${TOKENPIPE_BIN:-}" ]; then echo "$TOKENPIPE_BIN/$1"; else echo "$1"; fi; }
  start=()
  [ "$START_DELAY" = none ] || start=(--start-at "+$START_DELAY")
  model=()
  [ -z "$MODEL" ] || model=(--model "$MODEL")
  rate=()
  [ "$RATE" = none ] || rate=(--rate "$RATE")
  "$(bin arrivals)" -n "$NUM_PROMPTS" "${rate[@]}" --seed "$SEED" \
      --output-tokens "$OUTPUT_TOKENS" $ARRIVALS_ARGS --shard auto \
    | "$(bin fire)" --url "$URL" "${model[@]}" --host "${SLURMD_NODENAME:-$(hostname)}" \
      "${start[@]}" $FIRE_ARGS
'
export URL MODEL NUM_PROMPTS RATE OUTPUT_TOKENS SEED START_DELAY
export ARRIVALS_ARGS=${ARRIVALS_ARGS:-} FIRE_ARGS=${FIRE_ARGS:-}
# The shared reference for --start-at +DELAY, taken once here.
TOKENPIPE_START_BASE=$(date -u +%s.%N)
export TOKENPIPE_START_BASE

say "$NTASKS parts on $NODES nodes, $NUM_PROMPTS requests at $RATE/s in all, start at +$START_DELAY"
status=0
# --kill-on-bad-exit=0: a part that fails does not stop the others; its loss is counted below.
srun --nodes="$NODES" --ntasks="$NTASKS" --kill-on-bad-exit=0 \
  --output="$OUT/parts/part%t.ndjson" --error="$OUT/parts/part%t.err" \
  bash -c "$PART" || status=$?
part_errors() {
  for f in "$OUT"/parts/part*.err; do
    [ -s "$f" ] && sed "s|^|$(basename "$f" .err): |" "$f" >&2
  done
  return 0
}
if [ "$status" -ne 0 ]; then
  say "srun exited $status: a part failed (its stderr: $OUT/parts/part*.err); merging what there is"
  part_errors
fi

# Every part's file, in index order, the empty ones too; reduce counts a lost or empty part, and
# names a missing one.
mapfile -t parts < <(find "$OUT/parts" -name 'part*.ndjson' | sort -V)
if [ -z "$(find "$OUT/parts" -name 'part*.ndjson' -size +0)" ]; then
  say "no part wrote anything under $OUT/parts: nothing to merge"
  [ "$status" -ne 0 ] || part_errors
  exit 3
fi
rstatus=0
"$(tool reduce)" "${parts[@]}" > "$OUT/merged.ndjson" || rstatus=$?
[ "$rstatus" -le 1 ] || { say "reduce failed ($rstatus): nothing merged"; exit 3; }
"$(tool table)" "$OUT/merged.ndjson" | tee "$OUT/table.md"
# A row per part: its host, whether it reported, how late it started, what it lost.
"$(tool table)" --by shard "$OUT/merged.ndjson" | tee "$OUT/parts.md"
# The merged run's verdict: `comparable`, or why not (a lost part, the start spread, the skew).
verdict=$(jq -rs '[.[] | select(.type == "summary")] | last
  | "\(.verdict.comparable)\t\(.verdict.reason)"' "$OUT/merged.ndjson")
say "verdict: ${verdict#*$'\t'}"
say "results: $OUT"
[ "$status" -eq 0 ] && [ "$rstatus" -eq 0 ] && [ "${verdict%%$'\t'*}" = true ] || exit 1
