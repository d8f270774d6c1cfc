#!/usr/bin/env bash
# Set up (as scripts/setup.sh), then lint and run the test suite (what CI runs, under 25
# minutes on two cores). --long adds the scenarios of minutes each that have scripts of their
# own (the two-node guest, three hosts, a cluster kept up on hosts): about 5 minutes more.
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
# the Java library's JUnit tests (slot pool under concurrency, CPU sets, binding), then pytest
.venv/bin/python -c "from numaspark.spark.affinity import build_jar; build_jar(run_tests=True)"
.venv/bin/python -m pytest -ra "$@"
# the installable package: a wheel with the plugin jar, installed and run in a fresh venv
bash scripts/test-wheel.sh
