# The checks of scripts/cluster/test.sh, each on reduce's output (docs/metrics.md, "Shards"):
# one line printed per check with the figures it compared, and `fail` (test.sh's) when one does
# not hold. Sourced, not run.

# summary FILE: the last summary record of a reduce output, one line of JSON.
summary() { jq -cs '[.[] | select(.type == "summary")] | last' "$1"; }

# within NAME GOT WANT REL ABS: GOT is within REL (a fraction) of WANT, or within ABS of it.
within() {
  local name=$1 got=$2 want=$3 rel=$4 abs=$5
  if jq -ne --argjson g "$got" --argjson w "$want" --argjson r "$rel" --argjson a "$abs" \
    '(($g - $w) | fabs) <= ([($w | fabs) * $r, $a] | max)' >/dev/null; then
    printf 'cluster:   %-34s %12s  unsharded %12s\n' "$name" "$got" "$want" >&2
  else
    fail "$name: merged $got, unsharded $want (more than $rel relative and $abs apart)"
  fi
}

# check_merged_equals_full MERGED FULL: the merged run's figures equal the unsharded run's:
# counts exactly, latencies and throughputs within noise on a shared two-core machine (the
# server, three clients and the daemons on two cores).
check_merged_equals_full() {
  local m f k
  m=$(summary "$1")
  f=$(summary "$2")
  [ "$m" != null ] || fail "no summary in $1 ($(wc -l < "$1") lines)"
  for k in requests_ok output_tokens input_tokens; do
    within "$k" "$(jq ".$k" <<< "$m")" "$(jq ".$k" <<< "$f")" 0 0
  done
  within ttft_p50_ms "$(jq .ttft_p50_ms <<< "$m")" "$(jq .ttft_p50_ms <<< "$f")" 0.15 3
  within tpot_mean_ms "$(jq .tpot_mean_ms <<< "$m")" "$(jq .tpot_mean_ms <<< "$f")" 0.10 0.5
  within request_throughput_per_s "$(jq .request_throughput_per_s <<< "$m")" \
    "$(jq .request_throughput_per_s <<< "$f")" 0.05 0
  within output_throughput_tokens_per_s "$(jq .output_throughput_tokens_per_s <<< "$m")" \
    "$(jq .output_throughput_tokens_per_s <<< "$f")" 0.05 0
}

# check_parts_ok MERGED N LIMIT_MS: N parts, every one ok, none lost, every request ended, the
# verdict's parts check passed, the parts' start spread at most LIMIT_MS (printed:
# BENCHMARKS.md keeps what it usually is). The client check is left out: on this shared
# two-core machine a part may send a few requests more than 1 ms late, which fire reports.
check_parts_ok() {
  local s n spread
  s=$(summary "$1")
  n=$(jq '[.parts[]? | select(.status == "ok")] | length' <<< "$s")
  [ "$n" -eq "$2" ] || fail "$2 parts expected ok, $n are: $(jq -c .parts <<< "$s")"
  [ "$(jq '.requests_lost // 0' <<< "$s")" -eq 0 ] || fail "requests lost: $(jq -c .parts <<< "$s")"
  [ "$(jq .verdict.complete.ok <<< "$s")" = true ] || fail "incomplete: $(jq -r .verdict.complete.reason <<< "$s")"
  [ "$(jq .verdict.parts.ok <<< "$s")" = true ] || fail "parts: $(jq -r .verdict.parts.reason <<< "$s");" \
    "$(jq -c '[.parts[] | {host, status, start_offset_ms, start_late_ms}]' <<< "$s")"
  spread=$(jq .start_spread_ms <<< "$s")
  jq -ne --argjson s "$spread" --argjson l "$3" '$s <= $l' >/dev/null ||
    fail "start spread $spread ms, more than $3 ms; each part's lateness after --start-at (ms):" \
      "$(jq -c '[.parts[] | {host, start_offset_ms, start_late_ms}]' <<< "$s")"
  echo "cluster:   $2 parts ok on $(jq -r '[.parts[].host] | join(", ")' <<< "$s"); start spread $spread ms; verdict: $(jq -r .verdict.reason <<< "$s")" >&2
}

# kill_fire_in HOST PART: once PART (that host's part file) holds 20 requests sent, SIGKILL the
# fire running in HOST's namespace: a host lost mid-run.
kill_fire_in() {
  local host=$1 part=$2 pid
  for _ in $(seq 300); do
    [ -f "$part" ] && [ "$(grep -c '"type":"sent"' "$part" || true)" -ge 20 ] && break
    sleep 0.05
  done
  for pid in $(ip netns pids "$(ns_name "$host")"); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = fire ]; then
      kill -KILL "$pid"
      echo "cluster:   killed fire (pid $pid) in $host after $(grep -c '"type":"sent"' "$part") requests sent" >&2
      return 0
    fi
  done
  fail "no fire running in $host to kill"
}

# check_lost_part MERGED INDEX HOST: part INDEX is lost, its unreported requests counted as lost
# (those its schedule owned that its output never mentions), every request of the plan either
# held by the run or lost, and the verdict not comparable, its parts check naming HOST.
check_lost_part() {
  local s p lost planned seen held reason
  s=$(summary "$1")
  p=$(jq -c ".parts[$2]" <<< "$s")
  [ "$(jq -r .status <<< "$p")" = lost ] || fail "part $2 not counted as lost: $p"
  planned=$(jq .requests_planned <<< "$p")
  seen=$(jq .requests_seen <<< "$p")
  lost=$(jq .requests_lost <<< "$s")
  held=$(jq .requests_scheduled <<< "$s")
  if [ "$lost" -le 0 ] || [ "$lost" -ne $((planned - seen)) ]; then
    fail "requests_lost $lost, but part $2 planned $planned and reported $seen"
  fi
  [ $((held + lost)) -eq "$NUM_PROMPTS" ] ||
    fail "$held requests held and $lost lost: not the plan's $NUM_PROMPTS"
  reason=$(jq -r .verdict.parts.reason <<< "$s")
  [ "$(jq .verdict.comparable <<< "$s")" = false ] || fail "a run with a lost part is comparable"
  [ "$(jq .verdict.parts.ok <<< "$s")" = false ] || fail "the parts check passed with a lost part"
  grep -q "$3" <<< "$reason" || fail "the verdict's parts check does not name $3: $reason"
  echo "cluster:   part $2 lost: $lost of its $planned requests never reported; $held held + $lost lost = $NUM_PROMPTS" >&2
  echo "cluster:   verdict: $(jq -r .verdict.reason <<< "$s"); parts: $reason" >&2
}

# check_empty_part MERGED STDERR INDEX: an empty part file is a warning, not an abort: the others
# merged, part INDEX missing, its share of the plan counted as lost.
check_empty_part() {
  local s p share
  s=$(summary "$1")
  [ "$s" != null ] || fail "no merged summary with an empty part"
  grep -q warning "$2" || fail "no warning for the empty part (stderr: $(cat "$2"))"
  p=$(jq -c ".parts[$3]" <<< "$s")
  [ "$(jq -r .status <<< "$p")" = missing ] || fail "part $3 not missing: $p"
  share=$((NUM_PROMPTS / 3 + ($3 < NUM_PROMPTS % 3 ? 1 : 0)))
  [ "$(jq .requests_lost <<< "$s")" -eq "$share" ] ||
    fail "requests_lost $(jq .requests_lost <<< "$s"), not part $3's share $share"
  echo "cluster:   empty part $3: warned ($(grep -m1 warning "$2")); its $share requests lost; the others merged" >&2
}

# k8s_command YAML: the container's command, the block scalar under `args: - |`, unindented.
k8s_command() {
  awk '
    /^ *args: *$/ { args = 1; next }
    args && /^ *- \|[-+]? *$/ { inblock = 1; next }
    inblock {
      if ($0 ~ /^ *$/) { print ""; next }
      match($0, /^ */)
      if (indent == 0) indent = RLENGTH
      if (RLENGTH < indent) exit
      print substr($0, indent + 1)
    }
  ' "$1"
}
