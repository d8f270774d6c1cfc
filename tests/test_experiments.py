"""Experiment specs, studies and statistics. Multi-node and SMT plans are checked on
shared/topologies (this machine has one node and no SMT); the real path runs here."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, topology_file
from recorded import RecordedTarget, targets

from numaspark.decide.scaling import fit, knee
from numaspark.errors import UsageError
from numaspark.experiment import studies
from numaspark.experiment.spec import build
from numaspark.experiment.stats import compare, summarize
from numaspark.experiment.studies import StudyRequest
from numaspark.experiment.sweep import run_sweep
from numaspark.topology import load_machine, load_synthetic, load_xml

GRID = {
    "workloads": [{"name": "wordcount", "size": "tiny"}],
    "layouts": {"executors": [1, 2, 4], "cores_per_executor": [1, 2]},
    "bindings": ["none", "core"],
    "repeat": 2,
}


def test_a_grid_expands_and_what_does_not_fit_is_skipped_with_the_reason():
    topology = load_synthetic("package:1 numa:1 core:4 pu:1")  # 4 CPUs
    experiment = build(GRID, topology)
    labels = {c.label for c in experiment.configs}
    assert "standalone 2x2 bind=core" in labels and "standalone 4x1 bind=none" in labels
    assert len(experiment.configs) + len(experiment.skipped) == 3 * 2 * 2
    skipped = {c.label: reason for c, reason in experiment.skipped}
    assert "standalone 4x2 bind=core" in skipped and skipped["standalone 4x2 bind=core"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layout": {}}, "unknown key(s) layout"),
        ({"workloads": []}, "needs at least one [[workloads]]"),
        ({"bindings": ["tight"]}, "'tight' is not one of none, node, core, pu"),
        ({"repeat": 0}, "repeat must be an integer >= 1"),
        ({"order": "sorted"}, "order must be 'listed' or 'random'"),
        ({"workloads": [{"name": "kmeans", "params": {"clusters": 3}}]}, "no parameter 'clusters'"),
        ({"layouts": {"executors": [0]}}, "executors must be a positive integer"),
    ],
)
def test_bad_specs_say_what_is_wrong(change, message):
    with pytest.raises(UsageError, match=None) as error:
        build({**GRID, **change}, load_synthetic("package:1 numa:1 core:4 pu:1"))
    assert message in str(error.value)


def test_random_order_is_seeded():
    topology = load_synthetic("package:1 numa:1 core:4 pu:1")
    one = [c.key for c in build({**GRID, "order": "random", "seed": 3}, topology).configs]
    two = [c.key for c in build({**GRID, "order": "random", "seed": 3}, topology).configs]
    listed = [c.key for c in build(GRID, topology).configs]
    assert one == two and sorted(one) == sorted(listed) and one != listed


def test_sweep_command_rejects_a_bad_spec_in_one_line(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('repeat = 2\n[[workloads]]\nname = "nope"\n')
    proc = run_cli("sweep", str(spec), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "unknown workload 'nope'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_layout_grid_of_this_machine():
    study = studies.layouts(StudyRequest(load_machine(), "wordcount"))
    cpus = len(load_machine().allowed_cores())
    shapes = {(c.layout.executors, c.layout.cores_per_executor) for c in study.experiment.configs}
    assert all(e * c <= cpus for e, c in shapes)
    if cpus == 2:
        assert shapes == {(1, 1), (1, 2), (2, 1)}


def test_binding_study_on_a_four_node_server():
    study = studies.binding(
        StudyRequest(load_xml(topology_file("16amd64-4distances.xml")), "wordcount")
    )
    notes = [c.note for c in study.experiment.configs]
    assert notes[:4] == ["1U", "1B", "2U", "2B"] and "8B" in notes
    remote = [c for c in study.experiment.configs if c.note.startswith("remote")]
    assert len(remote) == 8 * 7 and not study.cannot
    assert all(c.mem_nodes != c.only_nodes for c in remote)


def _binding_study_checked(topology) -> None:
    study = studies.binding(StudyRequest(topology, "wordcount"))
    nodes = len(topology.nodes)
    notes = [c.note for c in study.experiment.configs]
    if nodes == 1:
        assert "need several NUMA nodes; this machine has 1" in study.cannot[0]
        assert notes == ["1U", "1B"]
    else:  # a machine of several nodes can run every part of it
        assert not study.cannot and f"{nodes}B" in notes and "1B" in notes


def test_binding_study_says_what_it_cannot_run_on_one_node_and_runs_all_on_two():
    """Both branches on synthetic machines, whatever this one is; then this machine's own."""
    one = load_synthetic("package:1 numa:1 core:2 pu:1")
    assert studies.binding(StudyRequest(one, "wordcount")).cannot  # the one-node branch is taken
    _binding_study_checked(one)
    two = load_synthetic("package:2 numa:1 core:2 pu:1")
    assert not studies.binding(
        StudyRequest(two, "wordcount")
    ).cannot  # the several-node branch is taken
    _binding_study_checked(two)
    _binding_study_checked(load_machine())


def test_smt_study_plans_on_an_smt_server_and_declines_here():
    smt = studies.smt(StudyRequest(load_xml(topology_file("24em64t-2n6c2t-pci.xml")), "wordcount"))
    assert [c.note for c in smt.experiment.configs] == ["ST 6 cores", "SMT 6 cores", "ST 12 cores"]
    assert not smt.cannot
    here = studies.smt(StudyRequest(load_synthetic("package:1 numa:1 core:2 pu:1"), "wordcount"))
    assert "SMT needs two or more hardware threads per core" in here.cannot[0]
    assert studies.ht_effectiveness(1.3, 1.9) == pytest.approx(1.3 * (0.538 + 0.462 / 1.9))


def test_executors_study_keeps_total_cores():
    study = studies.executors(
        StudyRequest(load_synthetic("package:1 numa:1 core:8 pu:1"), "wordcount")
    )
    shapes = [(c.layout.executors, c.layout.cores_per_executor) for c in study.experiment.configs]
    assert shapes == [(1, 8), (2, 4), (4, 2), (8, 1)]


def test_statistics_and_comparison():
    s = summarize([10.0, 11.0, 12.0, 30.0])
    assert s.median == 11.5 and s.mad == 1.0
    slower = compare([10.0, 10.2, 9.9, 10.1, 10.0], [12.0, 12.3, 11.9, 12.1, 12.2])
    assert slower.ratio == pytest.approx(1.2, rel=0.02) and slower.significant
    assert slower.p_value is not None and slower.p_value < 0.05
    noise = compare([10.0, 12.0, 9.0, 11.0], [10.5, 11.5, 9.5, 10.0])
    assert not noise.significant


def test_usl_recovers_known_parameters_and_predicts():
    truth = {"sigma": 0.05, "kappa": 0.002, "t1": 100.0}

    def time_at(p):
        return truth["t1"] * (1 + truth["sigma"] * (p - 1) + truth["kappa"] * p * (p - 1)) / p

    points = [(p, time_at(p)) for p in (1, 2, 4, 8, 16)]
    usl = fit(points)
    assert usl.sigma == pytest.approx(0.05, rel=1e-3) and usl.kappa == pytest.approx(
        0.002, rel=1e-3
    )
    assert usl.time(64) == pytest.approx(time_at(64), rel=1e-3)
    assert usl.peak == pytest.approx(((1 - 0.05) / 0.002) ** 0.5, rel=1e-3)
    assert knee(points) == 4  # efficiency 0.87 at 4, 0.71 at 8


def test_fit_command(tmp_path):
    table = tmp_path / "scaling.csv"
    table.write_text("tasks,seconds\n1,100\n2,52.4\n4,28.9\n8,18.2\n16,14.7\n")
    proc = run_cli("fit", str(table), "--predict", "32", "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    usl = found["models"]["usl"]
    assert 0 < usl["sigma"] < 0.1 and usl["kappa"] > 0 and usl["peak_concurrency"] > 8
    assert found["knee"] == 4
    (prediction,) = found["predictions"]
    assert prediction["p"] == 32 and prediction["usl_time_s"] > 0
    bad = tmp_path / "bad.csv"
    bad.write_text("tasks,seconds\n1,100\nfour,20\n")
    proc = run_cli("fit", str(bad))
    assert proc.returncode == 2 and "expected 'concurrency,time'" in proc.stderr


# --- real Spark --------------------------------------------------------------------------------


def _stored(out):
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_binding_study_interrupted_and_resumed(tmp_path):
    """A study runs what this machine can, stops on Ctrl-C inside its second configuration
    and resumes from what it stored: replayed on recorded runs (tests/recorded.py), so the
    sweep's interruption and resume are tested without Spark (a real Ctrl-C and SIGTERM
    stopping every JVM are tests/test_spark_runs.py's). On this one-node machine the binding
    study is 1U (a standalone executor unbound) and 1B (node-bound with membind)."""
    topo = load_machine()
    study = studies.STUDIES["binding"](StudyRequest(topo, "wordcount", "tiny", 2, 0))
    keys = [c.key for c in study.experiment.configs]
    assert len(keys) >= 2
    first = RecordedTarget(standalone=True, interrupt_after=1)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(study.experiment, topo, tmp_path, targets=targets(RecordedTarget(), first))
    stored = _stored(tmp_path)
    assert {r["spec"]["config"] for r in stored} == set(keys[:2])
    assert sum(r["spec"]["config"] == keys[0] for r in stored) == 2  # the first: finished
    assert sum(r["spec"]["config"] == keys[1] for r in stored) == 1  # the second: cut short
    again = RecordedTarget(standalone=True)
    report = run_sweep(
        study.experiment, topo, tmp_path, resume=True, targets=targets(RecordedTarget(), again)
    )
    assert [c.key for c in report.resumed] == keys[:1]  # ran once, not twice
    assert [c.key for c in report.ran] == keys[1:]
    runs = _stored(tmp_path)
    assert sum(r["spec"]["config"] == keys[0] for r in runs) == 2
    assert all(
        sum(r["spec"]["config"] == k and r["status"] == "ok" for r in runs) >= 2 for k in keys
    )
    assert {"1U", "1B"} <= {r["spec"]["label"].split()[0] for r in runs}


def test_cosched_splits_nodes_where_there_are_enough_and_cores_here():
    four = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))
    from numaspark.experiment.cosched import splits

    sizes = [[len(part) for part in parts] for parts in splits(four, 2)]
    assert sizes == [[24, 72], [48, 48], [72, 24]]  # 1-3, 2-2, 3-1 nodes of 24 CPUs
    two_cpus = load_synthetic("package:1 numa:1 core:2 pu:1")
    assert [[str(p) for p in parts] for parts in splits(two_cpus, 2)] == [["0", "1"]]
    with pytest.raises(UsageError, match="3 workloads need at least 3 cores"):
        splits(two_cpus, 3)


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
def test_cosched_runs_both_workloads_bound_and_unbound(tmp_path):
    out = tmp_path / "out"
    # Both JVMs start together on two CPUs: on a loaded machine each took 21 s, and grep's
    # first iteration at tiny size 10 s more, ending after a window of 20 s to 30 s (no
    # completion: the test failed). Here the window is the whole round of 28 s, each way,
    # and the inputs are small (an iteration of seconds): one completion is all the test
    # needs, so any iteration that ends counts, and a cool-down would only add time.
    proc = run_cli(
        "study",
        "cosched",
        "wordcount",
        "grep",
        "--size",
        "2000rows",
        "--window",
        "28s",
        "--warmup-time",
        "0s",
        "--cooldown",
        "0s",
        "--out",
        str(out),
        "--data",
        str(tmp_path / "data"),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "cosched.jsonl").read_text().splitlines()]
    assert {(r["workload"], r["bound"]) for r in rows} >= {
        ("wordcount", True),
        ("grep", True),
        ("wordcount", False),
        ("grep", False),
    }
    assert sum(r["completions"] for r in rows) >= 1 and all(r["failed_checks"] == 0 for r in rows)
    bound = [r for r in rows if r["bound"]]
    assert len({r["cpus"] for r in bound}) == len(bound)  # each its own CPUs
    assert all(r["remote_page_share"] is not None for r in bound)


CHECK = 'test -s "$NUMASPARK_RUN_DIR/spark-submit.log"'  # each run's own directory
APP_SPEC = """
name = "mine"
repeat = 2
warmup = 1
time = "job"
bindings = ["none", "node"]  # above the first table: below one, TOML puts it in that table

[[workloads]]              # a PySpark file, relative to the spec's folder
app = "jobs/squares.py"
args = ["o.json", 1000, "a b", "$HOME"]
name = "etl"
check = '''sh -c 'test -s "$NUMASPARK_RUN_DIR/spark-submit.log"' '''

[[workloads]]              # a JAR, its class named here
app = "jobs/squares.jar"
class = "Squares"
args = ["o.json", "1000"]

[[layouts.list]]
mode = "local"
[[layouts.list]]
mode = "standalone"
executors = 1
cores_per_executor = 1
"""


def _app_spec(tmp_path):
    """APP_SPEC in a folder of its own, beside the applications it names."""
    import shutil
    import zipfile

    from test_applications import SQUARES

    jobs = tmp_path / "spec" / "jobs"
    jobs.mkdir(parents=True)
    shutil.copy(SQUARES, jobs / "squares.py")
    with zipfile.ZipFile(jobs / "squares.jar", "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n")
    (tmp_path / "spec" / "mine.toml").write_text(APP_SPEC)
    return tmp_path / "spec" / "mine.toml", jobs


def test_a_spec_with_app_entries_names_the_users_applications(tmp_path):
    """docs/experiments.md's `app =`: a path relative to the spec's folder (not the working
    directory), its args as strings exactly as given, its class, name and check."""
    from numaspark.experiment.spec import load_spec
    from numaspark.workloads import get_workload

    spec, jobs = _app_spec(tmp_path)
    experiment = load_spec(spec, load_synthetic("pack:1 numa:1 core:2 pu:1"))
    assert experiment.name == "mine" and experiment.time == "job"
    assert (experiment.repeat, experiment.warmup) == (2, 1)
    names = [c.workload for c in experiment.configs]
    assert names == ["etl"] * 4 + ["squares"] * 4  # 2 layouts x 2 bindings each
    etl = get_workload("etl").application
    assert etl.path == str(jobs / "squares.py") and etl.main_class is None
    assert etl.args == ("o.json", "1000", "a b", "$HOME")
    assert etl.check == ("sh", "-c", CHECK)
    jar = get_workload("squares").application
    assert jar.path == str(jobs / "squares.jar") and jar.main_class == "Squares"
    assert {c.size for c in experiment.configs} == {"-"}  # an application has no size
    assert all(c.conf == {} for c in experiment.configs)
    # written below the last [[layouts.list]] header, bindings is that entry's: refused
    spec.write_text(APP_SPEC.replace('bindings = ["none", "node"]  #', "#") + "bindings = []\n")
    with pytest.raises(UsageError, match=r"\[\[layouts.list\]\] entry has unknown key"):
        load_spec(spec, load_synthetic("pack:1 numa:1 core:2 pu:1"))


def test_a_sweep_over_a_spec_with_app_entries_runs_each_application(tmp_path):
    """The same spec swept on the recorded target: every configuration of both applications
    run, each replaying its own kind's recording, its check run in its run directory."""
    from numaspark.experiment.spec import load_spec

    spec, jobs = _app_spec(tmp_path)
    topo = load_machine()
    experiment = load_spec(spec, topo)
    experiment.repeat, experiment.warmup = 1, 0  # one application a configuration: fast
    local, standalone = RecordedTarget(), RecordedTarget(standalone=True)
    done = run_sweep(experiment, topo, tmp_path / "out", targets=targets(local, standalone))
    assert [c.key for c in done.ran] == [c.key for c in experiment.configs]
    assert len(done.results) == len(done.ran) == 8
    assert [(r.spec.workload, r.failure_reason) for r in done.results if not r.ok] == []
    submitted = local.submitted + standalone.submitted
    assert {job for job, _ in submitted} == {str(jobs / "squares.py"), str(jobs / "squares.jar")}
    assert (str(jobs / "squares.py"), ["o.json", "1000", "a b", "$HOME"]) in submitted
    assert standalone.clusters_started == 1  # one standalone layout, both applications
    by_name = {}
    for run in done.results:
        by_name.setdefault(run.spec.application.name, []).append(run)
        assert run.spec.timed == "job"
    # each replayed its own recording: squares.py's 4 tasks, Squares.java's 2
    assert {r.metrics["numTasks"] for r in by_name["etl"]} == {4}
    assert {r.metrics["numTasks"] for r in by_name["squares"]} == {2}
    assert all(r.check.passed and r.check.command == ["sh", "-c", CHECK] for r in by_name["etl"])
    stored = _stored(tmp_path / "out")
    assert len(stored) == len(done.results)
