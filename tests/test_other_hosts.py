"""Real Spark for issue 39's first part: a user's application keeps its settings and UI,
and a cluster at another address gets a driver its executors can reach.

The other address is a network namespace on this machine: a plain standalone Master and
Worker started there with Spark's own classes, as a user starts them on their hosts
(tests/nscluster.py), and numaspark run from the root namespace. Namespaces share this
machine's CPUs, memory and files: they prove the addresses and routes, not speed. Run under the JVM
lock (one Spark at a time on this machine).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from nscluster import NamespaceCluster

pytestmark = [pytest.mark.integration, pytest.mark.jvm]
APPS = Path(__file__).resolve().parent / "apps"
UI_LINE = re.compile(r"the application's Spark UI: (http://\S+)")


@pytest.fixture(autouse=True)
def _own_state(tmp_path, monkeypatch):
    """What a run learns of a cluster (numaspark's state directory) is the test's own."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))


def _numaspark(*args: str) -> subprocess.Popen:
    # wide: rich wraps what it says at the terminal's width, and a pipe has none
    return subprocess.Popen(
        [sys.executable, "-m", "numaspark", *args],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "400"},
    )


def test_a_users_application_keeps_its_conf_and_its_ui(tmp_path, no_spark_left):
    """A spark-submit line's --conf reaches the record as a key; its UI is on, its URL said
    when it starts, and the URL answers while the application runs."""
    release, out = tmp_path / "release", tmp_path / "out"
    cli = _numaspark(
        "run",
        "--out",
        str(out),
        "--no-collect",
        "--",
        "spark-submit",
        "--conf",
        "spark.sql.shuffle.partitions=7",
        str(APPS / "holds.py"),
        str(release),
    )
    said, url = [], None
    try:
        for line in cli.stderr:  # what numaspark says, as it says it
            said.append(line)
            found = UI_LINE.search(line)
            if found:
                url = found.group(1)
                break
        if url is not None:
            answered = _page_once_ready(f"{url}/jobs/")
    finally:
        release.touch()
        _, rest = cli.communicate(timeout=180)
    logs = [p.read_text(errors="replace")[-3000:] for p in out.glob("runs/*/spark-submit.log")]
    assert url is not None, "".join(said)[-2000:] + " | " + "".join(logs)
    assert answered[0] == 200 and b"holds" in answered[1]
    assert cli.returncode == 0, ("".join(said) + rest)[-3000:]
    assert url.startswith("http://127.0.0.1:")  # local mode: loopback, never 0.0.0.0
    record = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
    assert record["status"] == "ok"
    assert record["app"]["spark_conf"]["spark.sql.shuffle.partitions"] == "7"
    assert record["app"]["ui_url"] == url


def _page_once_ready(url: str, wait_s: float = 60.0) -> tuple[int, bytes]:
    """The page, once Spark serves more than its "Spark is starting up" placeholder. Spark
    binds its UI's server before it attaches the tabs, so for a moment /jobs/ is a 404: that
    is waited out too (CI met it once), and the last answer is returned at the deadline."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as page:
                answered = page.status, page.read()
        except urllib.error.HTTPError as refused:
            answered = refused.code, refused.read()
        if answered[0] == 200 and b"starting up" not in answered[1]:
            return answered
        if time.monotonic() > deadline:
            return answered
        time.sleep(0.5)


def test_a_standalone_cluster_at_another_address_gets_executors(tmp_path, no_spark_left):
    """The case of the issue: the Master and Worker at 10.214.N.2; numaspark's driver listens
    on this machine's end of the route to it, the executors reach it, and the run is ok with
    the plugin's placement reported from the executors over there."""
    out = tmp_path / "out"
    with NamespaceCluster(tmp_path / "cluster", cores=2, memory="2g") as host:
        cli = _numaspark(
            "run",
            "wordcount",
            "--size",
            "tiny",
            "--master",
            host.master,
            "--master-ui",
            host.ui,
            "--bind",
            "none",
            "--out",
            str(out),
            "--data",
            str(tmp_path / "data"),
        )
        _, said = cli.communicate(timeout=600)
        assert cli.returncode == 0, said[-3000:]
    assert f"the driver listens on {host.here}: the route to {host.address} leaves from it" in said
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "ok" for r in records)
    effective = records[-1]["effective_placement"]
    assert effective and all(e["source"] == "plugin" for e in effective), effective
    properties = records[-1]["app"]["spark_conf"]
    assert properties["spark.driver.host"] == host.here
