"""Start any program once per planned JVM, bound as planned, and record where it really ran.

For JVMs that are not Spark (a service, a benchmark, a small program that
touches memory) and for checking binding itself: each task-running JVM of the
placement gets one process, ``numactl <its prefix> COMMAND`` (numaspark's own
binder where numactl is absent: docs/install.md), tracked and stopped like
every JVM numaspark starts. While they run, numaspark reads each
one's effective placement from /proc (allowed CPUs and nodes, numa_maps
policy) and samples where its pages are (the NUMA collector), then records,
per process, whether its memory is local or remote to its CPUs: from the
policy the kernel applied, and measured as the share of its pages on its
CPUs' nodes.

Placeholders in COMMAND, replaced per process: ``{index}``, ``{heap}`` (e.g.
``256m``), ``{cores}``, ``{cpus}``, ``{nodes}``, ``{mem_nodes}``. The same
values are in the environment as NUMASPARK_JVM_INDEX, NUMASPARK_HEAP,
NUMASPARK_CORES, NUMASPARK_CPUS, NUMASPARK_NODES, NUMASPARK_MEM_NODES; a process whose JVM
owns devices (``--gpus-per-executor``, ``--resource``) has their addresses in
NUMASPARK_RESOURCE_GPU (..._NIC, ...), as a Spark worker numaspark starts has them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from numaspark import records
from numaspark.collect.base import CollectorSet
from numaspark.collect.numa import NumaCollector
from numaspark.errors import UsageError
from numaspark.placement import Binder, JvmPlacement, MemPolicy, Placement, bind_argv
from numaspark.placement.render import placement_to_dict
from numaspark.placement.resources import resource_env
from numaspark.readback.proc import parse_policy
from numaspark.spark.logs import error_line
from numaspark.supervise.processes import ProcessTracker, Tracked, supervised
from numaspark.supervise.watch import Watch, Watched
from numaspark.topology import CpuSet, Topology
from numaspark.units import MIB

LAUNCH_SCHEMA = "numaspark.launch/1"
RECORD_FILE = "launch.json"
_ENV = {
    "index": "NUMASPARK_JVM_INDEX",
    "heap": "NUMASPARK_HEAP",
    "cores": "NUMASPARK_CORES",
    "cpus": "NUMASPARK_CPUS",
    "nodes": "NUMASPARK_NODES",
    "mem_nodes": "NUMASPARK_MEM_NODES",
}


def values(jvm: JvmPlacement) -> dict[str, str]:
    """What the placeholders of a command stand for, for one JVM."""
    return {
        "index": str(jvm.index),
        "heap": f"{max(1, jvm.heap // MIB)}m",
        "cores": str(jvm.cores),
        "cpus": str(jvm.cpus),
        "nodes": str(jvm.nodes),
        "mem_nodes": str(jvm.mem_nodes),
    }


def command_for(command: list[str], jvm: JvmPlacement) -> list[str]:
    """``command`` with its placeholders filled in for ``jvm`` (each argument on its own: no
    shell is involved)."""
    filled = []
    for arg in command:
        for key, value in values(jvm).items():
            arg = arg.replace("{" + key + "}", value)
        filled.append(arg)
    return filled


def memory_locality(policy: str, cpu_nodes: CpuSet) -> str:
    """``local``, ``remote``, ``partly remote``, ``interleaved`` or ``default`` (the kernel
    allocates on the node of the CPU that touches a page) for a numa_maps policy such as
    ``bind:1`` and the nodes of the CPUs the process may run on."""
    parsed = parse_policy(policy)
    kind = parsed.kind if parsed is not None else None
    if kind is MemPolicy.INTERLEAVE:
        return "interleaved"
    if kind not in (MemPolicy.BIND, MemPolicy.PREFERRED) or not parsed or not parsed.nodes:
        return "default"
    mem = parsed.nodes
    if mem.issubset(cpu_nodes):
        return "local"
    return "remote" if mem.isdisjoint(cpu_nodes) else "partly remote"


def nodes_of(cpus: CpuSet, topology: Topology) -> CpuSet:
    return CpuSet(n.os_index for n in topology.nodes if not n.cpus.isdisjoint(cpus))


def launch(
    placement: Placement,
    topology: Topology,
    command: list[str],
    out: Path,
    duration_s: float | None = None,
    timeout_s: float = 600.0,
    interval_s: float = 0.5,
    on_progress=None,
) -> dict:
    """Start ``command`` once per task-running JVM of ``placement``; return (and write to
    ``out/launch.json``) what each process was planned, where it ran and where its pages were.

    The processes run until they exit, or for ``duration_s`` when given (then they are
    stopped: for programs that serve until told to stop); past ``timeout_s`` they are stopped
    and recorded as failed.
    """
    if not command:
        raise UsageError(
            "launch needs a command after '--', e.g. numaspark launch -- java -version"
        )
    say = on_progress or (lambda message: None)
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    binder = Binder.here()  # numactl where installed, else numaspark's own (docs/install.md)
    with supervised() as tracker:
        started = _start_each(tracker, placement.executors, command, binder, out, say)
        ran = _watch_run(tracker, started, out, duration_s, timeout_s, interval_s)
        entries = [_entry(jvm, tracked, ran, topology, command, binder) for jvm, tracked in started]
    record = {
        "schema": LAUNCH_SCHEMA,
        "command": command,
        "started": ran.began,
        "ended": ran.ended,
        "stopped_by": ran.stopped_by or "exit",
        "placement": placement_to_dict(placement, binder),
        "processes": entries,
        "numastat_delta": ran.numa.get("numastat_delta", {}),
        "note": ran.numa.get("note"),
    }
    (out / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return record


def _start_each(
    tracker: ProcessTracker,
    jvms: tuple[JvmPlacement, ...],
    command: list[str],
    binder: Binder,
    out: Path,
    say: Callable[[str], None],
) -> list[tuple[JvmPlacement, Tracked]]:
    """One process of ``command`` per JVM, bound as planned, with its placeholders and
    environment filled in and its output in ``out/logs``."""
    started: list[tuple[JvmPlacement, Tracked]] = []
    for jvm in jvms:
        argv = bind_argv(jvm, binder) + command_for(command, jvm)
        env = dict(os.environ)
        env.update({_ENV[key]: value for key, value in values(jvm).items()})
        env.update(resource_env(jvm))  # its planned devices (--gpus-per-executor)
        log = out / "logs" / f"{jvm.role}-{jvm.index}.log"
        try:
            tracked = tracker.start(argv, name=jvm.name, log=log, env=env)
        except FileNotFoundError as exc:
            raise UsageError(
                f"cannot start {argv[0]!r}: {exc.strerror}; give the program's full path"
            ) from None
        started.append((jvm, tracked))
        say(f"started {jvm.name} (pid {tracked.pid}): {' '.join(argv)}")
    return started


@dataclass(frozen=True)
class _Ran:
    """How the launched processes ran: when, what ended them, and what was read meanwhile."""

    began: float
    ended: float
    stopped_by: str | None  # "duration" or "timeout"; None: they all exited
    codes: dict[int, int | None]  # exit status by pid; None: still running when stopped
    watch: Watch  # where each process ran
    numa: dict  # the NUMA collector's summary
    pages: dict[int, dict]  # where each process's pages were, by pid (the collector's)


def _watch_run(
    tracker: ProcessTracker,
    started: list[tuple[JvmPlacement, Tracked]],
    out: Path,
    duration_s: float | None,
    timeout_s: float,
    interval_s: float,
) -> _Ran:
    """Watch the started processes, sampling where their pages are, until they have exited
    or are stopped; then stop every one still running."""
    bound = {
        t.pid: (j.name, frozenset(j.mem_nodes) if j.mem_policy is not None else None)
        for j, t in started
    }
    collectors = CollectorSet([NumaCollector()], lambda: bound, out, interval_s)
    collectors.begin()
    began = time.time()
    # the run's watch, read at every tick: a process under numactl is read again once it
    # has exec'd the program
    watch = Watch(lambda: [Watched(t.pid, j) for j, t in started if t.alive()], refresh=True)
    try:
        stopped_by = _watch_until_done(started, watch, began, duration_s, timeout_s, interval_s)
    finally:
        collectors.finish()
        ended = time.time()
        codes = {t.pid: t.popen.poll() if t.popen is not None else None for _, t in started}
        tracker.stop_all()
    numa = collectors.summarize(began, ended).get("numa", {})
    pages = {j["pid"]: j for j in numa.get("jvms", [])}
    return _Ran(began, ended, stopped_by, codes, watch, numa, pages)


def _watch_until_done(
    started: list[tuple[JvmPlacement, Tracked]],
    watch: Watch,
    began: float,
    duration_s: float | None,
    timeout_s: float,
    interval_s: float,
) -> str | None:
    """Read where the processes run every ``interval_s`` until they have all exited (None),
    or ``duration_s`` ("duration") or ``timeout_s`` ("timeout") has passed since ``began``."""
    while True:
        alive = [(j, t) for j, t in started if t.alive()]
        watch.sample()
        elapsed = time.time() - began
        if not alive:
            return None
        if duration_s is not None and elapsed >= duration_s:
            return "duration"
        if elapsed >= timeout_s:
            return "timeout"
        time.sleep(interval_s)


def _entry(
    jvm: JvmPlacement,
    tracked: Tracked,
    ran: _Ran,
    topology: Topology,
    command: list[str],
    binder: Binder,
) -> dict:
    effective = ran.watch.seen(tracked.pid)
    pages = ran.pages.get(tracked.pid)
    code, stopped_by = ran.codes[tracked.pid], ran.stopped_by
    entry: dict = {
        "name": jvm.name,
        "pid": tracked.pid,
        "argv": bind_argv(jvm, binder) + command_for(command, jvm),
        "planned": {
            "cpus": str(jvm.cpus),
            "nodes": str(jvm.nodes),
            "mem_policy": jvm.mem_policy.value if jvm.mem_policy else None,
            "mem_nodes": str(jvm.mem_nodes),
        },
        "log": str(tracked.log),
    }
    if code is None:
        entry["status"] = "stopped after --duration" if stopped_by == "duration" else "timed out"
        entry["ok"] = stopped_by == "duration"
    else:
        entry["status"] = f"exited {code}"
        entry["ok"] = code == 0
        if code != 0:
            entry["error"] = error_line(tracked.log)
    if effective is None or effective.policy == "unknown":  # never read once it had exec'd
        entry["effective"] = None
        entry["problems"] = [f"{jvm.name} ended before its placement could be read"]
        return entry
    cpu_nodes = nodes_of(CpuSet.parse(effective.cpus or ""), topology)
    entry["effective"] = {**records.dump(effective), "cpu_nodes": str(cpu_nodes)}
    entry["problems"] = list(effective.differences)
    entry["memory"] = memory_locality(effective.policy or "unknown", cpu_nodes)
    if pages:
        per_node = pages["bytes_per_node"]
        total = pages["resident_bytes"]
        on_cpu_nodes = sum(b for n, b in per_node.items() if int(n) in cpu_nodes)
        entry["pages"] = {
            "bytes_per_node": per_node,
            "resident_bytes": total,
            "share_per_node": {n: round(b / total, 4) for n, b in per_node.items()}
            if total
            else {},
            "share_on_bound_nodes": pages["share_on_bound_nodes"],
            "share_on_cpu_nodes": round(on_cpu_nodes / total, 4) if total else None,
        }
    return entry
