"""One line per figure that explains a run, each with what it suggests (like pyperf's advice).

Thresholds are the studies': GC above ~10% of executor time is worth a layout
change (several small executors beat one large one by up to 36% through less
GC); memory off the bound node costs ~10% on average; an executor CPU gap
well above 1 means the JVM works outside the tasks (JIT, GC, Spark's threads).
"""

from __future__ import annotations


def readings(result) -> list[str]:
    """Lines for a `RunResult` (or anything with ``metrics`` and ``measurements``)."""
    lines: list[str] = []
    metrics = result.metrics or {}
    found = result.measurements or {}
    os_figures = found.get("os") or {}
    if os_figures.get("cpu_utilisation") is not None:
        share = os_figures["cpu_utilisation"]
        advice = (
            "the CPUs were mostly idle: more parallelism (cores, partitions) may help"
            if share < 0.5
            else "the CPUs were busy"
        )
        lines.append(
            f"CPU utilisation {share:.0%} (user {os_figures['cpu_user_share']:.0%}, system "
            f"{os_figures['cpu_system_share']:.0%}, iowait {os_figures['cpu_iowait_share']:.0%}): "
            f"{advice}"
        )
    if os_figures.get("context_switches_per_s") is not None:
        rate = os_figures["context_switches_per_s"]
        migrations = sum(j.get("migrations", 0) for j in os_figures.get("jvms", []))
        advice = (
            "threads are migrating between CPUs: binding at core level keeps them put"
            if migrations > 1000
            else "few migrations"
        )
        lines.append(
            f"{rate:,.0f} context switches/s machine-wide, {migrations:,} CPU migrations of the "
            f"JVMs' threads: {advice}"
        )
    for jvm in (found.get("numa") or {}).get("jvms", []):
        share = jvm.get("share_on_bound_nodes")
        if share is None:
            continue
        advice = (
            "memory is local"
            if share >= 0.95
            else "memory strayed off its node: bind memory too (--mem-policy bind)"
        )
        lines.append(
            f"{jvm['name']}: {share:.0%} of its resident pages on its bound node(s) "
            f"{','.join(map(str, jvm['bound_nodes']))}: {advice}"
        )
    gc_share = metrics.get("gcShare")
    if gc_share is not None:
        advice = (
            "give executors more heap, or use more, smaller executors"
            if gc_share > 0.10
            else "GC is not what limits this run"
        )
        lines.append(f"GC takes {gc_share:.0%} of executor time: {advice}")
    gap = found.get("executor_cpu_gap")
    if gap:
        advice = (
            "the JVMs burn CPU outside the tasks (JIT, GC threads, Spark's own work)"
            if gap["ratio"] > 1.5
            else "nearly all JVM CPU time is in the tasks"
        )
        lines.append(
            f"JVM CPU {gap['os_cpu_s']:.1f} s vs Spark executorCpuTime "
            f"{gap['spark_executor_cpu_s']:.1f} s ({gap['ratio']:.1f}x): {advice}"
        )
    pinning = getattr(result, "affinity", None)
    if pinning:
        if pinning["pinned"]:
            shared = pinning["overlapping_pairs_sharing_a_cpu"]
            lines.append(
                f"task pinning ({pinning['level']}): {pinning['pinned']} of {pinning['tasks']} "
                f"tasks pinned, on CPUs {','.join(map(str, pinning['cpus_used']))}; "
                + (
                    "no two overlapping tasks shared a CPU"
                    if not shared
                    else f"{shared} overlapping pair(s) shared a CPU"
                )  # fmt: skip
            )
        else:
            lines.append(f"task pinning ({pinning['level']}): tasks ran unpinned: "
                         f"{'; '.join(pinning['unpinned_reasons']) or 'level does not pin'}")  # fmt: skip
    bandwidth = bandwidth_reading(found)
    if bandwidth:
        lines.append(bandwidth)
    perf = found.get("perf") or {}
    if perf.get("problem"):
        lines.append(f"hardware counters: unavailable ({perf['problem']})")
    elif perf.get("events"):
        ipc = (perf.get("derived") or {}).get("ipc")
        if ipc is not None:
            advice = (
                "low IPC: the cores wait on memory; fewer threads per node or better locality"
                if ipc < 1.0
                else "the cores are mostly computing"
            )
            lines.append(f"IPC {ipc:.2f}: {advice}")
        else:
            lines.append(
                "IPC: unavailable, this machine's CPU exposes no hardware counters "
                f"({', '.join(perf.get('unsupported') or []) or 'none counted'}); "
                "software events were recorded"
            )
    return lines


def bandwidth_reading(found: dict) -> str | None:
    use = found.get("memory_bandwidth") or {}
    if "region" in use:
        advice = {
            "constant": "memory bandwidth is not the limit",
            "linear": "memory bandwidth is becoming the limit: watch it as you add cores",
            "exponential": "memory bandwidth is saturated: more threads per node will not help, "
            "spread executors over nodes",
        }[use["region"]]
        return (f"memory bandwidth ~{use['estimate_bps'] / 1e9:.1f} GB/s, {use['share']:.0%} of "
                f"the probed maximum ({use['region']} region): {advice}")  # fmt: skip
    if use.get("unavailable"):
        return f"memory bandwidth: unavailable ({use['unavailable']})"
    return None
