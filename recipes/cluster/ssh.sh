#!/usr/bin/env bash
# ssh.sh: one arrivals plan split across hosts reached by ssh, one part per host, started by GNU
# parallel, all sending their first request at one instant, then merged by reduce into one run.
#
#   HOSTS="gpu-client1 gpu-client2 user@gpu-client3" recipes/cluster/ssh.sh URL [MODEL]
#
# Part I of N runs on one host as `arrivals … --shard I/N | fire --url URL --host HOST
# --start-at +DELAY`, with TOKENPIPE_START_BASE (the instant this script took) given in the
# command, since ssh does not carry the environment. GNU parallel (`-S 1/HOST,…`: one job per
# host) collects each part's stdout into its own file here (`--results`): never let parts
# share one stream, their lines would interleave. Then `reduce` merges the parts (lost or
# missing parts counted, start spread and clock skew judged: docs/cluster.md) and `table`
# prints the run. The hosts need the tools at the same path (TOKENPIPE_BIN, or on PATH) and
# synchronised clocks (chrony), and this machine passwordless ssh to them.
#
# Parameters (environment): HOSTS (required, one part per host), NUM_PROMPTS (1000), RATE (10,
# requests/s over the whole plan, all hosts together; "none" for a closed loop, with
# ARRIVALS_ARGS="--concurrency N", N split across the parts), OUTPUT_TOKENS (256), SEED (0),
# ARRIVALS_ARGS, FIRE_ARGS (more flags, e.g. "--input-tokens 1024", "--api chat"; no quotes
# inside), START_DELAY (10s; "none" starts each part as soon as it is up), OUT (results folder,
# default ./results/ssh-YYYYmmdd-HHMMSS), TOKENPIPE_BIN (the tools' directory on every host;
# default: PATH), SSH (the ssh command, default `ssh`; parallel's --ssh).
#
# Output: $OUT/parts/partI.ndjson (fire's events of part I) and partI.ndjson.err (its stderr),
# $OUT/merged.ndjson (reduce's merged run), $OUT/table.md (its figures) and
# $OUT/parts.md (`table --by shard`: a row per part, its host, status, start, lost requests), both
# printed on stdout too.
#
# Exit status: 0 when every part ended and the merged run is comparable; 1 when a part failed
# or was lost, or the run is not comparable (the table is printed all the same); 2 for bad
# usage; 3 when there was nothing to merge (no part wrote a run: their stderr is printed).
set -euo pipefail

say() { echo "ssh.sh: $*" >&2; }

case ${1:-} in
  '' | -h | --help)
    sed -n '/^# ssh.sh/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
URL=$1
MODEL=${2:-}
read -r -a hosts <<< "${HOSTS:-}"
[ ${#hosts[@]} -gt 0 ] || { say "set HOSTS to the hosts that run the parts (one part each)"; exit 2; }

tool() {
  if [ -n "${TOKENPIPE_BIN:-}" ]; then echo "$TOKENPIPE_BIN/$1"; else echo "$1"; fi
}
for b in reduce table; do
  command -v "$(tool "$b")" >/dev/null || { say "no $b (install the tools, or set TOKENPIPE_BIN)"; exit 2; }
done
command -v parallel >/dev/null || { say "no GNU parallel (apt-get install parallel)"; exit 2; }
command -v jq >/dev/null || { say "no jq: the recipe reads the merged verdict with it"; exit 2; }

NUM_PROMPTS=${NUM_PROMPTS:-1000}
RATE=${RATE:-10}
OUTPUT_TOKENS=${OUTPUT_TOKENS:-256}
SEED=${SEED:-0}
START_DELAY=${START_DELAY:-10s}
OUT=${OUT:-results/ssh-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT/parts"
OUT=$(cd "$OUT" && pwd)
n=${#hosts[@]}

# The remote command, every value quoted for the remote shell; {} is the part's index, and
# PARALLEL_SSHHOST (set by parallel on the remote side) the host's name as given in HOSTS.
q() { printf '%q' "$1"; }
start=
[ "$START_DELAY" = none ] ||
  start="--start-at $(q "+$START_DELAY")"
model=
[ -z "$MODEL" ] || model="--model $(q "$MODEL")"
cmd="set -o pipefail; TOKENPIPE_START_BASE=$(date -u +%s.%N); export TOKENPIPE_START_BASE;"
rate=
[ "$RATE" = none ] || rate="--rate $(q "$RATE")"
cmd+=" $(q "$(tool arrivals)") -n $(q "$NUM_PROMPTS") $rate --seed $(q "$SEED")"
cmd+=" --output-tokens $(q "$OUTPUT_TOKENS") ${ARRIVALS_ARGS:-} --shard {}/$n"
cmd+=" | $(q "$(tool fire)") --url $(q "$URL") $model --host \"\$PARALLEL_SSHHOST\" $start ${FIRE_ARGS:-}"
# Run by bash whatever the remote login shell is: parallel's remote worker runs the command
# with $SHELL there, and sh (dash) stops at `set -o pipefail` before anything runs. The
# command goes in single quotes (each ' in it closed, escaped and reopened), where parallel
# still replaces {}.
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
cmd="exec bash -c $(sq "$cmd")"

logins=$(printf '1/%s,' "${hosts[@]}")
say "$n parts on ${hosts[*]}, $NUM_PROMPTS requests at $RATE/s in all, start at +$START_DELAY"
status=0
parallel --will-cite --ssh "${SSH:-ssh}" -S "${logins%,}" --jobs 1 --halt never \
  --results "$OUT/parts/part{}.ndjson" "$cmd" ::: $(seq 0 $((n - 1))) >/dev/null || status=$?
rm -f "$OUT"/parts/part*.ndjson.seq
part_errors() {
  for f in "$OUT"/parts/part*.ndjson.err; do
    [ -s "$f" ] && sed "s|^|$(basename "$f" .ndjson.err): |" "$f" >&2
  done
  return 0
}
if [ "$status" -ne 0 ]; then
  say "$status part(s) failed (their stderr: $OUT/parts/part*.ndjson.err); merging what there is"
  part_errors
fi

# Every part file, the empty ones too: reduce counts those as missing.
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
verdict=$(jq -rs '[.[] | select(.type == "summary")] | last
  | "\(.verdict.comparable)\t\(.verdict.reason)"' "$OUT/merged.ndjson")
say "verdict: ${verdict#*$'\t'}"
say "results: $OUT"
[ "$status" -eq 0 ] && [ "$rstatus" -eq 0 ] && [ "${verdict%%$'\t'*}" = true ] || exit 1
