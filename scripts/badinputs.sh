#!/usr/bin/env bash
# The bad-input corpus alone (it is also part of scripts/test.sh): every command given missing,
# empty, binary and damaged inputs, unwritable outputs and malformed options; prints each case
# that did not end in one clear line (or a warning for a partly usable input) and the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh >/dev/null
exec .venv/bin/python tests/badinputs.py "$@"
