"""Real Spark for issue 58: ``numaspark plan --master spark://OTHER:7077 --target standalone
--out DIR``, against a standalone cluster of one 2-core worker at another address, writes
settings with which both a client-mode PySpark spark-submit and a cluster-mode spark-submit of
a JAR (standalone refuses Python in cluster mode) get their executors. Before, the plan gave
executors the worker's 2 cores: a cluster-mode driver took one, and the executor that asked
for two never started (Spark waits for ever).

The other address is a network namespace on this machine (tests/nscluster.py): a plain Master
and Worker started there with Spark's own classes; the submits are Spark's own spark-submit,
no numaspark in the way. Run under the JVM lock (one Spark at a time on this machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nscluster import NamespaceCluster
from test_applications import _java_app

from numaspark.spark.home import spark_env, spark_home

pytestmark = [pytest.mark.integration, pytest.mark.jvm]
APPS = Path(__file__).resolve().parent / "apps"
ROWS = 300


def _submit(argv: list[str], here: str) -> subprocess.CompletedProcess[str]:
    """Spark's own spark-submit; an application whose executors never start waits for ever,
    so a time limit fails it instead."""
    return subprocess.run(
        [str(spark_home() / "bin" / "spark-submit"), *argv],
        text=True,
        capture_output=True,
        env=spark_env(here),
        timeout=240,
    )


def test_plans_files_get_executors_in_client_and_cluster_deploy_mode(tmp_path, no_spark_left):
    plan, jar = tmp_path / "plan", _java_app(tmp_path)
    with NamespaceCluster(tmp_path / "cluster", cores=2, memory="2g") as host:
        made = subprocess.run(
            [sys.executable, "-m", "numaspark", "plan", "--master", host.master, "--bind", "node"]
            + ["--target", "standalone", "--out", str(plan)],
            text=True,
            capture_output=True,
            env={**os.environ, "COLUMNS": "300"},
            timeout=120,
        )
        assert made.returncode == 0, made.stderr
        assert "1 core(s) and 1024 MB of a worker are left to the driver" in made.stdout
        properties = [
            "--master",
            host.master,
            "--properties-file",
            str(plan / "spark-defaults.conf"),
        ]
        client = _submit(
            [
                *properties,
                "--conf",
                f"spark.driver.host={host.here}",
                "--conf",
                f"spark.pyspark.python={sys.executable}",
                str(APPS / "squares.py"),
                str(tmp_path / "client.json"),
                str(ROWS),
            ],
            host.here,
        )
        assert client.returncode == 0, client.stderr[-3000:]
        cluster = _submit(
            [
                *properties,
                "--deploy-mode",
                "cluster",
                "--conf",
                "spark.standalone.submit.waitAppCompletion=true",
                "--class",
                "Squares",
                str(jar),
                str(tmp_path / "cluster.json"),
                str(ROWS),
            ],
            host.here,
        )
        assert cluster.returncode == 0, cluster.stderr[-3000:]
        assert not host.executors()
    squares = sum(x * x for x in range(ROWS))
    for mode in ("client", "cluster"):  # the tasks ran: executors were granted
        assert json.loads((tmp_path / f"{mode}.json").read_text())["sum"] == squares, mode
