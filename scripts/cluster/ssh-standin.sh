#!/usr/bin/env bash
# A stand-in for ssh, for scripts/cluster/test.sh: GNU parallel runs it as it would run ssh
# (`ssh-standin.sh HOST -- COMMAND…`, parallel --ssh), and it runs COMMAND, one shell string as
# ssh's remote shell would, inside the test's namespace for HOST (tpc-HOST) instead of
# connecting anywhere. Only the test's own hosts are accepted.
set -euo pipefail
host=${1:?usage: ssh-standin.sh HOST [--] COMMAND...}
shift
[ "${1:-}" = -- ] && shift
case $host in
  h1 | h2 | h3) ;;
  *) echo "ssh-standin: $host is not one of the test's hosts (h1, h2, h3)" >&2; exit 255 ;;
esac
# TOKENPIPE_STANDIN_LOCAL=1 (the test without root): every host is this machine.
[ -z "${TOKENPIPE_STANDIN_LOCAL:-}" ] || exec bash -c "$*"
[ -e "/run/netns/tpc-$host" ] || { echo "ssh-standin: no namespace tpc-$host" >&2; exit 255; }
exec nsenter --net="/run/netns/tpc-$host" bash -c "$*"
