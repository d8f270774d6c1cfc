"""PySpark's rules: whether the Python workers' CPU time dominates (`python_cpu`), and their
memory against what the executor sets aside for them (`python_memory`)."""

from __future__ import annotations

from numaspark.decide.advise.findings import Finding, NotAssessed
from numaspark.decide.advise.subject import Subject
from numaspark.decide.thresholds import Severity
from numaspark.errors import UsageError
from numaspark.experiment.request import RunRequest
from numaspark.metrics.aggregate import task_total
from numaspark.metrics.eventlog import EventLog
from numaspark.units import human_size, jvm_size, parse_size

PYSPARK_MEMORY = "spark.executor.pyspark.memory"


def python_cpu(subject: Subject) -> Finding | NotAssessed:
    """A PySpark run's CPU time: the JVMs', their Python workers' and Spark's task CPU, and
    which dominates (executorCpuTime counts the JVMs' task threads, never Python's)."""
    gap = subject.result.figures.cpu_gap if subject.result is not None else None
    if not gap and subject.log is not None:
        gap = _reported_cpu_gap(subject.log)
    if not gap or gap.get("python_cpu_s") is None:
        return NotAssessed(
            "python-cpu",
            "no Python workers' CPU time measured (not a PySpark "
            "application, or measured from an event log alone)",
        )
    jvm, python, task = gap["os_cpu_s"], gap["python_cpu_s"], gap["spark_executor_cpu_s"]
    evidence = {"jvm_cpu_s": jvm, "python_cpu_s": python, "spark_executor_cpu_s": task}
    text = (
        f"CPU time: JVMs {jvm:.1f} s, Python workers {python:.1f} s, Spark's task CPU {task:.1f} s"
    )
    if python < jvm:
        return Finding("python-cpu", Severity.NONE, f"{text}: the JVMs dominate", evidence)
    return Finding(
        "python-cpu",
        Severity.LOW,
        f"{text}: the Python workers dominate",
        evidence,
        "judge this application by its Python workers' CPU time: Spark's task "
        "figures (executorCpuTime, the CPU gap) count only the JVMs' task threads; "
        "the workers run on their executor's CPUs, so give the executors the cores "
        "(spark.task.cpus caps each worker's BLAS threads)",
    )


def _reported_cpu_gap(log: EventLog) -> dict | None:
    """The CPU gap of an event log alone: the executors' JVM and Python CPU time as the
    plugin reported them, Spark's task CPU from the log's tasks."""
    gap = log.placement.cpu_gap()
    if gap is None:
        return None
    task_ms = task_total(log, "executorCpuTime")  # the registry's unit: ms
    return {**gap, "spark_executor_cpu_s": round(task_ms / 1000, 2)}


def python_memory(subject: Subject) -> Finding | NotAssessed:
    """The Python workers' resident memory against what the executor sets aside for them:
    spark.executor.pyspark.memory when set, else the memoryOverhead they live in."""
    peaks = subject.python_memory()
    if not peaks:
        return NotAssessed(
            "python-memory",
            "no Python workers' memory measured (not a PySpark application, or Spark's "
            "process-tree metrics were off and the affinity plugin was not in it)",
        )
    worst = max(peaks, key=lambda e: e["python_rss_bytes"])
    python, executor = worst["python_rss_bytes"], worst["executor"]
    heap = subject.heap_bytes()
    evidence = {
        "executor": executor,
        "python_rss_bytes": python,
        "jvm_rss_bytes": worst["jvm_rss_bytes"],
        "heap_bytes": heap,
    }
    suggested = max(python * 3 // 2, 256 * 1024**2)
    raise_it = subject.changed(conf={PYSPARK_MEMORY: jvm_size(suggested)})
    text = f"executor {executor}'s Python workers peaked at {human_size(python)}"
    limit = subject.conf.get(PYSPARK_MEMORY)
    if limit:
        return _python_memory_limited(limit, text, evidence, suggested, raise_it)
    return _python_memory_in_overhead(subject.overhead_bytes(), text, evidence, suggested, raise_it)


def _python_memory_limited(
    limit: str, text: str, evidence: dict, suggested: int, raise_it: RunRequest
) -> Finding | NotAssessed:
    """The workers' peak against spark.executor.pyspark.memory (``limit``; MiB without a
    unit): each worker is limited to its share of it, and fails with MemoryError past it."""
    python = evidence["python_rss_bytes"]
    try:
        allowed = parse_size(limit if limit[-1].isalpha() else limit + "m", PYSPARK_MEMORY)
    except UsageError:
        return NotAssessed("python-memory", f"{PYSPARK_MEMORY}={limit} is not a size we read")
    evidence["pyspark_memory_bytes"] = allowed
    if python <= allowed * 0.9:
        return Finding(
            "python-memory",
            Severity.NONE,
            f"{text}, within {PYSPARK_MEMORY} {human_size(allowed)}",
            evidence,
        )
    return Finding(
        "python-memory",
        Severity.SEVERE,
        f"{text}, at {PYSPARK_MEMORY} {human_size(allowed)}: each worker is "
        "limited to its share of it, and fails with MemoryError past it",
        evidence,
        f"raise {PYSPARK_MEMORY} to {jvm_size(suggested)}",
        raise_it,
    )


def _python_memory_in_overhead(
    overhead: int | None, text: str, evidence: dict, suggested: int, raise_it: RunRequest
) -> Finding:
    """The workers' peak against the memoryOverhead they share with the JVM's off-heap
    memory (spark.executor.pyspark.memory unset): a container is killed past it."""
    python = evidence["python_rss_bytes"]
    evidence["overhead_bytes"] = overhead
    if overhead is None or python <= overhead // 2:
        within = f", within the {human_size(overhead)} overhead" if overhead else ""
        return Finding("python-memory", Severity.NONE, f"{text}{within}", evidence)
    severity = Severity.MODERATE if python > overhead else Severity.LOW
    return Finding(
        "python-memory",
        severity,
        f"{text}, against a memoryOverhead of {human_size(overhead)} that they share "
        f"with the JVM's off-heap memory ({PYSPARK_MEMORY} unset): a YARN or "
        "Kubernetes container is killed past heap + overhead; standalone and local "
        "mode limit nothing, and the workers compete with the JVM for the node's "
        "memory",
        evidence,
        f"set {PYSPARK_MEMORY} to {jvm_size(suggested)}: their own share, added to "
        "the container (numaspark plan --target yarn|k8s --python-memory sizes it)",
        raise_it,
    )
