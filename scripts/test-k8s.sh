#!/usr/bin/env bash
# The local Kubernetes' tests (marked long: scripts/test.sh --long runs them too): a one-node
# cluster brought up by scripts/k8s-local.sh (the first time it builds etcd, Kubernetes and
# containerd from source and two images from Debian's packages: a long while on two cores;
# from the cache, minutes), a pod of the Spark image run there, and `down` leaving nothing.
# Needs root and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"
exec .venv/bin/python -m pytest -ra -s --durations=15 --long tests/test_k8s_local.py "$@"
