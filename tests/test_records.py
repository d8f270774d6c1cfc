"""Records: every record's JSON through one converter (src/numaspark/records.py): what a class
declares of its JSON, the older schema versions the fixtures hold, and the JSON as before."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import topology_file

from numaspark import records
from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult
from numaspark.hosts import Host
from numaspark.placement import (
    Binding,
    Layout,
    Placement,
    bind_argv,
    placement_to_dict,
    plan,
    spark_conf,
)
from numaspark.records import SchemaError, Shape
from numaspark.spark.standalone import CLUSTER_SCHEMA, STATE_FILE, Cluster
from numaspark.topology import CpuSet, Topology, load_xml
from numaspark.units import GIB

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted((ROOT / "tests" / "fixtures" / "runs").glob("*/results.jsonl"))


# a record's hand-written writer or reader: to_dict, from_dict, _to_dict, _from_dict, and the
# builders named after what they write (placement_to_dict)
PAIR = re.compile(r"def (\w*(?:to|from)_dict)\(")
# what is named like one and is no record's JSON, each with why
RENDERERS = {
    "src/numaspark/placement/render.py:placement_to_dict": "a plan document: the Placement "
    "as records.dump stores it, with the binding prefixes and a fresh plan's Spark conf "
    "rendered beside it (the test below); read back by records.load(Placement, ...)",
    "src/numaspark/hosts/__init__.py:plans_to_dict": "plan --hosts --json's "
    "numaspark.hosts-plan/1, printed and never read back: each host's name, address and "
    "fingerprint beside its plan document (placement_to_dict)",
}


def test_no_record_type_keeps_a_hand_written_pair():
    """The converter is the one way a record becomes JSON and back (issue 51, item 5)."""
    found = {
        f"{path.relative_to(ROOT)}:{match[1]}": number
        for path in sorted((ROOT / "src" / "numaspark").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if (match := PAIR.search(line))
    }
    assert sorted(set(found) - set(RENDERERS)) == []
    assert sorted(set(RENDERERS) - set(found)) == []  # no allowance outlives its renderer
    assert all(why.strip() for why in RENDERERS.values())


def test_the_pair_check_sees_each_spelling_of_one():
    caught = ("def to_dict(self)", "    def _from_dict(cls, d)", "def run_to_dict(r)")
    assert all(PAIR.search(line) for line in caught)
    assert not any(PAIR.search(line) for line in ("def from_state(cls)", "def dump(value)"))


def test_a_plan_document_is_its_record_with_the_rendered_beside_it():
    """placement_to_dict adds each JVM's binding prefix and a fresh plan's Spark conf to what
    records.dump stores of the Placement, and changes nothing of it."""
    topology = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    placement = plan(topology, Layout(executors=2, threads_per_core=1), Binding.CORE)
    stored, document = records.dump(placement), placement_to_dict(placement)
    assert stored["spark_conf"] is None and document["spark_conf"] == spark_conf(placement)
    assert list(document) == list(stored)
    assert {k: v for k, v in document.items() if k not in ("jvms", "spark_conf")} == {
        k: v for k, v in stored.items() if k not in ("jvms", "spark_conf")
    }
    rendered = [{k: v for k, v in jvm.items() if k != "prefix"} for jvm in document["jvms"]]
    assert rendered == stored["jvms"]
    assert [jvm["prefix"] for jvm in document["jvms"]] == [bind_argv(j) for j in placement.jvms]
    assert document["layout"]["threads_per_core"] == 1 and "host" not in document["jvms"][0]
    again = records.load(Placement, json.loads(json.dumps(document)))
    assert placement_to_dict(again) == document  # its recorded conf, now a field
    assert again.recorded_conf is not None and records.dump(again)["spark_conf"] is not None


CLUSTERS = ROOT / "tests" / "fixtures" / "records"


def _written_back(tmp_path: Path, name: str) -> tuple[dict, dict]:
    """A state file of ``CLUSTERS`` as stored, and as this numaspark writes it back."""
    stored = json.loads((CLUSTERS / name).read_text())
    (tmp_path / STATE_FILE).write_text(json.dumps(stored))
    cluster = Cluster.from_state(tmp_path)
    cluster._save()
    again = json.loads((tmp_path / STATE_FILE).read_text())
    assert Cluster.from_state(tmp_path) == cluster, name  # today's reads as it was written
    assert again.pop("schema") == CLUSTER_SCHEMA and again.pop("saved_at") > stored["saved_at"]
    return stored, again


def test_every_cluster_state_version_loads_and_writes_back_as_todays(tmp_path):
    """The state files numaspark wrote (cluster/1: numaspark 0.1's on this machine; its
    hosts-cluster/1, on hosts; today's cluster/2) load, and write back as today's."""
    assert {json.loads(p.read_text())["schema"] for p in CLUSTERS.glob("*.json")} == {
        "numaspark.cluster/1",
        "numaspark.hosts-cluster/1",
        CLUSTER_SCHEMA,
    }
    stored, again = _written_back(tmp_path, "cluster-2.json")
    assert again == {k: v for k, v in stored.items() if k not in ("schema", "saved_at")}
    todays = set(again)

    stored, again = _written_back(tmp_path, "hosts-cluster-1.json")  # no local: on hosts
    kept = {k: v for k, v in stored.items() if k not in ("schema", "saved_at")}
    assert again == {**kept, "local": False, "kind": "standalone"} and set(again) == todays
    assert str(Cluster.from_state(tmp_path).hosts[0].key) == stored["hosts"][0]["key"]

    stored, again = _written_back(tmp_path, "cluster-1.json")  # one host, this one; kept
    assert set(again) == todays
    assert again["local"] and again["kept"] and again["master_host"] == "local"
    assert again["hosts"] == [records.dump(Host("local", stored["host"]))]
    master, worker = again["processes"]
    assert master == {
        **{"name": "master", "host": "local", "pid": stored["master_pid"], "log": ""},
        **{"argv": [], "webui": stored["master_webui"]},
    }
    assert worker == {**stored["workers"][0], "name": "worker 0", "host": "local"}
    assert (again["master_url"], again["master_webui"], again["placement"]) == (
        stored["master_url"],
        stored["master_webui"],
        stored["placement"],
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"schema": "numaspark.cluster/9"}', "schema 'numaspark.cluster/9' is not one this"),
        ('{"schema": "numaspark.cluster/2"}', "is not a cluster's state .*`hosts`"),
        ('{"schema": "numaspark.cluster/2", "hosts": 3}', "is not a cluster's state"),
        ("[]", "is not a cluster's state"),
        ("{", "is not a cluster's state"),
    ],
)
def test_a_state_file_it_cannot_read_is_one_line_naming_it(tmp_path, text, says):
    (tmp_path / STATE_FILE).write_text(text)
    with pytest.raises(UsageError, match=says) as caught:
        Cluster.from_state(tmp_path)
    assert str(tmp_path / STATE_FILE) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_every_recorded_version_loads_and_writes_back_as_it_was():
    """The recorded runs of both versions (run/1: wordcount-core; run/2: the applications)
    load, and write back the same but for the fields added since (null) and the readings
    numaspark 0.2 wrote (computed when shown now)."""
    versions = set()
    for path in RUNS:
        for line in path.read_text().splitlines():
            data = json.loads(line)
            versions.add(data["schema"])
            again = json.loads(json.dumps(records.dump(records.load(RunResult, data))))
            data.pop("readings", None)
            data["spec"] = dict.fromkeys(("application", "timed", "numa_balancing")) | data["spec"]
            data["app"] = {"job_time_ms": None} | data["app"]
            assert again == data, path
    assert versions == {"numaspark.run/1", "numaspark.run/2"}


def test_a_newer_version_is_refused_by_name_as_a_usage_and_a_value_error():
    line = json.loads(RUNS[0].read_text().splitlines()[0])
    with pytest.raises(SchemaError, match=r"numaspark.run/9.*a newer numaspark") as caught:
        records.load(RunResult, {**line, "schema": "numaspark.run/9"})
    assert isinstance(caught.value, UsageError) and isinstance(caught.value, ValueError)


@dataclass(frozen=True)
class _Part:
    cpus: CpuSet
    size: int | None = None

    __json__: ClassVar[Shape] = Shape(keys={"size": "size_bytes"}, omit_none=("size",))


@dataclass(frozen=True)
class _Toy:
    name: str
    parts: tuple[_Part, ...] = ()
    low: int = 0
    high: int | None = None
    note: str | None = None
    tags: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()
    heap: int = 0
    kind: str = "plain"
    schema: str = "toy/2"
    extra: dict = field(default_factory=dict)

    __json__: ClassVar[Shape] = Shape(
        keys={"low": "range.low", "high": "range.high", "heap": "heap_bytes"},
        computed=("count", "shout"),
        omit_none=("note",),
        omit_empty=("tags",),
        null_empty=("listed", "range"),
        forms={"heap": (lambda n: f"{n // GIB}g", lambda s: int(s[:-1]) * GIB)},
        absent={"kind": "old"},
        extra="extra",
        schemas=("toy/1", "toy/2"),
    )

    @property
    def count(self) -> int:
        return len(self.parts)

    def shout(self) -> str:
        return self.name.upper()


def test_a_shape_says_every_way_a_records_json_differs_from_its_fields(monkeypatch):
    seen = []
    monkeypatch.setitem(records.UPGRADES, "toy/1", lambda d: seen.append(1) or {**d, "kind": "1"})
    monkeypatch.setitem(records.UPGRADES, "toy/2", lambda d: seen.append(2) or d)
    toy = _Toy("x", (_Part(CpuSet([0, 1]), 4), _Part(CpuSet())), heap=2 * GIB, extra={"n": 1})
    stored = records.dump(toy)
    assert stored == {
        "name": "x",
        "parts": [{"cpus": "0-1", "size_bytes": 4}, {"cpus": ""}],
        "range": None,  # a group all of whose values are empty: null
        "listed": None,
        "heap_bytes": "2g",
        "kind": "plain",
        "schema": "toy/2",
        "count": 2,
        "shout": "X",
        "n": 1,
    }
    again = records.load(_Toy, stored)
    assert again == toy and seen == [2]  # only the upgrades from its version on
    older = records.load(_Toy, {"name": "y", "range": {"low": 3}, "kind": None, "z": [1]})
    assert seen == [2, 1, 2] and older.kind == "1" and older.low == 3
    assert older.extra == {"z": [1]}  # a key a newer numaspark wrote, kept
    assert records.load(_Toy, {"name": "z", "schema": "toy/2"}).kind == "old"  # absent
    with pytest.raises(ValueError):
        records.load(_Toy, {"name": "w", "parts": [{"cpus": 3}]})


def test_a_topology_writes_its_documented_keys_in_order_and_reads_back():
    topology = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    stored = records.dump(topology)
    assert list(stored) == [
        *("schema", "source", "fingerprint", "hostname", "architecture", "cpu_model"),
        *("hwloc_version", "summary", "cpus", "allowed_nodes", "packages", "numa_nodes"),
        *("l3_domains", "cores", "pus", "distances", "cgroup", "devices"),
    ]
    assert list(stored["cpus"]) == ["complete", "online", "offline", "allowed"]
    assert list(stored["pus"][0]) == [
        *("logical_index", "os_index", "core", "node", "siblings", "allowed"),
    ]
    assert stored["pus"][0]["siblings"] == str(topology.siblings(topology.pus[0].os_index))
    again = records.load(Topology, json.loads(json.dumps(stored)))
    assert again == topology and records.dump(again) == stored
    with pytest.raises(ValueError, match="numaspark.topology/2"):
        records.load(Topology, {**stored, "schema": "numaspark.topology/2"})


def test_a_plan_reads_back_and_so_does_one_a_person_wrote():
    topology = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    placement = plan(topology, Layout(executors=2), Binding.CORE)
    assert records.load(Placement, placement_to_dict(placement)).jvms == placement.jvms
    written = {
        "binding": "node",
        "layout": {"memory_per_executor": "2g", "resources": {"gpu": 1}},
        "jvms": [{"role": "executor", "cores": 2, "heap": "2g", "cpus": "0-1", "nodes": "0"}],
        "spark_conf": {"spark.executor.cores": "2"},
    }
    read = records.load(Placement, written)
    (jvm,) = read.jvms
    assert jvm.heap == 2 * GIB and jvm.binding is Binding.NODE  # the plan's binding
    assert jvm.cpus == CpuSet([0, 1]) and jvm.mem_nodes == CpuSet() and jvm.index == 0
    assert read.layout.memory_per_executor == 2 * GIB and read.layout.driver_memory == GIB
    assert read.layout.resources == (("gpu", 1),)
    assert read.recorded_conf == (("spark.executor.cores", "2"),)


def test_the_jobs_shipped_to_executors_import_no_msgspec():
    """An executor's Python has the standard library and pyspark only (spark/pyfiles.py): the
    records the workloads declare must not bring msgspec in."""
    probe = "import sys, numaspark.workloads.jobs.sort; print('msgspec' in sys.modules)"
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "False"
