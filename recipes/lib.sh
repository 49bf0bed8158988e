# Shared by the recipes in recipes/: how a recipe finds the tools, where its results go, and
# how one run is made and kept. Sourced, not run.
#
# A recipe is called as `recipes/NAME.sh URL [MODEL]` (matrix.sh takes more) and keeps
# everything under one results folder:
#
#   $OUT/                       default ./results/NAME-YYYYmmdd-HHMMSS (UTC)
#     runs/RUN.ndjson           fire's raw events of each run, as fire wrote them
#     summaries/BENCH.ndjson    reduce's summaries of one benchmark's runs (and their group)
#     *.md, *.csv, *.svg, ...   the recipe's tables and charts, also printed on stdout
#
# Settings, from the environment:
#   TOKENPIPE_BIN   directory holding arrivals, fire, reduce and table (default: those on PATH,
#                   else the repository's target/release)
#   OUT             the results folder
#   QUICK=1         every count and duration shrunk, so that a recipe runs in seconds against
#                   `simserve` (make demo-recipes, the tests): the shape of the output, not its
#                   numbers
#   FIRE_ARGS       extra arguments for every `fire` (e.g. "--api chat --api-key-env KEY")
#
# Progress goes to stderr, tables to stdout. Exit status: 0, 1 when a run failed to run, 2 for
# bad usage.

set -euo pipefail

RECIPE=$(basename "$0" .sh)
RECIPES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

say() { echo "$RECIPE: $*" >&2; }
die() { say "$*"; exit 1; }
usage_error() { say "$*"; exit 2; }

# tool NAME: the path of one of the tools.
tool() {
  if [ -n "${TOKENPIPE_BIN:-}" ]; then
    [ -x "$TOKENPIPE_BIN/$1" ] || die "no $1 in TOKENPIPE_BIN=$TOKENPIPE_BIN"
    echo "$TOKENPIPE_BIN/$1"
  elif command -v "$1" >/dev/null 2>&1; then
    command -v "$1"
  elif [ -x "$RECIPES_DIR/../target/release/$1" ]; then
    echo "$RECIPES_DIR/../target/release/$1"
  else
    die "no $1 on PATH: install the tools (make install) or set TOKENPIPE_BIN"
  fi
}

# quick FULL SMALL: FULL, or SMALL under QUICK=1.
quick() { if [ "${QUICK:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi; }

# recipe_init USAGE "$@": checks URL [MODEL], finds the tools, makes the results folder.
# Sets URL, MODEL (may be empty), OUT, ARRIVALS, FIRE, REDUCE, TABLE.
recipe_init() {
  local usage=$1; shift
  case "${1:-}" in
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    "") usage_error "usage: $usage" ;;
  esac
  URL=$1
  MODEL=${2:-}
  ARRIVALS=$(tool arrivals) FIRE=$(tool fire) REDUCE=$(tool reduce) TABLE=$(tool table)
  OUT=${OUT:-results/$RECIPE-$(date -u +%Y%m%d-%H%M%S)}
  mkdir -p "$OUT/runs" "$OUT/summaries"
  say "results in $OUT"
}

# fire_args: the arguments every fire of the recipe gets.
fire_args() {
  local args=(--url "$URL" --quiet)
  [ -n "$MODEL" ] && args+=(--model "$MODEL")
  # shellcheck disable=SC2206
  [ -n "${FIRE_ARGS:-}" ] && args+=(${FIRE_ARGS})
  printf '%s\n' "${args[@]}"
}

# run RUN ARRIVALS_ARGS... [-- FIRE_ARGS...]: one run of `arrivals | fire`, its events kept in
# $OUT/runs/RUN.ndjson. A run in which fire fails (the server is down, no request succeeded)
# stops the recipe.
run() {
  local name=$1; shift
  local a=() f=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  f=("$@")
  local common=()
  mapfile -t common < <(fire_args)
  say "run $name: arrivals ${a[*]} | fire ${f[*]}"
  "$ARRIVALS" "${a[@]}" | "$FIRE" "${common[@]}" "${f[@]}" >"$OUT/runs/$name.ndjson" \
    || die "run $name failed (its events so far: $OUT/runs/$name.ndjson)"
}

# summarize BENCH LABEL RUN_FILES... [-- REDUCE_ARGS...]: reduce the runs into
# $OUT/summaries/BENCH.ndjson, labelled LABEL (repeats of one configuration get a group
# summary, mean ± sd over them).
summarize() {
  local bench=$1 label=$2; shift 2
  local files=() extra=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do files+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  extra=("$@")
  "$REDUCE" --label "$label" "${extra[@]}" "${files[@]}" >"$OUT/summaries/$bench.ndjson"
}

# show FILE TABLE_ARGS...: prints `table TABLE_ARGS...` on stdout and keeps it in $OUT/FILE.
show() {
  local file=$1; shift
  "$TABLE" "$@" | tee "$OUT/$file"
}
