#!/usr/bin/env bash
# llama-cpp-python's own OpenAI-compatible server for the real-engine tests, a hostile peer: with
# its defaults a new request cuts the stream in flight (docs/real-engines.md):
#
#   scripts/real/llama-cpp-python.sh install   build llama-cpp-python[server] from its PyPI sdist
#                                              into its own venv (skipped when done)
#   scripts/real/llama-cpp-python.sh start     serve the tiny model (scripts/real/tiny-model.sh) on
#                                              127.0.0.1 on a free port; prints the base URL (…/v1)
#   scripts/real/llama-cpp-python.sh stop      stop it by its PID
#   scripts/real/llama-cpp-python.sh url       print the running server's base URL
#
# Everything lives under ${TOKENPIPE_REAL_DIR:-$HOME/.cache/tokenpipe-real} (scripts/real/common.sh):
# the venv in llama-cpp-python-venv/, the server's PID, URL and log in run/. Settings:
# TOKENPIPE_REAL_JOBS (build jobs, default: the number of cores), TOKENPIPE_LCP_ARGS (extra
# arguments to the server), TOKENPIPE_REAL_START_TIMEOUT (seconds to wait for /v1/models,
# default 60), PYTHON (the Python that makes the venv, default python3).
set -euo pipefail
. "$(dirname "$0")/common.sh"

# How pip's build of the vendored llama.cpp is configured (scikit-build-core reads CMAKE_ARGS):
# portable AVX2 as for llama-server, nothing downloaded, only the libraries the package loads
# (no tools, server, tests or examples of llama.cpp, no llava/mtmd, which only multimodal chat
# formats import). A change reinstalls.
CMAKE_ARGS_LCP="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF"

VENV="$REAL_DIR/llama-cpp-python-venv"
# Written last by install, holding what was installed: present and equal means complete.
MARKER="$VENV/.tokenpipe-llama-cpp-python"
GGUF="$REAL_DIR/tiny/tiny.gguf"
server_setup llama-cpp-python llama_cpp.server 10

install_id() { echo "llama-cpp-python[server] $LLAMA_CPP_PYTHON $CMAKE_ARGS_LCP"; }

make_venv() { "${PYTHON:-python3}" -m venv --clear "$VENV"; }

# From the sdist in downloads/ (the one llama-server.sh builds from). No pip cache: a wheel built
# before with other CMAKE_ARGS must not be reused.
install_package() {
  CMAKE_ARGS="$CMAKE_ARGS_LCP" CMAKE_BUILD_PARALLEL_LEVEL="${TOKENPIPE_REAL_JOBS:-$(nproc)}" \
    "$VENV/bin/python" -m pip install --no-input --disable-pip-version-check --no-cache-dir -v \
    "llama-cpp-python[server] @ file://$LLAMA_CPP_PYTHON_SDIST"
}

check_import() {
  "$VENV/bin/python" -c 'import llama_cpp, llama_cpp.server.app; print("llama_cpp", llama_cpp.__version__)'
}

cmd_install() {
  if [ "$(cat "$MARKER" 2>/dev/null)" = "$(install_id)" ]; then
    say "llama-cpp-python is installed already: $VENV"
    return
  fi
  local start=$SECONDS
  ensure_venv
  [ -f "$LLAMA_CPP_PYTHON_SDIST" ] || run_step llama-download download_sdist
  run_step lcp-venv make_venv
  run_step lcp-install install_package
  run_step lcp-check check_import
  install_id >"$MARKER"
  say "llama-cpp-python installed in $((SECONDS - start)) s: $VENV ($(du -sh "$VENV" | cut -f1))"
}

# Its defaults otherwise: one request at a time, and interrupt_requests on, so that a request
# that arrives cuts the stream in flight (what the tests are about). The context is 2,048 tokens.
launch() {
  # shellcheck disable=SC2086
  exec setsid "$VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias tiny \
    --host 127.0.0.1 --port "$SERVER_PORT" ${TOKENPIPE_LCP_ARGS:-}
}

cmd_start() {
  server_reuse && return
  [ "$(cat "$MARKER" 2>/dev/null)" = "$(install_id)" ] || die "llama-cpp-python is not installed: run scripts/real/llama-cpp-python.sh install first"
  [ -f "$GGUF" ] || die "no model at $GGUF: run scripts/real/tiny-model.sh first"
  server_start "${TOKENPIPE_REAL_START_TIMEOUT:-60}" 0.2
}

# On one line, so that bash has read everything before it runs (see llama-server.sh).
server_main "$@"; exit
