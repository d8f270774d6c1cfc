#!/usr/bin/env bash
# The main job: set up, then characterise this machine for Spark: the checks,
# the topology, and placements of executors at each binding level.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ns=.venv/bin/numaspark
cpus=$(.venv/bin/python -c 'import os; print(len(os.sched_getaffinity(0)))')

echo "== numaspark doctor"; $ns doctor
echo "== numaspark topology"; $ns topology
for bind in none node core pu; do
  echo "== numaspark plan --executors $cpus --cores-per-executor 1 --bind $bind"
  $ns plan --executors "$cpus" --cores-per-executor 1 --bind "$bind"
done
echo "== numaspark plan --mode local --bind node"; $ns plan --mode local --bind node
