#!/usr/bin/env bash
# The two-node test: boot a real Linux kernel with two NUMA nodes under QEMU's software
# emulation and run numaspark's placement checks inside it (tests/guest/). Needs root
# (debootstrap, chroot, mount). The base image is built once (about 3 minutes) and kept in
# ~/.cache/numaspark/numa-guest while its inputs are unchanged; a boot with the checks takes
# about 2 minutes. The guest's console is saved in test-artifacts/numa-guest/console.log.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "test-guest: error: building the guest image needs root: run 'sudo bash scripts/test-guest.sh'" >&2
  exit 1
fi
NUMASPARK_SETUP_GUEST=1 bash scripts/setup.sh
NUMASPARK_GUEST=1 exec .venv/bin/python -m pytest -ra -s tests/test_numa_guest.py "$@"
