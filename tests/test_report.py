"""Decide and show with real Spark on this machine: the live tuner, classify, advise on a run
with a deliberately small heap, and the HTML report opened in a real headless Chromium (no
script errors, every plot drawn; the screenshot is kept in test-artifacts/)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_spark_left")]
ARTIFACTS = Path(os.environ.get("NUMASPARK_TEST_ARTIFACTS", ROOT / "test-artifacts"))


def chromium() -> str:
    """The browser the test drives; scripts/test.sh installs chromium-headless-shell."""
    for name in (os.environ.get("NUMASPARK_CHROMIUM"), "chromium-headless-shell", "chromium",
                 "chromium-browser", "google-chrome"):  # fmt: skip
        found = name and shutil.which(name)
        if found:
            return found
    pytest.fail("no Chromium: run scripts/test.sh (it installs chromium-headless-shell), or "
                "set NUMASPARK_CHROMIUM to a Chromium binary")  # fmt: skip


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """Two real trials of the live tuner: each a normal run stored in the results."""
    out = tmp_path_factory.mktemp("tuned")
    data = tmp_path_factory.mktemp("data")
    proc = run_cli("tune", "wordcount", "--budget", "2", "--repeat", "2", "--warmup", "0",
                   "--seed", "1", "--out", str(out), "--data", str(data), "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


def test_live_tuner_stores_every_trial_as_a_run(tuned):
    out, found = tuned
    assert len(found["trials"]) == 2
    assert all(t["source"] == "prior" for t in found["trials"])  # the studies' picks come first
    runs = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(runs) == 4 and all(r["status"] == "ok" for r in runs)
    configs = {r["spec"]["config"] for r in runs}
    assert len(configs) == 2
    for trial in found["trials"]:  # the value is the median of the trial's stored runs
        walls = sorted(r["wall_time_s"] for r in runs
                       if r["spec"]["binding"] == trial["params"]["binding"]
                       and r["spec"]["mode"] == trial["params"]["mode"]
                       and r["spec"]["cores_per_executor"] == trial["params"]["cores_per_executor"])  # fmt: skip
        assert trial["value"] == pytest.approx(sum(walls) / 2)
    table = out / "table.csv"
    assert run_cli("results", str(out), "--table", str(table)).returncode == 0
    header = table.read_text().splitlines()[0].split(",")
    assert header[-1] == "wall_s" and len(table.read_text().splitlines()) == 3
    # the recorded table replays: the same two configurations, nothing else can run
    proc = run_cli("tune", "--replay", str(table), "--budget", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["trials"]) == 2


def test_classify_labels_the_best_and_says_what_it_could_not_assess(tuned):
    out, _ = tuned
    proc = run_cli("classify", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["configs"][0]["labels"][0]["name"] == "best"
    assert found["configs"][0]["metrics"]["cpu_usage"] > 0  # from the OS collector
    if shutil.which("perf") is None or "cycles" not in run_cli("doctor").stdout:
        # a KVM guest without a PMU: the counter-based labels are not assigned
        assert "high-cpi-cs" in found["not_assessed"]


def test_report_renders_in_headless_chromium(tuned, tmp_path):
    from playwright.sync_api import sync_playwright

    out, _ = tuned
    target = tmp_path / "report.html"
    proc = run_cli("report", str(out), "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    text = target.read_text()
    assert "https://" not in text.split("<body>")[1].split("<script>")[0]  # nothing to fetch
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.route("**/*", lambda route: route.abort() if not route.request.url.startswith(
                "file:") else route.continue_())  # fmt: skip
            page.goto(target.as_uri())
            plots = page.evaluate("document.querySelectorAll('.plotly-graph-div').length")
            page.wait_for_function(
                "Array.from(document.querySelectorAll('.plotly-graph-div'))"
                ".every(d => d.querySelector('.main-svg'))", timeout=30000)  # fmt: skip
            assert page.locator("svg.topology").count() >= 1
            sections = page.evaluate("Array.from(document.querySelectorAll('section'))"
                                     ".map(s => s.id)")  # fmt: skip
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    # two layouts on one machine: bindings or speedup, and the time series, at least
    assert plots >= 2
    assert {"environment", "topology", "configurations", "timeseries", "advice", "runs"} <= set(
        sections
    )


def test_advise_reports_gc_on_a_deliberately_small_heap(tmp_path):
    """The done criterion: a small executor heap gives a GC finding of moderate or worse that
    recommends a larger heap (or more executors), with the command."""
    out = tmp_path / "out"
    proc = run_cli("run", "kmeans", "--size", "small", "--mode", "local",
                   "--memory-per-executor", "160m", "--repeat", "1", "--out", str(out),
                   "--data", str(tmp_path / "data"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("advise", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    (advice,) = json.loads(proc.stdout)["advice"]
    gc = next(f for f in advice["findings"] if f["rule"] == "gc")
    assert gc["severity"] in ("moderate", "severe", "critical"), gc
    assert "heap" in gc["recommendation"] and "executors" in gc["recommendation"]
    assert (
        gc["command"].startswith("numaspark run kmeans")
        and "--memory-per-executor" in gc["command"]
    )
    printed = run_cli("advise", str(out))
    assert "gc:" in printed.stdout and "$ numaspark run kmeans" in printed.stdout
