#!/usr/bin/env bash
# Set up (as scripts/setup.sh), then lint and run the test suite (what CI runs, under 25
# minutes on two cores). --long adds the scenarios of minutes each that have scripts of their
# own (the two-node guest, three hosts, a cluster kept up on hosts): about 5 minutes more.
# --fast runs only the tests that start no JVM (no Spark, no Maven, no javac), on two
# workers, after the lint: under a minute here; numaspark refuses to start a JVM meanwhile
# (NUMASPARK_NO_JVM), so a test in the wrong lane fails and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
done
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
# the rooms of the pipeline import only downward, with no cycles (pyproject.toml's contracts)
.venv/bin/lint-imports
if [ "$fast" = 1 ]; then
  NUMASPARK_NO_JVM=1 exec .venv/bin/python -m pytest -ra -n 2 -m "not jvm" ${args[@]+"${args[@]}"}
fi
# the Java library's JUnit tests (slot pool under concurrency, CPU sets, binding), then pytest
.venv/bin/python -c "from numaspark.spark.affinity import build_jar; build_jar(run_tests=True)"
.venv/bin/python -m pytest -ra ${args[@]+"${args[@]}"}
# the installable package: a wheel with the plugin jar, installed and run in a fresh venv
bash scripts/test-wheel.sh
