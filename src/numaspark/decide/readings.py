"""One line per figure that explains a run, each with what it suggests (like pyperf's advice).

Computed when shown (``numaspark run``, ``analyze``, the report), never stored: the
thresholds live in decide/thresholds.py with the advice rules', so a reading and a
rule judge the same figure the same way.
"""

from __future__ import annotations

from numaspark.decide.thresholds import (
    BANDWIDTH_REGION,
    CPU_GAP,
    GC_SHARE,
    GC_WORTH_A_CHANGE,
    IDLE_CPU,
    LOW_IPC,
    MIGRATIONS,
    REMOTE_PAGES,
    Severity,
)
from numaspark.experiment.result import Measurements
from numaspark.metrics.executors import churn
from numaspark.metrics.registry import Metrics
from numaspark.units import human_size


def readings(result) -> list[str]:
    """Lines for a `RunResult` (or anything with ``metrics`` and ``measurements``)."""
    metrics = Metrics.of(result.metrics)
    found = Measurements.of(result.measurements)
    gap = found.cpu_gap
    pinning = getattr(result, "affinity", None)
    lines = [
        cpu_use_reading(found),
        migrations_reading(found),
        *locality_readings(found),
        gc_reading(metrics),
        cpu_reading(gap) if gap else plugin_python_reading(result, metrics),
        process_tree_reading(found.process_tree),
        _pinning(pinning) if pinning else None,
        bandwidth_reading(found),
        counters_reading(found),
    ]
    return [line for line in lines if line]


def cpu_use_reading(found: Measurements) -> str | None:
    """The machine's CPU utilisation and its kinds: idle CPUs ask for more parallelism."""
    if found.cpu_utilisation is None:
        return None
    share, kinds = found.cpu_utilisation, found.cpu_shares
    advice = (
        "the CPUs were mostly idle: more parallelism (cores, partitions) may help"
        if share < IDLE_CPU
        else "the CPUs were busy"
    )
    return (
        f"CPU utilisation {share:.0%} (user {kinds['user'] or 0:.0%}, system "
        f"{kinds['system'] or 0:.0%}, iowait {kinds['iowait'] or 0:.0%}): {advice}"
    )


def migrations_reading(found: Measurements) -> str | None:
    """Context switches and the JVMs' CPU migrations: many migrations ask for core binding."""
    if found.context_switches_per_s is None:
        return None
    migrations = sum(j.migrations for j in found.jvm_use)
    advice = (
        "threads are migrating between CPUs: binding at core level keeps them put"
        if migrations > MIGRATIONS
        else "few migrations"
    )
    return (
        f"{found.context_switches_per_s:,.0f} context switches/s machine-wide, "
        f"{migrations:,} CPU migrations of the JVMs' threads: {advice}"
    )


def locality_readings(found: Measurements) -> list[str]:
    """Each bound JVM's share of resident pages on its own nodes: memory that strayed asks
    for memory binding too."""
    lines = []
    for jvm in found.locality:
        share = jvm.share_on_bound_nodes
        if share is None:
            continue
        advice = (
            "memory is local"
            if REMOTE_PAGES.grade(1 - share) is Severity.NONE
            else "memory strayed off its node: bind memory too (--mem-policy bind)"
        )
        lines.append(
            f"{jvm.name}: {share:.0%} of its resident pages on its bound node(s) "
            f"{','.join(map(str, jvm.bound_nodes or []))}: {advice}"
        )
    return lines


def gc_reading(metrics: Metrics) -> str | None:
    """GC's share of executor time: a large one asks for more heap or smaller executors."""
    gc_share = metrics.gcShare
    if gc_share is None:
        return None
    advice = (
        "give executors more heap, or use more, smaller executors"
        if GC_SHARE.grade(gc_share) >= GC_WORTH_A_CHANGE
        else "GC is not what limits this run"
    )
    return f"GC takes {gc_share:.0%} of executor time: {advice}"


def counters_reading(found: Measurements) -> str | None:
    """IPC from the hardware counters, or why there is none: a low one means the cores wait
    on memory."""
    if found.counter_problem:
        return f"hardware counters: unavailable ({found.counter_problem})"
    if not found.counted:
        return None
    if found.ipc is not None:
        advice = (
            "low IPC: the cores wait on memory; fewer threads per node or better locality"
            if found.ipc < LOW_IPC
            else "the cores are mostly computing"
        )
        return f"IPC {found.ipc:.2f}: {advice}"
    return (
        "IPC: unavailable, this machine's CPU exposes no hardware counters "
        f"({', '.join(found.unsupported_counters) or 'none counted'}); "
        "software events were recorded"
    )


def cpu_reading(gap: dict) -> str:
    """The JVMs' CPU time against Spark's task CPU time and, for PySpark, the Python
    workers': which dominates. Python's work is never the JVMs' CPU outside the tasks."""
    jvm, task, python = gap["os_cpu_s"], gap["spark_executor_cpu_s"], gap.get("python_cpu_s")
    if python is None:
        advice = (
            "the JVMs burn CPU outside the tasks (JIT, GC threads, Spark's own work)"
            if gap["ratio"] > CPU_GAP
            else "nearly all JVM CPU time is in the tasks"
        )
        return f"JVM CPU {jvm:.1f} s vs Spark executorCpuTime {task:.1f} s ({gap['ratio']:.1f}x): {advice}"
    figures = (
        f"CPU time: JVMs {jvm:.1f} s, their Python workers {python:.1f} s, Spark's task "
        f"CPU (executorCpuTime, the JVMs' task threads) {task:.1f} s"
    )
    if python >= jvm:
        share = python / (python + jvm) if python + jvm else 1.0
        return (
            f"{figures}: the Python workers dominate ({share:.0%} of the processes' CPU "
            "time): PySpark's tasks do their work there, which executorCpuTime does not "
            "count; they are placed, and need CPUs, with their executors"
        )
    if gap["ratio"] > CPU_GAP:
        return (
            f"{figures}: the JVMs dominate, mostly outside their task threads (JIT, GC, "
            "rows moved to and from the Python workers, Spark's own work)"
        )
    return f"{figures}: the JVMs dominate, mostly in their task threads"


def plugin_python_reading(result, metrics: Metrics) -> str | None:
    """Where numaspark does not sample (a cluster it did not start), the Python workers' CPU
    time as the plugin reported it from inside each executor, against Spark's task CPU."""
    python = [
        p
        for e in getattr(result, "effective_placement", None) or ()
        if e.source == "plugin"
        for p in e.python
        if p.role != "driver"
    ]
    task_ms = metrics.executorCpuTime
    if not python or not task_ms:
        return None
    used = sum(p.cpu_s or 0.0 for p in python)
    task = task_ms / 1000
    which = (
        "the Python workers dominate: PySpark's tasks do their work there, which "
        "executorCpuTime does not count"
        if used >= task
        else "Spark's task threads dominate"
    )
    return (
        f"CPU time: Python workers {used:.1f} s (as the plugin saw them, workers ended "
        f"between its reports not counted), Spark's task CPU {task:.1f} s: {which}"
    )


def process_tree_reading(tree: dict) -> str | None:
    """Spark's process-tree memory: each executor's peak Python RSS beside its JVM's."""
    executors = tree.get("executors") or []
    if not executors:
        return f"Python memory: {tree['note']}" if tree.get("note") else None
    parts = [
        f"{e['executor']} JVM {human_size(e['jvm_rss_bytes'])}, Python "
        f"{human_size(e['python_rss_bytes'])}"
        for e in executors
    ]
    return f"peak resident memory by process tree (Spark): {'; '.join(parts)}"


def _pinning(pinning: dict) -> str:
    if not pinning["pinned"]:
        return (
            f"task pinning ({pinning['level']}): tasks ran unpinned: "
            f"{'; '.join(pinning['unpinned_reasons']) or 'level does not pin'}"
        )
    shared = pinning["overlapping_pairs_sharing_a_cpu"]
    return (
        f"task pinning ({pinning['level']}): {pinning['pinned']} of {pinning['tasks']} "
        f"tasks pinned, on CPUs {','.join(map(str, pinning['cpus_used']))}; "
        + (
            "no two overlapping tasks shared a CPU"
            if not shared
            else f"{shared} overlapping pair(s) shared a CPU"
        )
    )


BANDWIDTH_ADVICE = {
    "constant": "memory bandwidth is not the limit",
    "linear": "memory bandwidth is becoming the limit: watch it as you add cores",
    "exponential": "memory bandwidth is saturated: more threads per node will not help, "
    "spread executors over nodes",
}
assert set(BANDWIDTH_ADVICE) == set(BANDWIDTH_REGION)


def bandwidth_reading(found: Measurements) -> str | None:
    use = found.bandwidth
    if "region" in use:
        return (
            f"memory bandwidth ~{use['estimate_bps'] / 1e9:.1f} GB/s, {use['share']:.0%} of "
            f"the probed maximum ({use['region']} region): {BANDWIDTH_ADVICE[use['region']]}"
        )
    if use.get("unavailable"):
        return f"memory bandwidth: unavailable ({use['unavailable']})"
    return None


def log_summary(log) -> dict:
    """An event log alone, summarized: its aggregates, GC per executor and the readings those
    allow (CPU, context switches, NUMA pages and counters come only with numaspark run)."""
    from types import SimpleNamespace

    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.metrics.aggregate import aggregate
    from numaspark.metrics.gc import gc_by_executor

    aggregates, gc = aggregate(log), gc_by_executor(log)
    view = SimpleNamespace(metrics=aggregates, measurements={"gc": gc})
    executors = churn(log)
    lines = readings(view)
    if executors.total > executors.peak_executors:  # they came and went
        endings = ", ".join(f"{n} {kind}" for kind, n in executors.endings.items())
        lines.append(
            f"executors: {executors.total} added in all, at most {executors.peak_executors} "
            f"at once ({executors.peak_slots} task slots); ended: {endings}; "
            f"{executors.wait_ms / 1000:.1f} s waiting for them to start "
            "(numaspark advise: executor-churn)"
        )
    return {
        "event_log": str(log.path),
        "app_id": log.app_id,
        "app_name": log.app_name,
        "spark_version": log.spark_version,
        "complete": log.complete,
        "warnings": log.warnings,
        "aggregates": aggregates,
        "gc_by_executor": gc,
        "readings": lines,
        "placement": reported_placement(log.placement),
        "executors": executors.figures(),
    }


def reported_placement(reports) -> list[dict]:
    """Each JVM (the driver's own too) as the affinity plugin reported it from inside, at its
    latest report: where ``analyze`` shows an event log's placement (empty without the
    plugin)."""
    return [
        {
            "jvm": j.name,
            "host": j.latest.host,
            "cpus": j.latest.cpus,
            "nodes": None if j.nodes is None else str(j.nodes),
            "policy": j.latest.policy,
            "bound_nodes": None if j.bound_nodes is None else str(j.bound_nodes),
            "local_share": j.latest.local_share,
            "remote_bytes": j.latest.remote_bytes,
            "pinned_tasks": j.latest.pinned_tasks,
            "task_migrations": j.latest.task_migrations,
            "python_processes": len(j.python),
            "numa_balancing": j.latest.numa_balancing,
            "devices": j.latest.devices or [],
            "nic": j.latest.nic,
        }
        for j in reports.jvms(driver=True)
    ]
