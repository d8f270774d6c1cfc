#!/usr/bin/env bash
# Mutation testing of the code whose mistakes a user sees first: the planner (a wrong layout or
# CPU set), CpuSet (a wrong CPU list) and the tuner's prior, decide/tune/rules.py, machine.py
# and columns.py (a wrong rule, a candidate's wrong shape, a column read wrongly). mutmut
# changes one thing at a time in them (a number, a comparison, an operator) and runs the fast
# tests that reach the changed function; a change no test notices "survived". Prints the
# score per file at the end. A developer's tool, not a CI lane: about 10 minutes here, under
# 20 on a busy day (docs/mutation.md has the scores and what to do with a survivor).
#   bash scripts/mutation.sh              # a fresh run of every mutant (mutants/ rebuilt)
#   bash scripts/mutation.sh NAME ...     # only these mutants, reusing the last run's stats
# mutmut is not in the test extra: CI never runs it, and it brings a terminal UI framework
# and libcst (about 25 MB); it is installed into .venv here, pinned, on first use. Its
# configuration (the files, the tests) is [tool.mutmut] in pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
MUTMUT=3.8.1
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh >/dev/null
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('mutmut') != '$MUTMUT')" 2>/dev/null; then
  .venv/bin/python -m pip install -q "mutmut==$MUTMUT"
fi
# every mutant runs in a process forked from this one: none may start a JVM, and the tests'
# topologies are found from the real tree, not from mutants/ (tests/conftest.py)
export NUMASPARK_NO_JVM=1
export NUMASPARK_TOPOLOGIES="${NUMASPARK_TOPOLOGIES:-$(cd .. && pwd)/shared/topologies}"
if [ $# = 0 ]; then
  rm -rf mutants  # mutmut keeps earlier verdicts there; a score is of a fresh run
fi
start=$(date +%s)
# one test process at a time, at the lowest priority: this machine's two cores are shared
code=0
nice -n 19 .venv/bin/mutmut run --max-children 1 "$@" || code=$?
echo "mutation: mutmut run took $(( $(date +%s) - start )) s (exit $code)"
.venv/bin/python - <<'EOF'
"""The score per mutated file, from mutmut's verdicts in mutants/ (one .meta file each)."""
import json
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

print(f"{'file':<36} {'killed':>7} {'survived':>9} {'timeout':>8} {'other':>6} {'total':>6}")
for meta in sorted(Path("mutants/src").rglob("*.py.meta")):
    verdicts = json.loads(meta.read_text())["exit_code_by_key"]
    counts = Counter(status_by_exit_code[code] for code in verdicts.values())
    other = sum(counts.values()) - counts["killed"] - counts["survived"] - counts["timeout"]
    name = str(meta.relative_to("mutants/src/numaspark")).removesuffix(".meta")
    print(f"{name:<36} {counts['killed']:>7} {counts['survived']:>9} {counts['timeout']:>8} "
          f"{other:>6} {len(verdicts):>6}")
print("survivors: .venv/bin/mutmut results; one of them: .venv/bin/mutmut show NAME")
EOF
exit "$code"
