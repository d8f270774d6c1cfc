#!/usr/bin/env bash
# A user's install, alone (scripts/test.sh --long runs it too): build the wheel, make a user
# without root, hide apt's numactl and hwloc in a mount namespace of its own, and as that user
# install the wheel with pip into a venv of the system's /usr/bin/python3 (pyspark from the
# package index), then topology, plan, a local run bound to a node and a standalone run bound
# to cores, each read back from /proc (tests/test_install.py). Needs root (useradd, unshare);
# Java 17; about 400 MB of pyspark downloaded the first time (kept in
# /var/tmp/numaspark-install-test-pip for the next).
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"  # tests/conftest.py
exec .venv/bin/python -m pytest -ra -s --durations=15 --long tests/test_install.py "$@"
