#!/usr/bin/env bash
# The fault trials alone, on real standalone runs (about 8 minutes): SIGKILL, SIGINT and SIGTERM
# of numaspark mid-run, SIGKILL mid-sweep then --resume, SIGKILL then `cluster down`, kill -9 of
# an executor, two runs at once, a study interrupted; prints orphans and results lost.
# Name trials to run only those: bash scripts/faults.sh sigkill-run kill-executor
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh >/dev/null
exec .venv/bin/python tests/faults.py "$@"
