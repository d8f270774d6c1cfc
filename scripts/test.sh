#!/usr/bin/env bash
# Set up (as scripts/setup.sh), then lint and run the test suite. Three lanes (docs/tests.md):
#   --fast   ruff, the import contracts, and the tests that start no JVM (no Spark, Maven or
#            javac) and cost under a second each (those over are marked slow), on two workers,
#            a third of the bad-input corpus. numaspark refuses to start a JVM meanwhile
#            (NUMASPARK_NO_JVM), so a test in the wrong lane fails and says so.
#   (none)   what CI runs: the same lint and no-JVM tests (the whole corpus), the plugin's JUnit
#            tests, the tests marked jvm one at a time, and the wheel installed in a fresh venv.
#   --long   all that, and the scenarios of minutes each marked long: the QEMU guests (eight
#            boots, two at a time: scripts/test-guest.sh), hosts in network namespaces, the
#            mini YARN, the kubelet's own code on the k8s files, and a user's install from the
#            wheel (no root, no apt hwloc or numactl: scripts/test-install.sh).
# A prerequisite a lane needs that is missing fails it, in one line (tests/prereq.py). Every
# step prints its time, and each pytest its 15 slowest tests; the times are summed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
long=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
  if [ "$arg" = "--long" ]; then long=1; fi
done
lane_name=$([ "$fast" = 1 ] && echo fast || { [ "$long" = 1 ] && echo long || echo default; })
times=()
step() {  # step NAME COMMAND...: run it, print and keep its time; pytest's exit 5 ("no test
  # selected", when the arguments pick tests of one lane only) passes
  local name=$1 began=$SECONDS code=0
  shift
  "$@" || code=$?
  times+=("$(printf '%-28s %5d s' "$name" $((SECONDS - began)))")
  printf 'test.sh: %s took %d s\n' "$name" $((SECONDS - began)) >&2
  if [ "$code" != 0 ] && [ "$code" != 5 ]; then summary; exit "$code"; fi
}
summary() {
  printf '\ntest.sh: the %s lane, step by step\n' "$lane_name" >&2
  printf '  %s\n' "${times[@]}" >&2
  printf '  %-28s %5d s\n' "total" "$SECONDS" >&2
}
step setup env NUMASPARK_SETUP_TESTS=1 NUMASPARK_SETUP_YARN=$long NUMASPARK_SETUP_JAR=0 bash scripts/setup.sh
# tests that start JVMs take this machine-wide lock, a test module at a time (tests/conftest.py)
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"
# pytest rewrites the asserts of every test module as it imports it, and keeps the result
# beside it (tests/__pycache__) unless bytecode writing is off: with PYTHONDONTWRITEBYTECODE
# set, as on some build machines, each pytest process rewrote all 110 modules, 3.5 s of its
# collection's 5.4 s here. The lanes write it once; git ignores __pycache__.
unset PYTHONDONTWRITEBYTECODE
# --long: tools/kubelet-check built once here, not by each pytest worker (scripts/test-kubelet.sh);
# without go, its tests fail in one line that says so (tests/prereq.py)
if [ "$long" = 1 ] && command -v go >/dev/null; then
  export NUMASPARK_KUBELET_CHECK="${NUMASPARK_KUBELET_CHECK:-$HOME/.cache/numaspark/kubelet-check}"
  mkdir -p "$(dirname "$NUMASPARK_KUBELET_CHECK")"
  step "build kubelet-check" bash -c 'cd tools/kubelet-check && nice -n 19 go build -o "$NUMASPARK_KUBELET_CHECK" .'
fi
lint() {
  .venv/bin/ruff check src tests bench
  .venv/bin/ruff format --check src tests bench
  # the rooms of the pipeline import only downward, with no cycles (pyproject.toml's contracts)
  .venv/bin/lint-imports
}
step lint lint
pytest=(.venv/bin/python -m pytest -ra --durations=15)
if [ "$fast" = 1 ]; then
  step "pytest, no JVM (fast)" env NUMASPARK_FAST_LANE=1 NUMASPARK_NO_JVM=1 "${pytest[@]}" -n 2 -m "not jvm and not slow" ${args[@]+"${args[@]}"}
  summary
  exit 0
fi
# the Java library's JUnit tests (slot pool under concurrency, CPU sets, binding), then pytest:
# the tests that start no JVM on two workers, then the real-Spark ones one at a time (they bind
# executors to this machine's CPUs and check that no JVM is left behind)
step "plugin jar and JUnit" .venv/bin/python -c "from numaspark.spark.affinity import build_jar; build_jar(run_tests=True)"
step "pytest, no JVM" env NUMASPARK_NO_JVM=1 "${pytest[@]}" -n 2 -m "not jvm" ${args[@]+"${args[@]}"}
if [ "$long" = 1 ]; then
  # the guests in a step of their own, two boots at once: a guest's vCPUs share one host
  # thread, so each boot keeps one core busy (NUMASPARK_GUEST_PARALLEL=1: one at a time)
  step "pytest, jvm" "${pytest[@]}" -m jvm --ignore=tests/test_numa_guest.py ${args[@]+"${args[@]}"}
  # arguments that name other tests (a path, a node id) leave the guests out
  guests=1
  for arg in ${args[@]+"${args[@]}"}; do
    case "$arg" in *test_numa_guest.py*) ;; -*) ;; *.py|*.py::*|tests/*) guests=0 ;; esac
  done
  if [ "$guests" = 1 ]; then
    step "guest boots" env NUMASPARK_GUEST_PARALLEL="${NUMASPARK_GUEST_PARALLEL:-2}" bash scripts/test-guest.sh ${args[@]+"${args[@]}"}
  fi
else
  step "pytest, jvm" "${pytest[@]}" -m jvm ${args[@]+"${args[@]}"}
fi
# the installable package: a wheel with the plugin jar, installed and run in a fresh venv
step "wheel" bash scripts/test-wheel.sh
summary
