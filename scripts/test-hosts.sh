#!/usr/bin/env bash
# The multi-host tests alone, the long ones too (scripts/test.sh, which CI runs, leaves the
# two longest to this script and to --long): two or three hosts made
# on this machine as network namespaces (a bridge and veth pairs on 10.213.N.0/24), each with
# its own hostname and its own sshd from Debian's openssh-server, on keys the test generates;
# numaspark reads each host's topology, plans and deploys bound Spark workers over SSH, and
# the test reads each host's /proc. The namespaces share this machine's CPUs and memory: the
# tests prove deployment and binding, not speed. Then a standalone cluster numaspark did not
# start, on two hosts with their own hostnames, /tmp and /etc/hosts (network, UTS and mount
# namespaces on a bridge at 10.216.N.0/24), run from here (tests/test_spark_hosts.py), and
# executors that cannot reach the driver (tests/test_driver_unreachable.py). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh
export NUMASPARK_TEST_LOCK="${NUMASPARK_TEST_LOCK:-/tmp/numaspark-jvm.lock}"  # tests/conftest.py
exec .venv/bin/python -m pytest -ra -s --durations=15 --long tests/test_hosts.py \
  tests/test_spark_hosts.py tests/test_driver_unreachable.py tests/test_cluster_decide.py "$@"
