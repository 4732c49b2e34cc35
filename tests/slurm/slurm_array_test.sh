#!/usr/bin/env bash
# The Slurm scripts, run by a real Slurm on this machine: munged, slurmctld and slurmd are started
# on localhost in a temporary folder (own ports, own munge socket), characterize.sbatch runs as a
# 2-task array in its host-only mode (CI has no GPU: each task analyzes a committed TLB fixture
# into a unit folder), fleet.sbatch runs after it (afterok) and merges the two units; the test
# checks the fleet and its report, then stops the daemons. Exit 77 (skipped) with the reason
# where Slurm cannot start here. Usage: slurm_array_test.sh GPUPROBE_BINARY SOURCE_DIR
set -uo pipefail
bin="$1" src="$2"
skip() { echo "SKIPPED: $*"; exit 77; }
for c in munged slurmctld slurmd sbatch squeue scontrol sacct; do
  command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || skip "$c is not installed (scripts/setup.sh --test-tools installs slurm-wlm and munge)"
done
export PATH="$PATH:/usr/sbin"
t0=$(date +%s)
T=$(mktemp -d /tmp/gpuprobe-slurm.XXXXXX)
chmod 755 "$T"
user=$(id -un)
host=$(hostname -s)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cleanup() {
  [ -f "$T/slurmctld.pid" ] && kill "$(cat "$T/slurmctld.pid")" 2>/dev/null
  [ -f "$T/slurmd.pid" ] && kill "$(cat "$T/slurmd.pid")" 2>/dev/null
  [ -f "$T/munged.pid" ] && kill "$(cat "$T/munged.pid")" 2>/dev/null
  sleep 1
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAILED: $*"; for f in "$T"/*.log; do echo "---- $f"; tail -20 "$f"; done; exit 1; }

# munge with its own key and socket
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$T/munge.key"
mkdir -p "$T/munge" && chmod 700 "$T/munge"
munged --force --key-file="$T/munge.key" --socket="$T/munge/munge.sock" \
  --pid-file="$T/munged.pid" --log-file="$T/munged.log" --seed-file="$T/munge/seed" \
  >/dev/null 2>&1 || skip "munged does not start here ($(tail -1 "$T/munged.log" 2>/dev/null))"

mkdir -p "$T/state" "$T/spool"
cat >"$T/slurm.conf" <<CONF
ClusterName=gpuprobe-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -c -f "$SLURM_CONF" >/dev/null 2>&1 || skip "slurmctld does not start here ($(tail -1 "$T/slurmctld.log" 2>/dev/null))"
slurmd -f "$SLURM_CONF" -N "$host" >/dev/null 2>&1 || skip "slurmd does not start here ($(tail -1 "$T/slurmd.log" 2>/dev/null))"
for i in $(seq 1 40); do
  state=$(sinfo -h -N -o '%t' 2>/dev/null | head -1)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || skip "the Slurm node did not come up (state '$state')"
echo "slurm up in $(( $(date +%s) - t0 )) s"

R="$T/results"
mkdir -p "$R"
export GPUPROBE="$bin" GPUPROBE_PLOT="$src/reports/plot.py"
export GPUPROBE_HOST_FIXTURES="$src/tests/fixtures/gpuprobe-alias/h100-alias-2m.json $src/tests/fixtures/gpuprobe-alias/h200-alias-2m.json"
cd "$T"
# A folder that is no unit (its profile broken): fleet lists it and exits 3, which the fleet job
# takes as "done with a list" and still draws the report.
mkdir -p "$R/broken" && echo '{"schema": "gpuprobe.profile/1"' >"$R/broken/profile.json"
# characterize's own flags reach characterize alone: tune refuses --allow-busy (exit 2).
jid=$(sbatch --parsable --exclusive=user --array=0-1 "$src/scripts/slurm/characterize.sbatch" "$R" \
        --quick --allow-busy --busy-wait 5) || fail "sbatch characterize"
fid=$(sbatch --parsable --dependency=afterany:"$jid" "$src/scripts/slurm/fleet.sbatch" "$R") || fail "sbatch fleet"
echo "submitted array $jid and fleet $fid"
for i in $(seq 1 240); do
  [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
  sleep 0.5
done
[ -z "$(squeue -h -o %i)" ] || fail "jobs still queued after 120 s: $(squeue)"
for f in "$T"/gpuprobe-*.out; do echo "---- $(basename "$f")"; tail -5 "$f"; done
[ -f "$R/task0/profile.json" ] && [ -f "$R/task1/profile.json" ] || fail "the array tasks wrote no unit folders"
[ -f "$R/fleet/fleet.json" ] || fail "fleet.sbatch did not write fleet.json"
python3 - "$R/fleet/fleet.json" <<'PY' || fail "fleet.json is not the two units of two models"
import json, sys
f = json.load(open(sys.argv[1]))
assert f["schema"] == "gpuprobe.fleet/2", f["schema"]
assert len(f["units"]) == 2, len(f["units"])
assert sorted(f["models"]) == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"], sorted(f["models"])
for u in f["units"]:
    assert u["numbers"]["L2.coverage_mib"] == 32, u["numbers"]
PY
[ -f "$R/fleet/report/index.html" ] || fail "fleet.sbatch did not draw the report"
grep -q "fleet done with something left out" "$T"/gpuprobe-fleet-*.out || fail "fleet.sbatch did not take fleet's exit 3 as done with a list"
grep -q "characterize gets: --quick --allow-busy --busy-wait 5; tune gets: --quick$" "$T"/gpuprobe-characterize-*_0.out ||
  fail "characterize.sbatch did not give each command its own flags: $(grep 'gets:' "$T"/gpuprobe-characterize-*_0.out)"
echo "PASSED: array of 2 + fleet in $(( $(date +%s) - t0 )) s (Slurm $(sinfo --version))"
