#!/usr/bin/env bash
# Run COMMAND on a real multi-node Linux kernel: this machine booted again under QEMU's software
# emulation with N NUMA nodes, its root read-only under a tmpfs overlay, with this repository,
# its venv (numaspark on PATH, the repository's src/ first) and the plugin jar.
#   bash scripts/numa-guest.sh [--nodes N] [--cpus-per-node C] [--memory-per-node M]
#                              [--gpus-per-node G] -- COMMAND...
# --gpus-per-node: G stand-in GPUs on each node (display controllers, PCI class 0380, behind a
# PCI expander bridge whose numa_node the kernel reports; no default VGA card).
# prints COMMAND's output and exits with its status (125: the guest ended first). The kernel is
# fetched once (apt-get download, about 70 MB) into ~/.cache/numaspark/numa-guest; the whole
# console goes to --log (default ~/.cache/numaspark/numa-guest/last-boot/console.log). A boot
# takes about a minute; JVMs start about 20 times slower than here. Timings under emulation say
# nothing about real NUMA hardware; placements (CPUs, memory policy, pages per node) do. The
# guest's vCPUs share one host thread: QEMU's multi-threaded TCG tears the code that JVMs patch
# while other threads run it, and they crash (tests/guest/build.py, GUEST_ACCEL;
# NUMASPARK_GUEST_ACCEL=tcg gives it back). Its CPU is QEMU's `max` less AVX
# (NUMASPARK_GUEST_CPU=max gives AVX back).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ] || ! command -v qemu-system-x86_64 >/dev/null; then
  NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh >&2
fi
cd - >/dev/null
exec "$(dirname "$0")/../.venv/bin/python" "$(dirname "$0")/../tests/guest/build.py" "$@"
