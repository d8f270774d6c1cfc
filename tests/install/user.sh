#!/bin/sh
# Runs as a user without root, with no apt hwloc or numactl (tests/install/hide.sh): what a
# user of the wheel does. Argument: WORK, the user's directory, holding the wheel.
set -eu
work=$1
cd "$work"
step() { printf '%s %s\n' "$(date +%s)" "$*" >> "$work/steps.txt"; }
step start
id -u > uid.txt
/usr/bin/python3 -m venv venv
step venv
wheel=$(ls "$work"/numaspark-*.whl)
venv/bin/python -m pip install -q "$wheel[spark]"
step installed
ns=venv/bin/numaspark
$ns version > version.txt
$ns doctor --json > doctor.json
$ns topology > topology.txt
$ns topology --json > topology.json
step topology
$ns plan --executors 1 --bind node --json > plan.json
step plan
$ns run wordcount --size tiny --mode local --bind node --out out-local > run-local.txt 2>&1
step local
$ns run wordcount --size tiny --mode standalone --bind core --out out-standalone > run-standalone.txt 2>&1
step standalone
