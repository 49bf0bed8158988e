# Shared by scripts/demo.sh and scripts/demo-recipes.sh: checks that the binaries are built and
# starts the simulated server on a free loopback port. Sourced, not run.
#
#   simserve_up NAME BIN_DIR [SIMSERVE_ARGS...]
#
# Sets `url` (its base URL, printed on its first stdout line once it listens), `server` (its
# PID) and `tmp` (a scratch directory); an EXIT trap stops the server and removes `tmp`.
simserve_up() {
  local name=$1 bin=$2 b
  shift 2
  for b in arrivals fire reduce table simserve; do
    [ -x "$bin/$b" ] || { echo "$name: $bin/$b not built (run: make build)" >&2; exit 1; }
  done
  tmp=$(mktemp -d)
  trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
  "$bin/simserve" --port 0 "$@" > "$tmp/url" &
  server=$!
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
  url=$(head -n 1 "$tmp/url")
  [ -n "$url" ] || { echo "$name: simserve did not start" >&2; exit 1; }
}
