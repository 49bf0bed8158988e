#!/usr/bin/env bash
# make test-cluster: the cluster recipes under real Slurm, on three hosts made of network
# namespaces on this machine (docs/cluster.md, "How it is tested").
#
#   scripts/cluster/test.sh [BIN]      BIN: the built tools (default target/release: make build)
#
# Needs root (namespaces, daemons) and installs slurm-wlm and munge with apt-get when missing.
# Steps, each printed: the network (netns.sh: blackhole route first), munged, slurmctld and
# three slurmd (slurm-up.sh), simserve in the server namespace; then
#   1. the plan unsharded, from one host;
#   2. recipes/cluster/slurm.sh on the three hosts with --start-at: the merged figures equal
#      the unsharded ones within noise, the parts' start spread small, every part ok;
#   3. the same with one part's fire killed (SIGKILL) mid-run: its requests counted as lost,
#      the verdict naming its host;
#   4. recipes/cluster/k8s-job.yaml's container command, as written there, once per index;
#   5. step 4's parts with one part's file emptied: merged all the same, the part missing;
#   6. recipes/cluster/ssh.sh over GNU parallel, with a stand-in for ssh that enters a host's
#      namespace instead of connecting (ssh-standin.sh).
# Without root, steps 1, 4, 5 and 6 run on loopback (every "host" this machine, the stand-in
# running the command here) and the Slurm steps are skipped, with a message.
# With MEASURE=1, then the figures of BENCHMARKS.md "Cluster" (measure.sh). Everything is torn
# down on exit, failure and Ctrl-C included, and the root namespace's routes, links and
# namespaces are checked to be as they were. On failure the daemons' logs are printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
BIN=${1:-target/release}

LOCAL=
if [ "$(id -u)" -ne 0 ]; then
  echo "cluster: not root: the Slurm steps are skipped (they need network namespaces and" \
    "daemons); the Kubernetes and ssh recipes run on loopback" >&2
  LOCAL=1
fi
for b in ip nsenter jq parallel; do
  command -v "$b" >/dev/null 2>&1 && continue
  if [ -z "$LOCAL" ]; then
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 util-linux jq parallel >/dev/null; }; then
      echo "cluster: skipped: iproute2, util-linux, jq or parallel could not be installed (apt-get failed)" >&2
      exit 0
    fi
    break
  fi
  case $b in jq | parallel) echo "cluster: skipped: no $b (and not root to install it)" >&2; exit 0 ;; esac
done
for b in arrivals fire reduce table simserve; do
  [ -x "$BIN/$b" ] || { echo "cluster: $BIN/$b not built (run: make build)" >&2; exit 1; }
done

. scripts/cluster/netns.sh
. scripts/cluster/slurm-up.sh
. scripts/cluster/checks.sh

STEP=
# Logs of the running step (a recipe's stderr), printed on failure after the daemons' logs.
STEP_LOGS=()
step() {
  STEP=$*
  STEP_LOGS=()
  echo "cluster: $*" >&2
}
# The reason is printed again after the daemons' logs, as the last line: a CI log shows its tail.
FAILED=
fail() {
  FAILED=$*
  echo "cluster: FAILED: $*" >&2
  exit 1
}

# A machine whose package source fails is told apart from a test that fails, as CI's Chromium
# install is: the Slurm steps are skipped, loudly, and the rest runs on loopback.
if [ -z "$LOCAL" ] && ! slurm_install; then
  echo "cluster: slurm-wlm and munge could not be installed (apt-get failed): the Slurm steps" \
    "are skipped; the Kubernetes and ssh recipes run on loopback" >&2
  LOCAL=1
fi

T=$(mktemp -d /tmp/tokenpipe-cluster.XXXXXX)
chmod 755 "$T"
SERVER=
state() {
  [ -n "$LOCAL" ] || { ip netns list; ip route; ip -o link | sed 's/ qlen [0-9]*//'; }
}
BEFORE=$(state)
cleanup() {
  local status=$? failed_step=$STEP
  set +e
  trap - INT TERM
  if [ "$status" -ne 0 ]; then
    slurm_logs
    [ -f "$T/simserve.log" ] && { echo "----- simserve.log" >&2; tail -n 20 "$T/simserve.log" >&2; }
    for f in "${STEP_LOGS[@]}"; do
      [ -f "$f" ] && { echo "----- $(basename "$f") (last 40 lines)" >&2; tail -n 40 "$f" >&2; }
    done
  fi
  step "teardown: daemons, namespaces, blackhole route, $T"
  [ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null
  [ -n "$LOCAL" ] || net_down
  rm -rf "$T"
  if [ -n "$(net_pids)" ]; then
    echo "cluster: processes left in the test's namespaces: $(net_pids | tr '\n' ' ')" >&2
    status=1
  fi
  if [ "$(state)" != "$BEFORE" ]; then
    echo "cluster: the root namespace is not as it was:" >&2
    diff <(echo "$BEFORE") <(state) >&2
    status=1
  else
    step "namespaces, routes and links as before; no process left in the test's namespaces"
  fi
  [ -z "$FAILED" ] || echo "cluster: FAILED in step \"$failed_step\": $FAILED" >&2
  [ "$status" -eq 0 ] || [ -n "$FAILED" ] ||
    echo "cluster: FAILED in step \"$failed_step\": exit status $status (see above)" >&2
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$T/bin"
for b in arrivals fire reduce table simserve; do cp "$BIN/$b" "$T/bin/"; done
export TOKENPIPE_BIN=$T/bin

if [ -n "$LOCAL" ]; then
  # Every "host" is this machine, and the server listens on loopback.
  in_ns() { shift; "$@"; }
  NET_SERVER_ADDR=127.0.0.1 port=0
  export TOKENPIPE_STANDIN_LOCAL=1
else
  step "network: blackhole $NET_SUBNET, namespaces ctl, srv, h1-h3 on a bridge"
  net_up
  step "slurm: munged, slurmctld, slurmd host1-3"
  slurm_up "$T/slurm"
  port=8000
fi
step "simserve at $NET_SERVER_ADDR:$port${LOCAL:+ (port 0: a free one)}"
# Started directly, not through the in_ns function (a function in the background is a subshell,
# whose PID is not the server's): nsenter execs simserve, so SERVER is its PID.
if [ -n "$LOCAL" ]; then
  "$T/bin/simserve" --host "$NET_SERVER_ADDR" --port "$port" --ttft-ms 20 --itl-ms 5 \
    > "$T/simserve.url" 2> "$T/simserve.log" &
else
  nsenter --net="/run/netns/$(ns_name srv)" "$T/bin/simserve" --host "$NET_SERVER_ADDR" \
    --port "$port" --ttft-ms 20 --itl-ms 5 > "$T/simserve.url" 2> "$T/simserve.log" &
fi
SERVER=$!
for _ in $(seq 100); do [ -s "$T/simserve.url" ] && break; sleep 0.05; done
URL=$(head -n 1 "$T/simserve.url")
[ -n "$URL" ] || fail "simserve did not start"

# The plan every check sends: 300 requests at 100/s (3 s), 32 tokens each.
export NUM_PROMPTS=300 RATE=100 OUTPUT_TOKENS=32 SEED=7
# The start spread allowed with --start-at: 0.4-2.5 ms here, a few 6-10 ms under a build
# (BENCHMARKS.md, "Cluster"), 3-103 ms without it; 20 ms holds on this shared machine and still
# fails most runs that did not wait.
SPREAD_LIMIT_MS=${SPREAD_LIMIT_MS:-20}

# bg CMD...: run CMD in the background and wait for it, so that Ctrl-C and SIGTERM reach this
# script's traps at once rather than when a long step ends.
bg() {
  "$@" &
  wait $!
}

step "1. the plan unsharded, from host1"
bg in_ns h1 bash -c '"$TOKENPIPE_BIN/arrivals" -n "$NUM_PROMPTS" --rate "$RATE" --seed "$SEED" \
  --output-tokens "$OUTPUT_TOKENS" | "$TOKENPIPE_BIN/fire" --url "$1" -q' _ "$URL" > "$T/full.ndjson"
"$T/bin/reduce" "$T/full.ndjson" > "$T/full.summary.ndjson"

if [ -z "$LOCAL" ]; then
  step "2. recipes/cluster/slurm.sh: three parts under srun, --start-at +2s"
  STEP_LOGS=("$T/slurm-ok.log")
  status=0
  bg in_ns ctl env OUT="$T/slurm-ok" START_DELAY=2s recipes/cluster/slurm.sh "$URL" \
    > "$T/slurm-ok.table" 2> "$T/slurm-ok.log" || status=$?
  # 1: not comparable, which check_parts_ok reads: on this shared machine the client check alone
  # may fail (requests sent more than 1 ms late), which says nothing of the parts.
  [ "$status" -le 1 ] || { cat "$T/slurm-ok.log" >&2; fail "slurm.sh exited $status"; }
  check_merged_equals_full "$T/slurm-ok/merged.ndjson" "$T/full.summary.ndjson"
  check_parts_ok "$T/slurm-ok/merged.ndjson" 3 "$SPREAD_LIMIT_MS"

  step "3. recipes/cluster/slurm.sh with part 1's fire killed mid-run"
  STEP_LOGS=("$T/slurm-kill.log")
  status=0
  in_ns ctl env OUT="$T/slurm-kill" START_DELAY=1s recipes/cluster/slurm.sh "$URL" \
    > "$T/slurm-kill.table" 2> "$T/slurm-kill.log" &
  recipe=$!
  kill_fire_in h2 "$T/slurm-kill/parts/part1.ndjson"
  wait "$recipe" || status=$?
  [ "$status" -eq 1 ] || { cat "$T/slurm-kill.log" >&2; fail "slurm.sh exited $status after a lost part, not 1"; }
  check_lost_part "$T/slurm-kill/merged.ndjson" 1 host2
  grep -E '\bhost2\b.*\blost\b' "$T/slurm-kill/parts.md" >/dev/null ||
    fail "the recipe's per-part table has no lost row for host2: $(cat "$T/slurm-kill/parts.md")"
  echo "cluster:   the recipe's table --by shard: $(grep -E '\bhost2\b' "$T/slurm-kill/parts.md" | tr -s ' ')" >&2
else
  step "2, 3. skipped: the Slurm steps need root"
fi

step "4. recipes/cluster/k8s-job.yaml's container command, JOB_COMPLETION_INDEX 0-2"
STEP_LOGS=("$T/k8s-part0.err" "$T/k8s-part1.err" "$T/k8s-part2.err")
k8s_command recipes/cluster/k8s-job.yaml > "$T/k8s-command.sh"
[ -s "$T/k8s-command.sh" ] || fail "no container command found in recipes/cluster/k8s-job.yaml"
START_AT=$(date -u -d '+2 sec' +%Y-%m-%dT%H:%M:%S.%NZ)
pids=()
for i in 0 1 2; do
  in_ns "h$((i + 1))" env -i PATH="$T/bin:/usr/bin:/bin" JOB_COMPLETION_INDEX=$i \
    TOKENPIPE_SHARDS=3 URL="$URL" NUM_PROMPTS=$NUM_PROMPTS RATE=$RATE \
    OUTPUT_TOKENS=$OUTPUT_TOKENS SEED=$SEED START_AT="$START_AT" POD_NAME="tokenpipe-$i" \
    STDERR_FILE="$T/k8s-part$i.err" /bin/sh -c "$(cat "$T/k8s-command.sh")" > "$T/k8s-part$i.ndjson" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a k8s part failed: $(cat "$T"/k8s-part*.err)"; done
"$T/bin/reduce" "$T"/k8s-part*.ndjson > "$T/k8s.ndjson"
check_merged_equals_full "$T/k8s.ndjson" "$T/full.summary.ndjson"
check_parts_ok "$T/k8s.ndjson" 3 "$SPREAD_LIMIT_MS"

step "5. step 4's parts with part 2's file emptied"
STEP_LOGS=("$T/empty.err")
mkdir -p "$T/empty"
cp "$T"/k8s-part*.ndjson "$T/empty/"
: > "$T/empty/k8s-part2.ndjson"
status=0
"$T/bin/reduce" "$T"/empty/k8s-part0.ndjson "$T"/empty/k8s-part1.ndjson "$T"/empty/k8s-part2.ndjson \
  > "$T/empty.ndjson" 2> "$T/empty.err" || status=$?
[ "$status" -le 1 ] || { cat "$T/empty.err" >&2; fail "reduce exited $status on an empty part"; }
check_empty_part "$T/empty.ndjson" "$T/empty.err" 2

step "6. recipes/cluster/ssh.sh over GNU parallel, ssh-standin.sh in place of ssh, login shell sh"
STEP_LOGS=("$T/ssh.log")
status=0
# 4 s: parallel starts its ssh jobs one after another, each a perl worker, over a second or
# more on this loaded machine.
# The hosts' login shell is sh, as a plain Debian account's is: the recipe must not depend on
# it (parallel's remote worker runs the command with it).
bg in_ns ctl env OUT="$T/ssh" START_DELAY=4s HOSTS="h1 h2 h3" TOKENPIPE_STANDIN_SHELL=/bin/sh \
  SSH="$REPO/scripts/cluster/ssh-standin.sh" recipes/cluster/ssh.sh "$URL" \
  > "$T/ssh.table" 2> "$T/ssh.log" || status=$?
[ "$status" -le 1 ] || { cat "$T/ssh.log" >&2; fail "ssh.sh exited $status"; }
check_merged_equals_full "$T/ssh/merged.ndjson" "$T/full.summary.ndjson"
check_parts_ok "$T/ssh/merged.ndjson" 3 "$SPREAD_LIMIT_MS"

if [ -n "${MEASURE:-}" ] && [ -z "$LOCAL" ]; then
  . scripts/cluster/measure.sh
  measure_all
fi
step "all checks passed"
