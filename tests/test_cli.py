"""The command line as a user runs it: real subprocesses, real exit codes."""

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from conftest import run_cli, topology_file


def test_topology_json_of_a_saved_server():
    proc = run_cli(
        "topology", "--xml", str(topology_file("24em64t-2n6c2t-pci.xml")), "--json", check=True
    )
    data = json.loads(proc.stdout)
    assert data["summary"]["numa_nodes"] == 2
    assert data["summary"]["cores"] == 12
    assert data["summary"]["pus"] == 24
    pu0 = next(p for p in data["pus"] if p["os_index"] == 0)
    assert pu0["siblings"] == "12"


def test_topology_terminal_view_names_quirks():
    proc = run_cli(
        "topology", "--xml", str(topology_file("64intel64-fakeKNL-SNC4-hybrid.xml")), check=True
    )
    assert "(MCDRAM)" in proc.stdout and "memory only" in proc.stdout
    proc = run_cli("topology", "--xml", str(topology_file("16amd64-4distances.xml")), check=True)
    assert "NUMANode L#0 P#1" in proc.stdout
    assert "NUMA distances" in proc.stdout


def test_plan_synthetic_per_node_json():
    proc = run_cli(
        "plan",
        "--synthetic",
        "pack:2 numa:2 core:6 pu:2",
        "--executors-per-node",
        "2",
        "--bind",
        "node",
        "--json",
        check=True,
    )
    data = json.loads(proc.stdout)
    executors = [j for j in data["jvms"] if j["runs_tasks"]]
    assert len(executors) == 8
    for node in range(4):
        mine = [e for e in executors if e["nodes"] == str(node)]
        assert len(mine) == 2
        for e in mine:
            assert e["prefix"] == ["numactl", f"--cpunodebind={node}", f"--membind={node}"]


@pytest.mark.integration
def test_plan_too_big_for_this_machine_is_one_line_exit_2():
    allowed = len(os.sched_getaffinity(0))
    proc = run_cli("plan", "--executors", str(allowed + 1), "--cores-per-executor", "4")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"allows {allowed} CPUs" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["topology", "--xml", "/nonexistent/server.xml"], "does not exist"),
        (["topology", "--synthetic", "pack:2 bogus:2"], "unknown object type"),
        (["plan", "--memory-per-executor", "lots"], "bad --memory-per-executor"),
        (["plan", "--executors", "1", "--executors-per-node", "1"], "not both"),
        (["plan", "--xml", "NODES", "--nodes", "3", "--bind", "node"], "NUMA node 3 cannot run"),
    ],
)
def test_bad_input_is_one_clear_line(args, message):
    args = [str(topology_file("24em64t-2n6c2t-pci.xml")) if a == "NODES" else a for a in args]
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_plan_targets_print_settings():
    xml = str(topology_file("24em64t-2n6c2t-pci.xml"))
    yarn = run_cli(
        "plan",
        "--xml",
        xml,
        "--executors-per-node",
        "1",
        "--bind",
        "node",
        "--target",
        "yarn",
        check=True,
    )
    assert "yarn.nodemanager.numa-awareness.node-ids" in yarn.stdout
    k8s = run_cli(
        "plan",
        "--xml",
        xml,
        "--executors",
        "2",
        "--bind",
        "core",
        "--target",
        "k8s",
        "--json",
        check=True,
    )
    assert json.loads(k8s.stdout)["k8s"]["kubelet"]["cpuManagerPolicy"] == "static"


def test_plan_out_writes_the_files_a_person_applies(tmp_path):
    """--out DIR: yarn-site.xml is real Hadoop XML (<configuration><property>), the kubelet's
    file a KubeletConfiguration, spark-defaults.conf names the pod template written beside it,
    the plugin's alternative is a file of its own, and README.txt says which needs admin
    rights and never both."""
    xml = str(topology_file("24em64t-2n6c2t-pci.xml"))
    yarn_dir, k8s_dir = tmp_path / "yarn", tmp_path / "k8s"
    run_cli(
        "plan",
        "--xml",
        xml,
        "--executors-per-node",
        "1",
        "--bind",
        "node",
        "--target",
        "yarn",
        "--out",
        str(yarn_dir),
        check=True,
    )
    assert sorted(p.name for p in yarn_dir.iterdir()) == [
        "README.txt",
        "spark-defaults.conf",
        "spark-defaults.plugin.conf",
        "yarn-site.xml",
    ]
    root = ET.parse(yarn_dir / "yarn-site.xml").getroot()
    assert root.tag == "configuration"
    names = {p.findtext("name"): p.findtext("value") for p in root.iter("property")}
    assert names["yarn.nodemanager.numa-awareness.enabled"] == "true"
    assert "yarn.nodemanager.container-executor.class" not in names
    readme = (yarn_dir / "README.txt").read_text()
    assert "admin rights" in readme and "never both" in readme and "YARN-11196" in readme
    shown = run_cli(
        "plan",
        "--xml",
        xml,
        "--executors-per-node",
        "1",
        "--bind",
        "node",
        "--target",
        "k8s",
        "--out",
        str(k8s_dir),
        check=True,
    )
    assert "asks for 10 CPUs instead of 12" in " ".join(shown.stdout.split())  # the cost, shown
    kubelet = yaml.safe_load((k8s_dir / "kubelet-config.yaml").read_text())
    assert (kubelet["apiVersion"], kubelet["kind"]) == (
        "kubelet.config.k8s.io/v1beta1",
        "KubeletConfiguration",
    )
    conf = dict(
        line.split(None, 1)
        for line in (k8s_dir / "spark-defaults.conf").read_text().splitlines()
        if line and not line.startswith("#")
    )
    template = Path(conf["spark.kubernetes.executor.podTemplateFile"])
    assert template.is_absolute() and template.parent == k8s_dir.resolve() and template.exists()
    assert yaml.safe_load(template.read_text())["kind"] == "Pod"
    assert (k8s_dir / "spark-defaults.plugin.conf").exists()


@pytest.mark.integration
def test_doctor_on_this_machine():
    proc = run_cli("doctor", "--json", check=True)
    data = json.loads(proc.stdout)["checks"]
    assert {"java", "spark", "numactl", "hwloc", "perf", "numa_balancing"} <= set(data)
    java = data["java"][0]["text"]
    if os.environ.get("NUMASPARK_NO_JVM"):  # the fast lane: no `java -version` either
        assert java.startswith("skipped: NUMASPARK_NO_JVM is set"), java
    else:
        assert java.startswith("Java "), java
    probe = subprocess.run(
        ["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True
    )
    if "<not supported>" in probe.stderr:  # as on the KVM guests this project runs on
        texts = " ".join(m["text"] for m in data["perf"])
        assert "hardware perf counters are not available here" in texts
    human = run_cli("doctor", check=True)
    assert "numa_balancing" in human.stdout


def test_the_command_line_starts_without_the_heavy_libraries():
    """plan, topology and launch run in the emulated NUMA guest, whose CPU model lacks the
    instructions numpy/pandas/pyarrow wheels use (SIGILL): the CLI imports them only in the
    commands that need them."""
    import sys

    code = (
        "import sys, numaspark.cli; "
        "print(sorted(m for m in ('numpy', 'pandas', 'pyarrow', 'scipy', 'plotly') "
        "if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analyze", "/dev/null"], "neither a file nor a directory"),
        (["topology", "--synthetic", ""], "--synthetic is empty"),
        (["fit", "{binary}"], "is not a text table"),
        (["fit", "{dir}"], "is a directory"),
        (["sweep", "{binary}"], "is not valid TOML"),
        (["sweep", "{dir}"], "is a directory"),
        (["report", "{dir}", "-o", "{dir}"], "is a directory: give the HTML file"),
    ],
)
def test_unreadable_inputs_are_one_clear_line(tmp_path, args, message):
    (tmp_path / "binary").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "results.jsonl").write_text("")
    argv = [a.format(binary=tmp_path / "binary", dir=tmp_path / "dir") for a in args]
    proc = run_cli(*argv)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
