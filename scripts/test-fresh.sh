#!/usr/bin/env bash
# Green on a fresh machine, alone (scripts/test.sh --long runs it too): clone HEAD to /var/tmp,
# and in a mount namespace that covers /tmp, this checkout's folder, /work and the download
# caches of pip and Maven with empty tmpfs, run the clone's own `bash scripts/test.sh --fast`
# (tests/test_fresh_clone.py). Needs root (unshare, mount); about 5 minutes (a fresh venv).
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"  # tests/conftest.py
exec .venv/bin/python -m pytest -ra -s --durations=15 --long tests/test_fresh_clone.py "$@"
