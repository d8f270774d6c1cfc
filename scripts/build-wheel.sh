#!/usr/bin/env bash
# The release artifact: numaspark's wheel, with the affinity plugin's jar inside (built here
# with Maven against the installed pyspark, so the user needs no Maven and no JDK compiler).
# Prints the wheel's path on stdout. A user installs it with
#   pip install 'numaspark-VERSION-py3-none-any.whl[spark]'
# Maven starts a JVM: on a shared machine run it as `flock /tmp/numaspark-jvm.lock bash
# scripts/build-wheel.sh` (tests that call it hold that lock already). Needs scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'build-wheel: %s\n' "$*" >&2; }
jar=$(.venv/bin/python -c "from numaspark.spark.affinity import build_jar; print(build_jar())")
mkdir -p src/numaspark/jvm
cp "$jar" src/numaspark/jvm/numaspark-affinity.jar
rm -rf dist build
.venv/bin/python -m build --wheel --outdir dist >/dev/null
wheel=$(ls "$PWD"/dist/numaspark-*.whl)
say "built $wheel ($(du -k "$wheel" | cut -f1) KiB; the jar in it: $(du -k src/numaspark/jvm/numaspark-affinity.jar | cut -f1) KiB)"
echo "$wheel"
