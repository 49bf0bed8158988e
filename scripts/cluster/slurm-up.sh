# The test cluster's Slurm, for scripts/cluster/test.sh: munged and slurmctld in the ctl
# namespace, `slurmd -N hostN` in each host namespace, every file (configuration, key, socket,
# state, spool, logs, pids) under one temp directory. Sourced after netns.sh, not run.
#
#   slurm_install   apt-get install slurm-wlm and munge when slurmctld, slurmd, srun or munged
#                   is missing (Debian 12: Slurm 22.05)
#   slurm_up DIR    write DIR/slurm.conf, start the daemons, wait until the three nodes are idle;
#                   exports SLURM_CONF so that srun and sinfo find them
#   slurm_logs      print the daemons' logs (on failure)
#
# This machine's cgroups are hybrid, which Slurm's cgroup plugins refuse: processes are tracked
# by /proc (proctrack/linuxproc) and no task plugin binds them (task/none). The daemons run as
# root (SlurmUser=root), as does the test.

SLURM_DIR=

slurm_install() {
  local b missing=
  for b in slurmctld slurmd srun sinfo munged; do
    command -v "$b" >/dev/null 2>&1 || missing=1
  done
  [ -z "$missing" ] && return 0
  echo "cluster: installing slurm-wlm and munge with apt-get" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
}

# slurm_conf DIR: the configuration for three nodes at the host namespaces' addresses.
slurm_conf() {
  local dir=$1 cpus
  cpus=$(nproc)
  cat <<EOF
ClusterName=tokenpipe-test
SlurmctldHost=$(hostname -s)($NET_CTL_ADDR)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
InactiveLimit=0
MinJobAge=10
NodeName=host[1-3] NodeAddr=$(host_addr 1),$(host_addr 2),$(host_addr 3) CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=host[1-3] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
}

slurm_up() {
  SLURM_DIR=$1
  local d=$SLURM_DIR i
  mkdir -p "$d/munge" "$d/state" "$d/run" "$d/log" "$d/spool"
  chmod 700 "$d/munge"
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$d/munge/munge.key"
  for i in 1 2 3; do mkdir -p "$d/spool/host$i"; done
  slurm_conf "$d" > "$d/slurm.conf"
  printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n' > "$d/cgroup.conf"
  export SLURM_CONF=$d/slurm.conf
  in_ns ctl munged --force --key-file="$d/munge/munge.key" --socket="$d/munge/munge.socket" \
    --pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/seed"
  in_ns ctl slurmctld -f "$SLURM_CONF"
  for i in 1 2 3; do
    in_ns "h$i" slurmd -f "$SLURM_CONF" -N "host$i"
  done
  for _ in $(seq 100); do
    [ "$(in_ns ctl sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq 3 ] && return 0
    sleep 0.2
  done
  echo "cluster: the three Slurm nodes did not come up idle in 20 s:" >&2
  in_ns ctl sinfo -N >&2 || true
  return 1
}

slurm_logs() {
  [ -n "$SLURM_DIR" ] || return 0
  local f
  for f in "$SLURM_DIR"/log/*.log; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}
