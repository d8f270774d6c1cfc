#!/usr/bin/env bash
# A YARN on this machine, for `numaspark run ... --master yarn` (and for anyone who wants to try
# that path without a cluster): a ResourceManager and N NodeManagers from
# hadoop-client-minicluster, on 127.0.0.1, kept up until `down`.
#
#   bash scripts/yarn-mini.sh up DIR [--nodemanagers N] [--nm-memory 4g] [--nm-vcores 2]
#   eval "$(bash scripts/yarn-mini.sh up DIR | tail -n 1)"     # sets HADOOP_CONF_DIR
#   bash scripts/yarn-mini.sh status DIR
#   bash scripts/yarn-mini.sh down DIR                         # leaves no process
#
# `up` writes DIR/conf/yarn-site.xml; its last line is `export HADOOP_CONF_DIR=DIR/conf`
# (absolute). A thin wrapper over `numaspark yarn up|status|down` (the same life cycle as
# `numaspark cluster`); the first `up` builds jvm/yarn-mini (Maven fetches
# hadoop-client-minicluster once). NUMASPARK_PYTHON: the Python with numaspark (default
# .venv/bin/python).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${NUMASPARK_PYTHON:-$root/.venv/bin/python}"
usage() { echo "usage: bash scripts/yarn-mini.sh up|status|down DIR [--nodemanagers N] ..." >&2; exit 2; }
[ $# -ge 2 ] || usage
verb=$1; shift
case "$verb" in
  up)
    "$python" -c "from numaspark.spark.yarnmini import build_launcher; build_launcher()" >&2
    exec "$python" -m numaspark yarn up "$@" ;;
  status|down) exec "$python" -m numaspark yarn "$verb" "$@" ;;
  *) usage ;;
esac
