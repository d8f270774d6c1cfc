"""numaspark probe: the commands per node pair (multi-node on synthetic topologies, since this
machine has one node), the matrices, the regions, and a real 1x1 probe here."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from numaspark.probe import (
    bandwidth_region,
    build_membench,
    matrices,
    plan_probe,
    sustained_bandwidth_bps,
)
from numaspark.topology import load_synthetic


def test_commands_for_every_cpu_node_and_memory_node_pair():
    topology = load_synthetic("package:2 numa:1 core:4 pu:2")  # 2 nodes, 8 CPUs each
    commands = plan_probe(topology, elements=1 << 20, loads=1000, latency_bytes=1 << 24)
    pairs = {(c.kind, c.cpu_node, c.mem_node) for c in commands}
    assert pairs == {(k, i, j) for k in ("bandwidth", "latency") for i in (0, 1) for j in (0, 1)}
    bandwidth = next(
        c for c in commands if c.kind == "bandwidth" and (c.cpu_node, c.mem_node) == (1, 0)
    )
    assert bandwidth.argv[:3] == ["numactl", "--cpunodebind=1", "--membind=0"]
    assert bandwidth.argv[3:] == ["membench", "bandwidth", str(1 << 20), "5"]
    assert bandwidth.env["OMP_NUM_THREADS"] == "8"  # every CPU of node 1
    latency = next(c for c in commands if c.kind == "latency" and c.cpu_node == 1)
    assert latency.argv[1] == "--physcpubind=8"  # one CPU of node 1: a chase is one thread


def test_matrices_and_the_sustained_maximum():
    raw = [
        {
            "kind": "bandwidth",
            "cpu_node": i,
            "mem_node": j,
            "copy_mbps": 1.0,
            "scale_mbps": 1.0,
            "add_mbps": 1.0,
            "triad_mbps": 100.0 if i == j else 60.0,
        }
        for i in (0, 1)
        for j in (0, 1)
    ] + [
        {"kind": "latency", "cpu_node": i, "mem_node": j, "ns_per_load": 90.0 if i == j else 140.0}
        for i in (0, 1)
        for j in (0, 1)
    ]
    found = matrices(raw)
    assert found["bandwidth_mbps"]["triad"] == [[100.0, 60.0], [60.0, 100.0]]
    assert found["latency_ns"] == [[90.0, 140.0], [140.0, 90.0]]
    assert sustained_bandwidth_bps(found) == 100e6


@pytest.mark.parametrize(
    ("share", "region"),
    [
        (0.1, "constant"),
        (0.39, "constant"),
        (0.4, "linear"),
        (0.8, "linear"),
        (0.81, "exponential"),
    ],
)
def test_regions(share, region):
    assert bandwidth_region(share * 1e9, 1e9) == region


def test_a_real_probe_of_this_machine(tmp_path, monkeypatch):
    assert build_membench().exists()
    monkeypatch.setenv("NUMASPARK_CACHE", str(tmp_path))
    proc = run_cli(
        "probe",
        "--size",
        "32MB",
        "--latency-size",
        "32MB",
        "--loads",
        "200000",
        "--repeat",
        "2",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["cpu_nodes"] == [0] and found["mem_nodes"] == [0]  # one node here
    (row,) = found["bandwidth_mbps"]["triad"]
    # MB/s: any real machine does far better, even loaded (48 beside two guest boots)
    assert row[0] > 10
    assert found["latency_ns"][0][0] > 1
    saved = json.loads(next(tmp_path.glob("probe-*.json")).read_text())
    assert saved["schema"] == "numaspark.probe/1" and saved["topology_fingerprint"]


def test_probe_of_another_machine_only_prints_commands():
    proc = run_cli("probe", "--synthetic", "package:2 numa:2 core:2 pu:1")
    assert proc.returncode == 0
    assert proc.stdout.count("membench bandwidth") == 16  # 4 CPU nodes x 4 memory nodes
    assert "--membind=3" in proc.stdout
