#!/usr/bin/env bash
# `vllm bench serve` and tokenpipe side by side on the running vLLM (scripts/real/vllm.sh start),
# to see whether the two clients measure the same thing:
#
#   scripts/real/parity-vllm.sh [BIN_DIR]
#
# Both send vLLM's random-dataset shape (fixed lengths, exact prompts from the tiny model's
# tokenizer) on vLLM's own schedule (gamma gaps rescaled to end at N/rate: `arrivals
# --vllm-compatible`), with the same seed per pair of runs. The runs alternate, vLLM's first,
# RUNS times each; every repetition uses another seed so that vLLM's prefix cache does not serve
# one run the prompts of the last. Prints, per figure, both tools' mean over their runs, the
# ratio tokenpipe / vLLM and each tool's spread (max − min, in % of its mean).
#
# BIN_DIR holds arrivals, fire, reduce and table (default: target/release, then $PATH). Settings:
# RUNS (3), RATE (2 requests/s), N (40 prompts), INPUT (200 tokens), OUTPUT (48 tokens),
# BURSTINESS (1: Poisson), SEED (first seed, 0). Results stay in $REAL_DIR/parity/.
set -euo pipefail
. "$(dirname "$0")/common.sh"

RUNS=${RUNS:-3} RATE=${RATE:-2} N=${N:-40} INPUT=${INPUT:-200} OUTPUT=${OUTPUT:-48}
BURSTINESS=${BURSTINESS:-1} SEED=${SEED:-0}
VENV="$REAL_DIR/vllm-venv"
TINY="$REAL_DIR/tiny"
OUT_DIR="$REAL_DIR/parity"

tool() {
  local dir=${1:-$REAL_SCRIPTS/../../target/release}
  if [ -x "$dir/fire" ]; then echo "$dir"; else dirname "$(command -v fire || die "no fire in $dir or on PATH: make build, or pass the directory")"; fi
}

vllm_run() {
  local seed=$1 name=$2
  "$VENV/bin/vllm" bench serve --backend vllm --base-url "${URL%/v1}" --endpoint /v1/completions \
    --model tiny --tokenizer "$TINY" --dataset-name random --random-input-len "$INPUT" \
    --random-output-len "$OUTPUT" --num-prompts "$N" --request-rate "$RATE" \
    --burstiness "$BURSTINESS" --seed "$seed" --ignore-eos --percentile-metrics ttft,tpot,itl,e2el \
    --save-result --result-dir "$OUT_DIR" --result-filename "$name.json" --label vllm
}

tokenpipe_run() {
  local seed=$1 name=$2
  "$BIN/arrivals" --vllm-compatible --tokenizer "$TINY/tokenizer.json" --rate "$RATE" \
    --burstiness "$BURSTINESS" -n "$N" --input-tokens "$INPUT" --output-tokens "$OUTPUT" \
    --seed "$seed" \
    | "$BIN/fire" --url "$URL" --api completions --model tiny --quiet \
    | "$BIN/reduce" --vllm-compatible --label tokenpipe >"$OUT_DIR/$name.ndjson"
}

# Both tools' figures by vLLM's definitions under vLLM's key names: its --save-result files,
# and the `vllm` member that `reduce --vllm-compatible` puts in each summary. `table --style vllm`
# prints any of these runs as vLLM's own result block.
compare() {
  "${PYTHON:-python3}" - "$OUT_DIR" <<'EOF_PY'
import glob, json, os, sys
out = sys.argv[1]
def vllm_runs():
    return [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, "vllm-*.json")))]
def tokenpipe_runs():
    runs = []
    for f in sorted(glob.glob(os.path.join(out, "tokenpipe-*.ndjson"))):
        for line in open(f):
            r = json.loads(line)
            if r.get("type") == "summary":
                runs.append(r["vllm"])
    return runs
v, t = vllm_runs(), tokenpipe_runs()
print(f"{len(v)} vllm bench serve runs, {len(t)} tokenpipe runs (vLLM's definitions)")
print("%-22s %10s %7s %10s %7s %7s" % ("figure", "vllm", "spread", "tokenpipe", "spread", "ratio"))
for stat in ("mean", "median", "p99"):
    for m in ("ttft", "tpot", "itl", "e2el"):
        keys = [(f"{m.upper()} {stat} (ms)", f"{stat}_{m}_ms")]
        for name, key in keys:
            a = [r[key] for r in v if isinstance(r.get(key), (int, float))]
            b = [r[key] for r in t if isinstance(r.get(key), (int, float))]
            if not a or not b:
                print(f"{name:<22} (missing: {key})")
                continue
            ma, mb = sum(a) / len(a), sum(b) / len(b)
            sa = (max(a) - min(a)) / ma * 100 if ma else 0
            sb = (max(b) - min(b)) / mb * 100 if mb else 0
            print(f"{name:<22} {ma:>10.3f} {sa:>6.1f}% {mb:>10.3f} {sb:>6.1f}% {mb / ma:>7.3f}")
for name, key in (("output tokens/s", "output_throughput"), ("requests/s", "request_throughput"),
                  ("duration (s)", "duration")):
    a = [r[key] for r in v]
    b = [r[key] for r in t]
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    sa, sb = (max(a) - min(a)) / ma * 100, (max(b) - min(b)) / mb * 100
    print(f"{name:<22} {ma:>10.3f} {sa:>6.1f}% {mb:>10.3f} {sb:>6.1f}% {mb / ma:>7.3f}")
EOF_PY
}

main() {
  BIN=$(tool "${1:-}")
  URL=$("$REAL_SCRIPTS/vllm.sh" url)
  [ -x "$VENV/bin/vllm" ] || die "no vLLM in $VENV: scripts/real/vllm.sh install"
  rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
  local i seed
  for i in $(seq "$RUNS"); do
    seed=$((SEED + i - 1))
    run_step "parity-vllm-$i" vllm_run "$seed" "vllm-$i"
    run_step "parity-tokenpipe-$i" tokenpipe_run "$seed" "tokenpipe-$i"
  done
  compare
}

# On one line, so that bash has read everything before it runs (see llama-server.sh).
main "$@"; exit
