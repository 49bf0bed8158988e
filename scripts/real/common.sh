# Shared by the scripts in scripts/real/: where things live, how a step runs and fails.
# Sourced, not run. Everything installed goes under one cache directory outside the source tree:
#
#   REAL_DIR=${TOKENPIPE_REAL_DIR:-$HOME/.cache/tokenpipe-real}
#     venv/          Python for the tiny model and the build tools (pinned: requirements.txt)
#     downloads/     the llama-cpp-python sdist (its vendored llama.cpp is what we build)
#     src/           that sdist unpacked
#     build/llama/   the cmake build directory
#     bin/           llama-server
#     llama-cpp-python-venv/  llama-cpp-python and its server, built from that sdist
#     vllm-venv/     vLLM's CPU build
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

# tools_dir [DIR]: the directory holding tokenpipe's tools: DIR when it has fire, else the
# repository's target/release, else the one on PATH.
tools_dir() {
  local dir=${1:-$REAL_SCRIPTS/../../target/release}
  if [ -x "$dir/fire" ]; then echo "$dir"; else dirname "$(command -v fire || die "no fire in $dir or on PATH: make build, or pass the directory")"; fi
}

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

# The llama-cpp-python release whose sdist serves both llama.cpp servers: llama-server.sh builds
# the llama.cpp it vendors, llama-cpp-python.sh installs the package itself.
LLAMA_CPP_PYTHON=0.3.36
LLAMA_CPP_PYTHON_SDIST="$REAL_DIR/downloads/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz"

# download_sdist: the llama-cpp-python sdist into downloads/ (needs ensure_venv's Python).
download_sdist() {
  mkdir -p "$REAL_DIR/downloads"
  # Only this package as source: `--no-binary :all:` would build its build tools (cmake) too.
  "$REAL_VENV/bin/python" -m pip download --no-deps --no-binary llama-cpp-python \
    -d "$REAL_DIR/downloads" "llama-cpp-python==$LLAMA_CPP_PYTHON"
}

# A server the scripts start in the background and stop by its PID. Each script calls
# server_setup, defines `launch` (which runs the server with `exec setsid CMD...` on
# $SERVER_PORT, so that the PID written is the server's own and it leads its own process group),
# and uses server_reuse, server_start, server_stop and server_url in its commands.

# server_setup NAME PATTERN STOP_WAIT_SECONDS: the server's PID, URL and log files,
# run/NAME.{pid,url,log}; a PID counts as the server's only while its command line holds
# PATTERN; a stop waits STOP_WAIT_SECONDS before it kills.
server_setup() {
  SERVER_NAME=$1
  SERVER_PATTERN=$2
  SERVER_STOP_WAIT=$3
  SERVER_RUN="$REAL_DIR/run"
  PIDFILE="$SERVER_RUN/$SERVER_NAME.pid"
  URLFILE="$SERVER_RUN/$SERVER_NAME.url"
  SERVER_LOG="$SERVER_RUN/$SERVER_NAME.log"
}

# The PID of the running server, if its PID file names a live process running it.
running_pid() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  grep -q "$SERVER_PATTERN" "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

answers() { curl -fsS --max-time 2 "$1/models" >/dev/null 2>&1; }

free_port() {
  "${PYTHON:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# server_reuse: prints the URL and succeeds when the server runs and answers;
# a server that runs but does not answer is stopped (so that a new one can start).
server_reuse() {
  local pid
  pid=$(running_pid) || return 1
  if answers "$(cat "$URLFILE" 2>/dev/null)"; then
    say "already running (PID $pid)"
    cat "$URLFILE"
    return 0
  fi
  say "PID $pid does not answer; stopping it first"
  server_stop
  return 1
}

# server_start LIMIT POLL_SECONDS: starts `launch` on a free port with its
# output in the log, writes the PID, waits up to LIMIT seconds for $url/models, then writes and
# prints the base URL. On failure it names the step, shows the log's tail and exits 1.
server_start() {
  local limit=$1 poll=$2 start=$SECONDS pid url
  mkdir -p "$SERVER_RUN"
  SERVER_PORT=$(free_port)
  url="http://127.0.0.1:$SERVER_PORT/v1"
  launch </dev/null >"$SERVER_LOG" 2>&1 &
  pid=$!
  echo "$pid" >"$PIDFILE"
  until answers "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE"
      say "step start FAILED: $SERVER_NAME exited before answering; its log: $SERVER_LOG"
      tail -n 25 "$SERVER_LOG" | sed 's/^/    /' >&2
      exit 1
    fi
    if [ $((SECONDS - start)) -ge "$limit" ]; then
      server_stop >/dev/null 2>&1 || true
      rm -f "$PIDFILE"
      say "step start FAILED: no answer from $url/models within $limit s; its log: $SERVER_LOG"
      tail -n 25 "$SERVER_LOG" | sed 's/^/    /' >&2
      exit 1
    fi
    sleep "$poll"
  done
  echo "$url" >"$URLFILE"
  say "$SERVER_NAME (PID $pid) answers at $url after $((SECONDS - start)) s; log: $SERVER_LOG"
  echo "$url"
}

# server_stop [WAIT_SECONDS]: TERM to the server's process group (launch made it the leader, and
# a server may run its work in child processes), then KILL if it still runs after WAIT_SECONDS
# (server_setup's STOP_WAIT_SECONDS by default).
server_stop() {
  local wait=${1:-$SERVER_STOP_WAIT} pid
  if ! pid=$(running_pid); then
    rm -f "$PIDFILE" "$URLFILE"
    say "not running"
    return
  fi
  kill -- "-$pid" 2>/dev/null || kill "$pid"
  for _ in $(seq $((wait * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    say "PID $pid still running after $wait s; killing it"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE" "$URLFILE"
  say "stopped (PID $pid)"
}

# server_url: the running server's base URL, or a message that says how to start it.
server_url() {
  running_pid >/dev/null && [ -s "$URLFILE" ] || die "not running: scripts/real/$REAL_TOOL.sh start"
  cat "$URLFILE"
}

# server_main COMMAND: what every engine script does with its one argument; the script defines
# cmd_install and cmd_start. (vLLM runs its engine in child processes: server_stop signals the
# whole process group.)
server_main() {
  case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) server_stop ;;
    url) server_url ;;
    *) echo "usage: $0 install|start|stop|url" >&2; exit 2 ;;
  esac
}
