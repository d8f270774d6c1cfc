#!/usr/bin/env bash
# The mini YARN tests alone (tests/test_yarn_mini.py, about three minutes; scripts/test.sh
# --long runs them too): builds jvm/yarn-mini (Maven fetches hadoop-client-minicluster once),
# starts a ResourceManager and a NodeManager with scripts/yarn-mini.sh, runs a workload and a
# PySpark application with `--master yarn` and the plugin's reports, starves one application
# past --executor-wait, and checks that no process is left. Then the mini YARN on another host
# (a network, UTS and mount namespace at 10.217.N.11) and `run --master yarn` from here
# (tests/test_yarn_hosts.py).
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 NUMASPARK_SETUP_YARN=1 bash scripts/setup.sh
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"  # tests/conftest.py
exec .venv/bin/python -m pytest -ra -s --durations=15 --long tests/test_yarn_mini.py \
  tests/test_yarn_hosts.py "$@"
