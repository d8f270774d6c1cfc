#!/usr/bin/env bash
# Set up (as scripts/setup.sh), then lint and run the test suite (what CI runs, under 25
# minutes on two cores). --long adds the scenarios of minutes each that have scripts of their
# own (the two-node guest, three hosts, a cluster kept up on hosts, the mini YARN, and where
# go is installed the kubelet's own code on the k8s files): about 8 minutes more, plus some
# minutes the first time tools/kubelet-check is built.
# --fast runs only the tests that start no JVM (no Spark, no Maven, no javac), on two
# workers, after the lint: under a minute here; numaspark refuses to start a JVM meanwhile
# (NUMASPARK_NO_JVM), so a test in the wrong lane fails and says so. Without it, the same
# fast lane runs first, then the tests marked jvm one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
yarn=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
  if [ "$arg" = "--long" ]; then yarn=1; fi  # the mini YARN's tests need it built
done
NUMASPARK_SETUP_TESTS=1 NUMASPARK_SETUP_YARN=$yarn bash scripts/setup.sh
# tests that start JVMs take this machine-wide lock, a test module at a time (tests/conftest.py)
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"
# --long: tools/kubelet-check built once here, not by each pytest worker (scripts/test-kubelet.sh)
if [ "$yarn" = 1 ] && command -v go >/dev/null; then
  export NUMASPARK_KUBELET_CHECK="${NUMASPARK_KUBELET_CHECK:-$HOME/.cache/numaspark/kubelet-check}"
  mkdir -p "$(dirname "$NUMASPARK_KUBELET_CHECK")"
  (cd tools/kubelet-check && nice -n 19 go build -o "$NUMASPARK_KUBELET_CHECK" .)
fi
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
# the rooms of the pipeline import only downward, with no cycles (pyproject.toml's contracts)
.venv/bin/lint-imports
if [ "$fast" = 1 ]; then
  NUMASPARK_FAST_LANE=1 NUMASPARK_NO_JVM=1 exec .venv/bin/python -m pytest -ra --durations=15 -n 2 -m "not jvm" ${args[@]+"${args[@]}"}
fi
# the Java library's JUnit tests (slot pool under concurrency, CPU sets, binding), then pytest:
# the tests that start no JVM on two workers (the fast lane), then the real-Spark ones one at
# a time (they bind executors to this machine's CPUs and check that no JVM is left behind)
.venv/bin/python -c "from numaspark.spark.affinity import build_jar; build_jar(run_tests=True)"
lane() {  # pytest, where "no test selected" (exit 5: arguments that pick one lane only) passes
  local code=0
  "$@" || code=$?
  if [ "$code" != 0 ] && [ "$code" != 5 ]; then exit "$code"; fi
}
NUMASPARK_NO_JVM=1 lane .venv/bin/python -m pytest -ra --durations=15 -n 2 -m "not jvm" ${args[@]+"${args[@]}"}
lane .venv/bin/python -m pytest -ra --durations=15 -m jvm ${args[@]+"${args[@]}"}
# the installable package: a wheel with the plugin jar, installed and run in a fresh venv
bash scripts/test-wheel.sh
