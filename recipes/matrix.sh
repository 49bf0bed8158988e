#!/usr/bin/env bash
# matrix.sh: seed 003's fixed three-profile matrix, one model and hardware shape at a time, and
# the cross-model report over several such result folders.
#
#   recipes/matrix.sh URL MODEL SHAPE          measure one model on one shape
#   recipes/matrix.sh --report DIR...          compare the result folders of several runs
#
# Reproduces: the study that holds hardware and methodology fixed and runs every model through
# the same three closed-loop profiles, as its `vllm bench serve` matrix runner does
# (--max-concurrency C --request-rate inf --num-prompts N):
#   latency-1024x256-c1    1,024 prompt tokens, 256 out, 1 in flight,  20 prompts (single user)
#   serve-1024x256-c16     1,024 prompt tokens, 256 out, 16 in flight, 200 prompts (loaded serving)
#   longctx-8192x256-c4    8,192 prompt tokens, 256 out, 4 in flight,  50 prompts (long context)
# Every summary carries the metadata the report groups by (`reduce --meta`): model, shape
# (SHAPE, e.g. "8x H200" or "16x H200 (TP=8, PP=2)"), engine (ENGINE, else what the server's
# /v1/models says owns the model), profile, a UTC timestamp and, with NOTE, a note. MODEL is sent
# to the server as the model name unless SERVED_MODEL names it otherwise.
#
# Parameters (environment): PROMPTS (NAME=COUNT pairs, e.g. "serve-1024x256-c16=400": a
# profile's prompt count; the seed's 20/200/50 by default), ROUNDS (instead: ROUNDS × the
# profile's concurrency prompts, for the profiles PROMPTS does not name), PROFILES (the names to
# run; all three by default), NOTE (a caveat shown in the report's Notes column, e.g. "fallback
# shape (TP=8, eager)"), ENGINE, SERVED_MODEL, SEED (42), TOKENIZER (the model's tokenizer.json,
# for prompts of exact token lengths). QUICK=1: 2 × concurrency prompts of 64 → 16 tokens (the
# names stay). CAPACITY (an SLO such as 'ttft.p99<=2s,tpot.p50<=100ms', or 1 for that one):
# after the profiles, `sweep --find concurrency=1..CAPACITY_MAX` (256; 8 under QUICK) on the
# serve profile's lengths (4 requests per user, at least 20) finds how many concurrent users
# the shape serves within it; kept in $OUT/capacity.ndjson (the points' summaries and the
# `sweep` record), and the report gains a capacity column.
#
# Reading the output. Measuring: one row per profile, by concurrency (requests ok and failed,
# output tok/s, TTFT and TPOT, mean and p99) and whether it is comparable (reduce's verdict, and
# why not), in $OUT/profiles.md; each profile's summary in $OUT/summaries/PROFILE.ndjson and its
# events in $OUT/runs/. Reporting (--report): seed 003's section 3 as Markdown, printed and
# written to ./matrix-report.md (REPORT=path to change it), profiles in the matrix's order
# (c1, c16, c4, as the seed prints them):
#   - the top 3 per profile by output tok/s, of the comparable runs only;
#   - every run side by side, one row per model, hardware shape and engine (a run's identity:
#     one model on 8x and on 16x is two rows, the seed's main comparison), one output tok/s
#     column per profile, the failed requests over its profiles (Failed) and its notes (Notes,
#     from `reduce --meta note=…`), and with CAPACITY the concurrent users within the SLO
#     (Capacity: the largest concurrency that met it, with its bracket; "none" when even one
#     user did not, "-" for a folder measured without CAPACITY); a run that is not comparable is
#     marked †;
#   - a mermaid bar chart per profile of the comparable runs, best first (GitHub renders them);
#   - the runs that are not comparable, with their reason (seed 003 ranks only "complete result
#     files and successful traces"; reduce's verdict, docs/verdict.md), and the profiles of the
#     matrix a folder lacks.
# Two summaries of one model, shape and engine for the same profile (the same folder given
# twice, a rerun) are refused before anything is printed (exit 2): give one of them.
#
# Failures and Ctrl-C: a profile whose run fails does not stop the next; Ctrl-C stops the run in
# progress and prints the table of the profiles that finished (exit 130). Exit status 1 when a
# profile did not finish or is incomplete (a request failed, was cancelled or not sent); for
# --report, when a folder lacks a profile or one is incomplete, after writing the report
# (recipes/lib.sh says more).
. "$(dirname "$0")/lib.sh"

# NAME INPUT OUTPUT CONCURRENCY PROMPTS, in the seed's order (the report's too).
PROFILE_SPECS=(
  "latency-1024x256-c1 1024 256 1 20"
  "serve-1024x256-c16 1024 256 16 200"
  "longctx-8192x256-c4 8192 256 4 50"
)

# prompts_for NAME DEFAULT CONCURRENCY: the profile's prompt count: PROMPTS' NAME=N, else
# ROUNDS × CONCURRENCY when ROUNDS is set, else 2 × CONCURRENCY under QUICK, else DEFAULT.
prompts_for() {
  local pair n=""
  for pair in ${PROMPTS:-}; do
    case "$pair" in "$1="*) n=${pair#*=} ;; esac
  done
  if [ -z "$n" ]; then
    if [ -n "${ROUNDS:-}" ]; then n=$((ROUNDS * $3)); else n=$(quick "$2" $((2 * $3))); fi
  fi
  case "$n" in
    ''|*[!0-9]*|0) usage_error "PROMPTS: the prompt count of $1 must be a whole number above 0, got \`$n'" ;;
  esac
  echo "$n"
}

# model_of DIR: the model a result folder measured (its summaries' `model`), else the folder.
model_of() {
  local f
  for f in "$1"/summaries/*.ndjson; do
    [ -e "$f" ] || break
    jq -rs '[.[] | select(.type == "summary")] | last | .meta.model // .label // empty' "$f" && return
  done
  echo "$1"
}

# record FILE: what the report needs of one summaries file (its last summary: a group when it has
# one), as one JSON line. The lane (model, shape, engine) is the run's identity; the profile is
# the file's name when the summary does not say.
record() {
  jq -cs --arg file "$1" --arg name "$(basename "$1" .ndjson)" '
    [.[] | select(.type == "summary")] | last // {}
    | {file: $file, profile: (.meta.profile // $name),
       model: (.meta.model // .label // "?"), shape: (.meta.shape // "?"),
       engine: (.meta.engine // "?"), note: (.meta.note // ""),
       tps: (.output_throughput_tokens_per_s // 0), failed: (.requests_failed // 0),
       comparable: (.verdict.comparable // false),
       complete: (.verdict.complete.ok // false),
       reason: (.verdict.reason // "no verdict (a summary older than format 1.7: run reduce again)")}' "$1"
}

# The jq functions of the report: a lane's name, numbers as table writes them, Markdown tables
# padded as table pads them. Records are those of `record`; $order is the profiles' order.
REPORT_JQ='
def rep($s; $n): if $n > 0 then $s * $n else "" end;
def f2: (. * 100 | nearbyint) as $c
  | "\($c / 100 | floor).\($c % 100 | tostring | if length < 2 then "0" + . else . end)";
def pad($w; $right): if $right then rep(" "; $w - length) + . else . + rep(" "; $w - length) end;
# md(RIGHT): the rows (the heading first, cells as strings) as a Markdown table, each column
# padded to its widest cell; RIGHT says which columns are right-aligned (numbers).
def md($right):
  map(map(gsub("\\|"; "\\|"))) as $t
  | [range(0; $t[0] | length) as $i | [$t[] | .[$i] | length] | max] as $w
  | def line: [range(0; length) as $i | .[$i] | pad($w[$i]; $right[$i])] | "| " + join(" | ") + " |";
    ($t[0] | line),
    "|" + ([range(0; $w | length) as $i
      | if $right[$i] then rep("-"; $w[$i] + 1) + ":" else rep("-"; $w[$i] + 2) end] | join("|"))
      + "|",
    ($t[1:][] | line);
# The capacity of a folder (see capacity_of) as its column shows it.
def capacity: if . == null then "-"
  elif .value == null then "none"
  elif .first_fail == null then "≥ \(.value)"
  else "\(.value) (\(.value)–\(.first_fail))\(if .sure then "" else " ?" end)" end;
# Several engines for one model and shape: the engine tells the lanes apart too.
def lanes: (group_by([.model, .shape]) | map(select(map(.engine) | unique | length > 1))
  | map(.[0] | [.model, .shape])) as $shared
  | map(. + {lane: (if [.model, .shape] as $ms | any($shared[]; . == $ms)
                    then "\(.model), \(.shape), \(.engine)"
                    else "\(.model), \(.shape)" end)});
'

# report_sections: the report's tables from the records on stdin (one JSON line each), the
# profiles in the order of $ORDER (a JSON array).
report_sections() {
  jq -rs --argjson order "$ORDER" "$REPORT_JQ"'
    lanes as $all
    | [$all[] | select(.comparable)] as $good
    | [$order[] as $p | [$good[] | select(.profile == $p)] | sort_by(-.tps)] as $ranked
    | ([$ranked[] | length] + [0] | max | [., 3] | min) as $n
    | "## Top \(if $n > 0 then $n else 3 end) by output throughput (tok/s) per profile",
      "",
      (if $n == 0 then "No comparable run."
       else [["Profile"] + [range(0; $n) | "#\(. + 1)"]]
         + [range(0; $order | length) as $i | [$order[$i]]
            + [range(0; $n) as $k | $ranked[$i][$k]
               | if . then "\(.lane) (\(.tps | f2) tok/s)" else "-" end]]
         | md([range(0; $n + 1) | false]) end),
      "",
      "## Every model side by side (output tok/s)",
      "",
      "One row per model, hardware shape and engine. † marks a run that is not comparable (listed at the end); Failed counts its failed requests over the profiles.",
      "",
      ([$all[] | .capacity] | any(. != null)) as $cap
      | ([["Model", "Hardware shape", "Engine"] + [$order[] | "\(.) [tok/s]"]
          + (if $cap then ["Capacity [users]"] else [] end) + ["Failed", "Notes"]]
        + [$all | group_by([.model, .shape, .engine]) | sort_by(map(.i) | min)[]
           | . as $runs
           | [.[0].model, .[0].shape, .[0].engine]
             + [$order[] as $p | [$runs[] | select(.profile == $p)][0]
                | if . == null then "-" elif .comparable then (.tps | f2) else "\(.tps | f2) †" end]
             + (if $cap then [.[0].capacity | capacity] else [] end)
             + ["\(map(.failed) | add)", (map(.note) | map(select(. != "")) | unique | join("; "))]]
        | md([false, false, false] + [$order[] | true] + (if $cap then [true] else [] end)
             + [true, false]))
  '
}

# check_lanes: refuses (exit 2) two summaries of one lane and profile, which the report would
# have to choose between.
check_lanes() {
  local twice
  twice=$(jq -rs 'group_by([.model, .shape, .engine, .profile]) | map(select(length > 1))[]
    | "\(.[0].model) (\(.[0].shape), \(.[0].engine)), \(.[0].profile): \(map(.file) | join(" and "))"')
  [ -z "$twice" ] || usage_error "one model, shape and engine measured twice for a profile; give one of each:
$twice"
}

# capacity_of DIR: the capacity sweep of a result folder as one JSON value (the capacity, the
# bracket's upper end, whether it is sure), null when the folder was measured without CAPACITY.
capacity_of() {
  if [ -s "$1/capacity.ndjson" ]; then
    jq -cs '[.[] | select(.type == "sweep")] | last
      | if . == null then null
        else {value: .capacity, first_fail: .bracket.first_fail, sure: .sure} end' \
      "$1/capacity.ndjson"
  else
    echo null
  fi
}

report() {
  [ $# -gt 0 ] || usage_error "usage: recipes/matrix.sh --report DIR..."
  TABLE=$(tool table)
  need_jq
  local files=() excluded=() missing=() dir spec name f bad=0 i=0
  local records=""
  ORDER=$(for spec in "${PROFILE_SPECS[@]}"; do read -r name _ <<<"$spec"; echo "$name"; done \
    | jq -Rsc 'split("\n") | map(select(. != ""))')
  for dir in "$@"; do
    [ -d "$dir/summaries" ] || usage_error "$dir: not a result folder of matrix.sh (no summaries/)"
    for spec in "${PROFILE_SPECS[@]}"; do
      read -r name _ <<<"$spec"
      if [ ! -e "$dir/summaries/$name.ndjson" ]; then
        missing+=("$(model_of "$dir") ($dir), $name: no summary (its run did not finish, or PROFILES left it out)")
        bad=1
      fi
    done
    local cap
    cap=$(capacity_of "$dir")
    for f in "$dir"/summaries/*.ndjson; do
      [ -e "$f" ] || continue
      files+=("$f")
      records+="$(record "$f" | jq -c --argjson i "$i" --argjson cap "$cap" \
        '. + {i: $i, capacity: $cap}')"$'\n'
      i=$((i + 1))
    done
  done
  printf '%s' "$records" | check_lanes
  # Profiles outside the matrix (an older recipe's) follow it, in the order first met.
  ORDER=$(printf '%s' "$records" | jq -sc --argjson order "$ORDER" \
    '$order + ([.[].profile] | reduce .[] as $p ([]; if index([$p]) then . else . + [$p] end)
      | map(select(. as $p | $order | index([$p]) | not)))')
  local lines
  lines=$(printf '%s' "$records" | jq -r 'select(.comparable | not)
    | "\(.model) (\(.shape)), \(.profile): \(.reason)"')
  [ -z "$lines" ] || mapfile -t excluded <<<"$lines"
  lines=$(printf '%s' "$records" | jq -r 'select(.complete | not) | .file')
  [ -z "$lines" ] || bad=1
  local out=${REPORT:-matrix-report.md} tmp
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  {
    if [ ${#files[@]} -gt 0 ]; then
      printf '%s' "$records" | report_sections
      echo
      charts "$tmp"
    else
      echo "No summary."
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

# charts TMP: a mermaid bar chart of output tok/s per profile, in the matrix's order, of the
# comparable runs only, best first (table --format mermaid), each bar named by its lane. The
# summaries are copied to TMP with their lane as `meta.lane`, which table pivots by.
charts() {
  local tmp=$1 p n=0 chart_files
  printf '%s' "$records" | jq -c "$REPORT_JQ"'[inputs] | lanes[] | select(.comparable)' -n \
    | while IFS= read -r rec; do
      n=$((n + 1))
      jq -c --argjson r "$rec" 'if .type == "summary" then .meta.lane = $r.lane else . end' \
        "$(jq -r .file <<<"$rec")" >"$tmp/$(jq -r .profile <<<"$rec")--$n.ndjson"
    done
  local any=0 profiles=()
  mapfile -t profiles < <(jq -r '.[]' <<<"$ORDER")
  for p in "${profiles[@]}"; do
    chart_files=("$tmp/$p"--*.ndjson)
    [ -e "${chart_files[0]}" ] || continue
    if [ "$any" = 0 ]; then echo "## Output throughput per profile"; echo; any=1; fi
    "$TABLE" --rows meta.lane --cols profile --format mermaid "${chart_files[@]}"
    echo
  done
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
  local seed=${SEED:-42} stamp
  stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local spec name input output c count n
  local notes=()
  [ -n "${NOTE:-}" ] && notes=(--meta "note=$NOTE")
  # Every count is checked before the first run.
  local pair names=" " counts=()
  for spec in "${PROFILE_SPECS[@]}"; do
    read -r name _ _ c count <<<"$spec"
    names+="$name "
    counts+=("$(prompts_for "$name" "$count" "$c")")
  done
  for pair in ${PROMPTS:-}; do
    case "$pair" in
      *=*) case "$names" in *" ${pair%%=*} "*) ;; *)
        usage_error "PROMPTS: \`${pair%%=*}' is not a profile of the matrix:${names% }" ;; esac ;;
      *) usage_error "PROMPTS: expected NAME=COUNT pairs such as serve-1024x256-c16=200, got \`$pair'" ;;
    esac
  done
  local k=0
  for spec in "${PROFILE_SPECS[@]}"; do
    read -r name input output c count <<<"$spec"
    n=${counts[k]}
    k=$((k + 1))
    case " ${PROFILES:-$name} " in *" $name "*) ;; *) continue ;; esac
    if [ "${QUICK:-0}" = 1 ]; then input=64 output=16; fi
    local lengths=(--input-tokens "$input" --output-tokens "$output")
    [ -n "${TOKENIZER:-}" ] && lengths+=(--tokenizer "$TOKENIZER")
    run "$name" --concurrency "$c" -n "$n" "${lengths[@]}" --seed "$seed" || continue
    summarize "$name" "$2" "$OUT/runs/$name.ndjson" -- --meta "model=$2" --meta "shape=$shape" \
      --meta "engine=$engine" --meta "profile=$name" --meta "timestamp=$stamp" \
      "${notes[@]}" || continue
    summaries+=("$OUT/summaries/$name.ndjson")
  done
  [ -n "${CAPACITY:-}" ] && capacity "$seed" "$2" "$shape" "$engine" || true
  finish
  recipe_end "${summaries[@]}"
}

# capacity SEED MODEL SHAPE ENGINE: with CAPACITY, how many concurrent users the shape serves within the SLO on the
# serve profile's lengths (sweep --find), kept in $OUT/capacity.ndjson and said on stderr.
capacity() {
  local slo=$CAPACITY
  [ "$slo" = 1 ] && slo='ttft.p99<=2s,tpot.p50<=100ms'
  local sweep_bin input=1024 output=256 top
  sweep_bin=$(tool sweep)
  if [ "${QUICK:-0}" = 1 ]; then input=64 output=16; fi
  top=${CAPACITY_MAX:-$(quick 256 8)}
  local point="$(printf '%q' "$ARRIVALS") --concurrency {concurrency} -n \$(( {concurrency} * 4 < 20 ? 20 : {concurrency} * 4 )) --input-tokens $input --output-tokens $output --seed $1 | $(fire_line)"
  say "capacity: sweep --find concurrency=1..$top --slo '$slo'"
  local status=0
  "$sweep_bin" --find "concurrency=1..$top" --slo "$slo" --label "$2" --meta "model=$2" \
    --meta "shape=$3" --meta "engine=$4" -- "$point" >"$OUT/capacity.ndjson" \
    || status=$?
  interrupted_by "$status"
  if [ "$status" -ne 0 ]; then
    FAILED+=("capacity: did not finish (sweep exited $status)")
    return 0
  fi
  say "capacity: $(jq -r 'select(.type == "sweep") | .reason' "$OUT/capacity.ndjson")"
}

if [ "${1:-}" = --report ]; then
  shift
  report "$@"
else
  measure "$@"
fi
