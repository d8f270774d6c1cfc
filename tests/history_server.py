"""Spark's own History Server for the tests: started on 127.0.0.1 over a directory of event
logs, of the Spark at a given home, with a class path of our jars or none, and stopped on
leaving, whatever happened (tests/test_event_log_placement.py, test_ui_page.py,
test_spark35.py)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from numaspark.spark.home import free_port, spark_env, spark_home

HISTORY_SERVER = "org.apache.spark.deploy.history.HistoryServer"


@contextlib.contextmanager
def history_server(
    logs: Path, out: Path, classpath: str | None = None, home: Path | None = None
) -> Iterator[str]:
    """Its base URL once its REST API lists every application in ``logs``; its output in
    ``out``."""
    home = home or spark_home()
    port = free_port()
    env = {
        **spark_env("127.0.0.1"),
        "SPARK_HOME": str(home),
        "SPARK_HISTORY_OPTS": f"-Dspark.history.fs.logDirectory={logs.as_uri()} "
        f"-Dspark.history.ui.port={port} -Dspark.history.fs.update.interval=1s",
        "SPARK_DAEMON_CLASSPATH": classpath or "",
    }
    base = f"http://127.0.0.1:{port}"
    with out.open("w") as said:
        proc = subprocess.Popen(
            [str(home / "bin" / "spark-class"), HISTORY_SERVER],
            env=env,
            stdout=said,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 120
        while len(_listed(base)) < len(list(logs.iterdir())):
            assert proc.poll() is None, out.read_text()[-3000:]
            assert time.monotonic() < deadline, out.read_text()[-3000:]
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _listed(base: str) -> list:
    """The applications the server lists now (none while it starts)."""
    with contextlib.suppress(OSError, ValueError):
        return json.loads(urllib.request.urlopen(f"{base}/api/v1/applications", timeout=10).read())
    return []


def rest(base: str, path: str) -> object:
    """One answer of its REST API (``/api/v1/`` + ``path``), as JSON."""
    return json.loads(urllib.request.urlopen(f"{base}/api/v1/{path}", timeout=30).read())
