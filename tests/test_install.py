"""A user's install: the wheel (scripts/build-wheel.sh), pip and pyspark from the package
index, the system's own Python 3.11+ and Java 17, and nothing else.

The test creates a user without root and runs, in a mount namespace of its own in which apt's
numactl, lstopo*, hwloc-* and libhwloc.so* are hidden under empty files
(tests/install/hide.sh), what that user does (tests/install/user.sh): a venv made with
/usr/bin/python3 (the default python3 here is root's own build, which other users cannot
run), ``pip install 'numaspark-*.whl[spark]'``, then ``topology``, ``plan``, a local run bound
to a node and a standalone run bound to cores. Each must pass, its topology read from sysfs,
its JVMs bound by numaspark's own binder, and the binding read back from /proc as planned.
This machine has one NUMA node: node 0. Long (pip downloads pyspark the first time):
bash scripts/test-install.sh runs it alone.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import ROOT
from prereq import require

from numaspark.topology import load_machine

pytestmark = [pytest.mark.jvm, pytest.mark.long(script="bash scripts/test-install.sh")]

USER = "numaspark-user"
#: pip's cache for that user, kept between runs (pyspark is 400 MB): the index is asked
#: every time, the download is made once
PIP_CACHE = Path("/var/tmp/numaspark-install-test-pip")
INSTALL = ROOT / "tests" / "install"


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/bin/sh", USER],
            check=True,
        )
        return pwd.getpwnam(USER)


def _records(directory: Path) -> list[dict]:
    path = directory / "results.jsonl"
    assert path.exists(), f"no {path}"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _bound_as_planned(record: dict, what: str) -> list[dict]:
    assert record["status"] == "ok", f"{what}: {record['failure_reason']}"
    read = record["effective_placement"]
    assert read, f"{what}: no binding was read back"
    for jvm in read:
        assert jvm["differences"] == [], f"{what}: {jvm}"
        assert jvm["policy"] == "bind:0", f"{what}: {jvm}"
        assert jvm["cpus"] == jvm["planned_cpus"], f"{what}: {jvm}"
    prefixes = [j["prefix"] for j in record["spec"]["placement"]["jvms"] if j["runs_tasks"]]
    assert prefixes and all(p[1:3] == ["-m", "numaspark.bindexec"] for p in prefixes), prefixes
    return read


@pytest.fixture
def user_dir():
    """A directory the user can reach (pytest's own are root's alone), removed afterwards
    with the venv in it (a gigabyte: pyspark)."""
    path = Path(tempfile.mkdtemp(prefix="numaspark-install-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_wheel_alone_as_a_user_without_root_hwloc_or_numactl(user_dir, no_spark_left):
    require("root", "unshare", "setpriv", "useradd", "system-python")
    began = time.monotonic()
    built = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build-wheel.sh")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    wheel = Path(built.stdout.strip().splitlines()[-1])
    user = _user()
    work = user_dir / "user"
    (work / "home").mkdir(parents=True)
    shutil.copy(wheel, work)
    shutil.copy(INSTALL / "user.sh", work)
    PIP_CACHE.mkdir(exist_ok=True)
    subprocess.run(
        ["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(work), str(PIP_CACHE)], check=True
    )
    env = {**os.environ, "PIP_CACHE_DIR": str(PIP_CACHE)}
    proc = subprocess.run(
        ["unshare", "--mount", "sh", str(INSTALL / "hide.sh"), USER, str(work)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=3600,
    )
    steps = (work / "steps.txt").read_text() if (work / "steps.txt").exists() else ""
    assert proc.returncode == 0, f"{proc.stderr[-3000:]}\nsteps:\n{steps}"
    seconds = time.monotonic() - began

    hidden = (work / "hidden.txt").read_text()
    assert "/usr/bin/numactl" in hidden and "lstopo-no-graphics" in hidden, hidden
    assert (work / "uid.txt").read_text().strip() == str(user.pw_uid) != "0"
    # the topology: read from sysfs, this machine's own (the same fingerprint as hwloc's here)
    topology = json.loads((work / "topology.json").read_text())
    assert topology["source"] == "this machine (sysfs)"
    assert topology["fingerprint"] == load_machine().fingerprint
    assert "read from the kernel's sysfs" in (work / "topology.txt").read_text()
    # doctor says what replaced hwloc and numactl, and that the plugin came with the wheel
    doctor = {
        name: " ".join(m["text"] for m in messages)
        for name, messages in json.loads((work / "doctor.json").read_text())["checks"].items()
    }
    assert doctor["numactl"].startswith("numactl is not installed: numaspark binds"), doctor
    assert doctor["hwloc"].startswith("hwloc is not installed: this machine's topology"), doctor
    assert doctor["affinity_plugin"].endswith("(the wheel)"), doctor
    assert "pip, in this venv" in doctor["spark"], doctor
    plan = json.loads((work / "plan.json").read_text())
    (executor,) = [j for j in plan["jvms"] if j["runs_tasks"]]
    assert executor["prefix"][1:] == [
        "-m",
        "numaspark.bindexec",
        "--cpus",
        executor["cpus"],
        "--policy",
        "bind",
        "--nodes",
        "0",
        "--",
    ]
    assert executor["prefix"][0].startswith(str(work / "venv"))
    # the runs: bound, and read back from /proc as planned
    (local,) = _records(work / "out-local")
    read = _bound_as_planned(local, "local run")
    assert [j["jvm"] for j in read] == ["driver"]
    (standalone,) = _records(work / "out-standalone")
    read = _bound_as_planned(standalone, "standalone run")
    assert any(j["jvm"].startswith("executor") for j in read), read
    assert standalone["spec"]["binding"] == "core" and local["spec"]["binding"] == "node"
    print(f"\ninstall test: passed in {seconds:.0f} s; steps (epoch seconds):\n{steps}")
