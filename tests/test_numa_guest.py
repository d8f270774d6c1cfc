"""Binding proved on a real two-node kernel.

This machine has one NUMA node, so the guest of tests/guest/ (Debian, numaspark installed with
pip) is booted under QEMU's software emulation with two nodes: CPU 0 and 2 GiB on node 0, CPU 1
and 2 GiB on node 1. Inside, numaspark's own commands see the nodes, plan one executor per node
and launch bound JVMs; what they read from the guest's /proc (effective CPUs, numa_maps policy,
pages per node) decides each check, printed on the serial console as ``NUMASPARK-CHECK PASS|FAIL
name: details``, which these tests read.

Slow (the base image is built once, about 3 minutes; each boot about 2), and it needs root and
QEMU: it runs from ``bash scripts/test-guest.sh`` (which sets NUMASPARK_GUEST=1), not in the
default test command, which would pass 20 minutes with it.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import ROOT
from guest import build

CHECKS = ("topology-two-nodes", "plan-one-executor-per-node", "launch-bound-per-node",
          "launch-interleave-split", "launch-remote-memory")  # fmt: skip

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMASPARK_GUEST") != "1",
    reason="the two-node guest runs from 'sudo bash scripts/test-guest.sh'",
)


@pytest.fixture(scope="module")
def guest(tmp_path_factory) -> dict:
    artifacts = ROOT / "test-artifacts" / "numa-guest"
    artifacts.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    base = build.base_image()
    image_s = time.monotonic() - began
    drive = build.numaspark_drive(tmp_path_factory.mktemp("guest"))
    drive_s = time.monotonic() - began - image_s
    code, console = build.boot(base, drive, artifacts / "console.log")
    timing = {"base_image_s": round(image_s, 1), "numaspark_drive_s": round(drive_s, 1),
              "boot_and_checks_s": round(time.monotonic() - began - image_s - drive_s, 1),
              "base_image": (base / "ready").read_text().strip()}  # fmt: skip
    (artifacts / "timing.json").write_text(json.dumps(timing, indent=2) + "\n")
    print(f"guest timing: {timing}")
    return {"code": code, "lines": console.splitlines()}


def test_guest_ran_the_checks_and_powered_off(guest):
    assert any(line.startswith("NUMASPARK-CHECKS END") for line in guest["lines"]), (
        "the guest never finished its checks: see test-artifacts/numa-guest/console.log"
    )
    assert guest["code"] == 0, f"qemu exited {guest['code']}"


@pytest.mark.parametrize("name", CHECKS)
def test_check_passed_in_the_guest(guest, name):
    reported = [line for line in guest["lines"]
                if line.startswith("NUMASPARK-CHECK ") and f" {name}:" in line]  # fmt: skip
    assert reported, f"{name} was never reported: see test-artifacts/numa-guest/console.log"
    assert reported[-1].startswith(f"NUMASPARK-CHECK PASS {name}:"), reported[-1]
