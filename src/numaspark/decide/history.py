"""Many event logs at once: a History Server's log directory, or the logs its REST API
serves, as one table of applications (``advise``: with their NUMA findings, grouped by
application name, and each application's bound runs against its unbound ones,
decide/observational.py; ``results``: what ran, how long and where; ``report``: a section
each). ``read_logs`` tells what a command was given (``many_logs``: by what a directory holds,
or ``--event-logs``) and scans it; one log is a scan of one.

Each log is summarised once: its application, duration, status, jobs, stages, tasks and
executors, whether its placement is known (the affinity plugin's events) and bound, the least
share of pages local to a task-running JVM, and the severity of each rule an event log alone
assesses of placement (advise.py's ``NUMA_RULES``). Logs are parsed without their task
tables (the sums suffice), several at a time in worker processes when there are many. The
summaries are kept in numaspark's state directory (``advise-cache/``, one JSON file per
scanned directory), keyed by each log's size and modification time: a second scan reads only
the logs that are new or changed (a log still being written, or a rolling log that grew).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from numaspark import __version__, records
from numaspark.decide.advise import NUMA_RULES, Advice, Subject, advise
from numaspark.decide.observational import OBSERVATIONAL, BoundVsUnbound, compare
from numaspark.decide.readings import reported_placement
from numaspark.decide.thresholds import Severity
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.store import COSCHED_FILE, RESULTS_FILE
from numaspark.metrics import history_server, logdir
from numaspark.metrics.eventlog import EventLog, parse_event_log
from numaspark.metrics.executors import churn, executors_per_node, placement_seconds
from numaspark.placement.plugin import LEVEL_KEY
from numaspark.readback.plugin_reports import ReportedJvm
from numaspark.records import Shape
from numaspark.supervise.ledger import state_base
from numaspark.topology import CpuSet

# 2: status, jobs, stages, tasks and local pages (a cache of 1 lacks them: its logs read anew);
# 4: the peak executors and slots, executor-seconds and the bound share of them
CACHE_FORMAT = f"numaspark.advise-cache/5 {__version__}"  # another numaspark reads logs anew
NOT_ASSESSED = "not assessed"
NO_NAME = "(no name)"
INCOMPLETE = "incomplete"
# the columns of ``results`` of event logs: its table, --json, --csv and --parquet (LogSummary.row)
APPLICATION_COLUMNS = (
    "application",
    "app_id",
    "attempt_id",
    "spark_version",
    "start",
    "duration_s",
    "status",
    "jobs",
    "failed_jobs",
    "stages",
    "tasks",
    "executors",
    "peak_executors",
    "peak_slots",
    "executor_seconds",
    "placement",
    "bound_nodes",
    "bound_share",
    "local_share",
    "log",
)
# the columns of the table, in the order of advise.py's NUMA_RULES
NUMA_RULE_NAMES = ("numa-straddle", "remote-pages", "numa-balancing", "python-cpu", "python-memory")
Progress = Callable[[int, int], None]  # logs read so far, logs to read


@dataclass(frozen=True)
class LogSummary:
    """One log as the table shows it; ``error`` instead when it could not be read."""

    log: str
    app_id: str | None = None
    attempt_id: str | None = None  # Spark's "App Attempt ID" (YARN, cluster mode); None: one
    name: str | None = None
    spark_version: str | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    executors: int = 0  # every executor ever added
    # the most executors and task slots alive at once (dynamic allocation adds and removes
    # them: `executors` counts each one added), and the seconds they were alive, summed
    peak_executors: int = 0
    peak_slots: int = 0
    executor_seconds: float = 0.0
    jobs: int = 0
    failed_jobs: int = 0  # jobs whose result is JobFailed
    exit_code: int | None = None  # the driver's, where the log says (Spark 3.5 and later)
    stages: int = 0  # stage attempts (analyze's numStages)
    tasks: int = 0  # tasks that ended (analyze's numTasks)
    placement: str = "not recorded"  # bound, unbound, or not recorded (no plugin events)
    bound_nodes: str | None = None  # the nodes the executors were bound to, where known
    # the share of the reported executors' seconds they ran bound (metrics/executors.py's
    # placement_seconds: unbound before the plugin bound them); None: no plugin reports
    bound_share: float | None = None
    # the least share of a task-running JVM's pages (and its Python processes') on its home
    # nodes, as the plugin reported it: the JVM the remote-pages rule judges; None: no reports
    local_share: float | None = None
    severities: dict[str, str] = field(default_factory=dict)  # rule -> severity word
    worst: dict | None = None  # the worst finding above none: rule, severity, finding
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    # ``advise DIR --json``'s applications[] (the cache keeps it without duration_s)
    __json__: ClassVar[Shape] = Shape(computed=("duration_s",))

    @property
    def duration_s(self) -> float | None:
        if self.start_ms is None or self.end_ms is None or self.end_ms < self.start_ms:
            return None
        return (self.end_ms - self.start_ms) / 1000

    @property
    def bound(self) -> bool:
        return self.placement == "bound"

    @property
    def status(self) -> str:
        """``ok``, ``failed`` (a job failed, or the driver exited with a status other than 0)
        or ``incomplete`` (no end: still running, or its driver died), in the words of a run's
        status."""
        if self.end_ms is None:
            return INCOMPLETE
        return "failed" if self.failed_jobs or self.exit_code not in (None, 0) else "ok"

    @property
    def start(self) -> str | None:
        """When the application started, in ISO 8601 (UTC, to the second)."""
        if self.start_ms is None:
            return None
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.start_ms / 1000))

    def row(self) -> dict:
        """One application as ``results`` lists and exports it: `APPLICATION_COLUMNS`, each
        the field or property of its name (the application's name is ``name``)."""
        return {c: getattr(self, "name" if c == "application" else c) for c in APPLICATION_COLUMNS}


def summarize_log(path: Path, workers: int | None = 1) -> LogSummary:
    """The summary of one log: parsed without its stage sums, the NUMA rules run on it."""
    read = _read(path, workers)
    return read if isinstance(read, LogSummary) else _summary(path, *read)


def _read(path: Path, workers: int | None) -> LogSummary | tuple[EventLog, Subject, Advice]:
    """One log parsed and advised on by the NUMA rules; a summary that says why not."""
    try:
        # no stage sums: python-cpu's task CPU is the one task figure the NUMA rules read
        log = parse_event_log(path, workers, tasks=("executorCpuTime",), sums=False)
    except (NumasparkError, OSError, ValueError) as exc:  # damaged, or not a log at all
        # the warning names the log: its message's own naming of it is left out
        why = " ".join(str(exc).split()).removeprefix(f"{path}: ").removeprefix(f"{path} ")
        return LogSummary(str(path), error=why)
    subject = Subject(log)
    return log, subject, advise(subject, str(path), NUMA_RULES)


def _summary(path: Path, log: EventLog, subject: Subject, advice: Advice) -> LogSummary:
    severities = {f.rule: f.severity.word for f in advice.findings}
    severities |= {n.rule: NOT_ASSESSED for n in advice.not_assessed}
    worst = advice.findings[0] if advice.findings else None
    placement, nodes = _placement(subject)
    executors = churn(log)
    seconds = placement_seconds(executors, log.placement) or {}
    return LogSummary(
        str(path),
        app_id=log.app_id,
        attempt_id=log.attempt_id,
        name=log.app_name,
        spark_version=log.spark_version,
        start_ms=log.start_time,
        end_ms=log.end_time,
        executors=len(log.executors),
        peak_executors=executors.peak_executors,
        peak_slots=executors.peak_slots,
        executor_seconds=round(executors.executor_seconds, 3),
        jobs=len(log.jobs),
        failed_jobs=int((log.jobs["result"] == "JobFailed").sum()) if len(log.jobs) else 0,
        exit_code=log.exit_code,
        stages=len(log.stages),
        tasks=len(log.tasks),
        placement=placement,
        bound_nodes=nodes,
        bound_share=seconds.get("bound_share"),
        local_share=_least_local(subject.reported()),
        severities={r: severities[r] for r in sorted(severities, key=_in_table_order)},
        worst=None
        if worst is None or worst.severity is Severity.NONE
        else {"rule": worst.rule, "severity": worst.severity.word, "finding": worst.finding},
        warnings=list(log.warnings),
    )


def _placement(subject: Subject) -> tuple[str, str | None]:
    """Bound, unbound or not recorded, and the nodes the task-running JVMs were bound to:
    bound when their reports show a node chosen or a bind/preferred policy, or the plugin's
    level is other than none; unbound when the plugin reported and neither holds."""
    log = subject.log
    if log is None or not log.placement:
        return "not recorded", None
    nodes = {n for j in subject.reported() if j.bound_nodes is not None for n in j.bound_nodes}
    level = (log.spark_properties.get(LEVEL_KEY) or "none").strip().lower()
    if nodes or level != "none":
        return "bound", str(CpuSet(nodes)) if nodes else None
    return "unbound", None


def _least_local(jvms: list[ReportedJvm]) -> float | None:
    """The least share of a JVM's pages on its home nodes, among those that reported one."""
    shares = [j.latest.local_share for j in jvms if j.latest.local_share is not None]
    return min(shares) if shares else None


def _in_table_order(rule: str) -> int:
    return NUMA_RULE_NAMES.index(rule) if rule in NUMA_RULE_NAMES else len(NUMA_RULE_NAMES)


# --- the summaries kept between scans ------------------------------------------------------


class SummaryCache:
    """The summaries of one scanned directory's logs, each under its log's signature
    (metrics/logdir.py: size, modification time); ``path`` None keeps nothing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, dict] = self._load(path) if path else {}

    @classmethod
    def of_directory(cls, directory: Path) -> SummaryCache:
        key = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:16]
        return cls(state_base() / "advise-cache" / f"{key}.json")

    @staticmethod
    def _load(path: Path) -> dict[str, dict]:
        try:
            kept = json.loads(path.read_text())
        except (OSError, ValueError):  # none yet, or damaged: every log is read again
            return {}
        if not isinstance(kept, dict) or kept.get("format") != CACHE_FORMAT:
            return {}
        logs = kept.get("logs")
        return logs if isinstance(logs, dict) else {}

    def get(self, log: Path, signature: str) -> LogSummary | None:
        entry = self.entries.get(str(log))
        if not isinstance(entry, dict) or entry.get("signature") != signature:
            return None
        try:
            return records.load(LogSummary, entry["summary"])
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, log: Path, signature: str, summary: LogSummary) -> None:
        self.entries[str(log)] = {"signature": signature, "summary": dataclasses.asdict(summary)}

    def save(self, logs: list[Path]) -> str | None:
        """Keep the entries of ``logs`` (a log gone from the directory is forgotten); a
        warning when the state directory cannot be written."""
        if self.path is None:
            return None
        kept = {str(log): self.entries[str(log)] for log in logs if str(log) in self.entries}
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps({"format": CACHE_FORMAT, "logs": kept}))
            partial.replace(self.path)
        except OSError as exc:
            return f"{self.path}: the summaries are not kept ({exc.strerror}): the next scan reads every log again"
        return None


# --- scanning ------------------------------------------------------------------------------


def _summaries(logs: list[Path], read: Callable = summarize_log) -> Iterator:
    """``read`` of each log (its summary), in order: a few logs one at a time (each may use
    every CPU, as a large log is parsed in parallel), many logs one per CPU at a time."""
    cpus = len(os.sched_getaffinity(0))
    if cpus < 2 or len(logs) < 2 * cpus:
        for log in logs:
            yield read(log, workers=None)
        return
    # forked workers start at once; only from a process with one thread, as a fork copies no
    # other thread's held locks (forkserver otherwise: a clean process forks them)
    method = "fork" if threading.active_count() == 1 else "forkserver"
    chunk = max(1, min(16, len(logs) // (8 * cpus)))
    with ProcessPoolExecutor(cpus, mp_context=multiprocessing.get_context(method)) as pool:
        yield from pool.map(read, logs, chunksize=chunk)


def scan_logs(
    logs: list[Path], cache: SummaryCache, progress: Progress | None = None
) -> tuple[list[LogSummary], int]:
    """Every log's summary (from the cache when its log is unchanged); how many were read.
    ``progress`` is told from the first log that could be read: a scan of nothing readable
    ends in one line that says so, with no progress line before it."""
    found: dict[Path, LogSummary] = {}
    signatures: dict[Path, str] = {}
    for log in logs:
        try:
            signatures[log] = logdir.signature(log)
        except OSError as exc:  # gone since it was listed (a History Server's cleaner)
            found[log] = LogSummary(str(log), error=f"cannot be read ({exc.strerror})")
            continue
        kept = cache.get(log, signatures[log])
        if kept is not None:
            found[log] = kept
    to_read = [log for log in logs if log not in found]
    readable = False
    for done, (log, summary) in enumerate(zip(to_read, _summaries(to_read), strict=True), 1):
        found[log] = summary
        cache.put(log, signatures[log], summary)
        readable = readable or summary.error is None
        if progress is not None and readable:
            progress(done, len(to_read))
    return [found[log] for log in logs], len(to_read)


@dataclass(frozen=True)
class NamedGroup:
    """One application name's readable logs by start, and their comparison."""

    name: str
    applications: list[LogSummary]
    comparison: BoundVsUnbound | None  # None: fewer than two finished runs


@dataclass
class Scan:
    """Many logs' summaries, and what the scan could not read."""

    source: str
    summaries: list[LogSummary]
    read: int  # logs parsed now
    from_cache: int  # logs whose summary was kept from an earlier scan
    in_progress: int = 0  # logs still being written, skipped
    warnings: list[str] = field(default_factory=list)  # about the directory, the cache, fetches

    observational = OBSERVATIONAL  # what the comparisons are, in words

    # ``advise DIR --json`` (docs/schemas.md)
    __json__: ClassVar[Shape] = Shape(
        keys={
            "in_progress": "in_progress_skipped",
            "named": "groups",
            "observational": "comparison_is",
            "all_warnings": "warnings",
        },
        computed=("named", "observational", "not_read", "all_warnings"),
        order=(
            *("source", "read", "from_cache", "in_progress", "named", "observational"),
            *("not_read", "all_warnings"),
        ),
    )

    @property
    def where(self) -> str:
        """The source in full: a History Server's URL, or the directory's (log's) path."""
        if history_server.is_url(self.source):
            return self.source
        return str(Path(self.source).resolve())

    def groups(self) -> dict[str, list[LogSummary]]:
        """The readable logs by application name (names in order), each group by start."""
        groups: dict[str, list[LogSummary]] = {}
        for summary in self.summaries:
            if summary.error is None:
                groups.setdefault(summary.name or NO_NAME, []).append(summary)
        return {
            name: sorted(runs, key=lambda s: (s.start_ms or 0, s.app_id or ""))
            for name, runs in sorted(groups.items())
        }

    def comparisons(self) -> list[BoundVsUnbound]:
        """Bound against unbound, for each application name with two finished runs or more."""
        found = []
        for name, runs in self.groups().items():
            finished = [s for s in runs if s.duration_s is not None]
            if len(finished) < 2:
                continue
            bound = [s.duration_s for s in finished if s.bound]
            unbound = [s.duration_s for s in finished if not s.bound]
            found.append(compare(name, bound, unbound))  # type: ignore[arg-type]
        return found

    def all_warnings(self) -> list[str]:
        """The scan's own warnings, then each log's: not read (why), or read with damage."""
        found = list(self.warnings)
        for s in self.summaries:
            if s.error is not None:
                found.append(f"{s.log}: not read: {s.error}")
            found += [f"{s.log}: {w}" for w in s.warnings]
        return found

    def tally(self) -> str:
        """How many logs were read, and how many summaries came from the cache."""
        line = f"{self.read} log(s) read, {self.from_cache} from the cache"
        if self.in_progress:
            line += f"; {self.in_progress} in progress skipped (--in-progress reads them)"
        return line

    def nothing_read(self) -> str:
        """Why no application is listed: every log unreadable, in progress, or none at all."""
        failed = [s for s in self.summaries if s.error is not None]
        if len(failed) == 1 and len(self.summaries) == 1 and not self.in_progress:
            return f"{failed[0].log}: not read: {failed[0].error}"
        if failed:
            return (
                f"{self.source}: none of its {len(failed)} event log(s) could be read "
                f"({failed[0].log}: {failed[0].error})"
            )
        if self.in_progress:
            return (
                f"{self.source}: its {self.in_progress} event log(s) are still being written "
                "(.inprogress): --in-progress reads them"
            )
        return f"{self.source} holds no event log"

    def listing(self) -> dict:
        """``results --json`` of event logs: the applications' rows and what was not read."""
        return {
            "source": self.source,
            "read": self.read,
            "from_cache": self.from_cache,
            "in_progress_skipped": self.in_progress,
            "applications": self.rows(),
            "not_read": self.not_read,
            "warnings": self.all_warnings(),
        }

    def rows(self) -> list[dict]:
        """The applications as ``results`` lists them, grouped by name (`LogSummary.row`)."""
        return [s.row() for runs in self.groups().values() for s in runs]

    @property
    def named(self) -> list[NamedGroup]:
        """`groups` with each name's comparison (None: fewer than two finished runs)."""
        comparisons = {c.name: c for c in self.comparisons()}
        return [NamedGroup(n, runs, comparisons.get(n)) for n, runs in self.groups().items()]

    @property
    def not_read(self) -> list[dict]:
        return [{"log": s.log, "why": s.error} for s in self.summaries if s.error is not None]


def scan_directory(
    directory: Path, in_progress: bool = False, progress: Progress | None = None
) -> Scan:
    """The summaries of the event logs in ``directory`` (those being written if asked)."""
    listed = logdir.list_logs(directory, in_progress)
    cache = SummaryCache.of_directory(directory)
    summaries, read = scan_logs(listed.logs, cache, progress)
    warnings = [f"{directory / entry}" for entry in listed.not_logs]
    if saved := cache.save(listed.logs):
        warnings.append(saved)
    return Scan(
        str(directory), summaries, read, len(summaries) - read, len(listed.in_progress), warnings
    )


def scan_history_server(
    url: str, in_progress: bool = False, progress: Progress | None = None
) -> Scan:
    """The summaries of the logs a History Server's REST API serves, fetched when new."""
    fetched = history_server.fetch_logs(url, in_progress)
    cache = SummaryCache.of_directory(fetched.directory)
    summaries, read = scan_logs(fetched.logs, cache, progress)
    warnings = list(fetched.warnings)
    if saved := cache.save(fetched.logs):
        warnings.append(saved)
    return Scan(url, summaries, read, len(summaries) - read, fetched.in_progress, warnings)


def many_logs(source: str, forced: bool = False) -> bool:
    """Whether ``source`` names many logs: a History Server's URL, or a directory of event
    logs (forced, or told by what it holds); else it is a results directory or one log."""
    if history_server.is_url(source):
        return True
    path = Path(source)
    if not path.is_dir():
        if forced:
            raise UsageError(
                f"--event-logs {source}: not a directory: give a directory of event logs"
            )
        return False
    if forced:
        return True
    if (path / RESULTS_FILE).exists():
        return False
    entries = [p for p in path.iterdir() if not p.name.startswith(".")]
    if logdir.is_one_log(path) or (
        len(entries) == 1 and entries[0].name.startswith(logdir.ROLLING_PREFIX)
    ):
        return False  # a log itself, or a run's eventlog/ folder of one rolling log
    if logdir.holds_event_logs(path):
        return True
    raise UsageError(
        f"{path} holds neither numaspark's results (no {RESULTS_FILE}) nor Spark event logs: "
        "give a results directory (--out), an event log, or a directory of event logs"
    )


def scan_source(source: str, in_progress: bool = False, progress: Progress | None = None) -> Scan:
    """The scan of a History Server's URL, or of a directory of event logs."""
    if history_server.is_url(source):
        return scan_history_server(source, in_progress, progress)
    return scan_directory(Path(source), in_progress, progress)


def scan_log(path: Path) -> Scan:
    """The scan of one log, parsed on every CPU if large (kept nowhere: one log is read again
    each time, as analyze reads it)."""
    return Scan(str(path), [summarize_log(path, workers=None)], 1, 0)


def is_results(path: Path) -> bool:
    """Whether ``path`` is numaspark's results directory: its runs, or study cosched's rounds."""
    return path.is_dir() and any((path / name).exists() for name in (RESULTS_FILE, COSCHED_FILE))


def reads_as_logs(source: str, forced: bool = False) -> bool:
    """Whether ``results`` and ``report`` read ``source`` as event logs, told as ``advise``
    tells it (`many_logs`): a History Server's URL, a directory of event logs, or one log;
    False where it is numaspark's results directory (unless ``forced``: --event-logs)."""
    path = Path(source)
    if not forced and is_results(path):
        return False
    if many_logs(source, forced):
        return True
    if not path.exists():
        raise UsageError(
            f"{source} does not exist: give a results directory (--out), an event log or a "
            "directory of event logs"
        )
    return True  # one log: a file, a rolling log's directory, a run's eventlog/ folder


def read_logs(
    source: str, forced: bool = False, in_progress: bool = False, progress: Progress | None = None
) -> Scan:
    """The scan of the event logs ``source`` names (`reads_as_logs`); a UsageError, in one
    line, where there is no log it could read."""
    if many_logs(source, forced):
        scan = scan_source(source, in_progress, progress)
    else:
        scan = scan_log(Path(source))
    if not scan.groups():
        raise UsageError(scan.nothing_read())
    return scan


# --- one application read whole, for the report -------------------------------------------


@dataclass(frozen=True)
class LoggedApplication:
    """One log as the report shows it: its summary, the NUMA rules' advice, its stages, and
    its JVMs as the affinity plugin reported them (none without the plugin)."""

    summary: LogSummary
    advice: Advice
    stages: list[dict]  # stage, attempt, name, tasks, start_s (since the application's), ...
    placement: list[dict]  # every JVM, the driver too, as analyze lists it
    jvms: list[ReportedJvm]  # the task-running JVMs (advise's Subject.reported)
    hosts: dict[str, dict]  # each host's topology as the plugin reported it
    # its executors over time (metrics/executors.py's Churn.figures) and ``per_node``: the
    # executors alive on each node (lane) over time, for the report's timeline
    executors: dict = field(default_factory=dict)


def read_application(path: Path, workers: int | None = 1) -> LoggedApplication | LogSummary:
    """One log read for the report (the summary's parse and rules); a summary saying why not."""
    read = _read(path, workers)
    if isinstance(read, LogSummary):
        return read
    log, subject, advice = read
    return LoggedApplication(
        _summary(path, log, subject, advice),
        advice,
        _stages(log),
        reported_placement(log.placement),
        subject.reported(),
        log.placement.hosts(),
        _executors(log),
    )


def _executors(log: EventLog) -> dict:
    """The executors over time, as the report draws them."""
    executors = churn(log)
    return {
        **executors.figures(),
        "placement_seconds": placement_seconds(executors, log.placement),
        "per_node": executors_per_node(executors, log.placement),
    }


def _stages(log: EventLog) -> list[dict]:
    """Each stage attempt's span, in seconds from the application's start (its first stage's
    where the log has no start), failed ones with Spark's reason."""
    if log.stages.empty:
        return []
    stages = log.stages.to_dict("records")
    submitted = [t for s in stages if (t := _known(s.get("submissionTime"))) is not None]
    origin = log.start_time if log.start_time is not None else min(submitted, default=None)
    rows = []
    for stage in stages:
        start, end = _known(stage.get("submissionTime")), _known(stage.get("completionTime"))
        tasks = _known(stage.get("numTasks"))
        rows.append(
            {
                "stage": int(stage["stageId"]),
                "attempt": int(stage["stageAttemptId"]),
                "name": stage.get("name") or "",
                "tasks": None if tasks is None else int(tasks),
                "start_s": None if start is None or origin is None else (start - origin) / 1000,
                "duration_s": None if start is None or end is None else (end - start) / 1000,
                "failure": stage.get("failureReason") or None,
            }
        )
    return rows


def _known(value: object) -> float | None:
    """A time or count of the stage table; None where it is missing (None or NaN)."""
    return float(value) if isinstance(value, (int, float)) and value == value else None


def read_applications(
    scan: Scan, limit: int, progress: Progress | None = None
) -> tuple[list[LoggedApplication], list[str]]:
    """The latest ``limit`` applications of a scan read whole (by name, then start), and a
    warning for each that could not be read again."""
    latest = sorted(
        (s for runs in scan.groups().values() for s in runs),
        key=lambda s: (s.start_ms or 0, s.app_id or ""),
    )[-limit:]
    chosen = {s.log for s in latest}
    logs = [Path(s.log) for runs in scan.groups().values() for s in runs if s.log in chosen]
    found, warnings = [], []
    for done, read in enumerate(_summaries(logs, read_application), 1):
        if isinstance(read, LogSummary):
            warnings.append(f"{read.log}: not read: {read.error}")
        else:
            found.append(read)
        if progress is not None:
            progress(done, len(logs))
    return found, warnings
