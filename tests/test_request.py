"""A run request, the stored run it becomes and the command line that asks for it (no Spark:
the command line is parsed by the real ``run`` command, which is stopped where it would run).

Placements are planned on a real 2-node server's XML from shared/topologies: this machine has
one NUMA node."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_request, topology_file

from numaspark import records
from numaspark.experiment.request import RunRequest, plan_request, request_of, run_argv, run_command
from numaspark.experiment.result import RunSpec
from numaspark.experiment.runner import base_spec
from numaspark.experiment.venue import ClusterAt
from numaspark.placement import Binding, Layout, MemPolicy, Mode, PuOrder
from numaspark.topology import CpuSet, load
from numaspark.units import GIB
from numaspark.workloads import application as apps
from numaspark.workloads.catalog import register_application

SQUARES = Path(__file__).resolve().parent / "apps" / "squares.py"


def _requests(tmp_path: Path) -> list[tuple[RunRequest, apps.Application | None]]:
    """Requests with every option ``run`` has away from its default, in each kind of run."""
    application = apps.from_file(str(SQUARES), ["out.json", "a b", "$HOME", "--", "it's"])
    return [
        (
            RunRequest(
                workload="kmeans",
                size="small",
                layout=Layout(
                    executors_per_node=2,
                    cores_per_executor=3,
                    memory_per_executor=4 * GIB,
                    mode=Mode.STANDALONE,
                ),
                binding=Binding.PU,
                mem_policy=MemPolicy.INTERLEAVE,
                pu_order=PuOrder.SIBLINGS_FIRST,
                only_nodes=CpuSet.parse("0-1"),
                repeat=3,
                warmup=1,
                out=tmp_path / "o",
                data_root=tmp_path / "d",
                timeout_s=90.0,
                spark_conf={
                    "spark.executor.extraJavaOptions": "-XX:+UseNUMA -Xmn8m",
                    "spark.sql.shuffle.partitions": "64",
                },
                params={"k": "4", "iterations": "2"},
                collect=False,
                interval_s=0.5,
                gc_log=True,
                profile=True,
            ),
            None,
        ),
        (
            RunRequest(
                workload="wordcount",
                layout=Layout(executors=3, mode=Mode.STANDALONE),
                venue=ClusterAt(master="spark://h:7077"),
            ),
            None,
        ),
        (
            RunRequest(
                workload="windowed-wordcount",
                layout=Layout(mode=Mode.LOCAL),
                rate=500.0,
                duration_s=30.0,
                stream_warmup_s=2.5,
                params={"window_s": "20"},
            ),
            None,
        ),
        (
            RunRequest(
                workload=application.name,
                layout=Layout(cores_per_executor=2, mode=Mode.LOCAL),
                binding=Binding.NODE,
                time="job",
                duration_s=45.0,
                stop_after_s=45.0,
            ),
            application,
        ),
    ]


def test_the_printed_command_is_the_same_request_to_the_real_command_line(tmp_path, monkeypatch):
    """`run_command` spells every option of ``numaspark run``: what it prints, parsed by the
    real command, is the request it was given (the user's application too, with its class,
    arguments and quoting)."""
    for request, application in _requests(tmp_path):
        command = run_command(request, application)
        assert run_request(command, monkeypatch) == request, command


def test_defaults_are_left_out_but_the_mode():
    argv = run_argv(RunRequest(workload="wordcount", layout=Layout(mode=Mode.LOCAL)))
    assert argv == ["wordcount", "--mode", "local"]


def _stored(request: RunRequest, topology) -> RunSpec:
    """The spec the run loop stores for ``request``, as it is read back from results.jsonl."""
    workload, size = request.checked()  # the run loop's own reading of the request
    spec = base_spec(request, workload, size, None, plan_request(topology, request), None)
    return records.load(RunSpec, json.loads(json.dumps(records.dump(spec), default=str)))


def test_a_stored_run_gives_back_the_request_it_came_from():
    """`request_of` reads a stored spec back into the request that made it, for the options a
    record keeps: a batch run with its layout, binding, settings and parameters; a stream
    (its rate and windows, not the partitions the run loop chose for its slots); the user's
    application (its time and when it was stopped). The heap is the planner's (auto)."""
    topology = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    application = register_application(apps.from_file(str(SQUARES), ["out.json"])).name
    requests = [
        RunRequest(
            workload="kmeans",
            size="small",
            layout=Layout(executors=4, cores_per_executor=3, mode=Mode.STANDALONE),
            binding=Binding.CORE,
            spark_conf={"spark.sql.shuffle.partitions": "64"},
            params={"k": "4"},
        ),
        RunRequest(
            workload="wordcount",
            layout=Layout(cores_per_executor=4, mode=Mode.LOCAL),
            binding=Binding.NODE,
            mem_policy=MemPolicy.INTERLEAVE,
        ),
        RunRequest(
            workload="windowed-wordcount",
            layout=Layout(cores_per_executor=2, mode=Mode.LOCAL),
            rate=500.0,
            duration_s=30.0,
            stream_warmup_s=2.0,
        ),
        RunRequest(
            workload=application,
            layout=Layout(cores_per_executor=2, mode=Mode.LOCAL),
            time="job",
            duration_s=45.0,
            stop_after_s=45.0,
        ),
    ]
    for request in requests:
        assert request_of(_stored(request, topology)) == request, request.workload
