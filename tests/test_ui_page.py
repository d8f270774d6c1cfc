"""The NUMA page in Spark's UI (issue 49, item 5), with real Spark and a real headless Chromium.

Live: a short PySpark application on ``local-cluster[1,1,1024]`` with the affinity plugin
(Spark's own spark-submit, the plugin named in plain ``--conf``), its UI on a free port of
127.0.0.1: ``/numa/json`` lists the driver and executor 0 with their CPUs, nodes, share of
local pages and Python workers, the page draws them, and Spark's navigation bar links it.

History: Spark's own History Server over the recorded log with placement events
(``tests/fixtures/eventlogs/plugin-standalone``) and a log without them: with the plugin's jar
it serves the page of the first from the log, on Spark 4.x and on Spark 3.5 (its History
Server from ``bash scripts/spark35.sh``'s venv, skipped without it) with the same jar; with a
jar whose real History Server classes cannot link (as one built for another Spark line) it
still serves both applications, its REST API and its pages, and says why in one line. The
screenshots go to test-artifacts/.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT
from history_server import history_server
from test_report import ARTIFACTS, chromium

from numaspark.placement.plugin import PLUGIN_CLASS, jar_path
from numaspark.spark.home import free_port, spark_env, spark_home

pytestmark = [pytest.mark.integration, pytest.mark.jvm]
APPS = Path(__file__).resolve().parent / "apps"
EVENTLOGS = Path(__file__).resolve().parent / "fixtures" / "eventlogs"
HISTORY_SERVER = "org.apache.spark.deploy.history.HistoryServer"
WARNING = "numaspark: no NUMA page in this History Server"


def _get(url: str) -> tuple[int, str]:
    """The status and body of ``url`` (an error status too)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def _browse(url: str, screenshot: str) -> tuple[list[list[str]], list[str]]:
    """``url`` in headless Chromium, every request off 127.0.0.1 refused: the table's rows
    once its script filled them, and every script error or refused request."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []

    def local_only(route) -> None:
        if route.request.url.startswith("http://127.0.0.1:"):
            route.continue_()
        else:
            problems.append(f"request away: {route.request.url}")
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 330})
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.route("**/*", local_only)
            page.goto(url)
            # locators, not page.evaluate: Spark's Content-Security-Policy refuses eval
            body = page.locator("#executors tbody tr")
            body.first.wait_for(timeout=30000)
            rows = [tr.locator("td").all_inner_texts() for tr in body.all()]
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / screenshot), full_page=True)
        finally:
            browser.close()
    return rows, problems


def _numa_json(url: str) -> dict | None:
    """The NUMA page's JSON at ``url``; None where there is none (a History Server redirects
    a path it does not know to the application's jobs page)."""
    status, body = _get(url)
    return json.loads(body) if status == 200 and body.startswith("{") else None


def _live_page(port: int, wanted) -> dict:
    """Polls the live page's JSON until ``wanted(doc)``, for four minutes at most (a loaded
    two-core machine starts an executor slowly)."""
    url, doc = f"http://127.0.0.1:{port}/numa/json", {}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            doc = _numa_json(url) or doc
            if wanted(doc):
                return doc
        time.sleep(1)
    raise AssertionError(f"the page never showed it: {doc}")


def _python_executor(doc: dict) -> dict | None:
    """Executor 0 once a report says its four tasks were pinned and it has a Python worker."""
    return next(
        (
            r
            for r in doc.get("executors", [])
            if r["executor"] == "0" and r["python_workers"] and r["pinned_tasks"] >= 4
        ),
        None,
    )


def test_the_live_page_lists_the_executors(tmp_path, no_spark_left):
    port, done, log = free_port(), tmp_path / "done", tmp_path / "app.log"
    jar = str(jar_path())
    argv = [str(spark_home() / "bin" / "spark-submit"), "--master", "local-cluster[1,1,1024]"]
    for conf in (
        f"spark.plugins={PLUGIN_CLASS}",
        f"spark.driver.extraClassPath={jar}",
        f"spark.executor.extraClassPath={jar}",
        "spark.executor.memory=512m",
        f"spark.ui.port={port}",
        "spark.driver.host=127.0.0.1",
        f"spark.pyspark.python={sys.executable}",
        "spark.numaspark.affinity.reportIntervalMs=1000",
        "spark.numaspark.affinity.level=core",  # each task pinned: the page counts them
    ):
        argv += ["--conf", conf]
    with log.open("w") as said:
        app = subprocess.Popen(
            [*argv, str(APPS / "numa_page_app.py"), str(done), "360"],
            env=spark_env("127.0.0.1"),
            stdout=said,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        doc = _live_page(port, _python_executor)
        rows, problems = _browse(f"http://127.0.0.1:{port}/numa/", "numa-page-live.png")
        status, jobs = _get(f"http://127.0.0.1:{port}/jobs/")
    finally:
        done.touch()
        try:
            app.wait(120)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait(30)
    said = log.read_text()
    assert app.returncode == 0, said[-3000:]
    assert doc["source"] == "live" and doc["application"] == "numa-page"
    executor = _python_executor(doc)
    assert {r["executor"] for r in doc["executors"]} == {"driver", "0"}
    assert executor["cpus"] and executor["cpu_count"] >= 1 and executor["nodes"] == "0"
    assert 0 < executor["local_share"] <= 1 and executor["resident_bytes"] > 0
    assert executor["python_processes"] >= 1 and executor["report"]["pid"] > 0
    assert [r[0] for r in rows] == ["driver", "0"] and not problems, (rows, problems)
    assert rows[1][2] == "0" and rows[1][5].endswith("%"), rows
    assert status == 200 and 'href="/numa/"' in jobs and ">NUMA<" in jobs
    assert f"the NUMA page is at http://127.0.0.1:{port}/numa/" in said, said[-3000:]


@contextlib.contextmanager
def _history_server(logs: Path, jar: Path, out: Path, home: Path) -> Iterator[str]:
    """Spark's own History Server (of the Spark at ``home``) over ``logs`` on 127.0.0.1,
    ``jar`` on its class path; its address once it lists every application there."""
    with history_server(logs, out, str(jar), home) as base:
        yield base


def _two_applications(logs: Path) -> dict[str, str]:
    """The recorded log with placement events and a plain one: application id to its log."""
    (status,) = (EVENTLOGS / "plugin-standalone").glob("appstatus_*")
    placed = status.name.removeprefix("appstatus_")
    shutil.copytree(EVENTLOGS / "plugin-standalone", logs / f"eventlog_v2_{placed}")
    shutil.copyfile(EVENTLOGS / "plain", logs / "plain")
    with (logs / "plain").open() as plain:
        start = next(json.loads(x) for x in plain if '"SparkListenerApplicationStart"' in x)
    return {placed: "placement", start["App ID"]: "plain"}


def _serves_every_application(base: str, apps: dict[str, str]) -> None:
    """Each application's REST answers and its jobs page, as a History Server gives them."""
    for app in apps:
        status, body = _get(f"{base}/api/v1/applications/{app}/allexecutors")
        assert status == 200 and "driver" in {e["id"] for e in json.loads(body)}, (app, body)
        status, body = _get(f"{base}/api/v1/applications/{app}/jobs")
        assert status == 200 and json.loads(body), (app, body)
        status, body = _get(f"{base}/history/{app}/jobs/")
        assert status == 200 and "Spark Jobs" in body, (app, body[-2000:])


def _spark35_home() -> Path | None:
    """Spark 3.5 as scripts/spark35.sh installs it (its own venv's pyspark), if it is here."""
    homes = sorted((ROOT / ".venv-spark35" / "lib").glob("python*/site-packages/pyspark"))
    return homes[0] if homes and (homes[0] / "bin" / "spark-class").exists() else None


@pytest.mark.parametrize("line", ["4.x", "3.5"])
def test_the_history_server_serves_the_page_from_the_event_log(tmp_path, no_spark_left, line):
    """The same jar in Spark 4.x's History Server (Scala 2.13, jakarta servlets, Jetty 12)
    and in Spark 3.5's (Scala 2.12, javax servlets, Jetty 9), each over Spark 4's logs."""
    home = spark_home() if line == "4.x" else _spark35_home()
    if home is None:
        pytest.skip("no Spark 3.5 here: bash scripts/spark35.sh installs it")
    logs = tmp_path / "logs"
    logs.mkdir()
    apps = _two_applications(logs)
    placed, plain = sorted(apps, key=lambda a: apps[a] != "placement")
    with _history_server(logs, jar_path(), tmp_path / "hs.log", home) as base:
        _serves_every_application(base, apps)
        doc = _numa_json(f"{base}/history/{placed}/numa/json")
        page_of_plain = _numa_json(f"{base}/history/{plain}/numa/json")
        _, jobs = _get(f"{base}/history/{placed}/jobs/")
        rows, problems = _browse(f"{base}/history/{placed}/numa/", f"numa-page-history-{line}.png")
    assert doc and doc["source"] == "history"
    executors = {r["executor"]: r for r in doc["executors"]}
    assert set(executors) == {"driver", "0"}, doc
    zero = executors["0"]
    assert zero["cpus"] and zero["nodes"] == "0" and zero["chosen_nodes"] == "0", zero
    assert 0 < zero["local_share"] <= 1 and zero["python_processes"] >= 1, zero
    assert page_of_plain is None  # no placement in its log: no page, no tab
    assert f'href="/history/{placed}/numa/"' in jobs
    assert [r[0] for r in rows] == ["driver", "0"] and not problems, (rows, problems)
    assert WARNING not in (tmp_path / "hs.log").read_text()


def _jar_for_another_line(jar: Path, into: Path) -> Path:
    """The plugin's jar with the History Server listener's class and the jakarta servlet left
    out: its History Server classes fail to link, as a jar built for another Spark line's."""
    gone = {
        "io/numaspark/affinity/spark/ui/NumaHistoryListener.class",
        "io/numaspark/affinity/spark/ui/JakartaNumaServlet.class",
    }
    with zipfile.ZipFile(jar) as whole, zipfile.ZipFile(into, "w") as cut:
        for item in whole.infolist():
            if item.filename not in gone:
                cut.writestr(item, whole.read(item))
    return into


def test_a_history_server_given_a_jar_that_cannot_link_serves_every_application(
    tmp_path, no_spark_left
):
    logs = tmp_path / "logs"
    logs.mkdir()
    apps = _two_applications(logs)
    jar = _jar_for_another_line(jar_path(), tmp_path / "other-line.jar")
    with _history_server(logs, jar, tmp_path / "hs.log", spark_home()) as base:
        _serves_every_application(base, apps)
        pages = {app: _numa_json(f"{base}/history/{app}/numa/json") for app in apps}
    said = (tmp_path / "hs.log").read_text()
    assert set(pages.values()) == {None}, pages
    assert said.count(WARNING) == 1, said[-3000:]
    assert "NoClassDefFoundError" in said and "NumaHistoryListener" in said, said[-3000:]
