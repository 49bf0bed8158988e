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
# Progress goes to stderr, tables to stdout. Every final table is followed by its benchmarks'
# verdicts (reduce's `verdict`, docs/verdict.md): one line each, `comparable` or why not.
#
# A benchmark whose run fails (fire exits non-zero: the server is down, no request succeeded)
# does not stop the recipe: the next one runs, and the tables show those that finished, the
# failed ones named on stderr. Ctrl-C stops the run in progress (fire writes what it measured),
# then the recipe prints the tables of the benchmarks that finished and exits 130 (143 after
# SIGTERM). A signal sent to the recipe's shell alone, not to its process group as Ctrl-C is,
# takes effect when the run in progress ends.
#
# Exit status: 0 when every benchmark finished and its requests all ended (verdict.complete);
# 1 when one did not finish or is incomplete (a request failed, was cancelled or not sent), the
# tables printed all the same; 2 for bad usage; 130 after Ctrl-C.

set -euo pipefail

RECIPE=$(basename "$0" .sh)
RECIPES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

say() { echo "$RECIPE: $*" >&2; }

# The benchmarks that did not finish, "NAME: what happened", in the order they were run.
FAILED=()

# stopped STATUS: the recipe was interrupted: prints the tables of what finished (the recipe's
# `finish` function, when it has one) and exits STATUS.
stopped() {
  trap - INT TERM
  say "interrupted: the tables of the benchmarks that finished"
  if declare -F finish >/dev/null; then finish || true; fi
  exit "$1"
}
# Bash runs these once the command in progress has ended: Ctrl-C reaches the run's own
# processes too, so fire has written its records by then.
trap 'stopped 130' INT
trap 'stopped 143' TERM
# interrupted_by STATUS: a tool that exited 130 or 143 was interrupted (it caught Ctrl-C or
# SIGTERM, wrote what it measured and exited): the recipe stops as its trap would. Bash runs no
# trap for a SIGINT that the foreground command caught and exited on, so the status is the one
# sure sign.
interrupted_by() {
  case $1 in
    130 | 143) stopped "$1" ;;
  esac
}
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

# need_jq: the recipes read the summaries' verdicts with jq.
need_jq() {
  command -v jq >/dev/null 2>&1 || die "no jq on PATH: the recipes read each summary's verdict with it"
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
  need_jq
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

# fire_line: `fire` with fire_args as one line of shell, quoted, for a command that `sweep` runs
# under sh -c.
fire_line() {
  local args=()
  mapfile -t args < <(fire_args)
  printf '%q ' "$FIRE" "${args[@]}"
}

# run RUN ARRIVALS_ARGS... [-- FIRE_ARGS...]: one run of `arrivals | fire`, its events kept in
# $OUT/runs/RUN.ndjson. A run in which fire fails (the server is down, no request succeeded)
# is added to FAILED and returns 1, so that the recipe goes on with the next benchmark.
run() {
  local name=$1; shift
  local a=() f=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  f=("$@")
  local common=()
  mapfile -t common < <(fire_args)
  say "run $name: arrivals ${a[*]} | fire ${f[*]}"
  local status=0
  "$ARRIVALS" "${a[@]}" | "$FIRE" "${common[@]}" "${f[@]}" >"$OUT/runs/$name.ndjson" || status=$?
  interrupted_by "$status"
  if [ "$status" -ne 0 ]; then
    say "run $name failed: arrivals | fire exited $status (its events so far: $OUT/runs/$name.ndjson); going on"
    FAILED+=("$name: did not finish (arrivals | fire exited $status)")
    return 1
  fi
}

# skipped NAME WHY: a benchmark that was not run because one it needs did not finish.
skipped() {
  say "$1 skipped: $2"
  FAILED+=("$1: skipped ($2)")
}

# summarize BENCH LABEL RUN_FILES... [-- REDUCE_ARGS...]: reduce the runs into
# $OUT/summaries/BENCH.ndjson, labelled LABEL (repeats of one configuration get a group
# summary, mean ± sd over them). When reduce fails, the benchmark is added to FAILED, its
# summaries file removed, and it returns 1.
summarize() {
  local bench=$1 label=$2; shift 2
  local files=() extra=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do files+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  extra=("$@")
  local status=0
  "$REDUCE" --label "$label" "${extra[@]}" "${files[@]}" >"$OUT/summaries/$bench.ndjson" \
    || status=$?
  interrupted_by "$status"
  if [ "$status" -ne 0 ]; then
    rm -f "$OUT/summaries/$bench.ndjson"
    say "$bench: reduce exited $status; going on"
    FAILED+=("$bench: did not finish (reduce exited $status)")
    return 1
  fi
}

# show FILE TABLE_ARGS...: prints `table TABLE_ARGS...` on stdout and keeps it in $OUT/FILE.
show() {
  local file=$1; shift
  "$TABLE" "$@" | tee "$OUT/$file"
}

# The jq program that reads a summaries file: its last summary (a benchmark's group when it has
# one, else its run), as `NAME<TAB>comparable<TAB>complete<TAB>reason`. When table shows the
# Comparable row itself, `comparable` below gives way to it.
VERDICT_JQ='[.[] | select(.type == "summary")] | last // {}
  | [$name, (.verdict.comparable // false | tostring),
     (.verdict.complete.ok // false | tostring),
     (.verdict.reason // "no verdict (a summary older than format 1.7: run reduce again)")]
  | @tsv'

# verdict FILE: the verdict line of one summaries file, named by its benchmark (the file's name).
verdict() {
  jq -rs --arg name "$(basename "$1" .ndjson)" "$VERDICT_JQ" "$1"
}

# comparable FILE SUMMARY_FILES...: prints whether each benchmark is comparable (reduce's
# verdict: every request ended, the client kept up, the server's counts agree) as a list under
# the table, then the benchmarks that did not finish, and adds the list to $OUT/FILE.
comparable() {
  local file=$1; shift
  local f name ok complete reason
  {
    echo
    echo "Comparable:"
    for f in "$@"; do
      IFS=$'\t' read -r name ok complete reason < <(verdict "$f")
      if [ "$ok" = true ]; then echo "- $name: yes"; else echo "- $name: no, $reason"; fi
    done
    for f in "${FAILED[@]}"; do echo "- $f"; done
  } | tee -a "$OUT/$file"
}

# recipe_end SUMMARY_FILES...: names the benchmarks that did not finish or are incomplete, and
# exits 0 when there are none, else 1.
recipe_end() {
  local f name ok complete reason bad=0
  for f in "${FAILED[@]}"; do say "$f"; bad=1; done
  for f in "$@"; do
    IFS=$'\t' read -r name ok complete reason < <(verdict "$f")
    if [ "$complete" != true ]; then say "incomplete: $name: $reason"; bad=1; fi
  done
  exit "$bad"
}

# need_flag TOOL_PATH FLAG WHY: stops the recipe (exit 1) when the tool has no FLAG, naming
# what the recipe needs it for, so that tools older than the recipe fail before any run rather
# than half-way through with a usage error.
need_flag() {
  local path=$1 flag=$2 why=$3
  "$path" --help 2>/dev/null | grep -qE -- "(^|[[:space:],])$flag([[:space:]=,<]|$)" \
    || die "$(basename "$path") ($path) has no $flag, which $why needs: these tools are older than the recipe; install the current ones (make install) or point TOKENPIPE_BIN at them"
}

# has_field FIELD SUMMARY_FILES...: whether any summary in the files has FIELD (a member of the
# summary), for a table that `table` would refuse when no run has it.
has_field() {
  local field=$1; shift
  [ $# -gt 0 ] && jq -se --arg f "$field" \
    'any(.[]; .type == "summary" and has($f))' "$@" >/dev/null
}
