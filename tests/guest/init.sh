#!/bin/sh
# PID 1 of the two-node test guest, on this machine's own root (read-only, under a tmpfs
# overlay): mount what the checks need, run them with the repository's venv, power off.
# NUMASPARK_REPO, NUMASPARK_PYTHON and NUMASPARK_TOUCHER come from the kernel command line.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
ln -s /proc/self/fd /dev/fd  # what udev would make: bash's <(...) in spark-class needs it
mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up  # servers the checks start listen on 127.0.0.1
hostname numa-guest && echo "127.0.0.1 numa-guest" >> /etc/hosts  # the overlay's copy
# numaspark is the booted repository's (src/ first on PYTHONPATH), not the one the venv's
# editable install points at: a git worktree tests its own code with the main checkout's venv
NUMASPARK_BIN="$(dirname "$NUMASPARK_PYTHON")/numaspark" NUMASPARK_TOUCHER="$NUMASPARK_TOUCHER" \
  PYTHONPATH="$NUMASPARK_REPO/src" NUMASPARK_GUEST_SPARK="$NUMASPARK_GUEST_SPARK" \
  NUMASPARK_GUEST_PLUGIN="$NUMASPARK_GUEST_PLUGIN" NUMASPARK_GUEST_NODES="$NUMASPARK_GUEST_NODES" \
  NUMASPARK_GUEST_NODE_MIB="$NUMASPARK_GUEST_NODE_MIB" \
  "$NUMASPARK_PYTHON" "$NUMASPARK_REPO/tests/guest/checks.py"
echo "numaspark-guest: powering off"
echo o > /proc/sysrq-trigger
while :; do :; done  # no more programs: the root may be gone while the power goes off
