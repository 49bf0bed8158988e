#!/usr/bin/env bash
# llama.cpp's llama-server for the real-engine tests (docs/real-engines.md):
#
#   scripts/real/llama-server.sh install   build it from the llama.cpp source vendored in the PyPI
#                                          sdist of llama-cpp-python (skipped when built already)
#   scripts/real/llama-server.sh start     serve the tiny model (scripts/real/tiny-model.sh) on
#                                          127.0.0.1 on a free port; prints the base URL
#   scripts/real/llama-server.sh stop      stop it by its PID
#   scripts/real/llama-server.sh url       print the running server's base URL (…/v1)
#
# Everything lives under ${TOKENPIPE_REAL_DIR:-$HOME/.cache/tokenpipe-real} (scripts/real/common.sh).
# Settings: TOKENPIPE_REAL_JOBS (build jobs, default: the number of cores),
# TOKENPIPE_LLAMA_ARGS (extra arguments to llama-server), TOKENPIPE_REAL_START_TIMEOUT (seconds to
# wait for /v1/models, default 60).
set -euo pipefail
. "$(dirname "$0")/common.sh"

# The llama-cpp-python release whose vendored llama.cpp we build.
LLAMA_CPP_PYTHON=0.3.36
# What the build is made with; a change rebuilds.
CMAKE_OPTIONS=(
  -G Ninja
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
  -DGGML_OPENMP=OFF
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON
)

BIN="$REAL_DIR/bin/llama-server"
STAMP="$REAL_DIR/bin/.llama-server-build"
SRC="$REAL_DIR/src/llama_cpp_python-$LLAMA_CPP_PYTHON"
BUILD="$REAL_DIR/build/llama"
RUN="$REAL_DIR/run"
PIDFILE="$RUN/llama-server.pid"
URLFILE="$RUN/llama-server.url"
SERVER_LOG="$RUN/llama-server.log"
GGUF="$REAL_DIR/tiny/tiny.gguf"

build_id() { echo "llama-cpp-python $LLAMA_CPP_PYTHON ${CMAKE_OPTIONS[*]}"; }

download_sdist() {
  mkdir -p "$REAL_DIR/downloads"
  # Only this package as source: `--no-binary :all:` would build its build tools (cmake) too.
  "$REAL_VENV/bin/python" -m pip download --no-deps --no-binary llama-cpp-python \
    -d "$REAL_DIR/downloads" "llama-cpp-python==$LLAMA_CPP_PYTHON"
}

unpack_sdist() {
  rm -rf "$SRC.partial" && mkdir -p "$SRC.partial"
  tar -xzf "$REAL_DIR/downloads/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" \
    -C "$SRC.partial" --strip-components=1
  [ -f "$SRC.partial/vendor/llama.cpp/CMakeLists.txt" ] || { echo "no vendor/llama.cpp in the sdist"; exit 1; }
  rm -rf "$SRC" && mv "$SRC.partial" "$SRC"
}

configure() {
  rm -rf "$BUILD"
  PATH="$REAL_VENV/bin:$PATH" cmake -S "$SRC/vendor/llama.cpp" -B "$BUILD" "${CMAKE_OPTIONS[@]}"
}

compile() {
  PATH="$REAL_VENV/bin:$PATH" cmake --build "$BUILD" --target llama-server \
    -j "${TOKENPIPE_REAL_JOBS:-$(nproc)}"
}

install_binary() {
  mkdir -p "$REAL_DIR/bin"
  cp "$BUILD/bin/llama-server" "$BIN.partial" && mv "$BIN.partial" "$BIN"
  build_id >"$STAMP"
  "$BIN" --version
}

cmd_install() {
  if [ -x "$BIN" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$(build_id)" ]; then
    say "llama-server is built already: $BIN"
    return
  fi
  local start=$SECONDS
  ensure_venv
  [ -f "$REAL_DIR/downloads/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" ] || run_step llama-download download_sdist
  [ -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ] || run_step llama-unpack unpack_sdist
  run_step llama-configure configure
  run_step llama-build compile
  run_step llama-install install_binary
  say "llama-server built in $((SECONDS - start)) s: $BIN (the cache now holds $(du -sh "$REAL_DIR" | cut -f1))"
}

# The PID of the running server, if its PID file names a live llama-server.
running_pid() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  grep -q llama-server "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

answers() { curl -fsS --max-time 2 "$1/models" >/dev/null 2>&1; }

free_port() {
  "${PYTHON:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd_start() {
  local pid
  if pid=$(running_pid); then
    if answers "$(cat "$URLFILE" 2>/dev/null)"; then
      say "already running (PID $pid)"
      cat "$URLFILE"
      return
    fi
    say "PID $pid does not answer; stopping it first"
    cmd_stop
  fi
  [ -x "$BIN" ] || die "no llama-server at $BIN: run scripts/real/llama-server.sh install first"
  [ -f "$GGUF" ] || die "no model at $GGUF: run scripts/real/tiny-model.sh first"
  mkdir -p "$RUN"
  local port url start=$SECONDS limit=${TOKENPIPE_REAL_START_TIMEOUT:-60}
  port=$(free_port)
  url="http://127.0.0.1:$port/v1"
  # --parallel 8 slots of 4096 tokens each: the tests' closed loops keep up to 8 in flight, and a
  # multi-turn session's history stays well under 4096. --metrics serves /metrics (llamacpp:*).
  # shellcheck disable=SC2086
  setsid "$BIN" --host 127.0.0.1 --port "$port" --model "$GGUF" --alias tiny \
    --ctx-size 32768 --parallel 8 --metrics ${TOKENPIPE_LLAMA_ARGS:-} \
    </dev/null >"$SERVER_LOG" 2>&1 &
  pid=$!
  echo "$pid" >"$PIDFILE"
  until answers "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE"
      say "step start FAILED: llama-server exited before answering; its log: $SERVER_LOG"
      tail -n 25 "$SERVER_LOG" | sed 's/^/    /' >&2
      exit 1
    fi
    if [ $((SECONDS - start)) -ge "$limit" ]; then
      kill "$pid" 2>/dev/null || true
      rm -f "$PIDFILE"
      say "step start FAILED: no answer from $url/models within $limit s; its log: $SERVER_LOG"
      tail -n 25 "$SERVER_LOG" | sed 's/^/    /' >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "$url" >"$URLFILE"
  say "llama-server (PID $pid) answers at $url after $((SECONDS - start)) s; log: $SERVER_LOG"
  echo "$url"
}

cmd_stop() {
  local pid
  if ! pid=$(running_pid); then
    rm -f "$PIDFILE" "$URLFILE"
    say "not running"
    return
  fi
  kill "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    say "PID $pid still running after 10 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE" "$URLFILE"
  say "stopped (PID $pid)"
}

cmd_url() {
  running_pid >/dev/null && [ -s "$URLFILE" ] || die "not running: scripts/real/llama-server.sh start"
  cat "$URLFILE"
}

main() {
  case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    url) cmd_url ;;
    *) echo "usage: $0 install|start|stop|url" >&2; exit 2 ;;
  esac
}

# On one line, so that bash has read everything before it runs: the script may be edited (or
# checked out anew) while a long build runs.
main "$@"; exit
