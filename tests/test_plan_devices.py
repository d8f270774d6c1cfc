"""Executors planned by their devices (`plan --gpus-per-executor N`, `--resource NAME=N`),
rendered for Spark's resource scheduling, and the discovery script the wheel ships.

The GPU servers are real hwloc exports from shared/topologies (this machine has one node
and no GPU): an NVIDIA DGX-2 (16 GPUs, 8 behind each of 2 sockets, trimmed to 2 CPUs a
socket) and a two-socket Xeon with every I/O object (GPUs and NICs behind node 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from math import floor

import pytest
from conftest import run_cli, topology_file

from numaspark import records
from numaspark.errors import PlacementError, UsageError
from numaspark.placement import (
    Binding,
    Layout,
    Mode,
    Placement,
    Platform,
    placement_to_dict,
    plan,
    platform_files,
    spark_conf,
)
from numaspark.placement.devices import parse_resources
from numaspark.placement.plugin import DEVICE_RESOURCE_KEY
from numaspark.placement.resources import (
    DISCOVERY_SCRIPT,
    resource_env,
    task_amount,
    worker_resources,
)
from numaspark.topology import CpuSet, load_machine, load_xml


@pytest.fixture(scope="module")
def dgx2():
    return load_xml(topology_file("nvidiaDGX2.xml"))


@pytest.fixture(scope="module")
def wholeio():
    return load_xml(topology_file("32em64t-2n8c2t-pci-wholeio.xml"))


def _gpus(per_executor: int, **layout) -> Layout:
    return Layout(resources=(("gpu", per_executor),), **layout)


@pytest.mark.parametrize("binding", [Binding.NODE, Binding.CORE, Binding.PU])
def test_each_gpu_goes_to_one_executor_bound_to_the_node_it_hangs_off(dgx2, binding):
    placement = plan(dgx2, _gpus(4), binding)
    executors = placement.executors
    assert len(executors) == 4  # 8 GPUs a node, 4 an executor
    owned = [d.pci_busid for j in executors for d in j.devices]
    assert len(owned) == len(set(owned)) == 16
    for jvm in executors:
        node = {d.node for d in jvm.devices}
        assert len(jvm.devices) == 4 and len(node) == 1
        assert jvm.nodes == jvm.mem_nodes and set(jvm.nodes) == node
        assert jvm.cpus.issubset(dgx2.node(node.pop()).cpus)
    # Spark's addresses are the NVML indexes hwloc names them by: nvidia-smi's numbering
    assert [[d.address for d in j.devices] for j in executors] == [
        [str(i) for i in range(k, k + 4)] for k in (0, 4, 8, 12)
    ]
    assert all(d.address == d.name.removeprefix("nvml") for j in executors for d in j.devices)


def test_executors_per_node_are_the_floor_of_its_devices_and_cores_are_shared(dgx2, wholeio):
    one_each = plan(dgx2, _gpus(8), Binding.CORE)
    assert [(str(j.nodes), j.cores, len(j.devices)) for j in one_each.executors] == [
        ("0", 2, 8),
        ("1", 2, 8),
    ]
    # the wholeio Xeon: a GPU on node 0, three on node 1; NICs only on node 1
    both = plan(wholeio, Layout(resources=(("gpu", 1), ("nic", 1))), Binding.CORE)
    assert [str(j.nodes) for j in both.executors] == ["1", "1", "1"]
    assert [sorted(d.resource for d in j.devices) for j in both.executors] == [["gpu", "nic"]] * 3
    assert any("node 0: 1 of its 1 GPU(s) go to no executor" in n for n in both.notes)
    gpus_only = plan(wholeio, _gpus(2), Binding.NODE)
    assert [str(j.nodes) for j in gpus_only.executors] == ["1"]
    assert [d.name for d in gpus_only.executors[0].devices] == ["0000:83:00.0", "cuda0"]
    assert any("node 1: 1 of its 3 GPU(s)" in n for n in gpus_only.notes)


def test_unbound_executors_still_own_gpus_of_one_node(dgx2):
    placement = plan(dgx2, _gpus(8), Binding.NONE)
    assert [{d.node for d in j.devices} for j in placement.executors] == [{0}, {1}]
    assert all(j.cpus == dgx2.allowed_cpus for j in placement.executors)


@pytest.mark.parametrize(
    ("layout", "binding", "says"),
    [
        (_gpus(9), Binding.NODE, "no NUMA node has 9 GPUs (node 0: 8, node 1: 8): give at most 8"),
        (_gpus(1), Binding.NODE, "node 0 allows 2 CPUs, too few for the 8 executor(s)"),
        (_gpus(2), Binding.CORE, "node 0 allows 2 cores, too few for the 4 executor(s)"),
        (_gpus(4, cores_per_executor=2), Binding.NODE, "x 2 cores: give each executor more"),
        (Layout(resources=(("nic", 1),)), Binding.NODE, "has no NIC"),
    ],
)
def test_a_request_no_node_can_hold_is_refused(dgx2, layout, binding, says):
    with pytest.raises(PlacementError) as refused:
        plan(dgx2, layout, binding)
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_device_requests_that_make_no_sense_are_usage_errors(dgx2):
    for layout, says in (
        (_gpus(4, executors=2), "leave out --executors"),
        (_gpus(4, executors_per_node=1), "leave out --executors"),
        (_gpus(4, mode=Mode.LOCAL), "give --mode standalone"),
    ):
        with pytest.raises(UsageError, match=says):
            plan(dgx2, layout, Binding.NODE)
    assert parse_resources(2, ["nic=1", "NVME=1"]) == (("gpu", 2), ("nic", 1), ("nvme", 1))
    for gpus, given, says in (
        (None, ["fpga=1"], "gpu, accelerator, nic, nvme"),
        (None, ["gpu"], "NAME=N"),
        (1, ["gpu=1"], "twice"),
        (0, [], "at least 1"),
    ):
        with pytest.raises(UsageError, match=says):
            parse_resources(gpus, given)


def test_only_the_nodes_asked_for_are_planned(dgx2):
    placement = plan(dgx2, _gpus(4), Binding.NODE, only_nodes=CpuSet([1]))
    assert [d.node for j in placement.executors for d in j.devices] == [1] * 8


def test_the_plan_json_names_each_executors_devices_and_loads_back(dgx2):
    placement = plan(dgx2, _gpus(4), Binding.NODE)
    record = placement_to_dict(placement)
    assert record["layout"]["resources"] == {"gpu": 4}
    executors = [j for j in record["jvms"] if j["runs_tasks"]]
    first = executors[0]["devices"][0]
    assert first == {
        "resource": "gpu",
        "address": "0",
        "name": "nvml0",
        "pci_busid": "0000:34:00.0",
        "node": 0,
        "kind": "gpu",
    }
    assert "devices" not in record["jvms"][0]  # the driver owns none
    again = records.load(Placement, json.loads(json.dumps(record)))
    assert again.layout.resources == (("gpu", 4),)
    assert [j.devices for j in again.executors] == [j.devices for j in placement.executors]


def test_the_command_line_plans_by_gpus_and_refuses_in_one_line():
    xml = str(topology_file("nvidiaDGX2.xml"))
    proc = run_cli("plan", "--xml", xml, "--gpus-per-executor", "8", "--bind", "node", "--json")
    assert proc.returncode == 0, proc.stderr
    executors = [j for j in json.loads(proc.stdout)["jvms"] if j["runs_tasks"]]
    assert [(j["nodes"], [d["node"] for d in j["devices"]]) for j in executors] == [
        ("0", [0] * 8),
        ("1", [1] * 8),
    ]
    refused = run_cli("plan", "--xml", xml, "--gpus-per-executor", "9", "--bind", "node")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "Error: --gpus-per-executor 9: no NUMA node has 9 GPUs (node 0: 8, node 1: 8): give at most 8"
    ]


def test_this_machine_is_planned_by_its_gpus_or_refused_for_lack_of_one():
    """Whatever this machine is (here: a virtio NIC, no GPU): its GPUs, each to one executor
    of its node, or one line saying it has none."""
    machine = load_machine()
    gpus = machine.devices_of("gpu")
    if not gpus:
        with pytest.raises(PlacementError, match="has no GPU"):
            plan(machine, _gpus(1), Binding.NODE)
        return
    try:
        placement = plan(machine, _gpus(1), Binding.NODE)
    except PlacementError as refused:  # a GPU of no known node, or too few CPUs for them
        assert "\n" not in str(refused)
        return
    owned = [d.pci_busid for j in placement.executors for d in j.devices]
    assert len(owned) == len(set(owned)) <= len(gpus)


def test_the_task_amount_shares_the_devices_among_every_task_slot():
    assert [task_amount(c) for c in (1, 2, 8, 3)] == ["1", "0.5", "0.125", "0.333333333333"]
    for cores in range(1, 257):
        amount = Decimal(task_amount(cores))
        assert amount <= 1 and (cores == 1 or amount <= Decimal("0.5"))  # Spark's rule
        assert floor(1 / float(amount)) >= cores  # Spark's parts per device: no slot lost


def test_spark_conf_asks_for_the_devices_and_names_the_shipped_discovery_script(dgx2):
    placement = plan(dgx2, _gpus(4), Binding.NODE)
    conf = spark_conf(placement)
    assert conf["spark.executor.resource.gpu.amount"] == "4"
    assert conf["spark.task.resource.gpu.amount"] == "1"  # one task slot an executor here
    assert conf["spark.executor.resource.gpu.discoveryScript"] == str(DISCOVERY_SCRIPT)
    assert DISCOVERY_SCRIPT.is_file() and os.access(DISCOVERY_SCRIPT, os.X_OK)
    xeon = spark_conf(plan(load_xml(topology_file("24em64t-2n6c2t-pci.xml")), _gpus(1)))
    # the fewest CPUs a node has for each of its executors: node 1's 12 for its 2 GPUs
    assert xeon["spark.executor.cores"] == "6"
    assert xeon["spark.task.resource.gpu.amount"] == task_amount(6) == "0.166666666666"


def test_several_resources_are_asked_for_and_no_script_pretends_to_serve_them(wholeio):
    """Spark runs each resource's script with no argument and the same environment: one
    script cannot answer for two, so the workers' resources file hands them out."""
    conf = spark_conf(plan(wholeio, Layout(resources=(("gpu", 1), ("nic", 1))), Binding.CORE))
    assert conf["spark.executor.resource.gpu.amount"] == "1"
    assert conf["spark.executor.resource.nic.amount"] == "1"
    assert not [k for k in conf if k.endswith("discoveryScript")]


def _discover(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The script as Spark runs it: the file itself, no argument, only the environment given
    (and PATH, for its ``#!/usr/bin/env python3``), nothing of numaspark importable."""
    return subprocess.run(
        [str(DISCOVERY_SCRIPT)],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], **env},
        cwd="/",
        timeout=30,
    )


def test_the_discovery_script_prints_sparks_json_of_the_planned_devices(dgx2):
    placement = plan(dgx2, _gpus(4), Binding.NODE)
    for jvm in placement.executors:
        proc = _discover(resource_env(jvm))
        assert proc.returncode == 0, proc.stderr
        found = json.loads(proc.stdout)
        # Spark's ResourceInformation JSON: a name and a list of string addresses
        assert set(found) == {"name", "addresses"} and found["name"] == "gpu"
        assert found["addresses"] == [d.address for d in jvm.devices]
        assert all(isinstance(a, str) for a in found["addresses"])
    # stdlib only: with site-packages off (-S) and isolated (-I) it runs the same
    isolated = subprocess.run(
        [sys.executable, "-I", "-S", str(DISCOVERY_SCRIPT)],
        capture_output=True,
        text=True,
        env={"NUMASPARK_RESOURCE_GPU": "3,4"},
        timeout=30,
    )
    assert json.loads(isolated.stdout) == {"name": "gpu", "addresses": ["3", "4"]}


def test_the_discovery_script_refuses_to_guess_in_one_line():
    for env, says in (
        ({}, "no resource planned"),
        ({"NUMASPARK_RESOURCE_GPU": ""}, "no gpu planned"),
        (
            {"NUMASPARK_RESOURCE_GPU": "0", "NUMASPARK_RESOURCE_NIC": "ib0"},
            "NUMASPARK_RESOURCE_NAME",
        ),
    ):
        proc = _discover(env)
        assert proc.returncode == 1 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1 and says in proc.stderr
    chosen = _discover(
        {
            "NUMASPARK_RESOURCE_GPU": "0",
            "NUMASPARK_RESOURCE_NIC": "ib0",
            "NUMASPARK_RESOURCE_NAME": "nic",
        }
    )
    assert json.loads(chosen.stdout) == {"name": "nic", "addresses": ["ib0"]}


def test_a_standing_standalone_worker_gets_its_resources_file(dgx2, tmp_path):
    placement = plan(dgx2, _gpus(4), Binding.NODE)
    settings = Platform.STANDALONE.settings(placement, dgx2)
    files = platform_files(Platform.STANDALONE, settings, tmp_path)
    resources = json.loads(files["worker-resources.json"])
    assert resources == [
        {
            "id": {"componentName": "spark.worker", "resourceName": "gpu"},
            "addresses": [str(i) for i in range(16)],
        }
    ]
    assert resources == worker_resources(placement)
    readme = files["README.txt"]
    path = str((tmp_path / "worker-resources.json").resolve())
    assert f"-Dspark.worker.resourcesFile={path}" in readme
    assert "-Dspark.worker.resource.gpu.amount=16" in readme
    assert DISCOVERY_SCRIPT.name in readme and "same path on every worker host" in readme
    conf = files["spark-defaults.conf"]
    assert "spark.executor.resource.gpu.amount" in conf and str(DISCOVERY_SCRIPT) in conf


def test_yarn_asks_for_yarn_gpus_and_says_what_yarn_does_not_do(dgx2):
    placement = plan(dgx2, _gpus(4), Binding.NODE)
    settings = Platform.YARN.settings(placement, dgx2)
    assert settings["spark"]["spark.executor.resource.gpu.amount"] == "4"
    assert settings["spark"]["spark.task.resource.gpu.amount"] == "1"
    assert "spark.executor.resource.gpu.discoveryScript" not in settings["spark"]
    assert settings["yarn-site"]["yarn.nodemanager.resource-plugins"] == "yarn.io/gpu"
    assert "yarn.io/gpu" in settings["why"]["devices"]
    # a plan without devices is as before
    plain = Platform.YARN.settings(plan(dgx2, Layout(executors_per_node=1), Binding.NODE), dgx2)
    assert "yarn.nodemanager.resource-plugins" not in plain["yarn-site"]


def test_kubernetes_asks_for_nvidia_gpus_on_one_numa_node(dgx2):
    """One executor a socket (8 GPUs each): the kubelet's CPU reservation takes a core of the
    socket's two, as issue 33's rules have it (tests/test_kubelet_rules.py)."""
    placement = plan(dgx2, _gpus(8), Binding.NODE)
    settings = Platform.K8S.settings(placement, dgx2)
    spark = settings["spark"]
    assert spark["spark.executor.resource.gpu.vendor"] == "nvidia.com"
    assert spark["spark.executor.resource.gpu.amount"] == "8"
    assert spark["spark.kubernetes.executor.request.cores"] == "1"
    assert settings["kubelet"]["topologyManagerPolicy"] == "single-numa-node"
    assert settings["kubelet"]["cpuManagerPolicy"] == "static"
    assert "nvidia.com/gpu" in settings["cost"]["devices"]
    # the plugin's alternative asks Spark for the same devices
    assert settings["spark-plugin"]["spark.executor.resource.gpu.amount"] == "8"


@pytest.mark.parametrize(
    ("resources", "named"),
    [((("nic", 1),), "nic"), ((("gpu", 1), ("nic", 1)), "gpu,nic"), ((("gpu", 1),), "gpu")],
)
def test_the_plugin_binds_by_every_resource_the_plan_gives(wholeio, resources, named):
    """At level node the plugin binds an executor to the node of the devices its
    deviceResource names (comma-separated, jvm/ AffinityConf): every rendering of the plugin
    names each resource the plan gives executors, so a NIC binds as a GPU does."""
    placement = plan(wholeio, Layout(resources=resources), Binding.NODE)
    standalone = Platform.STANDALONE.settings(placement, wholeio)["spark-defaults.conf"]
    assert standalone[DEVICE_RESOURCE_KEY] == named
    for target in (Platform.YARN, Platform.K8S):
        assert target.settings(placement, wholeio)["spark-plugin"][DEVICE_RESOURCE_KEY] == named
    pinned = plan(wholeio, Layout(resources=resources), Binding.CORE)
    assert spark_conf(pinned)[DEVICE_RESOURCE_KEY] == named  # the tasks' plugin, told too


def test_the_command_line_names_a_nic_to_the_plugin_and_a_plan_without_devices_nothing():
    xml = str(topology_file("32em64t-2n8c2t-pci-wholeio.xml"))
    target = ["--xml", xml, "--bind", "node", "--target", "standalone", "--json"]
    proc = run_cli("plan", *target, "--resource", "nic=1", check=True)
    assert (
        json.loads(proc.stdout)["standalone"]["spark-defaults.conf"][DEVICE_RESOURCE_KEY] == "nic"
    )
    plain = run_cli("plan", *target, "--executors-per-node", "1", check=True)
    assert DEVICE_RESOURCE_KEY not in json.loads(plain.stdout)["standalone"]["spark-defaults.conf"]
