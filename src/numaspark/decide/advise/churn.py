"""Executors that come and go (`executor_churn`): the share of the application spent waiting
for executors to start, and dynamic allocation's idle timeout against the gaps between jobs.

Dynamic allocation removes an executor once it has run no task for
``spark.dynamicAllocation.executorIdleTimeout`` (60 s by default), and requests new ones when
tasks back up. A gap between two jobs longer than the timeout empties the cluster, and the
next job waits for executors to start again (on a standalone worker here, ~15 s each time). The
wait is read from the log (metrics/executors.py): a job submitted with no executor alive, from
its submission to its first task. The setting to try is a timeout longer than the gaps that
emptied the cluster: the executors then stay for the next job, at the cost of holding them
idle through the gaps (``minExecutors`` keeps some for good instead).
"""

from __future__ import annotations

import math

from numaspark.decide.advise.findings import Finding, NotAssessed, share_beyond_whole
from numaspark.decide.advise.subject import Subject
from numaspark.decide.thresholds import Grades, Severity
from numaspark.metrics.executors import IDLE, IDLE_TIMEOUT_KEY, Churn, churn

RULE = "executor-churn"
# the application's time spent waiting for executors to start
STARTUP_WAIT = Grades(0.05, 0.15, 0.30)


def executor_churn(subject: Subject) -> Finding | NotAssessed:
    log = subject.log
    if log is None or log.start_time is None or log.end_time is None:
        return NotAssessed(RULE, "no finished event log")
    executors = churn(log)
    total = executors.duration_ms
    if not executors.spans or not total:
        return NotAssessed(RULE, "no executor added in the log, or no application time")
    share = executors.wait_ms / total
    if beyond := share_beyond_whole(RULE, share, "the wait for executors over the application"):
        return beyond
    emptied = [w for w in executors.waits if w.gap_before_ms is not None]
    evidence = _evidence(executors, share)
    text = (
        f"{share:.0%} of the application waited for executors to start "
        f"({evidence['startup_wait_s']:.1f} s in {len(executors.waits)} job(s) begun with none "
        f"alive); {executors.total} executor(s) added, at most {executors.peak_executors} at once"
    )
    if not executors.dynamic:  # executors stay: a wait is the cluster's start, not churn
        return Finding(RULE, Severity.NONE, f"{text}; dynamic allocation is off", evidence)
    severity = STARTUP_WAIT.grade(share)
    if severity is Severity.NONE:
        return Finding(RULE, severity, text, evidence)
    if not emptied:  # only the first job waited: the application's own start
        return Finding(
            RULE,
            severity,
            text + ": only at the application's start, before its first executor",
            evidence,
            "no gap between jobs emptied the cluster; the first executors' start-up is "
            "the cluster manager's (a warm pool, or smaller executor JVMs, start sooner)",
        )
    gap = max(w.gap_before_ms or 0.0 for w in emptied)
    timeout_s = executors.idle_timeout_ms / 1000
    longer = max(math.ceil(gap / 1000 * 1.25), math.ceil(timeout_s) + 1)
    evidence["suggested_idle_timeout_s"] = longer
    setting = f"{IDLE_TIMEOUT_KEY}={longer}s"
    return Finding(
        RULE,
        severity,
        f"{text}; the idle timeout ({timeout_s:g} s) is shorter than the gaps between jobs "
        f"(up to {gap / 1000:.1f} s): {len(emptied)} job(s) found the executors removed",
        evidence,
        f"keep the executors through the gaps: {setting} (longer than the longest gap that "
        "emptied the cluster; they are held idle meanwhile), or "
        "spark.dynamicAllocation.minExecutors for some of them",
        subject.changed({IDLE_TIMEOUT_KEY: f"{longer}s"}),
    )


def _evidence(executors: Churn, share: float) -> dict:
    """The figures the rule judged."""
    return {
        "startup_wait_s": round(executors.wait_ms / 1000, 3),
        "application_s": round(executors.duration_ms / 1000, 3),
        "share": round(share, 3),
        "jobs_that_waited": len(executors.waits),
        "startup_median_s": _s(executors.startup_ms),
        "executors_added": executors.total,
        "peak_executors": executors.peak_executors,
        "removed_idle": executors.endings.get(IDLE, 0),
        "dynamic_allocation": executors.dynamic,
        "idle_timeout_s": executors.idle_timeout_ms / 1000 if executors.dynamic else None,
        "gaps_between_jobs_s": [round(g / 1000, 3) for g in executors.gaps_ms],
    }


def _s(ms: float | None) -> float | None:
    return None if ms is None else round(ms / 1000, 3)
