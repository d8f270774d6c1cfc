"""A cluster at another address whose executors cannot reach the driver, and numaspark ended
by a signal while it runs there.

The cluster is a plain Master and Worker started with Spark's own classes in a network
namespace of its own (tests/nscluster.py): namespaces on one machine, which prove
addresses and routes, not speed. numaspark runs from the root namespace with its driver told
to listen on 127.0.0.1 (`--driver-host 127.0.0.1`, an address the cluster cannot reach: by
itself numaspark would choose the route's, tests/test_other_hosts.py), which inside the
namespace is the namespace's own loopback, so every executor dies with "Failed to connect to
/127.0.0.1:PORT": the unreachable case.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from netns import drivers_here, gone_within
from nscluster import NamespaceCluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.jvm,
    pytest.mark.long(script="bash scripts/test-hosts.sh"),
]

# docs/clusters.md's "--master" section states these (the driver ends within 10 s of numaspark's end)
DRIVER_ENDS_S = 10.0
EXECUTORS_END_S = 20.0
# and numaspark ends within this of the first executor's death over there
UNREACHABLE_ENDS_S = 20.0


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    with NamespaceCluster(tmp_path / "cluster") as made:
        yield made


def _numaspark(cluster: NamespaceCluster, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "numaspark",
            "run",
            "wordcount",
            "--size",
            "tiny",
            "--master",
            cluster.master,
            "--master-ui",
            cluster.ui,
            "--bind",
            "none",
            "--driver-host",
            "127.0.0.1",
            "--out",
            str(out),
            *extra,
        ],
        stdout=(out.parent / "stdout").open("w"),
        stderr=(out.parent / "stderr").open("w"),
        env={**os.environ, "COLUMNS": "200"},
    )


def _first_death(cluster: NamespaceCluster, cli: subprocess.Popen, timeout_s: float) -> float:
    """When the first executor the test saw running over there ended (monotonic)."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and cli.poll() is None:
        running = set(cluster.executors())
        if seen - running:
            return time.monotonic()
        seen |= running
        time.sleep(0.1)
    raise AssertionError(f"no executor was seen to start and end over there (seen: {seen})")


def test_executors_that_cannot_reach_the_driver_end_the_run_in_one_line(
    tmp_path, no_spark_left, cluster
):
    out = tmp_path / "out"
    cli = _numaspark(cluster, out)
    died = _first_death(cluster, cli, timeout_s=240)
    cli.wait(timeout=120)
    after = time.monotonic() - died
    stderr = (tmp_path / "stderr").read_text()
    print(f"numaspark ended {after:.1f} s after the first executor's death over there")
    print(stderr[-1500:])
    assert cli.returncode != 0, stderr[-2000:]
    assert after < UNREACHABLE_ENDS_S, f"numaspark ended {after:.1f} s after the first death"
    failed = [line for line in stderr.splitlines() if "could not reach the driver" in line]
    assert len(failed) >= 1, stderr[-2000:]
    assert (
        f"executors on {cluster.address} could not reach the driver at 127.0.0.1:" in failed[0]
        and '("Connection refused"): give --driver-host' in failed[0]
    ), failed[0]
    assert "cannot hold" not in stderr
    assert gone_within(drivers_here, 15) is not None, drivers_here()
    assert gone_within(cluster.executors, EXECUTORS_END_S) is not None, cluster.executors()
    # the application was ended on the cluster: the worker launches no more executors
    launched = list((cluster.dir / "work").glob("app-*/*"))
    time.sleep(8)
    assert list((cluster.dir / "work").glob("app-*/*")) == launched
    assert not cluster.executors()


@pytest.mark.parametrize(
    "how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["SIGTERM", "Ctrl-C", "SIGKILL"]
)
def test_numaspark_ended_by_a_signal_mid_run_leaves_nothing_here_or_there(
    tmp_path, no_spark_left, cluster, how
):
    """While the cluster launches executors for it, numaspark gets ``how``: its driver ends
    within the time docs/clusters.md states, and with it the application and its executors over
    there (SIGKILL: through the driver's parent-death signal, nothing of numaspark runs)."""
    out = tmp_path / "out"
    cli = _numaspark(cluster, out)
    deadline = time.monotonic() + 240
    while not cluster.executors() and cli.poll() is None:  # mid-run: executors launched
        assert time.monotonic() < deadline, "no executor was launched over there"
        time.sleep(0.1)
    assert cli.poll() is None, (tmp_path / "stderr").read_text()[-2000:]
    drivers = drivers_here()
    assert drivers, "no driver runs here"
    tree = [p.pid for p in psutil.Process(cli.pid).children(recursive=True)]
    os.kill(cli.pid, how)
    signalled = time.monotonic()
    cli.wait(timeout=60)
    ended_s = time.monotonic() - signalled
    driver_s = gone_within(
        lambda: [
            p
            for p in tree
            if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
        ],
        DRIVER_ENDS_S + 10,
    )
    executors_s = gone_within(cluster.executors, EXECUTORS_END_S + 10)
    driver_s, executors_s = (
        None if t is None else round(t - signalled, 2) for t in (driver_s, executors_s)
    )
    print(
        f"{how.name}: numaspark ended {ended_s:.2f} s, the driver and every process it started "
        f"{driver_s} s, the executors over there {executors_s} s after the signal"
    )
    # waited for 10 s longer than stated, to print how late they were; a late one fails
    assert driver_s is not None and driver_s <= DRIVER_ENDS_S, (driver_s, drivers_here())
    assert executors_s is not None and executors_s <= EXECUTORS_END_S, cluster.executors()
    assert not drivers_here()
    time.sleep(5)  # the application is gone from the cluster: no executor comes back
    assert not cluster.executors()
