#!/usr/bin/env bash
# Set up numaspark on a fresh machine: numactl and hwloc (apt-get, when missing),
# Java when missing, and the project venv (.venv) with numaspark and pyspark; with
# NUMASPARK_SETUP_TESTS=1, the tests' tools too. Safe to run again: it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

missing=()
command -v numactl >/dev/null 2>&1 || missing+=(numactl)
command -v lstopo-no-graphics >/dev/null 2>&1 || missing+=(hwloc-nox)
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
# the affinity plugin (jvm/, core/pu binding) is built with Maven and a JDK
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
optional=()
# perf is optional for a user (counters are then reported unavailable), not for the tests: they
# prove the perf collector on this machine, and a missing perf fails them (tests/prereq.py)
if ! command -v perf >/dev/null 2>&1; then
  if [ "${NUMASPARK_SETUP_TESTS:-0}" = 1 ]; then missing+=(linux-perf); else optional+=(linux-perf); fi
fi
command -v cc >/dev/null 2>&1 || optional+=(gcc)  # numaspark probe's memory kernel
# the tests open the HTML report in a real headless Chromium (scripts/test.sh asks for it)
if [ "${NUMASPARK_SETUP_TESTS:-0}" = 1 ] && ! command -v chromium-headless-shell >/dev/null 2>&1 \
   && ! command -v chromium >/dev/null 2>&1; then
  missing+=(chromium-headless-shell)
fi
# the two-node test (tests/test_numa_guest.py) boots this machine again under QEMU; the
# multi-host tests (tests/test_hosts.py) run an sshd per network-namespace host
if [ "${NUMASPARK_SETUP_TESTS:-0}" = 1 ]; then
  command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
  [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
  command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
fi

apt_install() {
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    return 1
  fi
}

if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} with apt-get"
  if ! command -v apt-get >/dev/null 2>&1 || ! apt_install "${missing[@]}"; then
    say "error: cannot install ${missing[*]}: run 'sudo apt-get install -y ${missing[*]}' (as root) and run this again"
    exit 1
  fi
fi
if [ ${#optional[@]} -gt 0 ]; then
  apt_install "${optional[@]}" 2>/dev/null || say "${optional[*]} not installed (optional: without perf, counters are reported as unavailable; without gcc, 'numaspark probe' cannot run)"
fi

if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  python3 -m venv .venv
fi
# Reinstall only when the declared dependencies or the extras asked for change. The tests'
# tools (pytest, ruff, playwright, mkdocs, ...) only where tests run (NUMASPARK_SETUP_TESTS=1,
# as scripts/test.sh sets): the main job does without them (40 s less of its setup here).
# Python 3.11's own pip (23.2) installs an editable pyproject package: no upgrade of pip.
extras=$([ "${NUMASPARK_SETUP_TESTS:-0}" = 1 ] && echo spark,test,k8s || echo spark)
stamp=".venv/.numaspark-deps"
deps=$(sha256sum pyproject.toml | cut -d' ' -f1)
had=$(cat "$stamp" 2>/dev/null || true)
# a venv set up with the tests' tools (and the Kubernetes client) has all the main job
# needs: nothing to install
if [ "$had" != "$deps $extras" ] && [ "$had" != "$deps spark,test,k8s" ]; then
  say "installing Python packages into .venv (pyspark is large: about a minute)"
  .venv/bin/python -m pip install -q -e ".[$extras]"
  echo "$deps $extras" > "$stamp"
fi
# numaspark's bytecode, compiled ahead: where PYTHONDONTWRITEBYTECODE is set (as on this
# machine's image), the editable install would otherwise be compiled again by every command
# (0.9 s -> 0.55 s for a numaspark command that only checks its input, here)
.venv/bin/python -m compileall -q src >/dev/null
# numaspark probe's STREAM and pointer-chase kernel, compiled once per source version
if command -v cc >/dev/null 2>&1; then
  .venv/bin/python -c "from numaspark.probe import build_membench; build_membench()" \
    || say "could not compile the probe kernel: 'numaspark probe' will say why"
fi
# the affinity plugin's jar (jvm/), built with Maven against pyspark's Spark when its sources
# change; scripts/test.sh builds it with its JUnit tests instead (NUMASPARK_SETUP_JAR=0). The
# long lane's own scripts (test-guest.sh, test-hosts.sh, ...) need it built here: without it a
# fresh machine's guest proofs of the plugin failed ("not built yet")
if [ "${NUMASPARK_SETUP_JAR:-1}" != 0 ]; then
  say "building the affinity plugin (jvm/) if its sources changed"
  .venv/bin/python -c "from numaspark.spark.affinity import build_jar; build_jar()"
fi
# the mini YARN (jvm/yarn-mini: hadoop-client-minicluster, tens of MB from Maven's repository
# once), only when asked: scripts/yarn-mini.sh and the YARN tests (scripts/test-yarn.sh,
# scripts/test.sh --long) use it
if [ "${NUMASPARK_SETUP_YARN:-0}" = 1 ]; then
  say "building the mini YARN (jvm/yarn-mini) if its sources changed"
  .venv/bin/python -c "from numaspark.spark.yarnmini import build_launcher; build_launcher()"
fi
say "ready: $(.venv/bin/numaspark version 2>/dev/null || echo '?') in .venv"
