# The test cluster's network, for scripts/cluster/test.sh: three host namespaces and a server
# namespace, each joined by a veth pair to a bridge that lives in a namespace of its own, on a
# private subnet that nothing outside this machine can reach. Sourced, not run.
#
#   net_up      blackhole route first, then the namespaces, veths and addresses
#   net_down    everything net_up made, whatever state it got to (safe to call twice)
#   in_ns NAME CMD...   run CMD inside namespace NAME (ctl, srv, h1, h2, h3)
#
# Safety: before anything is created, a blackhole route for the subnet goes into the root
# namespace, so a command started in the wrong namespace by mistake has its packets dropped
# here instead of leaving the machine. No interface, address or route of the root namespace is
# touched besides that one route, which net_down removes. Every veth is created inside the
# bridge namespace with its other end placed straight into a host namespace: none ever exists
# in the root namespace.
#
#   namespace   address        what runs there
#   tpc-ctl     10.231.0.1     the bridge; munged, slurmctld, srun, reduce
#   tpc-srv     10.231.0.10    simserve
#   tpc-h1..3   10.231.0.11-13 slurmd -N host1..3, and each part's arrivals | fire

NET_SUBNET=${NET_SUBNET:-10.231.0.0/24}
NET_PREFIX=${NET_SUBNET%.0/24}
NET_NS_PREFIX=tpc
NET_HOSTS=(h1 h2 h3)
NET_SERVER_ADDR=$NET_PREFIX.10
NET_CTL_ADDR=$NET_PREFIX.1
# Set once the blackhole route is ours to remove (it was not there before net_up).
NET_ROUTE_ADDED=
# The namespaces' identities (net:[inode]), to find a process left in one after it is deleted.
NET_IDS=()

# ns_name SHORT: the namespace's full name.
ns_name() { echo "$NET_NS_PREFIX-$1"; }

# nsenter rather than `ip netns exec`: the latter also makes a mount namespace with /sys
# remounted, where slurmd finds no cgroup filesystem and refuses to start.
in_ns() {
  local ns
  ns=$(ns_name "$1")
  shift
  nsenter --net="/run/netns/$ns" "$@"
}

# host_addr N: host N's address (1-based).
host_addr() { echo "$NET_PREFIX.$((10 + $1))"; }

# net_join SHORT ADDR: a namespace with loopback up and one veth to the bridge at ADDR/24.
net_join() {
  local short=$1 addr=$2 ns
  ns=$(ns_name "$short")
  ip netns add "$ns"
  NET_IDS+=("net:[$(stat -L -c %i "/run/netns/$ns")]")
  ip -n "$ns" link set lo up
  ip -n "$(ns_name ctl)" link add "br-$short" type veth peer name eth0 netns "$ns"
  ip -n "$(ns_name ctl)" link set "br-$short" master br0 up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
}

net_up() {
  local i ctl
  ctl=$(ns_name ctl)
  if ip route show "$NET_SUBNET" | grep -q .; then
    echo "cluster: a route for $NET_SUBNET is already there (another test running, or a" \
      "clash with this machine's networks): set NET_SUBNET=10.x.y.0/24 to another one" >&2
    return 1
  fi
  local ns
  for ns in ctl srv "${NET_HOSTS[@]}"; do
    if ip netns list | grep -qw "$(ns_name "$ns")"; then
      echo "cluster: namespace $(ns_name "$ns") already exists (another test running?)" >&2
      return 1
    fi
  done
  ip route add blackhole "$NET_SUBNET"
  NET_ROUTE_ADDED=1
  ip netns add "$ctl"
  NET_IDS+=("net:[$(stat -L -c %i "/run/netns/$ctl")]")
  ip -n "$ctl" link set lo up
  ip -n "$ctl" link add br0 type bridge
  ip -n "$ctl" addr add "$NET_CTL_ADDR/24" dev br0
  ip -n "$ctl" link set br0 up
  net_join srv "$NET_SERVER_ADDR"
  for i in 1 2 3; do
    net_join "h$i" "$(host_addr "$i")"
  done
}

# net_pids: every process still inside one of our namespaces (all started by the test, or by
# the Slurm daemons it started there), found by namespace identity, so also after `ip netns
# del` (a namespace lives on while a process holds it).
net_pids() {
  [ ${#NET_IDS[@]} -gt 0 ] || return 0
  local f id pid
  for f in /proc/[0-9]*/ns/net; do
    id=$(readlink "$f" 2>/dev/null) || continue
    case " ${NET_IDS[*]} " in
      *" $id "*)
        pid=${f#/proc/}
        echo "${pid%%/*}"
        ;;
    esac
  done
}

# net_kill_all: SIGTERM to those processes, then SIGKILL to any left after 3 s (again, until
# none is left: a daemon may fork while it stops).
net_kill_all() {
  local pid
  for pid in $(net_pids); do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 30); do
    [ -z "$(net_pids)" ] && return 0
    sleep 0.1
  done
  for _ in $(seq 20); do
    for pid in $(net_pids); do kill -KILL "$pid" 2>/dev/null || true; done
    sleep 0.1
    [ -z "$(net_pids)" ] && return 0
  done
  echo "cluster: processes still in the test's namespaces: $(net_pids | tr '\n' ' ')" >&2
  return 1
}

net_down() {
  local ns
  net_kill_all || true
  for ns in "${NET_HOSTS[@]}" srv ctl; do
    if ip netns list | grep -qw "$(ns_name "$ns")"; then
      ip netns del "$(ns_name "$ns")" || true
    fi
  done
  if [ -n "$NET_ROUTE_ADDED" ]; then
    ip route del blackhole "$NET_SUBNET" 2>/dev/null || true
    NET_ROUTE_ADDED=
  fi
}
