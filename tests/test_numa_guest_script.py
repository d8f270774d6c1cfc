"""scripts/numa-guest.sh without booting: the guest's shape, the command script that carries
COMMAND past the kernel command line, QEMU's NUMA arguments, and bad input refused in one line
before anything boots. The boots themselves are in test_numa_guest.py (long)."""

from __future__ import annotations

import importlib
import json
import os
import shlex
import subprocess
import sys

import pytest
from conftest import ROOT
from guest import build, ledger
from guest.jvmcrash import error_report, jvm_crash
from prereq import require


def test_shape_gives_each_node_its_cpus_and_memory():
    argv = build.Shape(nodes=3, cpus_per_node=2, node_mib=1024).qemu_numa()
    numa = [argv[i + 1] for i, a in enumerate(argv) if a == "-numa"]
    assert numa == [
        "node,nodeid=0,cpus=0-1,memdev=m0",
        "node,nodeid=1,cpus=2-3,memdev=m1",
        "node,nodeid=2,cpus=4-5,memdev=m2",
    ]
    assert "memory-backend-ram,id=m2,size=1024M" in argv


def test_qemu_gets_every_vcpu_and_all_memory(tmp_path):
    shape = build.Shape(nodes=4, cpus_per_node=2, node_mib=768)
    argv = build.qemu_argv(tmp_path, shape, tmp_path / "command.sh")
    assert argv[argv.index("-smp") + 1] == "8"  # vCPUs may outnumber this machine's cores
    assert argv[argv.index("-m") + 1] == str(4 * 768)
    cpu = argv[argv.index("-cpu") + 1].split(",")
    assert cpu[0] == "max"  # numpy and Spark need more than qemu64
    assert {"avx=off", "avx2=off"} <= set(cpu)  # as every boot's timing was measured
    # one host thread for every vCPU: with a thread each, QEMU 7.2 tore the code HotSpot patches
    # and the guest's JVMs died of it (issue 57, tests/guest/xmodcheck.c)
    assert argv[argv.index("-accel") + 1] == "tcg,thread=single"
    assert f"NUMASPARK_COMMAND={tmp_path / 'command.sh'}" in argv[argv.index("-append") + 1]


def test_the_accelerator_and_cpu_model_can_be_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMASPARK_GUEST_ACCEL", "tcg")  # what the stress boot's check refutes
    monkeypatch.setenv("NUMASPARK_GUEST_CPU", "max")
    argv = build.qemu_argv(tmp_path, build.Shape(), tmp_path / "command.sh")
    assert argv[argv.index("-accel") + 1] == "tcg"
    assert argv[argv.index("-cpu") + 1] == "max"


@pytest.mark.slow
def test_xmodcheck_sees_a_torn_patch_and_none_on_this_machines_cpu(tmp_path):
    """The stress boot's check of the guest's crash cause (tests/guest/xmodcheck.c), on this
    machine's own CPU, where HotSpot's way of patching code never tears: two executors for 2 s
    see none; the broken mode, which writes an instruction's first byte alone, is seen torn.
    The guest's verdict (QEMU's multi-threaded TCG tears it) is in the stress boot (long)."""
    require("cc")
    build.stress_programs(tmp_path)
    xmod = str(tmp_path / "xmodcheck")
    whole = subprocess.run([xmod, "patch", "2", "2"], capture_output=True, text=True)
    assert whole.returncode == 0, whole.stdout
    assert " 0 torn " in whole.stdout and int(whole.stdout.split()[2]) > 1000  # patches made
    torn = subprocess.run([xmod, "broken", "2", "2"], capture_output=True, text=True)
    assert torn.returncode == 1, torn.stdout
    assert " 0 torn " not in torn.stdout
    bad = subprocess.run([xmod, "patch", "2", "99"], capture_output=True, text=True)
    assert bad.returncode == 2 and "EXECUTORS (1 to 16)" in bad.stderr


def test_each_node_gets_an_expander_bridge_and_its_gpus(tmp_path):
    shape = build.Shape(nodes=2, gpus_per_node=2)
    argv = build.qemu_argv(tmp_path, shape, tmp_path / "command.sh")
    devices = [argv[i + 1] for i, a in enumerate(argv) if a == "-device"]
    # the last node's expander opens the lowest bus: GPU 0 in bus order is on node 1
    assert devices == [
        "pxb,id=pxb0,bus=pci.0,bus_nr=32,numa_node=0",
        "bochs-display,bus=pxb0,addr=0x1",
        "bochs-display,bus=pxb0,addr=0x2",
        "pxb,id=pxb1,bus=pci.0,bus_nr=16,numa_node=1",
        "bochs-display,bus=pxb1,addr=0x1",
        "bochs-display,bus=pxb1,addr=0x2",
    ]
    assert argv[argv.index("-vga") + 1] == "none"  # the default VGA card sits on no node
    # after -virtfs: QEMU puts a device given no bus (virtio-9p) on the newest PCI bus
    assert argv.index("-virtfs") < argv.index("-device")
    script = build.command_script(["true"], tmp_path, shape, tmp_path / "cmds")
    assert "export NUMASPARK_GUEST_GPUS_PER_NODE=2" in script.read_text()


def test_without_gpus_the_machine_is_as_before(tmp_path):
    argv = build.qemu_argv(tmp_path, build.Shape(), tmp_path / "command.sh")
    assert "-device" not in argv and "-vga" not in argv


@pytest.mark.parametrize(
    ("shape", "words"),
    [
        ({"nodes": 0}, "1 to 4 nodes"),
        ({"nodes": 5}, "1 to 4 nodes"),
        ({"cpus_per_node": 0}, "--cpus-per-node"),
        ({"node_mib": 100}, "at least 512"),
        ({"gpus_per_node": 5}, "--gpus-per-node 5: give 0 to 4"),
        ({"gpus_per_node": -1}, "--gpus-per-node"),
    ],
)
def test_a_shape_the_guest_cannot_take_is_refused(shape, words):
    with pytest.raises(build.GuestError, match=words):
        build.Shape(**shape)


def test_the_command_travels_quoted_in_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMASPARK_NO_JVM", "1")  # the fast lane's: it would stop every JVM inside
    monkeypatch.setenv("UNRELATED_SECRET", "x")
    argv = ["sh", "-c", "echo 'it''s' $HOME; exit 3", "a b"]
    script = build.command_script(argv, tmp_path, build.Shape(), tmp_path / "cmds")
    text = script.read_text()
    assert text.splitlines()[-1] == " ".join(shlex.quote(a) for a in argv)
    assert "NUMASPARK_NO_JVM" not in text and "UNRELATED_SECRET" not in text  # none go along
    assert "export NUMASPARK_GUEST_NODES=2" in text  # the guest's own shape does
    assert f"export PYTHONPATH={ROOT / 'src'}" in text
    # run here, the script runs the command with its arguments intact, in the given directory
    done = subprocess.run(
        ["sh", str(script)], capture_output=True, text=True, env={**os.environ, "HOME": "/home-x"}
    )
    assert done.returncode == 3
    assert done.stdout == "its /home-x\n"


def test_a_path_with_a_space_is_refused(tmp_path):
    spaced = tmp_path / "a dir"
    with pytest.raises(build.GuestError, match="cannot carry a space"):
        build.command_script(["true"], spaced, build.Shape(), tmp_path / "cmds")


@pytest.mark.parametrize(
    ("text", "mib"), [("2048", 2048), ("2G", 2048), ("512M", 512), ("1GiB", 1024)]
)
def test_memory_sizes(text, mib):
    assert build.size_mib(text) == mib


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "5", "--", "true"], "--nodes 5: the guest has 1 to 4 nodes"),
        (["--memory-per-node", "lots", "--", "true"], "give MiB (2048) or a size like 2G"),
        (["--gpus-per-node", "9", "--", "true"], "--gpus-per-node 9: give 0 to 4"),
        (["--"], "no command: give one after --"),
    ],
)
def test_bad_input_is_one_line_and_boots_nothing(args, message, tmp_path):
    """Bad input: exit 2, stderr one line (numa-guest: ...) and nothing else, and no guest
    started. A stand-in qemu-system-x86_64 first on PATH leaves a mark if it is ever run, and
    the guest's cache (NUMASPARK_GUEST_CACHE) holds a ready kernel, so a boot would start at
    once and offline; after the refusal the mark is absent and the cache holds only that
    kernel (no command script, no console log). Fails if tests/guest/build.py's main starts
    qemu-system-x86_64 before it checks its input (the mark), or calls kernel() before the
    checks (a second stderr line, "kernel: ... (cached)"); run_in_guest with a default
    Shape() before `Shape(opts.nodes, ...)` is built does both."""
    cache = tmp_path / "cache"
    kernel = cache / f"kernel-{build.kernel_key()}"
    kernel.mkdir(parents=True)
    for name in ("ready", "vmlinuz", "initrd.img"):
        (kernel / name).touch()
    bin_dir, booted = tmp_path / "bin", tmp_path / "booted"
    bin_dir.mkdir()
    qemu = bin_dir / "qemu-system-x86_64"
    qemu.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(booted))}\necho NUMASPARK-GUEST-EXIT 0\n")
    qemu.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "NUMASPARK_GUEST_CACHE": str(cache),
    }
    done = subprocess.run(
        ["bash", str(ROOT / "scripts/numa-guest.sh"), *args],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr  # the whole of stderr: one line
    assert lines[0].startswith("numa-guest:") and message in lines[0]
    assert done.stdout == ""
    assert not booted.exists(), "qemu was started"
    assert sorted(p.relative_to(cache) for p in cache.rglob("*")) == sorted(
        p.relative_to(cache) for p in [kernel, *kernel.iterdir()]
    )


def test_a_jvm_crash_is_said_in_one_line():
    """The guest's checks say plainly that a JVM crashed, where and in what (issue 57: "the
    plain cluster did not start: -amd64)" was what a crashed master left before)."""
    log = """Spark Command: /usr/lib/jvm/java-17-openjdk-amd64/bin/java -cp ...
#
# A fatal error has been detected by the Java Runtime Environment:
#
#  SIGSEGV (0xb) at pc=0x00007fc41555c3c0, pid=412, tid=431
#
# JRE version: OpenJDK Runtime Environment (17.0.13+11) (build 17.0.13+11-Debian-2deb12u1)
# Problematic frame:
# J 49 c1 java.util.zip.ZipUtils.SH([BI)I java.base@17.0.13 (21 bytes) @ 0x00007fc41555c3c0
#
# An error report file with more information is saved as:
# /tmp/spark-run/hs_err_pid412.log
#
"""
    said = jvm_crash(log)
    assert said == (
        "SIGSEGV (0xb) at pc=0x00007fc41555c3c0; J 49 c1 java.util.zip.ZipUtils.SH([BI)I "
        "java.base@17.0.13 (21 bytes) @ 0x00007fc41555c3c0; /tmp/spark-run/hs_err_pid412.log"
    )
    assert jvm_crash("Spark Command: java ...\nStarting Spark master") is None


CONSOLE = [
    "NUMASPARK-CHECKS BEGIN",
    "NUMASPARK-CHECK FAIL plugin-node-binding: the plain cluster did not start: the master's JVM "
    "crashed: SIGSEGV (0xb) at pc=0x00007f; J 49 c1 java.util.zip.ZipUtils.SH([BI)I",
    "NUMASPARK-JVM-CRASH siginfo: si_signo: 11 (SIGSEGV), si_code: 1 (SEGV_MAPERR)",
    "NUMASPARK-CHECK PASS topology-two-nodes: node 0: CPUs 0",
    "NUMASPARK-CHECK PASS plugin-node-binding: executors on nodes 0 and 1",  # the last word
    "NUMASPARK-CHECK FAIL launch-remote-memory: 12% on node 1",
    "NUMASPARK-CHECKS END 2 passed, 1 failed",
]


def test_the_ledger_keeps_each_boots_checks_and_crashes(tmp_path):
    """tests/guest/ledger.py: one line per boot, each check's last verdict, the JVM crashes the
    checks named; a boot passes only when it finished, exited 0 and failed no check."""
    path = tmp_path / "boots.jsonl"
    entry = ledger.record("two-nodes", "max", 612.34, 1, CONSOLE, path=path)
    assert entry["passed"] == ["plugin-node-binding", "topology-two-nodes"]
    assert entry["failed"] == ["launch-remote-memory"]
    assert len(entry["jvm_crashes"]) == 1 and "ZipUtils.SH" in entry["jvm_crashes"][0]
    assert entry["crash_report"] == ["siginfo: si_signo: 11 (SIGSEGV), si_code: 1 (SEGV_MAPERR)"]
    assert entry["ok"] is False and entry["seconds"] == 612.3 and entry["host"]
    assert json.loads(path.read_text()) == entry
    passing = [line for line in CONSOLE if "launch-remote-memory" not in line]
    assert ledger.record("two-nodes", "max", 600, 0, passing, path=path)["ok"]
    assert not ledger.record("churn", "max", 60, 0, passing[:-1], path=path)["ok"]  # no END
    # the commit the boot ran, read as it began: a merge during a boot is not what it ran
    assert entry["commit"] == ledger.commit_now()
    began = ledger.record("churn", "max", 60, 1, CONSOLE, path=path, commit="b4dffaf6dda5")
    assert began["commit"] == "b4dffaf6dda5"


def test_the_streak_counts_the_newest_passes_on_one_cpu_model(tmp_path):
    """A failed boot ends a proof's run of passes, so does a boot on another CPU model; a line
    cut mid-write is skipped."""
    path = tmp_path / "boots.jsonl"
    passing = [line for line in CONSOLE if "launch-remote-memory" not in line]
    ledger.record("two-nodes", "no-avx", 600, 0, passing, path=path)
    ledger.record("two-nodes", "no-avx", 600, 1, CONSOLE, path=path)  # failed
    for _ in range(2):
        ledger.record("two-nodes", "no-avx", 600, 0, passing, path=path)
    ledger.record("churn", "max", 60, 0, passing, path=path)
    ledger.record("churn", "no-avx", 60, 0, passing, path=path)
    with path.open("a") as out:
        out.write('{"boot": "churn", "ok": tr')  # a run cut mid-write
    said = ledger.streaks(path)
    assert said["two-nodes"]["streak"] == 2 and said["two-nodes"]["boots"] == 4
    assert said["churn"]["streak"] == 1 and said["churn"]["newest"]["cpu"] == "no-avx"
    assert ledger.streaks(tmp_path / "none.jsonl") == {}


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("NUMASPARK_GUEST_ROUNDS", "0", "a whole number of boots, 1 or more"),
        ("NUMASPARK_GUEST_ROUNDS", "three", "a whole number of boots, 1 or more"),
        ("NUMASPARK_GUEST_ROUNDS", "-1", "a whole number of boots, 1 or more"),
        ("NUMASPARK_GUEST_PARALLEL", "0", "a whole number of boots at once, 1 or more"),
        ("NUMASPARK_GUEST_PARALLEL", "two", "a whole number of boots at once, 1 or more"),
    ],
)
def test_rounds_or_boots_at_once_that_are_not_a_count_are_refused_before_setup(name, value, words):
    done = subprocess.run(
        ["bash", str(ROOT / "scripts/test-guest.sh")],
        env={**os.environ, name: value},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"{name}={value}: give {words}"
    assert "setup" not in done.stdout


def test_a_crashed_jvms_error_file_is_cut_to_what_tells_the_cause(tmp_path):
    """The error file's signal, registers and code bytes at pc reach the console (the guest's
    /tmp does not outlive it); the rest of its hundreds of lines does not."""
    error_file = tmp_path / "hs_err_pid412.log"
    error_file.write_text(
        "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
        "---------------  T H R E A D  ---------------\n\n"
        "Current CompileTask:\nC1:   4117  912       3       java.util.zip.ZipFile$Source::"
        "initCEN (385 bytes)\n\n"
        "Stack: [0x00007fc4,0x00007fc5],  sp=0x00007fc4, free space=1015k\n"
        "Native frames: (J=compiled Java code, j=interpreted, Vv=VM code, C=native code)\n"
        "J 49 c1 java.util.zip.ZipUtils.SH([BI)I java.base@17.0.15 (21 bytes)\n\n"
        "siginfo: si_signo: 11 (SIGSEGV), si_code: 1 (SEGV_MAPERR), si_addr: 0x0000000000000010\n\n"
        "Registers:\nRAX=0x0000000000000000, RBX=0x00007fc3, RCX=0x0000000000000004\n\n"
        "Instructions: (pc=0x00007fc41555c3c0)\n0x00007fc41555c3a0:   c5 f9 6f 04 24 48 8b 4c\n\n"
        "Heap:\n def new generation   total 4928K, used 3K\n" + "filler\n" * 400
    )
    log = f"""Spark Command: java ...
# A fatal error has been detected by the Java Runtime Environment:
#  SIGSEGV (0xb) at pc=0x00007fc41555c3c0, pid=412, tid=431
# Problematic frame:
# J 49 c1 java.util.zip.ZipUtils.SH([BI)I java.base@17.0.15 (21 bytes) @ 0x00007fc41555c3c0
# An error report file with more information is saved as:
# {error_file}
"""
    kept = error_report(log)
    assert kept[0] == "Current CompileTask:"
    assert any(line.startswith("siginfo: si_signo: 11 (SIGSEGV)") for line in kept)
    assert "0x00007fc41555c3a0:   c5 f9 6f 04 24 48 8b 4c" in kept  # the bytes at pc
    assert "RAX=0x0000000000000000, RBX=0x00007fc3, RCX=0x0000000000000004" in kept
    assert "filler" not in kept and len(kept) < 20
    assert error_report(log.replace(str(error_file), str(tmp_path / "gone.log"))) == []
    assert error_report("Starting Spark master") == []


@pytest.mark.jvm
def test_a_jvm_that_crashes_fails_the_stress_check_with_its_error_file(
    tmp_path, monkeypatch, capsys
):
    """tests/guest/jvmstress.py on this machine, its JVMs made to die of a real fatal error
    (-XX:+CrashOnOutOfMemoryError in an 8 MiB heap): the check fails naming the crash and its
    error file, whose telling lines reach the console; every JVM of the round has ended."""
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "guest"))
    import jvmstress  # noqa: PLC0415 (beside checks.py, which the guest runs as a script)

    bins = build.toucher(tmp_path / "bins")
    monkeypatch.setattr(jvmstress, "BINS", bins)
    monkeypatch.setattr(jvmstress, "WORK", tmp_path / "work")
    monkeypatch.setattr(jvmstress, "SECONDS", 30)
    monkeypatch.setattr(
        jvmstress, "JAVA_OPTIONS", ["-XX:+CrashOnOutOfMemoryError", "-Xmx8m", "-Xss512k"]
    )
    with pytest.raises(AssertionError, match=r"round 1, JVM \d+: the JVM crashed: .*hs_err_pid"):
        jvmstress.class_loading()
    assert "NUMASPARK-JVM-CRASH " in capsys.readouterr().out
    left = subprocess.run(["pgrep", "-f", "--", f"-cp {bins} ClassStress"], capture_output=True)
    assert left.returncode == 1, left.stdout  # pgrep: none


def test_churn_judges_an_executor_only_with_no_move_between_two_reads(tmp_path, monkeypatch):
    """churn.py's sampler reads an executor's log before and after its /proc, and judges it
    only when both say bound with no move between: the first churn boot on one host thread
    judged an executor whose move began and ended while its threads were read, half on each
    node. A process whose working directory holds the log stands in for the executor."""
    monkeypatch.setenv("NUMASPARK_BIN", str(ROOT / ".venv" / "bin" / "numaspark"))
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "guest"))
    churn = importlib.import_module("churn")
    log = tmp_path / "stderr"
    log.write_bytes(b"starting\n")
    executor = subprocess.Popen(["sleep", "30"], cwd=tmp_path)
    try:
        assert churn.bound(executor.pid) == (False, -1)  # not bound yet
        log.write_bytes(log.read_bytes() + churn.BOUND + b", CPUs 0\n")
        before = churn.bound(executor.pid)
        assert before[0] and churn.bound(executor.pid) == before  # judged
        log.write_bytes(log.read_bytes() + churn.MOVING + b" from node {0} to node {1}\n")
        assert not churn.bound(executor.pid)[0]  # moving: not judged
        log.write_bytes(log.read_bytes() + churn.BOUND + b", moved to node {1}\n")
        after = churn.bound(executor.pid)
        assert after[0] and after != before  # bound again, but a move came between the reads
    finally:
        executor.kill()
        executor.wait()
    assert churn.bound(executor.pid) == (False, -1)  # ended


def test_churn_prints_each_executors_choice_and_moves_in_time_order(tmp_path, monkeypatch):
    """At its end the churn check prints every executor's choice (the cores it read on each
    node) and every move, from the executors' logs, in the order they were logged: a boot whose
    nodes went three against one left nothing to say why. Lines as Spark's log4j writes them."""
    monkeypatch.setenv("NUMASPARK_BIN", str(ROOT / ".venv" / "bin" / "numaspark"))
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "guest"))
    churn = importlib.import_module("churn")
    logs = {
        "app-20261207043026-0000/3": [
            "26/12/07 05:01:02 INFO NodeBinder: numaspark affinity: level node, slot 0 of node 1"
            " in /tmp/churn/locks (nodes {0,1} allowed); cores taken before: node 0 1, node 1 0;"
            " every thread (71 now) bound to CPUs {2,3}",
            "26/12/07 05:09:00 INFO NodeBinder: numaspark affinity: moving from node {1} to node"
            " {0}: slot 2 of node 0 in /tmp/churn/locks; moved from slot 0 of node 1",
            "26/12/07 05:09:09 INFO NodeBinder: numaspark affinity: level NODE, moved to node {0}",
        ],
        "app-20261207043026-0001/1": [
            "26/12/07 05:03:00 INFO Executor: Starting executor ID 1",
            "26/12/07 05:03:04 INFO NodeBinder: numaspark affinity: level node, slot 1 of node 0"
            " in /tmp/churn/locks (nodes {0,1} allowed); cores taken before: node 0 1, node 1 1;"
            " every thread (70 now) bound to CPUs {0,1}",
        ],
    }
    for name, lines in logs.items():
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "stderr").write_text("\n".join(lines) + "\n")
    said = churn.choices(tmp_path)
    assert said == [
        "26/12/07 05:01:02 0000/3: level node, slot 0 of node 1 in /tmp/churn/locks (nodes"
        " {0,1} allowed); cores taken before: node 0 1, node 1 0",
        "26/12/07 05:03:04 0001/1: level node, slot 1 of node 0 in /tmp/churn/locks (nodes"
        " {0,1} allowed); cores taken before: node 0 1, node 1 1",
        "26/12/07 05:09:00 0000/3: moving from node {1} to node {0}: slot 2 of node 0 in"
        " /tmp/churn/locks; moved from slot 0 of node 1",
    ]


def test_churn_tells_each_applications_last_line(tmp_path, monkeypatch):
    """Every few minutes the churn check's console has each application's last line (its
    wait for an executor, its stages), then the master's and the worker's: a boot of
    2026-12-07 saw no executor in 7,200 s and said nothing between the cluster's start and
    its end."""
    monkeypatch.setenv("NUMASPARK_BIN", str(ROOT / ".venv" / "bin" / "numaspark"))
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "guest"))
    churn = importlib.import_module("churn")
    assert churn.last_lines(tmp_path) == "no application yet"
    (tmp_path / "master.log").write_text("Starting Spark master\n")  # the cluster's: after
    (tmp_path / "worker.log").write_text("Starting Spark worker\n")
    (tmp_path / "second.log").write_text("")
    (tmp_path / "first.log").write_text(
        "06:30:01 waiting for a first executor: 30 s of --executor-wait 3000 s\n"
        "06:30:31 waiting for a first executor: 60 s of --executor-wait 3000 s\n"
    )
    assert churn.last_lines(tmp_path) == (
        "first: 06:30:31 waiting for a first executor: 60 s of --executor-wait 3000 s; "
        "second: (nothing yet); master: Starting Spark master; worker: Starting Spark worker"
    )


HOLD_ARGV = """
import json, pathlib, checks, kube
out = pathlib.Path("/tmp/k/out")
print(json.dumps({
    "k8s": kube._run({"server": "https://10.0.0.1:6443", "spark": "img"}, out, "node", 2, 1, "1536m"),
    "plain": checks.plain_hold_argv(
        pathlib.Path("/tmp/w"), out, ["--master", "spark://10.0.0.2:7077"], ["--bind", "core"],
        2, 2, "pythonhold.py",
    ),
}))
"""


def test_the_guests_hold_jobs_are_one_numaspark_run_that_waits_for_every_executor():
    """checks.py's hold job (plain_hold_argv, what hold_job runs) and kube.py's run build their
    argv in one place (holdjob_argv): C1 only, numaspark's wait for the first executor and
    the first job's for all of them, and each option one that `numaspark run` has. Built here, as the guest would (kube.py
    imported in a process of its own: it sets the local Kubernetes' variables)."""
    done = subprocess.run(
        [sys.executable, "-c", HOLD_ARGV],
        cwd=ROOT / "tests" / "guest",
        env={**os.environ, "NUMASPARK_BIN": str(ROOT / ".venv/bin/numaspark")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    options = subprocess.run(
        [str(ROOT / ".venv/bin/numaspark"), "run", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    ).stdout
    for name, first, wait, tail in (
        ("k8s", "3600", "3600", ["/tmp/k", "2", "900"]),
        ("plain", "1800", "1800", ["/tmp/w", "4", "900"]),
    ):
        argv = said[name]
        assert argv[1] == "run" and argv[argv.index("--") + 1 :] == tail
        assert argv[argv.index("--executor-wait") + 1] == f"{first}s"
        confs = [argv[i + 1] for i, a in enumerate(argv) if a == "--conf"]
        assert f"spark.scheduler.maxRegisteredResourcesWaitingTime={wait}s" in confs
        assert "spark.scheduler.minRegisteredResourcesRatio=1.0" in confs
        assert "spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1" in confs
        flags = [a for a in argv[: argv.index("--")] if a.startswith("--")]
        assert flags and all(f in options for f in flags), set(flags) - set(options.split())
    assert said["k8s"][said["k8s"].index("--master") + 1] == "k8s://https://10.0.0.1:6443"
    assert said["k8s"][said["k8s"].index("--image") + 1] == "img"
    assert said["plain"][said["plain"].index("--bind") + 1] == "core"
    assert said["plain"][said["plain"].index("--python") + 1].endswith("/python")
    assert said["plain"][2].endswith("/tests/guest/pythonhold.py")


def test_boots_at_once_make_the_kernel_once(tmp_path, monkeypatch):
    """build.kernel() for two boots at once on a fresh cache: one makes it (here a stand-in
    for the download, slow enough that both ask meanwhile), the other waits and uses it."""
    import threading  # noqa: PLC0415 (this test's alone)
    import time  # noqa: PLC0415

    monkeypatch.setattr(build, "CACHE", tmp_path)
    made = []

    def make(done):
        made.append(done)
        time.sleep(1)
        done.mkdir()
        (done / "ready").write_text("made\n")
        return done

    monkeypatch.setattr(build, "_make_kernel", make)
    got = []
    boots = [threading.Thread(target=lambda: got.append(build.kernel())) for _ in range(2)]
    for boot in boots:
        boot.start()
    for boot in boots:
        boot.join(timeout=30)
    assert len(made) == 1 and got == [made[0], made[0]]
