"""Executors and their devices (issue 50, items 3 and 4): the devices Spark gave each executor
and the interface its traffic leaves by, as the affinity plugin reports them from inside, read
back from an event log alone, and the two advise rules on them (device-node, nic-node).

The fast tests write small plain event logs by hand, of a two-node host: this machine has one
NUMA node and no GPU, so an executor whose GPU hangs off the other node exists only on paper
here. The JVM test runs real Spark on this machine with the plugin: a local cluster whose
worker is given a resource named ``gpu`` by a discovery script printing addresses no device
here has (no binding by them is claimed), and the driver on this machine's outward address, so
that the executor reports the interface its traffic leaves by (a virtio NIC here, whose
firmware gives it no NUMA node).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from test_event_log_reports import TWO_NODES, _report  # the hand-written two-node host

from numaspark import records
from numaspark.decide.advise import Severity, advise_event_log
from numaspark.decide.readings import reported_placement
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement.plugin import DEVICE_RESOURCE_KEY, LEVEL_KEY, PLACEMENT_EVENT, jar_path
from numaspark.readback.proc import EffectiveJvm
from numaspark.report.console import placement_lines

ETH0_NODE0 = {"name": "eth0", "node": 0, "pci_busid": "0000:18:00.0", "route": "route to x"}


def _gpu(address: str, node: int | None, busid: str | None = "0000:3b:00.0") -> dict:
    device = {"resource": "gpu", "address": address, "pci_busid": busid, "node": node}
    return {k: v for k, v in device.items() if v is not None}


def _log(path: Path, reports: list[dict], master: str = "spark://m:7077") -> Path:
    """A plain event log of an application on a two-node host (hand-written: this machine has
    one node), its first report carrying the host's topology, as Spark's writer lays it out."""
    reports = [{**reports[0], "host_topology": TWO_NODES}, *reports[1:]] if reports else []
    events = [
        {"Event": "SparkListenerLogStart", "Spark Version": "4.0.1"},
        {
            "Event": "SparkListenerApplicationStart",
            "App Name": "gpu-etl",
            "App ID": "app-1",
            "Timestamp": 1000,
            "User": "u",
        },
        {
            "Event": "SparkListenerEnvironmentUpdate",
            "Spark Properties": {"spark.master": master, LEVEL_KEY: "none"},
        },
        {"Event": PLACEMENT_EVENT, "version": 1, "time_ms": 2000, "reports": reports},
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 9000},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _rules(path: Path) -> tuple[dict, dict]:
    advice = advise_event_log(path)
    return {f.rule: f for f in advice.findings}, {n.rule: n.why for n in advice.not_assessed}


def test_a_gpu_on_another_node_than_its_executors_cpus_is_a_finding_with_the_command(tmp_path):
    """Two-node host, hand-written: executor 1 runs on node 0's CPUs with its GPU on node 1;
    executor 2 runs on node 1 with its GPU there."""
    log = _log(
        tmp_path / "app-1",
        [
            _report("1", "0-3", devices=[_gpu("0", 1)]),
            _report("2", "4-7", devices=[_gpu("1", 1, "0000:5e:00.0")]),
        ],
    )
    found, _ = _rules(log)
    device = found["device-node"]
    assert device.severity is Severity.MODERATE
    assert device.finding.startswith("1 of 2 executor(s) given devices run on other nodes")
    assert "executor 1 on node(s) 0, its devices on node(s) 1" in device.finding
    (wrong,) = device.evidence["executors"]
    assert wrong["jvm"] == "executor 1" and wrong["cpu_nodes"] == "0"
    assert wrong["device_nodes"] == "1" and wrong["devices"][0]["pci_busid"] == "0000:3b:00.0"
    assert device.command == (
        "numaspark plan --target standalone --bind node --gpus-per-executor 1 --out DIR"
    )
    assert f"{LEVEL_KEY}=node" in device.recommendation
    assert DEVICE_RESOURCE_KEY in device.recommendation


def test_an_unbound_executor_over_both_nodes_and_a_yarn_command(tmp_path):
    """Two-node host, hand-written: an executor on every CPU with two GPUs of node 1 runs on
    its devices' node and the other one: a low finding; YARN's plan."""
    log = _log(
        tmp_path / "app-1",
        [_report("1", "0-7", devices=[_gpu("0", 1), _gpu("1", 1, "0000:5e:00.0")])],
        master="yarn",
    )
    device = _rules(log)[0]["device-node"]
    assert device.severity is Severity.LOW
    assert (
        device.command == "numaspark plan --target yarn --bind node --gpus-per-executor 2 --out DIR"
    )


def test_devices_on_their_executors_node_are_no_finding(tmp_path):
    log = _log(tmp_path / "app-1", [_report("1", "4-7", devices=[_gpu("0", 1)])])
    device = _rules(log)[0]["device-node"]
    assert device.severity is Severity.NONE and not device.command


def test_no_devices_or_none_known_is_not_assessed_with_why(tmp_path):
    _, unassessed = _rules(_log(tmp_path / "none", [_report("1", "0-3")]))
    assert "no executor reported devices" in unassessed["device-node"]
    unknown = _gpu("7", None, None) | {"unknown": "no gpu 7: /sys/bus/pci/devices has 0"}
    _, unassessed = _rules(_log(tmp_path / "unknown", [_report("1", "0-3", devices=[unknown])]))
    assert unassessed["device-node"] == (
        "executors reported devices, but their nodes are not known (no gpu 7: "
        "/sys/bus/pci/devices has 0)"
    )
    _, unassessed = _rules(_log(tmp_path / "empty", []))
    assert "numaspark plan --target ... --out DIR" in unassessed["device-node"]
    assert "numaspark plan --target ... --out DIR" in unassessed["nic-node"]


def test_a_nic_on_node_0_with_executors_on_node_1_is_advice_with_the_numbers(tmp_path):
    """Two-node host, hand-written: the interface of the route to the driver hangs off node 0;
    two of three executors run on node 1."""
    log = _log(
        tmp_path / "app-1",
        [
            _report("1", "4-7", nic=ETH0_NODE0),
            _report("2", "4-7", nic=ETH0_NODE0),
            _report("3", "0-3", nic=ETH0_NODE0),
        ],
    )
    nic = _rules(log)[0]["nic-node"]
    assert nic.severity is Severity.LOW
    assert nic.finding.startswith(
        "2 of 3 executor(s) run on node 1 while their traffic leaves by eth0 on node 0"
    )
    assert nic.recommendation.startswith("try binding one executor per node")
    assert "binds nothing" in nic.recommendation and not nic.command
    assert nic.evidence["interfaces"] == [{"host": "two-node", "name": "eth0", "node": 0}]
    assert [e["jvm"] for e in nic.evidence["elsewhere"]] == ["executor 1", "executor 2"]
    on_it = _log(tmp_path / "app-2", [_report("3", "0-3", nic=ETH0_NODE0)])
    assert _rules(on_it)[0]["nic-node"].severity is Severity.NONE


def test_a_virtual_nic_is_not_assessed_and_says_why(tmp_path):
    why = "the interface has no NUMA node (virtual: no PCI device of its own, as a loopback)"
    virtual = {"name": "br0", "route": "route to x", "unknown": why}
    _, unassessed = _rules(_log(tmp_path / "app-1", [_report("1", "4-7", nic=virtual)]))
    assert unassessed["nic-node"] == f"the interface br0: {why}"
    _, unassessed = _rules(_log(tmp_path / "app-2", [_report("1", "4-7")]))
    assert "no executor reported the interface" in unassessed["nic-node"]


def test_read_back_names_each_executors_devices_and_interface(tmp_path):
    """analyze's placement lines and a run's effective placement carry both; a JVM without
    them writes the record it wrote before."""
    log = parse_event_log(
        _log(tmp_path / "app-1", [_report("1", "0-3", devices=[_gpu("0", 1)], nic=ETH0_NODE0)])
    )
    (line,) = placement_lines(reported_placement(log.placement))[1:]
    assert line.endswith(", gpu 0 on node 1, traffic via eth0 (node 0)"), line
    (jvm,) = log.placement.effective()
    assert jvm.devices[0]["pci_busid"] == "0000:3b:00.0" and jvm.nic["name"] == "eth0"
    assert records.load(EffectiveJvm, records.dump(jvm)) == jvm
    bare = parse_event_log(_log(tmp_path / "app-2", [_report("1", "0-3")])).placement
    assert {"devices", "nic"}.isdisjoint(records.dump(bare.effective()[0]))


# --- real Spark -------------------------------------------------------------------------


def _outward_address() -> str | None:
    """This machine's address on its default route (no packet is sent), None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.9", 9))
        except OSError:
            return None
        return probe.getsockname()[0]


def _interface_node(address: str) -> tuple[str, int | None]:
    """The interface holding ``address`` (``ip -4 -o addr``) and its PCI function's
    numa_node, read here from /sys independently of the plugin (None: -1, or no function)."""
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True, check=True)
    (name,) = [x.split()[1] for x in out.stdout.splitlines() if f" {address}/" in x]
    device = Path("/sys/class/net", name, "device")
    if not device.exists():
        return name, None
    for place in [device.resolve(), *device.resolve().parents]:
        if (place / "numa_node").exists():
            node = int((place / "numa_node").read_text())
            return name, node if node >= 0 else None
    return name, None


@pytest.mark.jvm
def test_a_real_executor_reports_its_unknown_gpus_and_its_interface(tmp_path, no_spark_left):
    """One real application on a local cluster: its worker's discovery script hands out gpu
    addresses no device here has (index 0 and a bus id): the executor says so, binds at level
    node as it would without them, and the job runs; its report names the interface its
    traffic to the driver leaves by. advise and analyze read both from the event log alone."""
    from numaspark.spark.home import spark_env, spark_home

    address = _outward_address() or "127.0.0.1"
    script = tmp_path / "gpus.sh"
    script.write_text('#!/bin/sh\necho \'{"name": "gpu", "addresses": ["0", "0000:af:00.0"]}\'\n')
    script.chmod(0o755)
    app = tmp_path / "app.py"
    app.write_text(
        "from pyspark.sql import SparkSession\n"
        "spark = SparkSession.builder.getOrCreate()\n"
        "print('SUM', spark.sparkContext.parallelize(range(100), 2).map(lambda x: x * x).sum())\n"
        "spark.stop()\n"
    )
    events, placement = tmp_path / "events", tmp_path / "placement.jsonl"
    events.mkdir()
    conf = {
        "spark.plugins": "io.numaspark.affinity.spark.AffinityPlugin",
        "spark.driver.extraClassPath": str(jar_path()),
        "spark.executor.extraClassPath": str(jar_path()),
        LEVEL_KEY: "node",
        "spark.numaspark.affinity.lockDir": str(tmp_path / "locks"),
        "spark.numaspark.affinity.placementFile": str(placement),
        "spark.worker.resource.gpu.amount": "2",
        "spark.worker.resource.gpu.discoveryScript": str(script),
        "spark.executor.resource.gpu.amount": "2",
        "spark.task.resource.gpu.amount": "1",
        "spark.executor.memory": "512m",
        "spark.driver.host": address,
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        "spark.pyspark.python": sys.executable,
    }
    argv = [str(spark_home() / "bin" / "spark-submit"), "--master", "local-cluster[1,1,1024]"]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    proc = subprocess.run(
        [*argv, str(app)], env=spark_env(address), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and "SUM 328350" in proc.stdout, proc.stderr[-3000:]

    first = next(json.loads(x) for x in placement.read_text().splitlines() if '"executor":"0"' in x)
    assert [(d["address"], "node" in d) for d in first["devices"]] == [
        ("0", False),
        ("0000:af:00.0", False),
    ]
    assert first["devices"][0]["unknown"].startswith("no gpu 0: /sys/bus/pci/devices has 0")
    assert first["devices"][1]["unknown"].startswith("no PCI device 0000:af:00.0")
    assert first["chosen_nodes"] == "0", first  # bound as without devices: the one node here
    assert "no such device here" in first["choice"], first["choice"]
    name, node = _interface_node(address)
    nic = first["nic"]
    assert nic["name"] == name and nic.get("node") == node, (nic, name, node)
    assert nic["route"].startswith(f"holds the driver's address {address}"), nic
    if node is None:
        assert nic["unknown"], nic

    (log,) = list(events.iterdir())
    found, unassessed = _rules(log)
    assert unassessed["device-node"].startswith("executors reported devices, but their nodes")
    if node is None:
        assert unassessed["nic-node"] == f"the interface {name}: {nic['unknown']}"
    lines = placement_lines(reported_placement(parse_event_log(log).placement))
    executor = next(x for x in lines if x.strip().startswith("executor 0"))
    assert (
        f"gpu 0 on no known node, gpu 0000:af:00.0 on no known node, traffic via {name}" in executor
    )
