"""The JVM's rules: GC time (`gc`), heaps above 31 GB (`heap_size`), and one large executor
against several small ones (`executor_count`)."""

from __future__ import annotations

from numaspark.decide.advise.findings import Finding, NotAssessed, share_beyond_whole
from numaspark.decide.advise.subject import COMPRESSED_OOPS_LIMIT, Subject
from numaspark.decide.thresholds import GC_SHARE, Severity
from numaspark.metrics.registry import Metrics
from numaspark.units import human_size, jvm_size


def gc(subject: Subject) -> Finding | NotAssessed:
    if subject.result is not None and subject.result.metrics.gcShare is not None:
        share = subject.result.metrics.gcShare
        gc_ms = subject.result.metrics.jvmGCTime or 0.0
        run_ms = subject.result.metrics.executorRunTime or 0.0
    elif subject.log is not None and not subject.log.tasks.empty:
        gc_ms = float(subject.log.tasks["jvmGCTime"].sum())
        run_ms = float(subject.log.tasks["executorRunTime"].sum())
        share = gc_ms / run_ms if run_ms else 0.0
    else:
        return NotAssessed("gc", "no task metrics")
    if beyond := share_beyond_whole("gc", share, "GC time over executor run time"):
        return beyond
    heap = subject.heap_bytes()
    severity = GC_SHARE.grade(share)
    evidence = {
        "gc_share": round(share, 4),
        "gc_ms": gc_ms,
        "executor_run_ms": run_ms,
        "heap_bytes": heap,
    }
    text = f"GC takes {share:.0%} of executor time" + (
        f" with a {human_size(heap)} heap" if heap else ""
    )
    if severity is Severity.NONE:
        return Finding("gc", severity, text, evidence)
    bigger = subject.doubled_heap()
    if heap and bigger is not None:
        return Finding(
            "gc",
            severity,
            text,
            evidence,
            f"give each executor more heap ({human_size(heap)} -> "
            f"{jvm_size(heap * 2)}), or use more, smaller executors (numaspark "
            "study executors)",
            bigger,
        )
    why = "the heap is already large"
    if not heap:
        why = "the heap is not recorded"
    elif (twice := subject.twice_the_heap()) is not None:  # the planner refused it: its reason
        why = (
            f"twice the heap ({human_size(heap * 2)}) does not fit the run's machine: "
            f"{subject.refusal(twice)}"
        )
    smaller = subject.smaller_executors_request()
    if smaller is None:  # one task per executor already: only the heap is left to give
        return Finding(
            "gc",
            severity,
            text,
            evidence,
            f"each executor runs one task at a time already: give it more heap "
            f"(spark.executor.memory) where it fits ({why})",
        )
    return Finding("gc", severity, text, evidence, f"use more, smaller executors: {why}", smaller)


def heap_size(subject: Subject) -> Finding | NotAssessed:
    heap = subject.heap_bytes()
    if heap is None:
        return NotAssessed("heap-size", "the executor heap is not recorded")
    evidence = {"heap_bytes": heap, "limit_bytes": COMPRESSED_OOPS_LIMIT}
    if heap <= COMPRESSED_OOPS_LIMIT:
        return Finding(
            "heap-size",
            Severity.NONE,
            f"heap {human_size(heap)}: compressed object pointers on",
            evidence,
        )
    text = (
        f"heap {human_size(heap)} is above 31 GB: the JVM turns compressed object "
        "pointers off, every reference takes 8 bytes and the heap holds less"
    )
    if subject.local:  # one JVM: a smaller heap fits where the larger one did
        return Finding(
            "heap-size",
            Severity.MODERATE,
            text,
            evidence,
            "keep the heap at or under 31 GB",
            subject.changed(memory_per_executor=COMPRESSED_OOPS_LIMIT),
        )
    return Finding(
        "heap-size",
        Severity.MODERATE,
        text,
        evidence,
        "keep heaps at or under 31 GB: split the nodes among more executors (the "
        "auto heap stays under 31 GB)",
        subject.smaller_executors_request(),
    )


def executor_count(subject: Subject) -> Finding | NotAssessed:
    count = subject.executor_count()
    metrics = subject.result.metrics if subject.result else Metrics()
    if subject.log is not None and not subject.log.tasks.empty and not metrics.measured:
        tasks = subject.log.tasks
        run = float(tasks["executorRunTime"].sum())
        remote_bytes = float(tasks["shuffleRemoteBytesRead"].sum())
        metrics = Metrics(
            gcShare=float(tasks["jvmGCTime"].sum()) / run if run else None,
            shuffleRemoteBytesRead=remote_bytes,
            shuffleTotalBytesRead=remote_bytes + float(tasks["shuffleLocalBytesRead"].sum()),
        )
    if count is None or metrics.gcShare is None:
        return NotAssessed("executor-count", "no executor count or GC share")
    gc = metrics.gcShare
    if beyond := share_beyond_whole("executor-count", gc, "GC time over executor run time"):
        return beyond
    total = metrics.shuffleTotalBytesRead or 0.0
    remote = (metrics.shuffleRemoteBytesRead or 0.0) / total if total else 0.0
    evidence = {
        "executors": count,
        "gc_share": round(gc, 4),
        "remote_shuffle_share": round(remote, 3),
    }
    if count == 1 and gc >= 0.10 and not subject.local:
        return Finding(
            "executor-count",
            Severity.MODERATE,
            f"one executor with {gc:.0%} GC: one large heap collects longer",
            evidence,
            "several smaller executors (up to 36% faster through less GC in the studies)",
            subject.smaller_executors_request(),
        )
    if count == 1 and gc >= 0.10:
        return Finding(
            "executor-count",
            Severity.MODERATE,
            f"one JVM (local mode) with {gc:.0%} GC",
            evidence,
            "several smaller executors on a standalone cluster",
            subject.smaller_executors_request(),
        )
    if count > 1 and remote >= 0.5 and gc < 0.05:
        return Finding(
            "executor-count",
            Severity.LOW,
            f"{remote:.0%} of shuffle bytes crossed executors, with little GC",
            evidence,
            "fewer, larger executors keep more of the shuffle in one JVM",
            subject.changed(executors=max(1, count // 2)),
        )
    return Finding(
        "executor-count",
        Severity.NONE,
        f"{count} executor(s): GC {gc:.0%}, {remote:.0%} of shuffle bytes remote",
        evidence,
    )
