#!/usr/bin/env bash
# The installable package: build the wheel (it carries the prebuilt plugin jar), install it
# into a fresh venv of its own, and run numaspark from there: version, a plan, and a tiny
# local run with --bind core (which needs the jar: no Maven, no JDK compiler on that side).
# Prints the wheel's size. scripts/test.sh runs it after the tests; runnable alone after setup.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'test-wheel: %s\n' "$*" >&2; }
wheel=$(bash scripts/build-wheel.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$wheel[spark]"
cd "$work"  # nothing of the checkout on the path
ns="$work/venv/bin/numaspark"
say "numaspark $($ns version) from the wheel"
$ns plan --synthetic "pack:2 numa:2 core:4 pu:2" --executors-per-node 1 --bind core --json \
  | "$work/venv/bin/python" -c "import json,sys; d=json.load(sys.stdin); assert d['spark_conf']['spark.plugins'], d; print('plan ok:', len(d['jvms']) - 1, 'executors')"
$ns run wordcount --size tiny --mode local --bind core --out "$work/out" >/dev/null
"$work/venv/bin/python" - "$work/out/results.jsonl" <<'PY'
import json, sys
run = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert run["status"] == "ok", run["failure_reason"]
pinned = run["affinity"]["pinned"]
assert pinned > 0, run["affinity"]
print(f"local run from the wheel: ok, {pinned} task(s) pinned by the packaged plugin")
PY
