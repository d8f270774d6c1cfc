#!/bin/sh
# PID 1 of the NUMA guest, on this machine's own root (read-only, under a tmpfs overlay): mount
# what commands need, run the command script build.py wrote on the shared root (the kernel
# command line cannot carry spaces), report its exit status on the console, power off.
# NUMASPARK_REPO and NUMASPARK_COMMAND come from the kernel command line.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
ln -s /proc/self/fd /dev/fd  # what udev would make: bash's <(...) in spark-class needs it
mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up  # servers the commands start listen on 127.0.0.1
hostname numa-guest && echo "127.0.0.1 numa-guest" >> /etc/hosts  # the overlay's copy
echo "NUMASPARK-GUEST-BEGIN"
sh "$NUMASPARK_COMMAND" </dev/null 2>&1
echo "NUMASPARK-GUEST-EXIT $?"
echo "numaspark-guest: powering off"
echo o > /proc/sysrq-trigger
while :; do :; done  # no more programs: the root may be gone while the power goes off
