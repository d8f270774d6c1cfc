"""``run``, ``cluster up`` and ``launch`` by devices (issue 50): ``--gpus-per-executor N`` and
``--resource NAME=N`` are placement options every command shares (cli/placement_options.py
``PlacementOptions``), parsed once and planned as ``plan`` plans them, and the workers
numaspark starts offer Spark exactly their executor's planned devices.

This machine has no GPU and one NUMA node (its NIC hangs off node 0): a GPU asked of it is one
line and exit 2. The positive path is tested on real servers' hwloc XML from
shared/topologies (an NVIDIA DGX-2: 8 GPUs behind each of its 2 sockets; a two-socket Xeon
with GPUs and NICs behind node 1) through what ``run`` and ``cluster up`` would use, without
starting Spark: the real command line builds its request or its plan (stopped where it would
start JVMs, its topology the server's), then that plan's Spark conf and the workers a cluster
would start from it (each one's argv and environment, its resources file written for real).
The JVM test runs real Spark here, this machine's own NIC the device each executor owns.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import invoke_cli, run_cli, run_request, topology_file

from numaspark import records
from numaspark.experiment.request import RunRequest, plan_request, request_of, run_command
from numaspark.experiment.result import RunSpec
from numaspark.experiment.runner import base_spec
from numaspark.hosts import LOCAL, Host
from numaspark.metrics.logfiles import event_log_files, lines, segments
from numaspark.placement import Binding, Layout, Mode, bind_argv, plan, spark_conf
from numaspark.placement.plugin import DEVICE_RESOURCE_KEY
from numaspark.placement.resources import DISCOVERY_SCRIPT
from numaspark.spark.standalone import Cluster
from numaspark.spark.standalone_kind import STANDALONE_KIND
from numaspark.topology import load_machine, load_xml

NO_GPU = (
    "gives each executor numaspark starts here GPUs of its own NUMA node (numaspark topology "
    "lists this machine's devices); plan --xml SERVER.xml shows a server's plan"
)


@pytest.fixture(scope="module")
def dgx2():
    return load_xml(topology_file("nvidiaDGX2.xml"))


@pytest.fixture(scope="module")
def wholeio():
    return load_xml(topology_file("32em64t-2n8c2t-pci-wholeio.xml"))


def test_a_gpu_this_machine_lacks_is_one_line_for_every_command_that_starts_jvms(tmp_path):
    """run, cluster up and launch start JVMs here: a GPU asked of a machine with none is one
    line, exit 2, before anything starts (cluster up makes no directory); plan --xml is where
    a server's plan is seen."""
    if load_machine().devices_of("gpu"):
        pytest.skip("this machine has a GPU: the refusal is for machines without one")
    directory = tmp_path / "cluster"
    for argv, option in (
        (["run", "wordcount", "--gpus-per-executor", "1"], "--gpus-per-executor 1"),
        (
            ["run", "wordcount", "--mode", "standalone", "--resource", "gpu=2", "--bind", "node"],
            "--gpus-per-executor 2",
        ),
        (["cluster", "up", str(directory), "--gpus-per-executor", "1"], "--gpus-per-executor 1"),
        (["launch", "--gpus-per-executor", "4", "--", "true"], "--gpus-per-executor 4"),
    ):
        proc = run_cli(*argv)
        assert proc.returncode == 2 and proc.stdout == "", (argv, proc.stdout, proc.stderr)
        assert proc.stderr.strip().splitlines() == [
            f"Error: this machine has no gpu: {option} {NO_GPU}"
        ], argv
    assert not directory.exists()
    # the one parse comes first: a resource numaspark does not plan by, whatever the machine
    proc = run_cli("run", "wordcount", "--resource", "fpga=1")
    assert proc.returncode == 2 and "give one of them" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _run_on(topology, command: str, monkeypatch) -> RunRequest:
    """The request the real ``numaspark run`` builds from ``command`` on ``topology`` (as if
    this machine were that server), stopped before it runs anything."""
    monkeypatch.setattr("numaspark.cli.run.topology_of", lambda *a, **k: topology)
    return run_request(command, monkeypatch)


def test_run_plans_a_gpu_server_as_plan_does_and_asks_spark_for_the_gpus(dgx2, monkeypatch):
    """On the DGX-2 (as if run there): the request carries the GPUs, its plan is plan's (an
    executor per socket, each bound to the socket its 8 GPUs hang off), its Spark conf asks
    for them, and the printed command gives the same request back."""
    command = "numaspark run wordcount --mode standalone --gpus-per-executor 8 --bind node"
    request = _run_on(dgx2, command, monkeypatch)
    assert request.layout.resources == (("gpu", 8),)
    placement = plan_request(dgx2, request)
    xml = str(topology_file("nvidiaDGX2.xml"))
    same = invoke_cli("plan", "--xml", xml, "--json", "--gpus-per-executor", "8", "--bind", "node")
    planned = [j for j in json.loads(same.stdout)["jvms"] if j["runs_tasks"]]
    assert [[d.address for d in j.devices] for j in placement.executors] == [
        [d["address"] for d in j["devices"]] for j in planned
    ]
    for jvm in placement.executors:
        assert {d.node for d in jvm.devices} == set(jvm.nodes) == set(jvm.mem_nodes)
    conf = spark_conf(placement)
    assert conf["spark.executor.resource.gpu.amount"] == "8"
    assert conf["spark.task.resource.gpu.amount"] == "0.5"  # 2 task slots an executor
    assert conf["spark.executor.resource.gpu.discoveryScript"] == str(DISCOVERY_SCRIPT)
    assert _run_on(dgx2, run_command(request), monkeypatch) == request
    # below node level the plugin pins tasks, and is told which resources bind
    core = _run_on(dgx2, command.replace("--bind node", "--bind core"), monkeypatch)
    assert spark_conf(plan_request(dgx2, core))[DEVICE_RESOURCE_KEY] == "gpu"


def test_run_plans_gpus_and_nics_together(wholeio, monkeypatch):
    """The Xeon with every I/O object: a GPU and a NIC an executor, all behind node 1; two
    resources need the workers' resources file, so no single script is named."""
    command = (
        "numaspark run wordcount --mode standalone --gpus-per-executor 1 --resource nic=1 "
        "--bind core"
    )
    request = _run_on(wholeio, command, monkeypatch)
    assert request.layout.resources == (("gpu", 1), ("nic", 1))
    placement = plan_request(wholeio, request)
    assert [str(j.nodes) for j in placement.executors] == ["1", "1", "1"]
    conf = spark_conf(placement)
    assert conf["spark.executor.resource.gpu.amount"] == conf["spark.executor.resource.nic.amount"]
    assert not [k for k in conf if k.endswith("discoveryScript")]
    assert conf[DEVICE_RESOURCE_KEY] == "gpu,nic"
    assert _run_on(wholeio, run_command(request), monkeypatch) == request


def test_a_stored_device_run_gives_back_its_request(dgx2):
    """What advice re-plans from a stored run keeps the devices each executor owned."""
    request = RunRequest(
        workload="wordcount",
        layout=Layout(mode=Mode.STANDALONE, resources=(("gpu", 4),)),
        binding=Binding.NODE,
    )
    workload, size = request.checked()
    spec = base_spec(request, workload, size, None, plan_request(dgx2, request), None)
    stored = records.load(RunSpec, json.loads(json.dumps(records.dump(spec), default=str)))
    again = request_of(stored)
    assert again.layout.resources == (("gpu", 4),)
    assert "--gpus-per-executor 4" in run_command(again)


class _Planned(Exception):
    """Raised where ``cluster up`` would start the master: it carries the plan."""

    def __init__(self, placement) -> None:
        super().__init__("stopped before starting")
        self.placement = placement


def _cluster_up_plan(topology, monkeypatch, *options: str):
    """The plan the real ``numaspark cluster up`` makes on ``topology`` (as if this machine
    were that server), stopped before it starts any daemon."""

    def here(placement, *args, **kwargs):
        raise _Planned(placement)

    monkeypatch.setattr("numaspark.experiment.placing.load_machine", lambda: topology)
    monkeypatch.setattr("numaspark.experiment.placing.Cluster.here", here)
    with pytest.raises(_Planned) as planned:
        invoke_cli("cluster", "up", "unused-dir", *options)
    return planned.value.placement


def _workers(placement, directory: Path, monkeypatch) -> list[tuple[list[str], dict]]:
    """The worker each executor of ``placement`` gets from a cluster in ``directory``: the
    argv and environment it would start with (its resources file is written for real)."""
    host = Host(LOCAL, "127.0.0.1")
    cluster = Cluster(directory=directory, hosts=[host], local=True, master_url="spark://x:1")
    started: list[tuple[list[str], dict]] = []

    def start(tracker, host, name, argv, env=None, **facts):
        started.append((argv, env or {}))

    monkeypatch.setattr(cluster, "_start", start)
    directory.mkdir(parents=True, exist_ok=True)
    for index, executor in enumerate(placement.executors):
        ports = [7100 + 2 * index, 7101 + 2 * index]
        STANDALONE_KIND.start_worker(cluster, None, host, index, executor, ports)
    return started


def test_cluster_up_gives_each_worker_its_executors_gpus(dgx2, tmp_path, monkeypatch):
    """cluster up on the DGX-2: a worker per socket, bound there, offering Spark the 8 GPUs of
    that socket and no other (its own resources file, named in SPARK_WORKER_OPTS after the
    user's own options), their addresses in its environment as the discovery script reads
    them. A directory with a space in its name is quoted as Spark's launcher splits it."""
    placement = _cluster_up_plan(dgx2, monkeypatch, "--gpus-per-executor", "8", "--bind", "node")
    assert [sorted({d.node for d in j.devices}) for j in placement.executors] == [[0], [1]]
    monkeypatch.setenv("SPARK_WORKER_OPTS", "-Dspark.worker.cleanup.enabled=true")
    directory = tmp_path / "a cluster"
    workers = _workers(placement, directory, monkeypatch)
    for index, (executor, (argv, env)) in enumerate(zip(placement.executors, workers, strict=True)):
        addresses = [d.address for d in executor.devices]
        path = directory / f"worker-{index}-resources.json"
        assert json.loads(path.read_text()) == [
            {"id": {"componentName": "spark.worker", "resourceName": "gpu"}, "addresses": addresses}
        ]
        assert shlex.split(env["SPARK_WORKER_OPTS"]) == [
            "-Dspark.worker.cleanup.enabled=true",
            "-Dspark.worker.resource.gpu.amount=8",
            f"-Dspark.worker.resourcesFile={path}",
        ]
        assert env["NUMASPARK_RESOURCE_GPU"] == ",".join(addresses)
        script = subprocess.run(
            [str(DISCOVERY_SCRIPT)],
            capture_output=True,
            text=True,
            env={
                "PATH": os.environ["PATH"],
                "NUMASPARK_RESOURCE_GPU": env["NUMASPARK_RESOURCE_GPU"],
            },
            timeout=30,
            check=True,
        )
        assert json.loads(script.stdout) == {"name": "gpu", "addresses": addresses}
        prefix = bind_argv(executor)
        assert argv[: len(prefix)] == prefix and argv[argv.index("--cores") + 1] == "2"


def test_a_worker_without_devices_starts_as_before(dgx2, tmp_path, monkeypatch):
    """No devices: no resources file, no SPARK_WORKER_OPTS of numaspark's, the cluster's shape
    as it always was; one with devices is another shape (a kept cluster serves only its own)."""
    plain = plan(dgx2, Layout(executors_per_node=1), Binding.NODE)
    ((_, env), _) = _workers(plain, tmp_path, monkeypatch)
    assert not {"SPARK_WORKER_OPTS", "NUMASPARK_RESOURCE_GPU"} & set(env)
    assert not list(tmp_path.glob("*resources.json"))
    assert all(len(entry) == 4 for entry in plain.shape)
    gpus = plan(dgx2, Layout(resources=(("gpu", 8),)), Binding.NODE)
    assert [e[:4] for e in gpus.shape] == list(plain.shape) and gpus.shape != plain.shape


def _events(out: Path) -> list[dict]:
    """Every event of the event logs of the runs stored in ``out`` (rolling, compressed: as
    numaspark reads them)."""
    found, warnings = [], []
    for log in (log for events in out.rglob("eventlog") for log in events.iterdir()):
        for segment in segments(event_log_files(log)):
            found += [json.loads(raw) for batch in lines(segment, warnings) for raw in batch]
    return found


@pytest.mark.jvm
def test_a_real_run_hands_each_executor_its_planned_nic(tmp_path, no_spark_left):
    """Real Spark, through the real ``numaspark run``: this machine's own NIC is the device each
    executor owns (--resource nic=1). The worker offers it from its resources file, and the
    executor Spark starts holds it, as the event log's executor record says."""
    nics = [d for d in load_machine().devices_of("nic") if d.node is not None]
    if not nics:
        pytest.skip("this machine has no NIC of a known NUMA node")
    out = tmp_path / "out"
    argv = ["--mode", "standalone", "--resource", "nic=1", "--no-collect", "--timeout", "300"]
    argv += ["--out", str(out)]
    proc = run_cli("run", "wordcount", *argv)
    assert proc.returncode == 0, proc.stderr[-3000:]
    added = [e for e in _events(out) if e.get("Event") == "SparkListenerExecutorAdded"]
    placement = plan(load_machine(), Layout(resources=(("nic", 1),)), Binding.NONE)
    planned = sorted(d.address for j in placement.executors for d in j.devices)
    held = sorted(a for e in added for a in e["Executor Info"]["Resources"]["nic"]["addresses"])
    assert held == planned and added, (held, planned)


def test_launch_hands_each_process_its_planned_devices(tmp_path):
    """launch starts real processes here, bound as planned: with --resource nic=1, each one
    owns this machine's NIC of its node, and finds its address where a Spark worker would
    (NUMASPARK_RESOURCE_NIC); the record names the device."""
    if not [d for d in load_machine().devices_of("nic") if d.node is not None]:
        pytest.skip("this machine has no NIC of a known NUMA node")
    out = tmp_path / "launch"
    script = "echo NIC=$NUMASPARK_RESOURCE_NIC; sleep 5"
    argv = ["--resource", "nic=1", "--duration", "1s", "--out", str(out), "--json"]
    proc = run_cli("launch", *argv, "--", "sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((out / "launch.json").read_text())
    executors = [j for j in record["placement"]["jvms"] if j["runs_tasks"]]
    assert executors and all(len(j["devices"]) == 1 for j in executors)
    for jvm in executors:
        log = (out / "logs" / f"executor-{jvm['index']}.log").read_text()
        assert f"NIC={jvm['devices'][0]['address']}\n" in log, log
