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
# sshd sets SHELL to the user's login shell, and parallel's remote worker runs the command with
# it: so does the stand-in, rather than pass on this environment's (unset under some CI
# runners); TOKENPIPE_STANDIN_SHELL stands for another login shell (the test gives /bin/sh).
SHELL=${TOKENPIPE_STANDIN_SHELL:-$(getent passwd "$(id -u)" | cut -d: -f7)}
export SHELL=${SHELL:-/bin/sh}
# TOKENPIPE_STANDIN_LOCAL=1 (the test without root): every host is this machine.
[ -z "${TOKENPIPE_STANDIN_LOCAL:-}" ] || exec bash -c "$*"
[ -e "/run/netns/tpc-$host" ] || { echo "ssh-standin: no namespace tpc-$host" >&2; exit 255; }
exec nsenter --net="/run/netns/tpc-$host" bash -c "$*"
