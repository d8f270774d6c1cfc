"""Decide and show with real Spark on this machine: the live tuner, classify, advise on a run
with a deliberately small heap, and the HTML report opened in a real headless Chromium (no
script errors, every plot drawn; the screenshot is kept in test-artifacts/)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, invoke_cli, run_cli, topology_file

from numaspark import records

ARTIFACTS = Path(os.environ.get("NUMASPARK_TEST_ARTIFACTS", ROOT / "test-artifacts"))


def chromium() -> str:
    """The browser the test drives; scripts/test.sh installs chromium-headless-shell."""
    for name in (
        os.environ.get("NUMASPARK_CHROMIUM"),
        "chromium-headless-shell",
        "chromium",
        "chromium-browser",
        "google-chrome",
    ):
        found = name and shutil.which(name)
        if found:
            return found
    pytest.fail(
        "no Chromium: run scripts/test.sh (it installs chromium-headless-shell), or "
        "set NUMASPARK_CHROMIUM to a Chromium binary"
    )


def open_in_chromium(report: Path, screenshot: str) -> tuple[int, list[str], list[str]]:
    """Load ``report`` with the network cut off: plots drawn, section ids, every script error."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.route(
                "**/*",
                lambda route: (
                    route.abort()
                    if not route.request.url.startswith("file:")
                    else route.continue_()
                ),
            )
            page.goto(report.as_uri())
            plots = page.evaluate("document.querySelectorAll('.plotly-graph-div').length")
            page.wait_for_function(
                "Array.from(document.querySelectorAll('.plotly-graph-div'))"
                ".every(d => d.querySelector('.main-svg'))",
                timeout=30000,
            )
            assert page.locator("svg.topology").count() >= 1
            sections = page.evaluate(
                "Array.from(document.querySelectorAll('section')).map(s => s.id)"
            )
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / screenshot), full_page=True)
        finally:
            browser.close()
    return plots, sections, errors


def _synthetic_results(directory: Path) -> None:
    """Stored runs as a sweep on a recorded 2-node server would leave them (no Spark: this
    machine has one node): a layout grid under two bindings, a local scaling series, and
    co-scheduling rounds; each run placed by the real planner on that server's XML."""
    import random

    from numaspark.experiment.result import RunResult
    from numaspark.experiment.store import TOPOLOGY_FILE, ResultStore
    from numaspark.placement import Binding, Layout, Mode, placement_to_dict, plan
    from numaspark.topology import load

    topo = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    (directory / TOPOLOGY_FILE).write_text(json.dumps(records.dump(topo)))
    store, rng = ResultStore(directory), random.Random(1)
    shapes = [
        ("standalone", e, c, b)
        for e in (1, 2, 4)
        for c in (1, 2, 3)
        for b in (Binding.NONE, Binding.CORE)
    ]
    shapes += [("local", 1, p, Binding.CORE) for p in (1, 2, 4, 8)]
    for mode, executors, cores, binding in shapes:
        layout = (
            Layout(cores_per_executor=cores, mode=Mode.LOCAL)
            if mode == "local"
            else Layout(executors=executors, cores_per_executor=cores)
        )
        placement = placement_to_dict(plan(topo, layout, binding))
        slots = executors * cores
        label = f"{mode} {executors}x{cores} bind={binding.value}"
        for repetition in range(3):
            wall = (
                40 / slots**0.8 * (1.1 if binding is Binding.NONE else 1) * rng.uniform(0.97, 1.03)
            )
            store.append(
                RunResult(
                    spec={
                        "workload": "wordcount",
                        "size": "small",
                        "mode": mode,
                        "label": label,
                        "config": label,
                        "binding": binding.value,
                        "executors": executors,
                        "cores_per_executor": cores,
                        "warmup": False,
                        "iteration": repetition,
                        "placement": placement,
                        "spark_conf": {},
                    },
                    environment={
                        "host": "server",
                        "numa_balancing": "0",
                        "topology_fingerprint": topo.fingerprint,
                    },
                    status="ok",
                    wall_time_s=wall,
                    metrics={"gcShare": 0.04},
                )
            )
    with open(directory / "cosched.jsonl", "w") as rows:
        for split, bound in (("by nodes", True), ("by nodes", False)):
            for workload, cpus, done in (
                ("wordcount", "0-5", 58 if bound else 51),
                ("sql-aggregation", "6-11", 5),
            ):
                rows.write(
                    json.dumps(
                        {
                            "split": split,
                            "bound": bound,
                            "workload": workload,
                            "cpus": cpus,
                            "completions": done,
                            "median_completion_s": 2.0,
                            "remote_page_share": 0.01,
                        }
                    )
                    + "\n"
                )


@pytest.mark.slow
def test_every_kind_of_plot_renders_in_chromium(tmp_path):
    directory = tmp_path / "results"
    directory.mkdir()
    _synthetic_results(directory)
    target = tmp_path / "report.html"
    proc = invoke_cli("report", str(directory), "-o", str(target))  # what it writes, here
    assert proc.returncode == 0, proc.stderr
    plots, sections, errors = open_in_chromium(target, "report-synthetic.png")
    assert errors == []
    assert plots == 4  # layout grid, bindings, speedup, co-scheduling (no time series: no samples)
    assert {
        "topology",
        "configurations",
        "layout-grid",
        "bindings",
        "speedup",
        "cosched",
        "advice",
    } <= set(sections)
    text = target.read_text()
    assert text.count('<div class="placement') == 22  # one picture per configuration
    assert "within 10% of the best" in text


def test_report_of_a_directory_without_results_is_one_line(tmp_path):
    proc = run_cli("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and line.startswith("Error: ") and "no results.jsonl" in line
    assert not (tmp_path / "r.html").exists()


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """The live tuner stopped by its time budget after its first trial (the rules' start on
    this one-node machine: local 1x2, unbound): a normal run stored in the results. (Several
    trials, replay and early stop are tested on tables in test_decide.py.)"""
    out = tmp_path_factory.mktemp("tuned")
    data = tmp_path_factory.mktemp("data")
    proc = run_cli(
        "tune",
        "wordcount",
        "--budget",
        "5",
        "--budget-time",
        "1s",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--seed",
        "1",
        "--out",
        str(out),
        "--data",
        str(data),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    (search,) = json.loads(proc.stdout)["contexts"]  # live runs: one search
    return out, search


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
def test_live_tuner_stores_every_trial_as_a_run(tuned):
    out, found = tuned
    (trial,) = found["trials"]
    assert trial["source"].startswith("prior") and found["stopped"].startswith("time budget")
    assert trial["params"]["mode"] == "local" and trial["params"]["binding"] == "none"
    assert "1 NUMA node(s), 2 cores" in found["prior"]  # this machine, as the rules saw it
    runs = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(runs) == 2 and all(r["status"] == "ok" for r in runs)
    walls = [r["wall_time_s"] for r in runs]
    assert trial["value"] == pytest.approx(sum(walls) / 2)  # the median of its stored runs
    table = out / "table.csv"
    assert run_cli("results", str(out), "--table", str(table)).returncode == 0
    assert table.read_text().splitlines()[0] == "wall_s"  # one configuration: nothing varies


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
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


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
def test_report_renders_in_headless_chromium(tuned, tmp_path):
    out, _ = tuned
    target = tmp_path / "report.html"
    proc = run_cli("report", str(out), "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    plots, sections, errors = open_in_chromium(target, "report.png")
    assert errors == []
    assert plots >= 1  # the time series at least (two trials need not share a layout)
    assert {"environment", "topology", "configurations", "timeseries", "advice", "runs"} <= set(
        sections
    )


# a scenario of a minute, run by the long lane to keep CI short:
# the GC rule is also tested on recorded runs in the fast lane
@pytest.mark.long(script="bash scripts/test.sh --long")
@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
def test_advise_reports_gc_on_a_deliberately_small_heap(tmp_path):
    """The done criterion: a small executor heap gives a GC finding of moderate or worse that
    recommends a larger heap (or more executors), with the command.

    On this machine's small inputs G1 kept GC at 3-5% at every heap that did not run out of
    memory (kmeans 480m-700m, sql-aggregation 512m, sql-join 450m, random-forest 520m-640m), so
    the heap is made small where collections happen: a 480 MB heap with an 8 MB young
    generation under the serial collector (GC 29% of executor time at small size, 17% at the
    300,000 rows used here).

    The same run checks the affinity plugin's fallback (issue 8): its slots name a CPU that is
    not allowed, so it must complete unpinned and say why (one Spark start for both checks)."""
    out = tmp_path / "out"
    outside = max(os.sched_getaffinity(0)) + 64
    proc = run_cli(
        "run",
        "kmeans",
        "--size",
        "300000rows",
        "--mode",
        "local",
        "--memory-per-executor",
        "480m",
        "--repeat",
        "1",
        "--out",
        str(out),
        "--conf",
        "spark.driver.extraJavaOptions=-XX:+UseSerialGC -Xmn8m",
        "--bind",
        "core",
        "--conf",
        f"spark.numaspark.affinity.slots=0;{outside}",
        "--data",
        str(tmp_path / "data"),
    )
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("advise", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    (advice,) = json.loads(proc.stdout)["advice"]
    gc = next(f for f in advice["findings"] if f["rule"] == "gc")
    assert gc["severity"] in ("moderate", "severe", "critical"), gc
    assert "heap" in gc["recommendation"] and "executors" in gc["recommendation"]
    assert gc["command"].startswith("numaspark run kmeans --size 300000rows")
    assert "--memory-per-executor 960m" in gc["command"]
    printed = run_cli("advise", str(out))
    assert "gc:" in printed.stdout and "$ numaspark run kmeans" in printed.stdout
    (run,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert run["status"] == "ok"
    affinity = run["affinity"]
    assert affinity["pinned"] == 0 and affinity["unpinned"] == affinity["tasks"] > 0
    (reason,) = affinity["unpinned_reasons"]
    assert f"slot {outside}" in reason and "allowed" in reason
