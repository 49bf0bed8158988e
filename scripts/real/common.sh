# Shared by the scripts in scripts/real/: where things live, how a step runs and fails.
# Sourced, not run. Everything installed goes under one cache directory outside the source tree:
#
#   REAL_DIR=${TOKENPIPE_REAL_DIR:-$HOME/.cache/tokenpipe-real}
#     venv/          Python for the tiny model and the build tools (pinned: requirements.txt)
#     downloads/     the llama-cpp-python sdist (its vendored llama.cpp is what we build)
#     src/           that sdist unpacked
#     build/llama/   the cmake build directory
#     bin/           llama-server
#     tiny/          the tiny model (HF directory) and tiny.gguf
#     run/           PID files, URL files and server logs
#     logs/          one log per step

REAL_DIR=${TOKENPIPE_REAL_DIR:-$HOME/.cache/tokenpipe-real}
REAL_LOGS="$REAL_DIR/logs"
REAL_VENV="$REAL_DIR/venv"
REAL_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The script's name in messages (tiny-model, llama-server).
REAL_TOOL=${REAL_TOOL:-$(basename "$0" .sh)}

say() { echo "$REAL_TOOL: $*" >&2; }
die() { say "$*"; exit 1; }

# run_step NAME CMD...: runs CMD with its output in $REAL_LOGS/NAME.log and says how long it
# took; on failure names the step and its log, shows the log's last lines and exits 1.
run_step() {
  local name=$1; shift
  local log="$REAL_LOGS/$name.log" start=$SECONDS rc=0
  mkdir -p "$REAL_LOGS"
  say "step $name ..."
  "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    say "step $name FAILED (exit $rc after $((SECONDS - start)) s); its log: $log"
    tail -n 25 "$log" | sed 's/^/    /' >&2
    exit 1
  fi
  say "step $name done in $((SECONDS - start)) s"
}

# ensure_venv: the cache's Python environment with requirements.txt installed; skipped when
# the same requirements were installed before (a stamp holds their hash).
ensure_venv() {
  local req="$REAL_SCRIPTS/requirements.txt" stamp="$REAL_VENV/.tokenpipe-requirements"
  local want
  want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ -x "$REAL_VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return
  fi
  local python=${PYTHON:-python3}
  command -v "$python" >/dev/null 2>&1 || die "no $python found: install Python 3.9 or later (or set PYTHON)"
  mkdir -p "$REAL_DIR"
  run_step venv "$python" -m venv --clear "$REAL_VENV"
  run_step pip-install "$REAL_VENV/bin/python" -m pip install --no-input -r "$req"
  echo "$want" >"$stamp"
}
