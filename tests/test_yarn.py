"""A YARN numaspark did not start (``--master yarn``): planned from its ResourceManager's REST
API, never from this machine; and what a run on YARN records of its application.

The node list is a real mini YARN's (hadoop-client-minicluster 3.5.0, one NodeManager of 2
vcores and 4096 MB, `numaspark yarn up`), served over HTTP by the test; the executor event is
from a real `numaspark run wordcount --master yarn` on it (tests/fixtures/yarn). The real
cluster path is tests/test_yarn_mini.py's."""

import json
from pathlib import Path

import pytest
from statuspage import serving

from numaspark import records
from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult, YarnApplication
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement import Layout, plan
from numaspark.spark.yarn import YarnCluster, container_mb, largest_heap_mb, read_site
from numaspark.units import GIB, MIB

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "yarn"


def recorded_nodes() -> dict:
    return json.loads((FIXTURES / "nodes.json").read_text())


def site(directory: Path, webapp: str, **extra: str) -> Path:
    """A client's yarn-site.xml naming ``webapp`` (as the mini YARN writes it) and ``extra``."""
    values = {
        "yarn.resourcemanager.webapp.address": webapp.removeprefix("http://"),
        "yarn.scheduler.minimum-allocation-mb": "128",
        "yarn.scheduler.maximum-allocation-mb": "4096",
        "yarn.scheduler.maximum-allocation-vcores": "2",
        **extra,
    }
    props = "".join(
        f"<property><name>{k}</name><value>{v}</value></property>" for k, v in values.items()
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "yarn-site.xml").write_text(
        f"<?xml version='1.0'?><configuration>{props}</configuration>"
    )
    return directory


def _place(cluster: YarnCluster, layout: Layout):
    return cluster.place(lambda topology: plan(topology, layout), layout.memory_per_executor)


def test_the_plan_fits_the_nodemanager_not_this_machine(tmp_path, monkeypatch):
    with serving(recorded_nodes()) as rm:
        monkeypatch.setenv("HADOOP_CONF_DIR", str(site(tmp_path / "conf", rm)))
        cluster = YarnCluster.read()
    assert [(n.host, n.vcores, n.memory_mb) for n in cluster.nodes] == [("localhost", 2, 4096)]
    assert (cluster.minimum_mb, cluster.maximum_mb, cluster.am_mb) == (128, 4096, 896)
    (executor,) = _place(cluster, Layout()).executors
    # 4096 MB less the application master's 896 leaves 3200: 2816 MB heap + 384 overhead
    assert (executor.cores, executor.heap) == (2, 2816 * MIB)
    two = _place(cluster, Layout(executors=2, cores_per_executor=1)).executors
    # 3200 MB for two: 1600 each, and 1536 the largest multiple of 128 below it
    assert [(e.cores, e.heap) for e in two] == [(1, 1152 * MIB)] * 2
    assert all(container_mb(e.heap // MIB, 128) * 2 + 896 <= 4096 for e in two)


def test_what_yarn_cannot_hold_is_refused_in_one_line(tmp_path):
    cluster = YarnCluster.of(
        "http://127.0.0.1:1",
        recorded_nodes(),
        read_site(site(tmp_path, "127.0.0.1:1") / "yarn-site.xml"),
    )
    with pytest.raises(UsageError) as memory:
        _place(cluster, Layout(memory_per_executor=3 * GIB))
    message = str(memory.value)
    assert "cannot hold 1 executor container(s) of 2 vcore(s) and 3456 MB (3072 MB heap" in message
    assert "application master's 896 MB (room for 0" in message
    assert "localhost: 2 vcores, 4096 MB free" in message and "\n" not in message
    with pytest.raises(UsageError, match=r"grants at most 4096 MB .* not 1 vcore\(s\) and 4608"):
        _place(cluster, Layout(executors=1, cores_per_executor=1, memory_per_executor=4 * GIB))
    with pytest.raises(UsageError, match="planned on the nodes of the YARN cluster .* 2 vcores"):
        _place(cluster, Layout(executors=3, cores_per_executor=1))
    with pytest.raises(UsageError, match="cannot hold 2 executor container"):
        _place(
            cluster, Layout(executors=2, cores_per_executor=1, memory_per_executor=GIB + GIB // 2)
        )


def test_without_a_resourcemanager_it_says_what_to_set(tmp_path, monkeypatch):
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    monkeypatch.delenv("YARN_CONF_DIR", raising=False)
    with pytest.raises(UsageError, match="set HADOOP_CONF_DIR"):
        YarnCluster.read()
    with pytest.raises(UsageError, match="no yarn-site.xml in"):
        YarnCluster.read(tmp_path)
    with serving(recorded_nodes()) as rm:
        pass  # its port, closed: nothing answers there now
    with pytest.raises(UsageError, match="does not answer at http://127.0.0.1:.*is YARN up"):
        YarnCluster.read(site(tmp_path / "down", rm))
    nobody = {"nodes": None}  # what the RM says with no NodeManager
    with serving(nobody) as rm, pytest.raises(UsageError, match="no running NodeManager"):
        YarnCluster.read(site(tmp_path / "empty", rm))


def test_yarn_site_references_and_defaults(tmp_path):
    conf = read_site(
        site(
            tmp_path,
            "${yarn.resourcemanager.hostname}:8188",
            **{"yarn.resourcemanager.hostname": "rm.example"},
        )
        / "yarn-site.xml"
    )
    assert conf["yarn.resourcemanager.webapp.address"] == "rm.example:8188"
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "yarn-site.xml").write_text("<configuration/>")
    bare = read_site(tmp_path / "bare" / "yarn-site.xml")
    assert bare["yarn.resourcemanager.webapp.address"] == "0.0.0.0:8088"
    assert bare["yarn.scheduler.minimum-allocation-mb"] == "1024"
    (tmp_path / "bad.xml").write_text("<configuration>")
    with pytest.raises(UsageError, match="not a readable Hadoop configuration"):
        read_site(tmp_path / "bad.xml")


@pytest.mark.parametrize(
    "heap, minimum, container",
    [(2816, 128, 3200), (1216, 128, 1664), (512, 1024, 1024), (8192, 128, 9088)],
)
def test_a_container_is_heap_and_overhead_rounded_to_the_minimum(heap, minimum, container):
    assert container_mb(heap, minimum) == container
    assert container_mb(largest_heap_mb(container, minimum), minimum) <= container
    assert container_mb(largest_heap_mb(container, minimum) + 1, minimum) > container or (
        minimum > 1 and largest_heap_mb(container, minimum) >= heap
    )


def test_the_record_names_the_yarn_application_and_its_containers():
    log = parse_event_log(FIXTURES / "events.jsonl")
    app = YarnApplication.of(log.app_id, log.executors)
    assert app.application_id == "application_1795645376588_0001"
    (container,) = app.containers
    assert container.executor == "1"
    assert container.container_id == "container_1795645376588_0001_01_000002"
    assert (container.host, container.node_http_address) == ("localhost", "localhost:34737")
    record = RunResult(spec={"workload": "wordcount"}, environment={}, status="ok", yarn=app)
    again = records.load(RunResult, json.loads(json.dumps(records.dump(record))))
    assert again.yarn == app
    # a run elsewhere (no container attributes) records none, and writes no key
    assert YarnApplication.of("app-1", {"0": {"host": "h", "attributes": {}}}) is None
    plain = RunResult(spec={"workload": "wordcount"}, environment={}, status="ok")
    assert (
        "yarn" not in records.dump(plain)
        and records.load(RunResult, records.dump(plain)).yarn is None
    )
