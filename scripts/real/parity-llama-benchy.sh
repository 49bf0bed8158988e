#!/usr/bin/env bash
# llama-benchy 0.4.0 and tokenpipe's llama-benchy mode side by side on one server, offline:
#
#   scripts/real/parity-llama-benchy.sh [BIN_DIR]
#
# Installs llama-benchy from PyPI into $REAL_DIR/llama-benchy-venv (once), starts
# `simserve --profile PROFILE --tokenizer TOKENIZER --template-tokens TEMPLATE_TOKENS` on a
# free port (or uses URL when given), then runs, for every depth in DEPTHS:
#
#   llama-benchy --pp PP --tg TG --depth D --concurrency CONCURRENCY… --runs RUNS
#                --tokenizer TOKENIZER --skip-coherence --format json
#   arrivals --batch C --runs RUNS --pp PP --tg TG --depth D --tokenizer TOKENIZER
#            --corpus CORPUS | fire --url URL | reduce        (for each C)
#
# llama-benchy at its defaults but for what offline use needs: the local tokenizer, its book
# pre-filled in its cache from CORPUS (a text made from arrivals' word list unless given) and
# `--skip-coherence` (a simulated server does not know Paris). Both measure their latency, warm
# up, adapt the prompt and discard one batch per configuration, as llama-benchy does by default.
# Then, per configuration and figure (pp t/s, tg t/s, TTFR, est_ppt, e2e_ttft), both means and
# the ratio tokenpipe / llama-benchy, as a Markdown table; exit 1 when tg or pp is more than
# PP_TG_TOLERANCE (2 %) off, or a time more than TIME_TOLERANCE (5 %).
#
# BIN_DIR holds arrivals, fire, reduce and simserve (default: target/release, then $PATH).
# Settings: PROFILE (spark-gpt-oss-120b), PP (1024), TG (128), DEPTHS ("0 1024"),
# CONCURRENCY ("1 2 4 8"), RUNS (3), TEMPLATE_TOKENS (21: what a chat template adds, so that
# both tools' adapt step has a delta to take off), TOKENIZER ($REAL_DIR/tiny/tokenizer.json, made by
# scripts/real/tiny-model.sh), CORPUS, URL, MODEL (the server's). Results stay in
# $REAL_DIR/parity-llama-benchy/: llama-benchy's reports (llama-benchy-dD.json), fire's events
# (events-dD-cC.ndjson), reduce's summaries (tokenpipe-dD-cC.ndjson) and the table (parity.md).
set -euo pipefail
. "$(dirname "$0")/common.sh"

PROFILE=${PROFILE:-spark-gpt-oss-120b} PP=${PP:-1024} TG=${TG:-128} DEPTHS=${DEPTHS:-"0 1024"}
CONCURRENCY=${CONCURRENCY:-"1 2 4 8"} RUNS=${RUNS:-3} TEMPLATE_TOKENS=${TEMPLATE_TOKENS:-21}
TOKENIZER=${TOKENIZER:-$REAL_DIR/tiny/tokenizer.json}
VENV="$REAL_DIR/llama-benchy-venv"
OUT_DIR="$REAL_DIR/parity-llama-benchy"
BOOK_URL="https://www.gutenberg.org/files/1661/1661-0.txt"

BIN=$(tools_dir "${1:-}")
[ -f "$TOKENIZER" ] || die "no tokenizer at $TOKENIZER: run scripts/real/tiny-model.sh, or set TOKENIZER"
mkdir -p "$OUT_DIR"

# llama-benchy 0.4.0 from PyPI, once.
if ! "$VENV/bin/python" -c 'import llama_benchy' 2>/dev/null; then
  run_step llama-benchy-venv "${PYTHON:-python3}" -m venv --clear "$VENV"
  run_step llama-benchy-install "$VENV/bin/python" -m pip install --no-input "llama-benchy==0.4.0"
fi

# Its book, pre-filled where it caches a download (the md5 of the URL), under a HOME of our own.
export HOME="$OUT_DIR/home"
mkdir -p "$HOME/.cache/llama-benchy"
CORPUS=${CORPUS:-$OUT_DIR/corpus.txt}
if [ ! -s "$CORPUS" ]; then
  "$BIN/arrivals" --num-prompts 200 --rate inf --input-tokens 2000 --seed 7 --no-salt \
    | "${PYTHON:-python3}" -c 'import json,sys
for l in sys.stdin:
    r = json.loads(l)
    if r.get("type") == "request": print(r["prompt"])' >"$CORPUS"
fi
cp "$CORPUS" "$HOME/.cache/llama-benchy/$(printf %s "$BOOK_URL" | md5sum | cut -d' ' -f1).txt"

SERVER_PID=
cleanup() { [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null || true; }
trap cleanup EXIT
if [ -z "${URL:-}" ]; then
  port=$("${PYTHON:-python3}" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$BIN/simserve" --port "$port" --profile "$PROFILE" --tokenizer "$TOKENIZER" \
    --template-tokens "$TEMPLATE_TOKENS" \
    >"$OUT_DIR/simserve.log" 2>&1 &
  SERVER_PID=$!
  URL="http://127.0.0.1:$port/v1"
  for _ in $(seq 50); do curl -fs "$URL/models" >/dev/null 2>&1 && break; sleep 0.1; done
fi
MODEL=${MODEL:-$(curl -fs "$URL/models" | "${PYTHON:-python3}" -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')}

for d in $DEPTHS; do
  say "llama-benchy at depth $d"
  # shellcheck disable=SC2086
  "$VENV/bin/llama-benchy" --base-url "$URL" --model "$MODEL" --tokenizer "$TOKENIZER" \
    --pp "$PP" --tg "$TG" --depth "$d" --concurrency $CONCURRENCY --runs "$RUNS" \
    --skip-coherence --format json --save-result "$OUT_DIR/llama-benchy-d$d.json" \
    >"$OUT_DIR/llama-benchy-d$d.log" 2>&1 || die "llama-benchy failed: $OUT_DIR/llama-benchy-d$d.log"
  for c in $CONCURRENCY; do
    say "tokenpipe at depth $d, concurrency $c"
    "$BIN/arrivals" --batch "$c" --runs "$RUNS" --pp "$PP" --tg "$TG" --depth "$d" \
      --tokenizer "$TOKENIZER" --corpus "$CORPUS" \
      | "$BIN/fire" --url "$URL" --model "$MODEL" --quiet --save "$OUT_DIR/events-d$d-c$c.ndjson" \
      | "$BIN/reduce" >"$OUT_DIR/tokenpipe-d$d-c$c.ndjson"
  done
done

"${PYTHON:-python3}" - "$OUT_DIR" "${PP_TG_TOLERANCE:-0.02}" "${TIME_TOLERANCE:-0.05}" \
  "$DEPTHS" "$CONCURRENCY" <<'EOF_PY' | tee "$OUT_DIR/parity.md"
import json, sys
out, pp_tg_tol, time_tol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
depths, levels = sys.argv[4].split(), sys.argv[5].split()
figures = [  # (name, llama-benchy's member, ours, tolerance)
    ("pp t/s", "pp_throughput", "pp_tps", pp_tg_tol),
    ("tg t/s", "tg_throughput", "tg_tps", pp_tg_tol),
    ("TTFR (ms)", "ttfr", "ttfr_ms", time_tol),
    ("est_ppt (ms)", "est_ppt", "est_ppt_ms", time_tol),
    ("e2e_ttft (ms)", "e2e_ttft", "e2e_ttft_ms", time_tol),
]
print("| depth | c | figure | llama-benchy | tokenpipe | ratio |")
print("|---:|---:|:---|---:|---:|---:|")
failed = []
for d in depths:
    theirs = json.load(open(f"{out}/llama-benchy-d{d}.json"))
    for c in levels:
        bench = next(b for b in theirs["benchmarks"] if b["concurrency"] == int(c))
        summary = [json.loads(l) for l in open(f"{out}/tokenpipe-d{d}-c{c}.ndjson")
                   if '"summary"' in l][0]
        ours = summary.get("llama_benchy") or {}
        for name, key, mine, tol in figures:
            a = (bench.get(key) or {}).get("mean")
            b = (ours.get(mine) or {}).get("mean")
            if a is None or b is None:
                print(f"| {d} | {c} | {name} | {a} | {b} | — |")
                failed.append(f"d{d} c{c} {name}: missing")
                continue
            ratio = b / a if a else float("inf")
            print(f"| {d} | {c} | {name} | {a:.2f} | {b:.2f} | {ratio:.3f} |")
            if abs(ratio - 1) > tol:
                failed.append(f"d{d} c{c} {name}: {ratio:.3f}")
if failed:
    print("\noutside the tolerance: " + "; ".join(failed))
    sys.exit(1)
print(f"\nevery figure within {pp_tg_tol:.0%} (pp, tg) and {time_tol:.0%} (times)")
EOF_PY
