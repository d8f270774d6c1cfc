"""Shared fixtures. The real servers' hwloc XML lives in ../shared/topologies (not copied here)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from numaspark.experiment.request import RunRequest

# A shell without job control starts a background job (`pytest &`) with SIGINT ignored, and
# the children inherit that: Python then installs no KeyboardInterrupt, and the Ctrl-C the
# interruption tests send would be lost. A handled signal is reset to its default in a child,
# so handling it here gives every numaspark the tests start the SIGINT a terminal gives.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# Every JVM a test starts lives seconds: the JIT's second tier (C2) spends most of its CPU
# compiling code that never runs long enough to repay it, on two cores shared by a driver, a
# master, a worker and an executor. With C1 alone, three standalone scenarios took 19% less
# time here (151 s -> 123 s, their CPU 264 s -> 182 s; docs/tests.md). The java
# launcher of JDK 9 and later reads JDK_JAVA_OPTIONS (and says so on stderr); a value the
# developer set is kept. What numaspark measures for users (bench/, scripts/main.sh) runs the
# JVM's default tiers.
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")


def pytest_addoption(parser):
    parser.addoption(
        "--long",
        action="store_true",
        help="also run the tests marked long (scenarios of minutes each)",
    )


def pytest_collection_modifyitems(config, items):
    """Tests marked ``long`` (a scenario of minutes, with a script of its own) run with
    --long: bash scripts/test.sh --long, scripts/test-hosts.sh and scripts/test-guest.sh
    pass it. Everything else runs in CI, which on two cores must stay under 25 minutes."""
    if config.getoption("--long"):
        return
    for item in items:
        mark = item.get_closest_marker("long")
        if mark is not None:
            why = mark.kwargs.get("script", "bash scripts/test.sh --long")
            item.add_marker(pytest.mark.skip(reason=f"long: {why} runs it"))


# Two test runs on one machine (two checkouts, a developer's run beside the lanes) would break
# each other's "no Spark JVM left" checks. With NUMASPARK_TEST_LOCK set (scripts/test.sh sets it
# to /tmp/numaspark-jvm.lock), the tests that start JVMs hold that file locked, one test module
# at a time (a module's fixtures may keep a cluster up between its tests). `flock
# /tmp/numaspark-jvm.lock COMMAND` takes the same lock for anything else that starts JVMs.
_jvm_lock: list = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("NUMASPARK_TEST_LOCK")
    if not path or item.get_closest_marker("jvm") is None:
        yield
        return
    if not _jvm_lock:
        import fcntl

        handle = open(path, "a")  # noqa: SIM115 (held across tests, closed below)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.stderr.write(f"\nwaiting for {path}: another run on this machine starts JVMs\n")
            fcntl.flock(handle, fcntl.LOCK_EX)
        _jvm_lock.append(handle)
    yield
    if nextitem is None or nextitem.module is not item.module:
        _jvm_lock.pop().close()  # closing the file releases the lock


@pytest.fixture(autouse=True)
def _no_java_version_in_the_fast_lane(monkeypatch):
    """The fast lane starts no JVM, not even ``java -version`` for a run's environment."""
    from numaspark.supervise.processes import NO_JVM

    if os.environ.get(NO_JVM):
        monkeypatch.setattr("numaspark.experiment.machine.java_version", lambda: None)


@pytest.fixture
def plugin_jar(tmp_path, monkeypatch) -> Path:
    """The plugin's jar, for a no-JVM test whose run only names it in its conf: the one
    built, or, where none is (a fresh clone's fast lane builds nothing with Maven), an empty
    stand-in at NUMASPARK_AFFINITY_JAR. Its contents are never read without a JVM."""
    from numaspark.placement.plugin import JAR_ENV, JAR_NAME, jar_path

    if jar_path().exists():
        return jar_path()
    stand_in = tmp_path / "stand-in" / JAR_NAME
    stand_in.parent.mkdir()
    stand_in.touch()
    monkeypatch.setenv(JAR_ENV, str(stand_in))
    return stand_in


@pytest.fixture(autouse=True)
def _applications_forgotten():
    """Each test names its own applications: none registered by an earlier test is known."""
    from numaspark.workloads.catalog import forget_applications

    yield
    forget_applications()


ROOT = Path(__file__).resolve().parents[1]
TOPOLOGIES = Path(os.environ.get("NUMASPARK_TOPOLOGIES", ROOT.parent / "shared" / "topologies"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: Spark's own History Server test data: event logs and the REST answers Spark expects
SPARK_EVENTS = Path(
    os.environ.get("NUMASPARK_SPARK_EVENTS", ROOT.parent / "shared" / "spark-events")
)


def spark_expectation(name: str) -> Path:
    """One of Spark's own expected REST answers (shared/spark-events/expectations); a missing
    one fails the test, as a missing topology does."""
    path = SPARK_EVENTS / "expectations" / name
    if not path.exists():
        pytest.fail(
            f"{path} missing: clone shared/ beside this repository, or set "
            "NUMASPARK_SPARK_EVENTS to a copy of shared/spark-events"
        )
    return path


def topology_file(name: str) -> Path:
    """A real server's hwloc XML from shared/topologies: the multi-node tests' machines. A
    missing one fails the test (it never skips: a suite without them would pass having
    tested no multi-node logic at all)."""
    path = TOPOLOGIES / name
    if not path.exists():
        pytest.fail(
            f"{path} missing: clone shared/ beside this repository, or set "
            "NUMASPARK_TOPOLOGIES to a copy of shared/topologies"
        )
    return path


def run_cli(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the real command line in a subprocess (real exit codes, real stderr). In the fast
    lane the process is forked from one that imported numaspark once (tests/badinputs.py):
    most of a fresh interpreter's second is imports, and the lane runs a hundred commands."""
    env = {**os.environ, "COLUMNS": "200"}
    if os.environ.get("NUMASPARK_NO_JVM"):
        from badinputs import run_forked

        code, stdout, stderr = run_forked(list(args), Path.cwd(), env, timeout_s=None)
        proc = subprocess.CompletedProcess(["numaspark", *args], code, stdout, stderr)
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "numaspark", *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    if check and proc.returncode != 0:
        raise AssertionError(f"numaspark {' '.join(args)} failed:\n{proc.stderr}")
    return proc


def invoke_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the command line in this process (typer's CliRunner), for a test of what a command
    computes or prints. A test of the process itself (an exit code or the one line a mistake
    gives, a signal, what is left running) uses `run_cli`. An exception the command raises is
    raised here, with its traceback, not turned into an exit code."""
    from click.testing import CliRunner  # what typer's wraps, on the tree built once

    from numaspark.cli.commands import command

    result = CliRunner().invoke(command(), list(args), env={"COLUMNS": "200"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(
        ["numaspark", *args], result.exit_code, result.stdout, result.stderr
    )


class _Stopped(Exception):
    """Raised where ``numaspark run`` would start running: it carries the request it built."""

    def __init__(self, request: RunRequest) -> None:
        super().__init__("stopped before running")
        self.request = request


def run_request(command: str, monkeypatch) -> RunRequest:
    """The `RunRequest` the real ``numaspark run`` builds from ``command`` (a printed
    ``numaspark run ...`` line), stopped before it runs anything."""
    from click.testing import CliRunner  # what typer's wraps, on the tree built once

    from numaspark.cli import commands

    argv = shlex.split(command)
    assert argv[:2] == ["numaspark", "run"], command

    def stop(request, *args, **kwargs):
        raise _Stopped(request)

    monkeypatch.setattr("numaspark.experiment.runner.run_workload", stop)
    result = CliRunner().invoke(commands.command(), argv[1:])
    assert isinstance(result.exception, _Stopped), (command, result.output, result.exception)
    return result.exception.request


SPARK_CLASSES = (
    "org.apache.spark.deploy.SparkSubmit",
    "org.apache.spark.deploy.master.Master",
    "org.apache.spark.deploy.worker.Worker",
    "org.apache.spark.executor.CoarseGrainedExecutorBackend",  # YarnCoarseGrained... too
    "org.apache.spark.deploy.yarn.ExecutorLauncher",  # a YARN application's master
    "org.apache.spark.deploy.history.HistoryServer",
)


def alive(pid: int) -> bool:
    """Running, not a zombie: a process whose parent ended before reaping it stays in /proc
    until PID 1 reaps it, and some containers' PID 1 (CI's) never does."""
    import psutil  # noqa: PLC0415 (imported where used, as spark_jvms does)

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def spark_jvms() -> list[str]:
    """Command lines of the Spark JVMs running on this machine now."""
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if any(name in cmdline for name in SPARK_CLASSES):
            found.append(f"{proc.pid}: {cmdline[-160:]}")
    return found


@pytest.fixture
def no_spark_left():
    """The test must leave no Spark JVM behind (and must start with none)."""
    before = spark_jvms()
    assert not before, f"Spark JVMs already running before the test: {before}"
    yield
    import time

    deadline = time.monotonic() + 15
    while spark_jvms() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not spark_jvms(), f"Spark JVMs left behind: {spark_jvms()}"


@pytest.fixture(scope="session")
def local_core_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], dict]:
    """One local-mode run bound to cores, read by two tests, one Spark start for both: its
    tasks pinned to a core each by the plugin (test_affinity.py) and its driver bound by
    numaspark's own binder, as where numactl is not installed, with memory preferred on node 0
    (test_spark_runs.py). Its JVM has ended before either reads it: each test's own
    ``no_spark_left`` still holds. Eight tasks on two slots: some run at once."""
    work = tmp_path_factory.mktemp("local-core-run")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NUMASPARK_BINDER", "numaspark")
        proc = run_cli(
            "run",
            "wordcount",
            "--mode",
            "local",
            "--bind",
            "core",
            "--mem-policy",
            "preferred",
            "--repeat",
            "1",
            "--conf",
            "spark.default.parallelism=8",
            "--out",
            str(work / "out"),
            "--data",
            str(work / "data"),
        )
    assert proc.returncode == 0, proc.stderr
    (run,) = [json.loads(line) for line in (work / "out" / "results.jsonl").open()]
    return proc, run
