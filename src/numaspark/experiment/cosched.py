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
"""

from __future__ import annotations

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
from numaspark.jsonlines import read_json_lines
from numaspark.placement import Binding, Layout, MemPolicy, Mode, Placement, plan
from numaspark.placement.share import Split, splits  # noqa: F401 (splits: the module's API)
from numaspark.spark.home import spark_home, spark_version
from numaspark.topology import CpuSet, Topology
from numaspark.workloads import get_workload
from numaspark.workloads.datagen import prepare_input

LOOP_ITERATIONS = 100_000  # "forever": the application is stopped after the cool-down


@dataclass(frozen=True)
class Share:
    workload: str
    cpus: CpuSet
    nodes: CpuSet


def split_name(parts: list[CpuSet]) -> str:
    return "-".join(str(len(p)) for p in parts) + " CPUs"


def _placement(topology: Topology, cpus: CpuSet, bound: bool) -> Placement:
    """A local-mode JVM with len(cpus) task slots: bound to ``cpus`` and their nodes, or not."""
    base = plan(topology, Layout(mode=Mode.LOCAL, cores_per_executor=1), Binding.CORE)
    nodes = CpuSet(topology.pu(c).node for c in cpus if topology.pu(c).node is not None)
    jvms = tuple(
        replace(
            j,
            cores=len(cpus),
            cpus=cpus if bound else topology.allowed_cpus,
            nodes=nodes,
            binding=Binding.CORE if bound else Binding.NONE,
            mem_policy=MemPolicy.BIND if bound else None,
            mem_nodes=nodes if bound else CpuSet(),
        )
        if j.runs_tasks
        else j
        for j in base.jvms
    )
    return replace(base, jvms=jvms, binding=Binding.CORE if bound else Binding.NONE)


def run_round(
    topology: Topology,
    shares: list[Share],
    bound: bool,
    warmup_s: float,
    window_s: float,
    cooldown_s: float,
    out: Path,
    data_root: Path | None,
    size: str,
    label: str,
    targets: TargetFactory | None = None,
) -> list[dict]:
    """All workloads at once for warm-up + window + cool-down; per workload what it completed."""
    inputs = {}
    for share in shares:
        workload = get_workload(share.workload)
        if workload.application is None:
            inputs[share.workload] = prepare_input(workload, workload.size(size), root=data_root)
    total = warmup_s + window_s + cooldown_s
    runs: dict[str, dict] = {}
    start = time.time()
    with Runner(topology, out, targets=targets) as runner:
        local = runner.target(Mode.LOCAL)
        threads = []
        for index, share in enumerate(shares):
            workload = get_workload(share.workload)
            run_dir = (
                out / "cosched" / label.replace(" ", "_") / f"{index}-{workload.name}"
            ).resolve()
            placement = _placement(topology, share.cpus, bound)
            if workload.application is None:
                job = partial(
                    _loop_job, local, placement, workload, *inputs[share.workload], run_dir, total
                )
            else:
                job = partial(
                    _loop_application,
                    runner.tracker,
                    local,
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
    window = (start + warmup_s, start + warmup_s + window_s)
    return [
        _row(share, runs[share.workload], window, label, bound, warmup_s, window_s, cooldown_s)
        for share in shares
    ]


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
    return {"completions": done, "collectors": app.collectors}


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
    return {"completions": done, "collectors": None}


def _row(
    share: Share,
    run: dict,
    window: tuple[float, float],
    label: str,
    bound: bool,
    warmup_s: float,
    window_s: float,
    cooldown_s: float,
) -> dict:
    """What one workload completed inside the window, and how its JVM ran meanwhile (the
    collectors follow a built-in's one JVM; an application's JVMs come and go, so those
    figures are null for it)."""
    inside = [a for a in run["completions"] if window[0] <= a["ended"] <= window[1]]
    passed = [a for a in inside if a["passed"]]
    found = Measurements(run["collectors"].summarize(*window) if run["collectors"] else {})
    jvm = found.jvm_use[0] if found.jvm_use else None
    numa = found.locality[0] if found.locality else None
    on_bound = numa.share_on_bound_nodes if numa else None
    times = sorted(a["wall_s"] for a in inside)
    return {
        "split": label,
        "bound": bound,
        "workload": share.workload,
        "cpus": str(share.cpus),
        "completions": len(passed),
        "failed_checks": len(inside) - len(passed),
        "median_completion_s": times[len(times) // 2] if times else None,
        "completion_times_s": [round(t, 3) for t in times],
        "context_switches_per_s": jvm.context_switches_per_s if jvm else None,
        "remote_page_share": round(1 - on_bound, 4) if on_bound is not None else None,
        "bytes_per_node": numa.bytes_per_node if numa else None,
        "window_s": window_s,
        "warmup_s": warmup_s,
        "cooldown_s": cooldown_s,
    }


def cosched(
    topology: Topology,
    workloads: list[str],
    size: str,
    window_s: float,
    warmup_s: float,
    cooldown_s: float,
    out: Path,
    data_root: Path | None = None,
    by: str = "auto",
    on_round=None,
    targets: TargetFactory | None = None,
) -> list[dict]:
    """Every split, bound then unbound; rows appended to OUT/cosched.jsonl as each round ends."""
    if len(workloads) < 2:
        raise UsageError("co-scheduling needs two or more workloads")
    for name in workloads:
        workload = get_workload(name)
        if workload.streaming:
            raise UsageError(f"{name} is a streaming workload: co-schedule batch workloads")
        if workload.application is None:
            workload.size(size)
    if window_s <= 0 or warmup_s < 0 or cooldown_s < 0:
        raise UsageError("--window must be positive, --warmup-time and --cooldown at least 0")
    env = environment(topology.fingerprint, spark_version(spark_home()))
    out.mkdir(parents=True, exist_ok=True)
    store = out / "cosched.jsonl"
    rows = []
    parts_list = splits(topology, len(workloads), by)
    rounds = [(parts, bound) for parts in parts_list for bound in (True, False)]
    for number, (parts, bound) in enumerate(rounds):
        name = split_name(parts)
        label = f"{name} {'bound' if bound else 'unbound'}"
        if on_round:
            on_round(number, len(rounds), label)
        shares = [
            Share(w, p, CpuSet(topology.pu(c).node for c in p if topology.pu(c).node is not None))
            for w, p in zip(workloads, parts, strict=True)
        ]
        found = run_round(
            topology,
            shares,
            bound,
            warmup_s,
            window_s,
            cooldown_s,
            out,
            data_root,
            size,
            label,
            targets,
        )
        with open(store, "a") as handle:
            for row in found:
                handle.write(json.dumps({**row, "environment": records.dump(env)}) + "\n")
        rows.extend(found)
    return rows
