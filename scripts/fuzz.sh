#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo fuzz, libFuzzer) for SECONDS each and prints the
# executions per target; `make fuzz SECONDS=N` calls it. Installs cargo-fuzz (crates.io) and a
# nightly toolchain when missing, builds the targets, and seeds each target's corpus
# (fuzz/corpus/TARGET, not checked in) from the test fixtures, the small checked-in seed set
# (fuzz/seeds/) and, when the debug binaries are built, a short run of the real pipe against
# simserve. A crash or an assertion that fails leaves its input under fuzz/artifacts/TARGET/ and
# makes the script fail, naming it.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (SECONDS defaults to 10; no TARGET: all)
#   FUZZ_ARGS=-max_len=4096 scripts/fuzz.sh 600 records   (more libFuzzer options)
#
# The targets are built without a sanitizer: none of the code they reach is unsafe (the unsafe
# blocks of the crates are signal masks, poll, clocks and rlimits), and ASan halves the speed.
# Debug assertions and overflow checks stay on, as in the test build.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
[ $# -gt 0 ] && shift
build_flags=(-s none -a)

if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked

cargo +nightly fuzz build "${build_flags[@]}"
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +nightly fuzz list); fi

fixtures=tests/fixtures
corpus=fuzz/corpus

# seed TARGET MODES... -- FILES...: copies each file into TARGET's corpus once per mode byte
# (given in hex), the byte in front; no modes copies the files as they are.
seed() {
  local target=$1 modes=() file mode
  shift
  while [ "$1" != -- ]; do modes+=("$1"); shift; done
  shift
  mkdir -p "$corpus/$target"
  for file in "$@"; do
    [ -s "$file" ] || continue
    if [ ${#modes[@]} -eq 0 ]; then
      cp "$file" "$corpus/$target/seed-$(basename "$file")"
    fi
    for mode in "${modes[@]}"; do
      { printf "\\x$mode"; cat "$file"; } > "$corpus/$target/seed-$mode-$(basename "$file")"
    done
  done
}

# A short run of the real pipe (schedule, events, summaries, a metrics page) when the debug
# binaries are there (`make test` builds them); skipped otherwise.
generated=$(mktemp -d)
trap 'rm -rf "$generated"; [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true' EXIT
bin=target/debug
if [ -x $bin/arrivals ] && [ -x $bin/fire ] && [ -x $bin/reduce ] && [ -x $bin/simserve ]; then
  $bin/simserve --port 0 --ttft-ms 5 --itl-ms 1 > "$generated/url" &
  server_pid=$!
  for _ in $(seq 50); do [ -s "$generated/url" ] && break; sleep 0.1; done
  url=$(head -1 "$generated/url")
  if [ -n "$url" ]; then
    $bin/arrivals --num-prompts 6 --rate 50 --input-tokens 12 --output-tokens 5 > "$generated/schedule.ndjson"
    timeout 60 $bin/fire --url "$url" --server-metrics --quiet < "$generated/schedule.ndjson" \
      > "$generated/events.ndjson" || true
    $bin/reduce --per-request "$generated/events.ndjson" > "$generated/summary.ndjson" || true
    curl -fsS "${url%/v1}/metrics" > "$generated/metrics" 2>/dev/null || true
  fi
  kill "$server_pid" 2>/dev/null || true
  server_pid=
fi

records=("$fixtures"/format/*.ndjson "$fixtures"/table/*.ndjson "$fixtures"/llama_benchy/*.ndjson "$generated"/*.ndjson)
seed records 00 01 02 03 05 -- "${records[@]}"
seed reduce_events 00 07 0d 1e 3f -- "$fixtures"/llama_benchy/*.ndjson "$generated"/events.ndjson
seed table_input 00 01 02 04 08 0c 10 14 18 -- "$fixtures"/table/*.ndjson "$fixtures"/vllm/*.json "$generated"/summary.ndjson
seed vllm_import 00 07 0d -- "$fixtures"/vllm/*.json
seed trace 00 01 03 08 -- "$fixtures"/arrivals/mooncake-10.jsonl
seed trace 10 02 14 84 -- "$fixtures"/arrivals/burstgpt-10.csv
seed datasets 00 02 34 -- "$fixtures"/arrivals/sharegpt.json
seed datasets 01 03 -- "$fixtures"/arrivals/prompts.jsonl
seed exposition -- "$generated"/metrics
for target in "${targets[@]}"; do
  [ -d "fuzz/seeds/$target" ] && seed "$target" -- "fuzz/seeds/$target"/*
  mkdir -p "$corpus/$target"
done

# Each target for $seconds; the figures come from libFuzzer's final statistics.
failed=()
printf '%-14s %14s %10s  %s\n' target executions exec/s result
for target in "${targets[@]}"; do
  log=fuzz/artifacts/$target.log
  mkdir -p "fuzz/artifacts/$target"
  status=0
  cargo +nightly fuzz run "${build_flags[@]}" "$target" "$corpus/$target" -- \
    -max_total_time="$seconds" -timeout=30 -print_final_stats=1 ${FUZZ_ARGS:-} > "$log" 2>&1 || status=$?
  execs=$(awk '/stat::number_of_executed_units/ { n += $2 } END { print n + 0 }' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ { n += $2 } END { print n + 0 }' "$log")
  if [ "$status" -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $status): $(grep -m1 -o 'fuzz/artifacts/[^ ]*' "$log" || echo "see $log")"
    failed+=("$target")
  fi
  printf '%-14s %14s %10s  %s\n' "$target" "$execs" "$rate" "$result"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${failed[*]} failed; the inputs are under fuzz/artifacts/ and each log is fuzz/artifacts/TARGET.log" >&2
  exit 1
fi
