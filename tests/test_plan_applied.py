"""Issue 58, `plan` plans for where its files are used: each `--target` prints the placement
its realiser applies (numactl's, YARN's interleave, the plugin's preferred, the kubelet's
and the plugin's under their own headings), prints each file it writes whole, and at a
standalone master leaves a worker room for a driver in cluster deploy mode. Planned on the
saved servers of shared/topologies and on a recorded master's status page (no JVM)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cli, topology_file
from statuspage import recorded_status, serving

TWO_NODES = "24em64t-2n6c2t-pci.xml"
HEADER = re.compile(r"^==> (.+?) <==$", re.MULTILINE)


def printed_files(stdout: str) -> dict[str, str]:
    """Each ``==> NAME <==`` block of plan's output: its text up to the next block's line."""
    found = list(HEADER.finditer(stdout))
    blocks = {}
    for at, header in enumerate(found):
        end = found[at + 1].start() - 1 if at + 1 < len(found) else len(stdout)
        blocks[header.group(1)] = stdout[header.end() + 1 : end]
    return blocks


@pytest.mark.parametrize("target", ["standalone", "yarn", "k8s"])
@pytest.mark.parametrize("bind", ["node", "core", "none"])
def test_what_plan_prints_is_what_it_writes(tmp_path, target, bind):
    """One block per file written, equal to that file, for every target and binding."""
    out = tmp_path / "files"
    shown = _plan(target, "--out", str(out), bind=bind)
    blocks = printed_files(shown)
    written = {str(out / p.name): p.read_text() for p in sorted(out.iterdir())}
    assert sorted(blocks) == sorted(written)
    for name, text in written.items():
        assert blocks[name] == text, name
    # nothing else is printed as settings: no table of conf the files lack
    assert "Spark configuration" not in shown


def test_without_out_the_same_files_are_printed():
    shown = run_cli(
        "plan", "--xml", str(topology_file(TWO_NODES)), "--bind", "node", "--target", "k8s"
    )
    names = sorted(printed_files(shown.stdout))
    assert names == sorted(
        f"{n} (written with --out DIR)"
        for n in (
            "kubelet-config.yaml",
            "executor-pod-template.yaml",
            "spark-defaults.conf",
            "executor-pod-template.plugin.yaml",
            "spark-defaults.plugin.conf",
            "README.txt",
        )
    )


def _plan(target: str, *more: str, bind: str = "node") -> str:
    return run_cli(
        "plan",
        "--xml",
        str(topology_file(TWO_NODES)),
        "--executors-per-node",
        "1",
        "--bind",
        bind,
        "--target",
        target,
        *more,
        check=True,
    ).stdout


def test_each_target_prints_the_placement_its_realiser_applies():
    """Not numactl's --membind for a target that never runs it."""
    yarn = _plan("yarn")
    assert "Placement by YARN's NodeManager" in yarn
    assert "numactl --interleave=0 --cpunodebind=0" in yarn
    assert "Placement by the affinity plugin" in yarn and "memory preferred" in yarn
    standalone = _plan("standalone")
    assert "memory preferred (the plugin's default)" in standalone
    assert "memory bind" not in standalone and "--membind" not in standalone
    assert "memory interleave" in _plan("standalone", "--mem-policy", "interleave")
    k8s = _plan("k8s")
    kubelet, plugin = (
        k8s.index("Placement by the kubelet's managers"),
        k8s.index("Placement by the affinity plugin"),
    )
    assert kubelet < plugin
    assert "memory bind: the Static Memory Manager" in k8s[kubelet:plugin]
    assert "10 exclusive CPUs" in k8s[kubelet:plugin] and "--membind" not in k8s
    own = run_cli(
        "plan", "--xml", str(topology_file(TWO_NODES)), "--bind", "node", check=True
    ).stdout
    assert "numactl --cpunodebind=0 --membind=0" in own  # numaspark's own JVMs: numactl


def test_yarn_says_why_its_node_cpus_sum_above_its_vcores():
    yarn = " ".join(_plan("yarn").split())
    assert "<name>yarn.nodemanager.numa-awareness.0.cpus</name> <value>13</value>" in yarn
    assert "<name>yarn.nodemanager.resource.cpu-vcores</name> <value>25</value>" in yarn
    assert "the nodes' cpus sum to 26, above the NodeManager's 25 vcores" in yarn


def _conf(text: str) -> dict[str, str]:
    return dict(
        line.split(None, 1) for line in text.splitlines() if line and not line.startswith("#")
    )


def test_at_a_standalone_master_a_worker_keeps_room_for_a_cluster_mode_driver(tmp_path):
    """The recorded master has one worker of 2 cores and 2048 MB: the files leave the
    driver's core and 1024 MB there, so that a cluster-mode driver and an executor both fit;
    --deploy-mode client gives the executors every core; plan's own target plans as run."""
    with serving(recorded_status()) as ui:
        at = ["plan", "--master", "spark://127.0.0.1:7077", "--master-ui", ui]
        either = run_cli(*at, "--target", "standalone", "--out", str(tmp_path / "a"), check=True)
        client = run_cli(
            *at, "--target", "standalone", "--deploy-mode", "client", "--out", str(tmp_path / "b")
        )
        own = run_cli(*at, "--json", check=True)
    conf = _conf((tmp_path / "a" / "spark-defaults.conf").read_text())
    assert conf["spark.executor.cores"] == "1" and conf["spark.driver.cores"] == "1"
    assert conf["spark.executor.memory"] == "1g" and conf["spark.driver.memory"] == "1g"
    said = [x for x in either.stdout.splitlines() if "left to the driver" in x]
    assert said == [
        "note: cluster deploy mode: 1 core(s) and 1024 MB of a worker are left to the driver "
        "(in case spark-submit runs it there: --deploy-mode cluster; plan --deploy-mode client "
        "plans without it)"
    ]
    assert client.returncode == 0, client.stderr
    alone = _conf((tmp_path / "b" / "spark-defaults.conf").read_text())
    assert alone["spark.executor.cores"] == "2" and "spark.driver.cores" not in alone
    assert "left to the driver" not in client.stdout
    cores = [j["cores"] for j in json.loads(own.stdout)["jvms"] if j["role"] == "executor"]
    assert cores == [2]


def test_deploy_mode_needs_a_cluster_that_runs_the_driver_and_kubernetes_keeps_it_room():
    here = run_cli("plan", "--deploy-mode", "cluster")
    [line] = here.stderr.strip().splitlines()
    assert here.returncode == 2 and "--deploy-mode cluster" in line and "--master" in line
    k8s = run_cli(
        "plan",
        "--master",
        "k8s://https://10.0.0.1:6443",
        "--synthetic",
        "pack:1 numa:1 core:2 pu:1",
        "--deploy-mode",
        "cluster",
    )
    # the driver's pod may land beside the executors': the plan leaves it room
    assert k8s.returncode == 0, k8s.stderr
    assert "cluster deploy mode: 1 core(s) and 1024 MB" in k8s.stdout + k8s.stderr
