"""Co-scheduling: several workloads at once, each in a loop, bound to its share of the machine
or unbound, counting what each completes in a measured window (Baig et al.'s design: an
hour's window between 15-minute warm-up and cool-down, here scaled by options).

A split gives each workload a share: whole NUMA nodes where the machine has at
least one node per workload (2-2, 1-3, 3-1 on four nodes), else whole cores
(one CPU each on this two-CPU machine). Each split runs twice: bound (CPUs and
memory of the share, with numactl) and unbound (the same number of task slots,
the scheduler decides). Every built-in workload is one local-mode application looping
over its input; completions are the iterations that ended inside the window,
each checked; the collectors give each JVM's context switches and where its
pages are. A user's application does its work once, so it is submitted again and again
(one local-mode JVM at a time, placed on its share); its completions are the applications
that ended inside the window with exit status 0 (and a passing --check).

On hosts over SSH (``--hosts``), where numaspark starts the workers, each host is split as
this machine is (every host alike, or the study is refused in one line) and each workload
gets a standalone cluster of its own: one worker per host on the workload's share, bound
with numactl to its CPUs and memory, or unbound with as many cores. The clusters start
before the round's clock, the drivers run here, and the collectors (which read this
machine's /proc) give nothing there. A cluster numaspark did not start (``--master``)
cannot keep an executor to a share of a host: refused, with the plugin's reason.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from numaspark import records
from numaspark.collect import default_collectors
from numaspark.errors import UsageError
from numaspark.experiment.machine import environment
from numaspark.experiment.result import Measurements
from numaspark.experiment.runner import Runner, TargetFactory, run_check
from numaspark.experiment.target import HostsTarget
from numaspark.experiment.venue import Venue
from numaspark.hosts import read_topology
from numaspark.jsonlines import read_json_lines
from numaspark.placement import Binding, Layout, MemPolicy, Mode, Placement, plan
from numaspark.placement.planner import SPARK_MIN_HEAP, spark_overhead
from numaspark.placement.share import Split, splits  # noqa: F401 (splits: the module's API)
from numaspark.spark.home import spark_home, spark_version
from numaspark.topology import CpuSet, Topology
from numaspark.units import MIB
from numaspark.workloads import get_workload
from numaspark.workloads.datagen import prepare_input

LOOP_ITERATIONS = 100_000  # "forever": the application is stopped after the cool-down


@dataclass(frozen=True)
class Share:
    workload: str
    cpus: CpuSet  # this machine's, or the first host's
    nodes: CpuSet
    on_hosts: tuple[tuple[str, CpuSet], ...] = ()  # --hosts: each host's share, by name

    @property
    def where(self) -> str:
        """Its CPUs as a row shows them: per host where it has hosts."""
        if not self.on_hosts:
            return str(self.cpus)
        return "; ".join(f"{host} {cpus}" for host, cpus in self.on_hosts)


def split_name(parts: list[CpuSet]) -> str:
    return "-".join(str(len(p)) for p in parts) + " CPUs"


def _placement(topology: Topology, cpus: CpuSet, bound: bool, mode: Mode = Mode.LOCAL):
    """One JVM with len(cpus) task slots, bound to ``cpus`` and their nodes or not: local
    mode's driver, or (standalone, on a host) one executor whose heap is the share's part of
    what the planner gives an executor of the whole host, so that the workloads' executors on
    one host fit it together."""
    layout = Layout(mode=mode, executors=None if mode is Mode.LOCAL else 1, cores_per_executor=1)
    base = plan(topology, layout, Binding.CORE)
    nodes = CpuSet(topology.pu(c).node for c in cpus if topology.pu(c).node is not None)
    part = len(cpus) / len(topology.allowed_cpus)

    def share(jvm):
        sized = {}
        if mode is not Mode.LOCAL:
            heap = max(int(jvm.heap * part) // MIB * MIB, SPARK_MIN_HEAP)
            sized = {"heap": heap, "overhead": spark_overhead(heap)}
        return replace(
            jvm,
            cores=len(cpus),
            cpus=cpus if bound else topology.allowed_cpus,
            nodes=nodes,
            binding=Binding.CORE if bound else Binding.NONE,
            mem_policy=MemPolicy.BIND if bound else None,
            mem_nodes=nodes if bound else CpuSet(),
            **sized,
        )

    jvms = tuple(share(j) if j.runs_tasks else j for j in base.jvms)
    return replace(base, jvms=jvms, binding=Binding.CORE if bound else Binding.NONE)


@dataclass(frozen=True)
class OnHosts:
    """Hosts over SSH a study cosched runs on: the inventory, and each host's topology (read
    with hwloc over SSH once, by host name)."""

    inventory: object
    topologies: dict

    @classmethod
    def read(cls, inventory) -> OnHosts:
        return cls(inventory, {h.name: read_topology(h) for h in inventory.hosts})

    @property
    def name(self) -> str:
        return "hosts " + ",".join(self.topologies)

    @property
    def first(self) -> Topology:
        return next(iter(self.topologies.values()))


def hosts_at(venue: Venue) -> OnHosts | None:
    """The hosts study cosched splits at ``venue`` (their topologies read now); None: this
    machine. A cluster numaspark did not start cannot keep an executor to a share of a host:
    refused in one line."""
    inventory = venue.cosched_inventory()
    return OnHosts.read(inventory) if inventory is not None else None


def run_round(
    topology: Topology,
    shares: list[Share],
    bound: bool,
    window: tuple[float, float, float],
    out: Path,
    data_root: Path | None,
    size: str,
    label: str,
    targets: TargetFactory | None = None,
    hosts: OnHosts | None = None,
    say=lambda message: None,
) -> list[dict]:
    """All workloads at once for ``window`` (warm-up, window, cool-down, in seconds); per
    workload what it completed. On ``hosts`` each workload's cluster starts first."""
    warmup_s, window_s, cooldown_s = window
    inputs = {}
    for share in shares:
        workload = get_workload(share.workload)
        if workload.application is None:
            inputs[share.workload] = prepare_input(workload, workload.size(size), root=data_root)
    total = warmup_s + window_s + cooldown_s
    runs: dict[str, dict] = {}
    root = (out / "cosched" / label.replace(" ", "_")).resolve()
    with Runner(topology, out, targets=targets) as runner, contextlib.ExitStack() as stack:
        placed = _targets(runner, topology, shares, bound, root, hosts, stack, say)
        start = time.time()
        threads = []
        for index, (share, (target, placement)) in enumerate(zip(shares, placed, strict=True)):
            workload = get_workload(share.workload)
            run_dir = root / f"{index}-{workload.name}"
            if workload.application is None:
                job = partial(
                    _loop_job, target, placement, workload, *inputs[share.workload], run_dir, total
                )
            else:
                job = partial(
                    _loop_application,
                    runner.tracker,
                    target,
                    placement,
                    workload.application,
                    run_dir,
                    start + total,
                )
            thread = threading.Thread(
                target=lambda w=share.workload, j=job: runs.update({w: j()}), daemon=True
            )
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
    measured = (start + warmup_s, start + warmup_s + window_s)
    return [_row(share, runs[share.workload], measured, label, bound, window) for share in shares]


def _targets(runner, topology, shares, bound, root, hosts, stack, say) -> list[tuple]:
    """Where each share's workload runs, and how it is placed: local mode here; on ``hosts`` a
    standalone cluster of its own per workload (one worker per host on the workload's share
    of it), started now and stopped by ``stack``."""
    if hosts is None:
        local = runner.targets.here(Mode.LOCAL)
        return [(local, _placement(topology, share.cpus, bound)) for share in shares]
    placed = []
    for index, share in enumerate(shares):
        target = HostsTarget(
            runner.tracker, root / f"clusters-{index}", hosts.inventory, hosts.topologies
        )
        stack.callback(target.close)
        mine = dict(share.on_hosts)
        placement = target.plan_each(
            lambda host, topo, mine=mine: _placement(topo, mine[host.name], bound, Mode.STANDALONE)
        )
        target.prepare(placement, lambda message, w=share.workload: say(f"{w}: {message}"))
        placed.append((target, placement))
    return placed


def _loop_job(
    local,
    placement: Placement,
    workload,
    input_dir: Path,
    manifest: dict,
    run_dir: Path,
    total_s: float,
) -> dict:
    """A built-in: one application looping over its input until it is stopped; each
    iteration that ended is a completion, checked against the input's facts."""
    app = local.submit(
        placement,
        workload.job_path,
        [
            str(input_dir),
            str(run_dir / "output"),
            str(run_dir / "answers.jsonl"),
            str(LOOP_ITERATIONS),
            json.dumps(workload.job_arguments(manifest["facts"])),
        ],
        run_dir,
        timeout_s=total_s,
        collectors=default_collectors(perf=False),
    )
    done = [
        {
            "ended": a["ended"],
            "wall_s": a["wall_s"],
            "passed": workload.check(manifest["facts"], a["answer"]).passed,
        }
        for a in read_json_lines(run_dir / "answers.jsonl")
    ]
    # it loops until the round's end stops it: any other end is the application's failure
    failed = None if app.failure is None or app.failure.startswith("timed out") else app.failure
    return {"completions": done, "collectors": app.collectors, "failure": failed}


def _loop_application(
    tracker, local, placement: Placement, application, run_dir: Path, deadline: float
) -> dict:
    """A user's application does its work once: it is submitted again and again until the
    round ends; each one that ended by itself is a completion, passed when it exited 0 (and
    its --check passed). The one the round's end cuts short is stopped, not counted."""
    done = []
    while (left := deadline - time.time()) > 1:
        app_dir = run_dir / f"app-{len(done)}"
        app = local.submit(
            placement,
            application.path,
            list(application.args),
            app_dir,
            timeout_s=left,
            collectors=None,
            app_conf=application.conf(),
            submit_options=application.passthrough(),
        )
        if app.failure and app.failure.startswith("timed out"):
            break
        passed = app.ok and (
            not application.check or run_check(tracker, application.check, app_dir, left).passed
        )
        done.append({"ended": time.time(), "wall_s": app.wall_s, "passed": passed})
    return {"completions": done, "collectors": None, "failure": None}


def _row(
    share: Share,
    run: dict,
    measured: tuple[float, float],
    label: str,
    bound: bool,
    window: tuple[float, float, float],
) -> dict:
    """What one workload completed inside the window, and how its JVM ran meanwhile (the
    collectors follow a built-in's one JVM; an application's JVMs come and go, so those
    figures are null for it)."""
    warmup_s, window_s, cooldown_s = window
    inside = [a for a in run["completions"] if measured[0] <= a["ended"] <= measured[1]]
    passed = [a for a in inside if a["passed"]]
    found = Measurements(run["collectors"].summarize(*measured) if run["collectors"] else {})
    jvm = found.jvm_use[0] if found.jvm_use else None
    numa = found.locality[0] if found.locality else None
    on_bound = numa.share_on_bound_nodes if numa else None
    times = sorted(a["wall_s"] for a in inside)
    return {
        "split": label,
        "bound": bound,
        "workload": share.workload,
        "cpus": share.where,
        "completions": len(passed),
        "failed_checks": len(inside) - len(passed),
        "median_completion_s": times[len(times) // 2] if times else None,
        "completion_times_s": [round(t, 3) for t in times],
        "context_switches_per_s": jvm.context_switches_per_s if jvm else None,
        "remote_page_share": round(1 - on_bound, 4) if on_bound is not None else None,
        "bytes_per_node": numa.bytes_per_node if numa else None,
        "failure": run["failure"],  # a built-in's application that ended by itself
        "window_s": window_s,
        "warmup_s": warmup_s,
        "cooldown_s": cooldown_s,
    }


def cosched(
    topology: Topology,
    workloads: list[str],
    size: str,
    window: tuple[float, float, float],
    out: Path,
    data_root: Path | None = None,
    by: str = "auto",
    on_round=None,
    targets: TargetFactory | None = None,
    hosts: OnHosts | None = None,
    say=lambda message: None,
) -> list[dict]:
    """Every split, bound then unbound, for ``window`` (warm-up, window, cool-down, in
    seconds) each, here or on ``hosts``; rows appended to OUT/cosched.jsonl as each round
    ends."""
    _check(workloads, size, window)
    machine = topology if hosts is None else hosts.first
    fingerprints = (
        [machine.fingerprint]
        if hosts is None
        else [t.fingerprint for t in hosts.topologies.values()]
    )
    env = environment(",".join(dict.fromkeys(fingerprints)), spark_version(spark_home()))
    out.mkdir(parents=True, exist_ok=True)
    store = out / "cosched.jsonl"
    rows = []
    rounds = [
        (parts, bound)
        for parts in _parts(machine, len(workloads), by, hosts)
        for bound in (True, False)
    ]
    for number, (parts, bound) in enumerate(rounds):
        label = f"{split_name([p for p, _ in parts])} {'bound' if bound else 'unbound'}"
        if on_round:
            on_round(number, len(rounds), label)
        shares = [
            Share(
                w, p, CpuSet(machine.pu(c).node for c in p if machine.pu(c).node is not None), each
            )
            for w, (p, each) in zip(workloads, parts, strict=True)
        ]
        found = run_round(
            machine, shares, bound, window, out, data_root, size, label, targets, hosts, say
        )
        where = hosts.name if hosts is not None else "this machine"
        with open(store, "a") as handle:
            for row in found:
                row = {**row, "where": where}
                handle.write(json.dumps({**row, "environment": records.dump(env)}) + "\n")
                rows.append(row)
    return rows


def _check(workloads: list[str], size: str, window: tuple[float, float, float]) -> None:
    if len(workloads) < 2:
        raise UsageError("co-scheduling needs two or more workloads")
    for name in workloads:
        workload = get_workload(name)
        if workload.streaming:
            raise UsageError(f"{name} is a streaming workload: co-schedule batch workloads")
        if workload.application is None:
            workload.size(size)
    warmup_s, window_s, cooldown_s = window
    if window_s <= 0 or warmup_s < 0 or cooldown_s < 0:
        raise UsageError("--window must be positive, --warmup-time and --cooldown at least 0")


def _parts(machine: Topology, count: int, by: str, hosts: OnHosts | None) -> list[list[tuple]]:
    """Each split's parts, one per workload: (``machine``'s CPUs, and on ``hosts`` each
    host's by name). Every host is split alike, or the study is refused."""
    if hosts is None:
        return [[(p, ()) for p in parts] for parts in splits(machine, count, by)]
    each = {name: splits(t, count, by) for name, t in hosts.topologies.items()}
    shapes = {name: [split_name(p) for p in found] for name, found in each.items()}
    if len({tuple(v) for v in shapes.values()}) > 1:
        said = "; ".join(f"{n}: {', '.join(v)}" for n, v in shapes.items())
        raise UsageError(
            f"study cosched splits every host alike, and these split differently ({said}): "
            "give --hosts of one shape"
        )
    names = list(each)
    first = each[names[0]]
    return [
        [(first[i][k], tuple((n, each[n][i][k]) for n in names)) for k in range(count)]
        for i in range(len(first))
    ]
