"""The NUMA rules: JVMs that span nodes (`numa_straddle`), pages off the bound nodes
(`remote_pages`), automatic NUMA balancing over bound JVMs (`numa_balancing`), SMT (`smt`)
and memory bandwidth past the knee (`memory_bandwidth`)."""

from __future__ import annotations

import statistics

from numaspark.decide.advise.findings import Finding, NotAssessed, share_beyond_whole
from numaspark.decide.advise.subject import NO_REPORTS, Subject
from numaspark.decide.thresholds import (
    BANDWIDTH_REGION,
    REMOTE_PAGES,
    SMT_FASTER,
    SMT_SLOWER,
    Severity,
)
from numaspark.experiment.result import JvmLocality, measured
from numaspark.metrics.executors import churn
from numaspark.placement import Binding, MemPolicy, Mode, PuOrder
from numaspark.placement.plugin import LEVEL_KEY


def numa_straddle(subject: Subject) -> Finding | NotAssessed:
    """JVMs that run tasks on more than one NUMA node: as planned (numaspark's runs), else as
    the plugin reported them (their CPUs against their host's nodes)."""
    jvms = [
        {"jvm": f"{j.role} {j.index}", "nodes": j.nodes, "cpus": str(j.cpus)}
        for j in subject.task_jvms()
    ] or [
        {"jvm": j.name, "host": j.latest.host, "nodes": j.nodes, "cpus": j.latest.cpus}
        for j in subject.reported()
        if j.nodes is not None
    ]
    if not jvms:
        return NotAssessed("numa-straddle", NO_REPORTS)
    spanning = [j for j in jvms if len(j["nodes"]) > 1]
    evidence = {"jvms": [{**j, "nodes": str(j["nodes"])} for j in spanning]}
    weighted = _seconds_share(subject, {j["jvm"] for j in spanning}, {j["jvm"] for j in jvms})
    if weighted is not None:
        evidence["executor_seconds_share"] = round(weighted, 4)
    if not spanning:
        return Finding(
            "numa-straddle", Severity.NONE, "every task-running JVM sits on one NUMA node", evidence
        )
    seconds = "" if weighted is None else f" ({weighted:.0%} of their executor-seconds)"
    return Finding(
        "numa-straddle",
        Severity.MODERATE,
        f"{len(spanning)} of {len(jvms)} task-running JVM(s){seconds} span NUMA nodes: their "
        "threads reach remote memory (~10% slower on average)",
        evidence,
        "one executor (or more) per node, bound to it",
        subject.changed(
            executors_per_node=1,
            binding=Binding.NODE,
            mem_policy=MemPolicy.BIND,
            mode=Mode.STANDALONE,
        ),
    )


def _seconds_share(subject: Subject, some: set[str], judged: set[str]) -> float | None:
    """The executor-seconds of the JVMs named ``some`` over those of ``judged`` (names as
    `ReportedJvm.name`), from the log's executors' added and removed times: an executor that
    ran 5 s weighs 5 s, not one executor. None without a log or any executor-seconds."""
    if subject.log is None or subject.task_jvms():
        return None
    executors = churn(subject.log)
    seconds = {
        ("driver" if s.executor == "driver" else f"executor {s.executor}"): s.seconds(
            executors.end_ms
        )
        for s in executors.spans
    }
    total = sum(seconds.get(name, 0.0) for name in judged)
    return sum(seconds.get(name, 0.0) for name in some) / total if total else None


def _bound_locality(subject: Subject) -> list[JvmLocality]:
    """Each bound JVM's pages: the NUMA collector's (numaspark's runs here), else the
    plugin's reports (the share of the JVM's and its Python processes' pages on its nodes)."""
    locality = subject.result.figures.locality if subject.result else []
    bound = [j for j in locality if j.share_on_bound_nodes is not None]
    if bound:
        return bound
    return [
        JvmLocality(
            name=j.name,
            pid=j.latest.pid,
            bound_nodes=list(j.bound_nodes or ()),
            share_on_bound_nodes=j.latest.local_share,
            bytes_per_node=j.latest.bytes_per_node or {},
        )
        for j in subject.reported()
        if j.bound_nodes is not None and j.latest.local_share is not None
    ]


def remote_pages(subject: Subject) -> Finding | NotAssessed:
    bound = _bound_locality(subject)
    if not bound:
        why = "no bound JVM with per-node page counts"
        return NotAssessed("remote-pages", why if subject.result else NO_REPORTS)
    worst = min(bound, key=lambda j: j.share_on_bound_nodes or 0.0)
    most = max(j.share_on_bound_nodes or 0.0 for j in bound)
    if beyond := share_beyond_whole("remote-pages", most, "pages on the bound nodes"):
        return beyond
    off = 1 - (worst.share_on_bound_nodes or 0.0)
    severity = REMOTE_PAGES.grade(off)
    evidence = {
        "jvm": worst.name,
        "share_on_bound_nodes": worst.share_on_bound_nodes,
        "bound_nodes": worst.bound_nodes,
        "bytes_per_node": worst.bytes_per_node,
    }
    text = f"{worst.name}: {off:.0%} of its resident pages are off its bound node(s)"
    if severity is Severity.NONE:
        return Finding("remote-pages", severity, text, evidence)
    return Finding(
        "remote-pages",
        severity,
        text,
        evidence,
        "bind memory with the CPUs (numactl --membind)",
        subject.changed(mem_policy=MemPolicy.BIND),
    )


def _balancing_state(subject: Subject) -> tuple[str | None, str | None, str]:
    """kernel.numa_balancing and the binding the run had, and where they were read: the run's
    record, else the plugin's reports in the log (each host's; on if any host's is)."""
    if subject.result is not None:
        return subject.result.environment.numa_balancing, subject.spec.binding, "the run"
    hosts = subject.log.placement.balancing() if subject.log else {}
    if not hosts:
        return None, None, "log"
    setting = max(hosts.values())  # "0" off, "1" on, "2" tiering: any host on counts
    level = subject.conf.get(LEVEL_KEY, "none")
    bound = any(j.bound_nodes is not None for j in subject.reported())
    return setting, level if bound or level != "none" else "none", f"{len(hosts)} host(s)"


def numa_balancing(subject: Subject) -> Finding | NotAssessed:
    setting, binding, where = _balancing_state(subject)
    if setting is None:
        why = "kernel.numa_balancing was not readable"
        if where == "log":
            why = NO_REPORTS
        return NotAssessed("numa-balancing", why)
    evidence = {"numa_balancing": setting, "binding": binding, "read_from": where}
    if setting == "0" or binding in (None, "none"):
        return Finding(
            "numa-balancing",
            Severity.NONE,
            f"numa_balancing={setting} with binding {binding}",
            evidence,
        )
    return Finding(
        "numa-balancing",
        Severity.LOW,
        "automatic NUMA balancing is on while the JVMs are bound: it unmaps pages to "
        "sample accesses and migrates pages of processes that are already placed",
        evidence,
        "turn it off while bound runs are measured (as root: sysctl -w "
        "kernel.numa_balancing=0), then run again",
        subject.request(),
    )


def smt(subject: Subject) -> Finding | NotAssessed:
    medians: dict[str, list[float]] = {}
    workload = subject.spec.workload
    for r in measured(subject.peers):
        note = (r.spec.label or "").split(" ")[0]
        if r.spec.workload == workload and note in ("ST", "SMT"):
            medians.setdefault(r.spec.label, []).append(r.wall_time_s)
    st = [statistics.median(v) for k, v in medians.items() if k.startswith("ST ")]
    smt = [statistics.median(v) for k, v in medians.items() if k.startswith("SMT ")]
    if not st or not smt:
        where = "in these results" if subject.result is not None else "in an event log alone"
        return NotAssessed(
            "smt",
            f"no SMT measurement of this workload {where} "
            "(numaspark study smt WORKLOAD measures it)",
        )
    gain = st[0] / smt[0]  # ST on n cores over SMT on the same n cores
    evidence = {"st_n_s": st[0], "smt_n_s": smt[0], "smt_gain": round(gain, 3)}
    if gain < SMT_SLOWER:
        return Finding(
            "smt",
            Severity.MODERATE,
            f"SMT made this workload {1 / gain - 1:.0%} slower on the same cores",
            evidence,
            "one task per physical core: bind at hardware-thread level, one thread per core",
            subject.changed(binding=Binding.PU, pu_order=PuOrder.CORES_FIRST),
        )
    if gain > SMT_FASTER:
        return Finding(
            "smt",
            Severity.LOW,
            f"SMT gave this workload {gain - 1:.0%} more on the same cores",
            evidence,
            "use both hardware threads of each core (core-level binding)",
            subject.changed(binding=Binding.CORE),
        )
    return Finding("smt", Severity.NONE, f"SMT changed this workload by {gain - 1:+.0%}", evidence)


def memory_bandwidth(subject: Subject) -> Finding | NotAssessed:
    found = subject.result.figures.bandwidth if subject.result else {}
    if "region" not in found:
        alone = "an event log alone holds no counters: " if subject.result is None else ""
        return NotAssessed(
            "memory-bandwidth",
            found.get("unavailable")
            or f"{alone}no bandwidth estimate (needs LLC-miss counters and a probe)",
        )
    region = found["region"]
    severity = BANDWIDTH_REGION[region]
    text = (
        f"memory bandwidth ~{found['estimate_bps'] / 1e9:.1f} GB/s, {found['share']:.0%} of "
        f"the probed maximum: {region} region"
    )
    if severity is Severity.NONE:
        return Finding("memory-bandwidth", severity, text, found)
    return Finding(
        "memory-bandwidth",
        severity,
        text,
        found,
        "fewer threads per node, or executors spread over more nodes: past the knee "
        "more threads only queue for memory",
        subject.changed(executors_per_node=1, binding=Binding.NODE, mode=Mode.STANDALONE),
    )
