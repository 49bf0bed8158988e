#!/usr/bin/env bash
# `vllm bench serve` and tokenpipe side by side on the running vLLM (scripts/real/vllm.sh start),
# to see whether the two clients measure the same thing:
#
#   scripts/real/parity-vllm.sh [BIN_DIR]
#
# Both send vLLM's random-dataset shape (lengths drawn within ±RANGE_RATIO as numpy draws them
# for the seed, exact prompts from the tiny model's tokenizer) on vLLM's own schedule (`arrivals --vllm-compatible`: numpy's gamma gaps for the
# seed, rescaled to end at N/rate), with the same seed per pair of runs. The runs alternate,
# vLLM's first, RUNS times each; every repetition uses another seed so that vLLM's prefix cache
# does not serve one run the prompts of the last. Three checks, in this order:
#
#   1. recorded data: each vLLM run's --save-detailed file, imported and recomputed with
#      `reduce --vllm-compatible --from-vllm`, gives vLLM's own summary figures to 0.1 %;
#   2. same requests, same instants: request by request, the prompt lengths vLLM recorded equal
#      what arrivals promised (but for vLLM's own misses of a token or two when it re-encodes
#      its random prompts), and vLLM's send offsets (from its first send) equal arrivals'
#      schedule (from its first request) within vLLM's own sending delay; fire's send offsets
#      are shown beside them;
#   3. same numbers: per figure, both tools' mean over their runs, the ratio tokenpipe / vLLM
#      and each tool's spread (max − min, in % of its mean).
#
# Exits 1 when check 1 or the prompt lengths of check 2 fail, or when vLLM's or fire's send
# offsets are more than SEND_TOLERANCE_MS (20) off the schedule at the median.
#
# BIN_DIR holds arrivals, fire, reduce and table (default: target/release, then $PATH). Settings:
# RUNS (3), RATE (2 requests/s), N (40 prompts), INPUT (200 tokens), OUTPUT (48 tokens),
# RANGE_RATIO (0.25), BURSTINESS (1: Poisson), SEED (first seed, 0). Results stay in
# $REAL_DIR/parity/: vLLM's result files (vllm-I.json), arrivals' schedules (schedule-I.ndjson), fire's events
# (events-I.ndjson) and reduce's summaries (tokenpipe-I.ndjson), and each check's output.
set -euo pipefail
. "$(dirname "$0")/common.sh"

RUNS=${RUNS:-3} RATE=${RATE:-2} N=${N:-40} INPUT=${INPUT:-200} OUTPUT=${OUTPUT:-48}
BURSTINESS=${BURSTINESS:-1} SEED=${SEED:-0} RANGE_RATIO=${RANGE_RATIO:-0.25}
VENV="$REAL_DIR/vllm-venv"
TINY="$REAL_DIR/tiny"
OUT_DIR="$REAL_DIR/parity"


vllm_run() {
  local seed=$1 name=$2
  "$VENV/bin/vllm" bench serve --backend vllm --base-url "${URL%/v1}" --endpoint /v1/completions \
    --model tiny --tokenizer "$TINY" --dataset-name random --random-input-len "$INPUT" \
    --random-output-len "$OUTPUT" --random-range-ratio "$RANGE_RATIO" --num-prompts "$N" --request-rate "$RATE" \
    --burstiness "$BURSTINESS" --seed "$seed" --ignore-eos --percentile-metrics ttft,tpot,itl,e2el \
    --save-result --save-detailed --result-dir "$OUT_DIR" --result-filename "$name.json" \
    --label vllm
}

tokenpipe_run() {
  local seed=$1 i=$2
  "$BIN/arrivals" --vllm-compatible --tokenizer "$TINY/tokenizer.json" --rate "$RATE" \
    --burstiness "$BURSTINESS" -n "$N" --input-tokens "$INPUT" --output-tokens "$OUTPUT" \
    --range-ratio "$RANGE_RATIO" --seed "$seed" \
    | tee "$OUT_DIR/schedule-$i.ndjson" \
    | "$BIN/fire" --url "$URL" --api completions --model tiny --quiet \
      --save "$OUT_DIR/events-$i.ndjson" \
    | "$BIN/reduce" --vllm-compatible --label tokenpipe >"$OUT_DIR/tokenpipe-$i.ndjson"
}

# Check 1: vLLM's file recomputed by reduce gives vLLM's own figures.
recompute_vllm() {
  local i=$1
  "$BIN/reduce" --vllm-compatible --from-vllm "$OUT_DIR/vllm-$i.json" \
    >"$OUT_DIR/recomputed-$i.ndjson"
  "${PYTHON:-python3}" - "$OUT_DIR/vllm-$i.json" "$OUT_DIR/recomputed-$i.ndjson" <<'EOF_PY'
import json, sys
own = json.load(open(sys.argv[1]))
summary = [json.loads(l) for l in open(sys.argv[2]) if '"summary"' in l][0]["vllm"]
worst, bad = 0.0, []
for key, ours in sorted(summary.items()):
    theirs = own.get(key)
    if not isinstance(theirs, (int, float)) or not isinstance(ours, (int, float)):
        continue
    off = abs(ours - theirs) / abs(theirs) if theirs else abs(ours)
    worst = max(worst, off)
    if off > 0.001:
        bad.append(f"{key}: vLLM {theirs}, reduce {ours}")
print(f"{len(summary)} figures, the worst {worst * 100:.4f} % off")
if bad:
    print("more than 0.1 % off:\n  " + "\n  ".join(bad))
    sys.exit(1)
EOF_PY
}

# Check 2: the same requests at the same instants, request by request.
same_requests() {
  local i=$1
  "${PYTHON:-python3}" - "$OUT_DIR/vllm-$i.json" "$OUT_DIR/schedule-$i.ndjson" \
    "$OUT_DIR/events-$i.ndjson" "${SEND_TOLERANCE_MS:-20}" <<'EOF_PY'
import json, statistics, sys
own = json.load(open(sys.argv[1]))
reqs = sorted((r for r in map(json.loads, open(sys.argv[2])) if r["type"] == "request"),
              key=lambda r: r["id"])
sent = {r["id"]: r["sent_ns"] for r in map(json.loads, open(sys.argv[3])) if r["type"] == "sent"}
tolerance = float(sys.argv[4])
n = len(reqs)
assert len(own["input_lens"]) == n, f"vLLM sent {len(own['input_lens'])} requests, arrivals {n}"
lens = [(i, own["input_lens"][i], r["prompt_tokens"]) for i, r in enumerate(reqs)
        if own["input_lens"][i] != r["prompt_tokens"]]
starts = own["start_times"]
planned = [(r["offset_ns"] - reqs[0]["offset_ns"]) / 1e6 for r in reqs]
vllm_off = [(s - starts[0]) * 1e3 for s in starts]
fire_off = [(sent[r["id"]] - sent[reqs[0]["id"]]) / 1e6 for r in reqs]
dv = [abs(a - b) for a, b in zip(vllm_off, planned)]
df = [abs(a - b) for a, b in zip(fire_off, planned)]
print(f"{n} requests; prompt lengths: {n - len(lens)} equal to arrivals' promise")
print(f"send offsets against arrivals' schedule (ms): vLLM median {statistics.median(dv):.2f} "
      f"max {max(dv):.2f}; fire median {statistics.median(df):.2f} max {max(df):.2f}")
print(f"last request: schedule {planned[-1]:.1f} ms, vLLM {vllm_off[-1]:.1f}, fire {fire_off[-1]:.1f}")
failed = False
if lens:
    # vLLM decodes random token ids to text and encodes it again, and warns when that misses
    # the target by a token or two; lengths drawn differently would differ in most requests.
    print("prompt lengths differ (request, vLLM, arrivals): " + str(lens[:10]))
    far = [l for l in lens if abs(l[1] - l[2]) > max(2, 0.05 * l[2])]
    if far or len(lens) > n / 10:
        print("more than vLLM's re-encoding explains: not the same requests")
        failed = True
    else:
        print("within vLLM's re-encoding (its log warns of it): the same requests")
for who, d in (("vLLM", dv), ("fire", df)):
    if statistics.median(d) > tolerance:
        print(f"{who}'s send offsets are {statistics.median(d):.1f} ms off the schedule at the median")
        failed = True
sys.exit(1 if failed else 0)
EOF_PY
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
  BIN=$(tools_dir "${1:-}")
  URL=$("$REAL_SCRIPTS/vllm.sh" url)
  [ -x "$VENV/bin/vllm" ] || die "no vLLM in $VENV: scripts/real/vllm.sh install"
  rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
  local i seed
  for i in $(seq "$RUNS"); do
    seed=$((SEED + i - 1))
    run_step "parity-vllm-$i" vllm_run "$seed" "vllm-$i"
    run_step "parity-tokenpipe-$i" tokenpipe_run "$seed" "$i"
  done
  local status=0
  for i in $(seq "$RUNS"); do
    echo "== run $i, check 1: vLLM's result file recomputed by reduce --vllm-compatible"
    recompute_vllm "$i" || status=1
    echo "== run $i, check 2: the same requests at the same instants"
    same_requests "$i" || status=1
  done
  echo "== check 3: both tools' figures"
  compare
  return "$status"
}

# On one line, so that bash has read everything before it runs (see llama-server.sh).
main "$@"; exit
