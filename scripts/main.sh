#!/usr/bin/env bash
# The main job: set up, then characterise this machine for Spark: the machine
# checks, the topology, and wordcount and sql-aggregation run in local mode
# unbound and bound, and on a standalone cluster of core-bound executors,
# each with a warm-up and repeated iterations; a comparison table, advice, and an
# HTML report (numaspark-out/characterize/report.html) at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ns=.venv/bin/numaspark
echo "== numaspark doctor"
$ns doctor
echo "== numaspark characterize"
$ns characterize --out numaspark-out/characterize "$@"
echo "== numaspark advise"
$ns advise numaspark-out/characterize
echo "report: $(pwd)/numaspark-out/characterize/report.html"
