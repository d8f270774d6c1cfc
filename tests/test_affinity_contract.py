"""The Python side of the affinity plugin's contract (jvm/contract.json; the Java side is
jvm/src/test/.../ContractTest.java): every conf key numaspark renders is one the plugin reads,
and every field numaspark reads from the plugin's JSON lines is one the plugin writes, with
the contract's JSON type. No JVM."""

from __future__ import annotations

import json
import types
import typing
from dataclasses import fields
from pathlib import Path

import pytest
from conftest import FIXTURES

from numaspark import records
from numaspark.placement import plugin
from numaspark.placement.plugin import CONF_PREFIX, SLOTS_ENV, PlacementReport, TaskRecord
from numaspark.spark.affinity import TASK_DETAIL, read_records

CONTRACT = json.loads((Path(__file__).parents[1] / "jvm" / "contract.json").read_text())
JSON_TYPES = {int: "integer", str: "string", float: "number", dict: "object", list: "array"}


def _fields(part: str) -> dict[str, dict]:
    return {f["name"]: f for f in CONTRACT[part]["fields"]}


def _json_type(hint: object) -> str:
    """The JSON type of a reader's field annotation (``int | None`` is "integer")."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        (hint,) = args
    return JSON_TYPES[typing.get_origin(hint) or hint]


def test_the_conf_keys_python_sets_are_the_plugins():
    conf = CONTRACT["conf"]
    assert conf["prefix"] == CONF_PREFIX
    keys = {CONF_PREFIX + k["name"]: k for k in conf["keys"]}
    ours = {v for name, v in vars(plugin).items() if name.endswith("_KEY")}
    assert ours, "placement/plugin.py names no key"
    assert ours <= set(keys), sorted(ours - set(keys))
    assert keys[CONF_PREFIX + "slotsEnv"]["default"] == SLOTS_ENV


@pytest.mark.parametrize(
    ("reader", "part"), [(TaskRecord, "task_record"), (PlacementReport, "placement_report")]
)
def test_the_fields_python_reads_are_the_plugins(reader, part):
    contract = _fields(part)
    hints = typing.get_type_hints(reader)
    for field in fields(reader):
        assert field.name in contract, f"{reader.__name__}.{field.name} is not in {part}"
        assert _json_type(hints[field.name]) == contract[field.name]["type"], field.name
    assert set(TASK_DETAIL) <= {f.name for f in fields(TaskRecord)}


def test_recorded_task_lines_have_only_contract_fields():
    run_dir = FIXTURES / "runs" / "wordcount-core"
    task_fields = _fields("task_record")
    lines = [
        json.loads(line)
        for path in sorted((run_dir / "affinity").glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    assert lines
    for line in lines:
        assert set(line) <= set(task_fields), sorted(set(line) - set(task_fields))
        required = {n for n, f in task_fields.items() if not f.get("optional")}
        assert required <= set(line), sorted(required - set(line))
    records = read_records(run_dir)
    assert len(records) == len(lines) and records[0].cpu_end == lines[0]["cpu_end"]


def test_the_node_level_keys_and_report_fields_are_in_the_contract():
    keys = {k["name"]: k for k in CONTRACT["conf"]["keys"]}
    assert plugin.LOCK_DIR_KEY == CONF_PREFIX + "lockDir"
    assert keys["lockDir"]["default"] == plugin.DEFAULT_LOCK_DIR
    assert plugin.MEM_POLICY_KEY == CONF_PREFIX + "memPolicy"
    assert keys["memPolicy"]["default"] == "preferred"
    report = _fields("placement_report")
    for name in ("chosen_nodes", "choice", "binding"):
        assert report[name]["optional"] and report[name]["type"] == "string", name
        assert name in {f.name for f in fields(PlacementReport)}, name


def test_an_executors_node_choice_is_in_the_run_record():
    from numaspark.readback.proc import EffectiveJvm

    line = {
        "executor": "1",
        "host": "h",
        "pid": 7,
        "cpus": "12-23",
        "mems": "0-1",
        "policy": "default",
        "bytes_per_node": {"1": 4096},
        "local_share": 1.0,
        "pinned_tasks": 0,
        "task_migrations": 0,
        "chosen_nodes": "1",
        "choice": "slot 0 of node 1 in /tmp/numaspark-affinity (nodes 0-1 allowed)",
        "binding": "every thread (40 now) bound to CPUs 12-23; 1 MB migrated to node(s) 1",
    }
    jvm = EffectiveJvm.reported(PlacementReport.from_json(line), 0)
    stored = records.dump(jvm)
    assert stored["chosen_nodes"] == "1" and stored["choice"].startswith("slot 0 of node 1")
    assert stored["binding"].startswith("every thread") and stored["bytes_per_node"] == {"1": 4096}
    assert records.load(EffectiveJvm, stored) == jvm
    below = EffectiveJvm.reported(
        PlacementReport.from_json({**line, "chosen_nodes": None, "choice": None, "binding": None}),
        0,
    )
    assert not {"chosen_nodes", "choice", "binding"} & set(records.dump(below))  # as before


def test_recorded_placement_reports_have_only_contract_fields():
    """Reports the real plugin sent (tests/fixtures/plugin: an executor's first, with its
    host, and the next, without), against the contract's names and types."""
    report_fields = _fields("placement_report")
    lines = [
        json.loads(line)
        for line in (FIXTURES / "plugin" / "first-reports.jsonl").read_text().splitlines()
    ]
    assert len(lines) == 2 and "host_topology" in lines[0] and "host_topology" not in lines[1]
    for line in lines:
        assert set(line) <= set(report_fields), sorted(set(line) - set(report_fields))
        required = {n for n, f in report_fields.items() if not f.get("optional")}
        assert required <= set(line), sorted(required - set(line))
        for name, value in line.items():
            kind = {"integer": int, "number": (int, float), "string": str, "object": dict}
            assert isinstance(value, kind[report_fields[name]["type"]]), name
    assert report_fields["host_topology"]["optional"]
    assert set(lines[0]["host_topology"]) == {
        "nodes",
        "node_memory_bytes",
        "cores",
        "packages",
        "distances",
    }
