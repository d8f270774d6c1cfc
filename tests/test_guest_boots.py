"""tests/guest/boots.py, which runs several guest boots at once (scripts/test-guest.sh with
NUMASPARK_GUEST_PARALLEL): on a test module of its own whose "boots" are module fixtures named
``guest*`` that run a ``sleep`` for QEMU and say when they began and ended. Nothing boots; what
is real is pytest's collection, one pytest process per boot, the timing, the exit statuses and
the signals."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, alive

pytestmark = pytest.mark.slow  # pytest processes of a second or two each

BOOTS = ROOT / "tests" / "guest" / "boots.py"

CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--long", action="store_true")
"""

MODULE = """
import json, os, subprocess, sys, time
from pathlib import Path

import pytest

SEEN = Path(os.environ["BOOTS_SEEN"])


# build.py's part: start "QEMU" (here one that ignores SIGINT), kill it however this ends
BUILD = '''
import signal, subprocess, sys, time
qemu = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(300)"])
try:  # from here on: the test signals once the pid file is there
    open(sys.argv[1], "w").write(str(qemu.pid))
    time.sleep(float(sys.argv[2]))
finally:  # as build.py: killed, then waited for (else a zombie where PID 1 reaps nothing)
    qemu.kill()
    qemu.wait()
'''


def boot(name, seconds):
    # as test_numa_guest.py's _boot: build.py in a child, waited for, not killed on Ctrl-C
    began = time.time()
    with subprocess.Popen([sys.executable, "-c", BUILD, str(SEEN / f"{name}.pid"), seconds]):
        pass
    with open(SEEN / "boots.jsonl", "a") as out:
        out.write(json.dumps({"boot": name, "began": began, "ended": time.time(),
                              "pid": os.getpid()}) + "\\n")
    return name


@pytest.fixture(scope="module")
def guest_a():
    return boot("a", os.environ.get("BOOTS_SECONDS", "3"))


@pytest.fixture(scope="module")
def guest_b():
    return boot("b", os.environ.get("BOOTS_SECONDS", "3"))


def test_a_ran(guest_a):
    assert guest_a == "a"


@pytest.mark.parametrize("n", range(3))
def test_a_check(guest_a, n):
    assert guest_a == "a"


def test_b_ran(guest_b):
    assert guest_b == "b"


def test_b_check_fails(guest_b):
    assert os.environ.get("BOOTS_FAIL") != "1", "b failed on purpose"


def test_of_no_boot():
    pass


@pytest.fixture(scope="module")
def guest_stubborn():
    (SEEN / "stubborn.pid").write_text(str(os.getpid()))
    while True:  # a boot that will not end on Ctrl-C
        try:
            time.sleep(100)
        except KeyboardInterrupt:
            pass


@pytest.mark.skipif(os.environ.get("BOOTS_STUBBORN") != "1", reason="asked for alone")
def test_stubborn(guest_stubborn):
    pass
"""


def _module(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(CONFTEST)
    module = tmp_path / "tests" / "test_fake_boots.py"
    module.write_text(MODULE)
    (tmp_path / "seen").mkdir()
    return module


def _boots(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(BOOTS), "--tests", str(tmp_path / "tests/test_fake_boots.py")]
        + ["--out", str(tmp_path / "out"), *args],
        env={**os.environ, "BOOTS_SEEN": str(tmp_path / "seen"), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_boot_that_will_not_end_is_killed_after_its_grace(tmp_path):
    _module(tmp_path)
    proc = _boots(tmp_path, "--grace", "2", "--", "-k", "stubborn", BOOTS_STUBBORN="1")
    pid = tmp_path / "seen" / "stubborn.pid"
    deadline = time.monotonic() + 60
    while not pid.exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    stubborn = int(pid.read_text())
    try:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out + err
        time.sleep(0.5)
        assert not alive(stubborn)  # its pytest, killed with its group
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stubborn, signal.SIGKILL)


def _seen(tmp_path: Path) -> list[dict]:
    path = tmp_path / "seen" / "boots.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_two_boots_run_at_once_each_once_with_their_tests(tmp_path):
    _module(tmp_path)
    proc = _boots(tmp_path, "--parallel", "2", "--", "-k", "not stubborn")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    seen = {s["boot"]: s for s in _seen(tmp_path)}
    assert sorted(seen) == ["a", "b"] and len(_seen(tmp_path)) == 2  # each boot once
    a, b = seen["a"], seen["b"]
    assert a["pid"] != b["pid"]  # a pytest each
    assert a["began"] < b["ended"] and b["began"] < a["ended"]  # at the same time
    logs = {p.name: p.read_text() for p in (tmp_path / "out").glob("pytest-*.log")}
    assert "4 passed" in logs["pytest-guest_a.log"]  # the boot's every test, in its process
    assert "2 passed" in logs["pytest-guest_b.log"]
    assert "1 passed" in logs["pytest-test_of_no_boot.log"]  # a group of itself
    assert out.count(": passed in ") == 3, out


def test_one_at_a_time_the_boots_follow_each_other(tmp_path):
    _module(tmp_path)
    proc = _boots(tmp_path, "--parallel", "1", "--", "-k", "guest or boot", BOOTS_SECONDS="1")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    first, second = sorted(_seen(tmp_path), key=lambda s: s["began"])
    assert first["ended"] <= second["began"]


def test_a_failing_boot_fails_the_run_and_names_its_log(tmp_path):
    _module(tmp_path)
    proc = _boots(tmp_path, "--parallel", "2", "--", "-k", "b_", BOOTS_FAIL="1")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err
    assert "guest_b: FAILED (exit 1)" in out and "pytest-guest_b.log" in out
    assert [s["boot"] for s in _seen(tmp_path)] == ["b"]  # -k reached the collection
    assert "b failed on purpose" in (tmp_path / "out" / "pytest-guest_b.log").read_text()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_ends_every_boot_and_leaves_nothing(tmp_path, stop):
    _module(tmp_path)
    proc = _boots(tmp_path, "--parallel", "2", "--", "-k", "ran", BOOTS_SECONDS="300")
    pids = [tmp_path / "seen" / f"{b}.pid" for b in ("a", "b")]
    deadline = time.monotonic() + 60
    while not all(p.exists() for p in pids):  # both "guests" up
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    qemus = [int(p.read_text()) for p in pids]
    builds = [_parent(q) for q in qemus]
    try:
        began = time.monotonic()
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out + err
        assert time.monotonic() - began < 30
        assert "interrupted: every boot stopped" in out
        time.sleep(1)
        for qemu in qemus:  # each guest's stand-in killed by its build.py, interrupted too
            assert not alive(qemu)
    finally:  # what a failure left
        for pid in qemus + builds:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _names(processes) -> list[str]:
    import psutil  # noqa: PLC0415

    names = []
    for p in processes:
        with contextlib.suppress(psutil.Error):  # ended meanwhile
            names.append(p.name())
    return names


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_the_real_boots_are_grouped_by_their_fixture(tmp_path, monkeypatch):
    """tests/test_numa_guest.py collected for real (nothing booted): each boot's tests one
    group, named by its fixture, so no boot runs twice; the test that boots its own guest a
    group of itself; the longest boots queued first."""
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "guest"))
    import boots  # noqa: PLC0415 (beside the guest's scripts, not a package)

    rootdir, groups = boots.collect(ROOT / "tests" / "test_numa_guest.py", [], tmp_path)
    assert rootdir == ROOT
    assert set(groups) == {
        "guest",
        "guest_four",
        "guest_yarn",
        "guest_python",
        "guest_devices",
        "guest_churn",
        "guest_k8s",
        "guest_jvm_stress",
        "tests/test_numa_guest.py::test_any_command_on_three_nodes_of_two_cpus",
    }
    assert len(groups["guest"]) >= 10 and len(groups["guest_k8s"]) == 3
    assert all("test_executor_pods_placed_both_ways" in n for n in groups["guest_k8s"])
    queue = boots.Boots(rootdir, groups, 2, tmp_path).queue
    assert queue[:2] == ["guest_k8s", "guest_churn"]
    _, chosen = boots.collect(
        ROOT / "tests" / "test_numa_guest.py", ["-k", "come_and_go"], tmp_path
    )
    assert list(chosen) == ["guest_churn"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--parallel", "0"], "boots: --parallel 0: give 1 or more boots at once"),
        (["--tests", "/nonexistent/test_x.py"], "boots: collecting /nonexistent/test_x.py failed"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, words):
    proc = subprocess.run(
        [sys.executable, str(BOOTS), "--out", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(words) and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def _test_guest(lock: Path, *args: str) -> subprocess.Popen:
    """scripts/test-guest.sh with two boots at once, its JVM lock at ``lock``; setup.sh leaves
    the plugin's jar as it is."""
    return subprocess.Popen(
        ["bash", str(ROOT / "scripts/test-guest.sh"), *args],
        env={
            **os.environ,
            "NUMASPARK_GUEST_PARALLEL": "2",
            "NUMASPARK_TEST_LOCK": str(lock),
            "NUMASPARK_SETUP_JAR": "0",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_the_script_waits_for_the_jvm_lock_then_runs_the_boots(tmp_path):
    """test-guest.sh's branch for boots at once: it takes the JVM lock itself (another run
    holds it here: it waits), hands boots.py the selection (none: pytest's 5, passed on)."""
    import fcntl  # noqa: PLC0415 (this test's alone)

    import psutil  # noqa: PLC0415

    lock = tmp_path / "jvm.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = _test_guest(lock, "-k", "no_test_is_named_so")
        script = psutil.Process(proc.pid)
        deadline = time.monotonic() + 240  # setup.sh first: seconds, more on a loaded machine
        while "flock" not in _names(script.children()):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        time.sleep(1)
        assert proc.poll() is None  # waiting
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 5, out
    assert f"waiting for {lock}: another run on this machine starts JVMs" in out
    assert "boots: no test selected" in out


@pytest.mark.long(script="bash scripts/test.sh --long")
def test_a_terminated_script_ends_its_guests(tmp_path):
    """SIGTERM to test-guest.sh while boots.py runs a real guest (the three-node one of
    test_numa_guest.py, about 20 s): the script's trap hands it to boots.py, which interrupts
    the boot's whole process group; no QEMU, pytest or build.py is left."""
    import psutil  # noqa: PLC0415 (this test's alone)
    from prereq import require  # noqa: PLC0415

    require("qemu-system-x86_64", "apt-get")
    proc = _test_guest(tmp_path / "jvm.lock", "-k", "three_nodes")
    script = psutil.Process(proc.pid)
    deadline = time.monotonic() + 300
    qemu = []
    while not qemu:
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        qemu = [p for p in script.children(recursive=True) if p.name().startswith("qemu")]
        time.sleep(0.5)
    tree = script.children(recursive=True)
    try:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=180)
        assert proc.returncode != 0, out
        assert "interrupted: every boot stopped" in out
        gone, alive = psutil.wait_procs(tree, timeout=30)
        assert not alive, [p.cmdline()[:3] for p in alive]
    finally:  # what a failure left
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        for p in tree:
            with contextlib.suppress(psutil.Error):
                p.kill()
