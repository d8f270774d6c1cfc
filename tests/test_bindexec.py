"""numaspark's own binder (`python -m numaspark.bindexec`), what binds JVMs where numactl is not
installed: real here (a child `sleep` bound by it, read back from /proc: this machine has one
node, node 0), and its multi-node arguments on the real servers' topologies
(shared/topologies) and a synthetic one, since this machine has a single node."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from dataclasses import replace

import pytest
from conftest import run_cli, topology_file

from numaspark.bindexec import nodemask
from numaspark.errors import ToolMissingError, UsageError
from numaspark.placement import Binder, Binding, Layout, MemPolicy, bind_argv, numactl_argv, plan
from numaspark.probe import plan_probe
from numaspark.readback.proc import differences, parse_effective, parse_policy, read_effective
from numaspark.topology import CpuSet, load_xml

pytestmark = pytest.mark.integration

HELPER = [sys.executable, "-m", "numaspark.bindexec"]
#: numa_maps for each policy numaspark offers, as the kernel writes it (bind, preferred,
#: interleave, local): the helper must give the same as numactl
EXPECTED = {
    "bind": "bind:0",
    "preferred": "prefer:0",
    "interleave": "interleave:0",
    "local": "local",
}


def _last_cpu() -> int:
    return max(os.sched_getaffinity(0))


def _bound_sleep(*args: str) -> subprocess.Popen:
    proc = subprocess.Popen([*HELPER, *args, "--", "sleep", "30"])
    deadline = time.monotonic() + 10
    # the pid stays the same across exec: wait until it is sleep's, no longer Python's
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{proc.pid}/comm") as comm:
                if comm.read().strip() == "sleep":
                    return proc
        except OSError:
            break
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"bindexec {args} did not exec sleep: exit {proc.wait()}")


@pytest.mark.parametrize("policy", sorted(EXPECTED))
def test_the_helper_binds_cpus_and_memory_and_execs(policy):
    cpu = _last_cpu()
    nodes = [] if policy == "local" else ["--nodes", "0"]
    proc = _bound_sleep("--cpus", str(cpu), "--policy", policy, *nodes)
    try:
        effective = read_effective(proc.pid)
        assert effective is not None
        assert effective.cpus == CpuSet([cpu])
        assert effective.policy == EXPECTED[policy]
    finally:
        proc.kill()
        proc.wait()


def test_cpus_alone_leave_the_kernels_default_policy():
    proc = _bound_sleep("--cpus", "0")
    try:
        effective = read_effective(proc.pid)
        assert effective is not None and effective.cpus == CpuSet([0])
        assert effective.policy == "default"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--cpus", "0"], "no command"),
        (["--cpus", "4096", "--", "true"], "cannot run on CPUs 4096"),
        (["--policy", "bind", "--nodes", "63", "--", "true"], "cannot set memory policy bind"),
        (["--policy", "bind", "--", "true"], "--policy bind needs --nodes"),
        (["--policy", "local", "--nodes", "0", "--", "true"], "leave out --nodes"),
        (["--nodes", "0", "--", "true"], "--nodes needs --policy"),
        (["--cpus", "0-", "--", "true"], "bad CPU list"),
        (["--cpus", "0", "--", "/no/such/program"], "cannot run '/no/such/program'"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(args, says):
    proc = subprocess.run([*HELPER, *args], capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_nodemask_words_for_many_nodes():
    # the kernel's nodemask: unsigned longs, bit n for node n; maxnode one past the bits
    bits = 8 * ctypes.sizeof(ctypes.c_ulong)
    words, maxnode = nodemask(CpuSet([0, 2, bits + 1]))
    assert list(words) == [0b101, 0b10] and maxnode == 2 * bits + 1
    assert nodemask(CpuSet()) == (None, 0)


@pytest.mark.parametrize("policy", list(MemPolicy))
@pytest.mark.parametrize("binding", [Binding.NODE, Binding.CORE, Binding.PU])
def test_helper_argv_says_what_numactl_says(binding, policy):
    """Two nodes, SMT: a real server's topology (this machine has one node)."""
    topo = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    placement = plan(topo, Layout(executors_per_node=1), binding, policy)
    for jvm in placement.executors:
        helper = bind_argv(jvm, Binder("numaspark", "/venv/bin/python"))
        assert helper[:3] == ["/venv/bin/python", "-m", "numaspark.bindexec"]
        assert helper[-1] == "--"
        options = dict(zip(helper[3:-1:2], helper[4:-1:2], strict=True))
        numactl = numactl_argv(jvm)
        # the CPUs numactl names by node (--cpunodebind) or by CPU (--physcpubind)
        assert CpuSet.parse(options["--cpus"]) == jvm.cpus
        if binding is Binding.NODE:
            nodes = CpuSet.parse(numactl[1].split("=")[1])
            assert CpuSet.union(topo.node(n).cpus for n in nodes) == jvm.cpus
        else:
            assert numactl[1] == f"--physcpubind={options['--cpus']}"
        assert options["--policy"] == policy.value
        if policy is MemPolicy.LOCAL:
            assert "--nodes" not in options and numactl[-1] == "--localalloc"
        else:
            assert options["--nodes"] == str(jvm.mem_nodes) == numactl[-1].split("=")[1]
        assert bind_argv(jvm, Binder("numactl", "numactl")) == numactl


def test_unbound_runs_under_no_prefix_and_memory_alone_under_a_policy():
    topo = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    helper = Binder("numaspark", "python3")
    unbound = plan(topo, Layout(executors=1)).executors[0]
    assert bind_argv(unbound, helper) == []
    interleaved = plan(topo, Layout(executors=1), Binding.NONE, MemPolicy.INTERLEAVE)
    argv = bind_argv(interleaved.executors[0], helper)
    assert argv == [
        "python3",
        "-m",
        "numaspark.bindexec",
        "--policy",
        "interleave",
        "--nodes",
        "0-1",
        "--",
    ]


def test_binder_chosen_by_what_is_installed_and_by_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMASPARK_BINDER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no numactl on it
    assert Binder.here() == Binder("numaspark", sys.executable)
    monkeypatch.setenv("NUMASPARK_BINDER", "numactl")
    with pytest.raises(ToolMissingError, match="numactl is not on the PATH"):
        Binder.here()
    (tmp_path / "numactl").write_text("#!/bin/sh\n")
    (tmp_path / "numactl").chmod(0o755)
    monkeypatch.delenv("NUMASPARK_BINDER")
    assert Binder.here().kind == "numactl"
    monkeypatch.setenv("NUMASPARK_BINDER", "numaspark")
    assert Binder.here().kind == "numaspark"
    monkeypatch.setenv("NUMASPARK_BINDER", "taskset")
    with pytest.raises(UsageError, match="give numactl or numaspark"):
        Binder.here()


@pytest.mark.parametrize("policy", sorted(EXPECTED))
def test_launch_binds_with_the_helper_and_reads_it_back(policy, tmp_path, monkeypatch):
    """`numaspark launch` where numactl is not used: every policy, read back from /proc."""
    monkeypatch.setenv("NUMASPARK_BINDER", "numaspark")
    proc = run_cli(
        "launch",
        "--executors",
        "1",
        "--bind",
        "node",
        "--mem-policy",
        policy,
        "--memory-per-executor",
        "450m",
        "--out",
        str(tmp_path),
        "--json",
        "--",
        sys.executable,
        "-c",
        "import time; b = bytearray(8 << 20); time.sleep(1.2)",
    )
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)["processes"]
    assert entry["argv"][1:3] == ["-m", "numaspark.bindexec"]
    assert entry["effective"]["policy"] == EXPECTED[policy]
    assert entry["problems"] == [] and entry["ok"]


NUMA_MAPS = """\
55d0c0000000 bind:0 file=/usr/bin/java mapped=2 N0=2 kernelpagesize_kB=4
7f0000000000 prefer (many):0-1 anon=3 dirty=3 N0=3 kernelpagesize_kB=4
7f0000100000 prefer (many):0-1 anon=9 dirty=9 N1=9 kernelpagesize_kB=4
7f0000200000 prefer (many):0-1 heap anon=1 dirty=1 N0=1 kernelpagesize_kB=4
7ffd00000000 default stack anon=3 dirty=3 N0=3 kernelpagesize_kB=4
"""


def test_readback_parses_every_form_numa_maps_shows():
    forms = {
        "bind:0": ("bind", (), "0", MemPolicy.BIND),
        "bind=static:0-1": ("bind", ("static",), "0-1", MemPolicy.BIND),
        "prefer:1": ("prefer", (), "1", MemPolicy.PREFERRED),
        "prefer (many):0-1": ("prefer (many)", (), "0-1", MemPolicy.PREFERRED),
        "prefer=relative:0": ("prefer", ("relative",), "0", MemPolicy.PREFERRED),
        "interleave:0-3": ("interleave", (), "0-3", MemPolicy.INTERLEAVE),
        "interleave=static|balancing:0-1": (
            "interleave",
            ("static", "balancing"),
            "0-1",
            MemPolicy.INTERLEAVE,
        ),
        "weighted interleave:0-1": ("weighted interleave", (), "0-1", MemPolicy.INTERLEAVE),
        "local": ("local", (), "", MemPolicy.LOCAL),
        "default": ("default", (), "", None),
    }
    for text, (mode, flags, nodes, kind) in forms.items():
        policy = parse_policy(text)
        assert policy is not None, text
        assert (policy.mode, policy.flags, str(policy.nodes), policy.kind) == (
            mode,
            flags,
            nodes,
            kind,
        )
    assert parse_policy("unknown") is None


def test_prefer_many_counts_as_preferred_in_the_readback():
    topo = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    jvm = plan(topo, Layout(executors=1), Binding.NODE, MemPolicy.PREFERRED).executors[0]
    status = f"Cpus_allowed_list:\t{jvm.cpus}\nMems_allowed_list:\t0-1\n"
    effective = parse_effective(7, status, NUMA_MAPS)
    # "prefer (many):0-1" is one policy of three mappings, not "prefer" and "(many):0-1"
    assert effective.policy == "prefer (many):0-1"
    assert differences(replace(jvm, mem_nodes=CpuSet([0, 1])), effective) == []
    assert differences(replace(jvm, mem_nodes=CpuSet([0])), effective) == [
        "executor 0: planned memory policy preferred:0, has prefer (many):0-1"
    ]
    bound = replace(jvm, mem_policy=MemPolicy.BIND, mem_nodes=CpuSet([0, 1]))
    assert differences(bound, effective) == [
        "executor 0: planned memory policy bind:0-1, has prefer (many):0-1"
    ]


def test_probe_binds_with_the_helper_where_numactl_is_absent():
    """Every (CPU node, memory node) pair of a two-node server (this machine has one node)."""
    topo = load_xml(topology_file("24em64t-2n6c2t-pci.xml"))
    helper = plan_probe(topo, 1 << 20, 100, 1 << 20, binder=Binder("numaspark", "py"))
    numactl = plan_probe(topo, 1 << 20, 100, 1 << 20)
    assert len(helper) == len(numactl) == 8
    for ours, theirs in zip(helper, numactl, strict=True):
        cpus = topo.node(ours.cpu_node).cpus if ours.kind == "bandwidth" else None
        first = theirs.argv[1].split("=")[1]
        assert ours.argv[:10] == [
            "py",
            "-m",
            "numaspark.bindexec",
            "--cpus",
            str(cpus) if cpus else first,
            "--policy",
            "bind",
            "--nodes",
            str(ours.mem_node),
            "--",
        ]
        assert ours.argv[10:] == theirs.argv[3:]
