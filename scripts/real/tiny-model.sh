#!/usr/bin/env bash
# Makes the tiny Llama model the real-engine tests serve (tiny_model.py says what is in it), from
# local files only: nothing is downloaded but the pinned Python packages of requirements.txt.
#
#   scripts/real/tiny-model.sh        make it (skipped when it is there and complete); print paths
#
# It goes to ${TOKENPIPE_REAL_DIR:-$HOME/.cache/tokenpipe-real}/tiny (scripts/real/common.sh).
set -euo pipefail
. "$(dirname "$0")/common.sh"

TINY="$REAL_DIR/tiny"
STAMP="$TINY/.tokenpipe-made-by"

# What the model is made from; a change makes it again.
made_by() {
  {
    sha256sum "$REAL_SCRIPTS/tiny_model.py" "$REAL_SCRIPTS/requirements.txt" | cut -d' ' -f1
    "$REAL_VENV/bin/python" -c 'import sys; print(sys.version.split()[0])'
  } | paste -sd' ' -
}

complete() {
  local f
  for f in tokenizer.json tokenizer_config.json special_tokens_map.json config.json \
    generation_config.json model.safetensors tiny.gguf think/tokenizer.json \
    think/tokenizer_config.json think/config.json think/model.safetensors; do
    [ -s "$TINY/$f" ] || return 1
  done
  [ "$(cat "$STAMP" 2>/dev/null)" = "$(made_by)" ]
}

make_model() {
  "$REAL_VENV/bin/python" "$REAL_SCRIPTS/tiny_model.py" "$TINY"
  made_by >"$STAMP"
}

main() {
  ensure_venv
  if complete; then
    say "the tiny model is made already"
  else
    run_step tiny-model make_model
  fi
  say "model directory: $TINY ($(du -sh "$TINY" | cut -f1))"
  say "tokenizer:       $TINY/tokenizer.json"
  say "GGUF:            $TINY/tiny.gguf"
  say "thinking model:  $TINY/think"
}

# On one line, so that bash has read everything before it runs (see llama-server.sh).
main "$@"; exit
