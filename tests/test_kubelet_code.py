"""The kubelet's own code on the files `plan --target k8s` writes: an extra beside the rule
tests (tests/test_kubelet_rules.py), not a replacement for them.

tools/kubelet-check imports k8s.io/kubernetes (the version its go.mod names) and runs, on a
kubelet-config.yaml and a NUMA machine given on its command line, the kubelet's config
validation, memorymanager.NewManager (validateReservedMemory under the Static policy) and
cpumanager.NewManager (the static policy), printing "STEP: ok" or the kubelet's error.
bash scripts/test-kubelet.sh builds it (minutes, the first time) and runs these tests;
without that script they build it themselves where `go` is installed, and skip where not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cli, topology_file
from prereq import require

from numaspark.placement import Binding, Layout, Platform, plan, platform_files
from numaspark.topology import Topology, load_synthetic, load_xml

pytestmark = pytest.mark.long(script="bash scripts/test-kubelet.sh")

TOOL = ROOT / "tools" / "kubelet-check"
# where it is built: outside git (the binary is about 80 MB)
BINARY = Path(
    os.environ.get(
        "NUMASPARK_KUBELET_CHECK", Path.home() / ".cache" / "numaspark" / "kubelet-check"
    )
)
STEPS = ("validation", "memorymanager", "cpumanager")
SYNTHETIC_NODE_MEMORY = 16 * 2**30  # a synthetic machine's nodes have no size: cAdvisor needs one


@pytest.fixture(scope="module")
def kubelet_check() -> Path:
    """The built tool: the script's (NUMASPARK_KUBELET_CHECK), else built here with go."""
    if os.environ.get("NUMASPARK_KUBELET_CHECK"):
        assert BINARY.exists(), f"NUMASPARK_KUBELET_CHECK={BINARY} does not exist"
        return BINARY
    require("go")
    go = shutil.which("go")
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    built = BINARY.with_name(f"{BINARY.name}.{os.getpid()}")  # two workers may build at once
    build = subprocess.run(
        ["nice", "-n", "19", go, "build", "-o", str(built), "."],
        cwd=TOOL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, f"go build in {TOOL} failed:\n{build.stderr}"
    built.replace(BINARY)
    return BINARY


def machine_args(topology: Topology) -> list[str]:
    """The machine as kubelet-check takes it: each CPU node's memory and cores (threads)."""
    args = []
    for node in topology.cpu_nodes:
        mine = topology.allowed_cpus_of(node)
        cores = [(core, cpus) for core, cpus in topology.allowed_cores() if cpus.issubset(mine)]
        socket = cores[0][0].package if cores[0][0].package is not None else node.os_index
        memory = node.memory if node.memory is not None else SYNTHETIC_NODE_MEMORY
        threads = ",".join("+".join(str(cpu) for cpu in sorted(cpus)) for _, cpus in cores)
        args += ["--node", f"{node.os_index}:{memory}:{threads}:{socket}"]
    return args


def check(tool: Path, config: Path, topology: Topology) -> tuple[int, dict[str, str]]:
    proc = subprocess.run(
        [str(tool), "--config", str(config), *machine_args(topology)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), f"kubelet-check failed to run:\n{proc.stderr}"
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    assert tuple(lines) == STEPS, proc.stdout
    return proc.returncode, lines


MACHINES = {
    "xeon24": lambda: load_xml(topology_file("24em64t-2n6c2t-pci.xml")),  # 2 nodes, SMT 2
    "xeon32": lambda: load_xml(topology_file("32em64t-2n8c2t-pci-noio.xml")),  # 2 nodes, SMT 2
    "four_nodes": lambda: load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml")),
    "no_smt": lambda: load_synthetic("pack:2 numa:1 core:6 pu:1"),
}
LAYOUTS = [  # as tests/test_kubelet_rules.py's: spare CPUs, every CPU used, two per node, pu
    pytest.param(Layout(executors=4, cores_per_executor=2), Binding.CORE, id="core-spare"),
    pytest.param(Layout(executors_per_node=1), Binding.NODE, id="node-full"),
    pytest.param(Layout(executors_per_node=2), Binding.NODE, id="node-two-per-node"),
    pytest.param(Layout(executors=4, cores_per_executor=3), Binding.PU, id="pu-odd"),
]


@pytest.mark.parametrize(("layout", "binding"), LAYOUTS)
@pytest.mark.parametrize("machine", list(MACHINES))
def test_the_kubelets_own_code_takes_the_written_files(
    kubelet_check, tmp_path, machine, layout, binding
):
    topology = MACHINES[machine]()
    placement = plan(topology, layout, binding)
    settings = Platform.K8S.settings(placement, topology, None)
    config = tmp_path / "kubelet-config.yaml"
    config.write_text(platform_files(Platform.K8S, settings, tmp_path)["kubelet-config.yaml"])
    code, steps = check(kubelet_check, config, topology)
    assert code == 0, steps
    assert steps["validation"].startswith("ok"), steps  # may add: checked as for cgroup v2
    assert steps["memorymanager"] == "ok"
    assert steps["cpumanager"] == "ok"


def _written(tmp_path: Path) -> tuple[Path, Topology]:
    """`plan --target k8s --out` for a two-node SMT machine, node-bound: the Static Memory
    Manager with 1Gi per node, the static CPU Manager with one core per socket reserved."""
    xml = topology_file("24em64t-2n6c2t-pci.xml")
    out = tmp_path / "k8s"
    run_cli(
        "plan",
        "--xml",
        str(xml),
        "--bind",
        "node",
        "--executors-per-node",
        "1",
        "--target",
        "k8s",
        "--out",
        str(out),
        check=True,
    )
    return out / "kubelet-config.yaml", load_xml(xml)


def test_the_written_files_pass_and_a_broken_reserved_memory_stops_the_memory_manager(
    kubelet_check, tmp_path
):
    config, topology = _written(tmp_path)
    code, steps = check(kubelet_check, config, topology)
    assert code == 0, steps
    kubelet = yaml.safe_load(config.read_text())
    assert [r["limits"]["memory"] for r in kubelet["reservedMemory"]] == ["1024Mi", "1024Mi"]
    kubelet["reservedMemory"][1]["limits"]["memory"] = "2Gi"  # 3Gi over the nodes, not 2Gi
    config.write_text(yaml.safe_dump(kubelet))
    code, steps = check(kubelet_check, config, topology)
    assert code == 1
    assert steps["memorymanager"] == (
        'the total amount "3Gi" of type "memory" is not equal to '
        'the value "2Gi" determined by Node Allocatable feature'
    )
    assert steps["cpumanager"] == "ok"


def test_without_its_cpu_reservation_the_static_cpu_manager_does_not_start(kubelet_check, tmp_path):
    config, topology = _written(tmp_path)
    kubelet = yaml.safe_load(config.read_text())
    assert kubelet["cpuManagerPolicy"] == "static"
    del kubelet["reservedSystemCPUs"]
    config.write_text(yaml.safe_dump(kubelet))
    code, steps = check(kubelet_check, config, topology)
    assert code == 1
    assert steps["memorymanager"] == "ok"
    assert steps["cpumanager"] == (
        "[cpumanager] unable to determine reserved CPU resources for static policy"
    )
