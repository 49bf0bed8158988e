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
GGUF="$REAL_DIR/tiny/tiny.gguf"
server_setup llama-server llama-server 10

build_id() { echo "llama-cpp-python $LLAMA_CPP_PYTHON ${CMAKE_OPTIONS[*]}"; }

unpack_sdist() {
  rm -rf "$SRC.partial" && mkdir -p "$SRC.partial"
  tar -xzf "$LLAMA_CPP_PYTHON_SDIST" \
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
  [ -f "$LLAMA_CPP_PYTHON_SDIST" ] || run_step llama-download download_sdist
  [ -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ] || run_step llama-unpack unpack_sdist
  run_step llama-configure configure
  run_step llama-build compile
  run_step llama-install install_binary
  say "llama-server built in $((SECONDS - start)) s: $BIN (the cache now holds $(du -sh "$REAL_DIR" | cut -f1))"
}

# --parallel 8 slots of 4096 tokens each: the tests' closed loops keep up to 8 in flight, and a
# multi-turn session's history stays well under 4096. --metrics serves /metrics (llamacpp:*).
launch() {
  # shellcheck disable=SC2086
  exec setsid "$BIN" --host 127.0.0.1 --port "$SERVER_PORT" --model "$GGUF" --alias tiny \
    --ctx-size 32768 --parallel 8 --metrics ${TOKENPIPE_LLAMA_ARGS:-}
}

cmd_start() {
  server_reuse && return
  [ -x "$BIN" ] || die "no llama-server at $BIN: run scripts/real/llama-server.sh install first"
  [ -f "$GGUF" ] || die "no model at $GGUF: run scripts/real/tiny-model.sh first"
  server_start "${TOKENPIPE_REAL_START_TIMEOUT:-60}" 0.1
}

# On one line, so that bash has read everything before it runs: the script may be edited (or
# checked out anew) while a long build runs.
server_main "$@"; exit
