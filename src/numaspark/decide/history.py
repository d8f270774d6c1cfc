"""Advice on many event logs at once: a History Server's log directory, or the logs its REST
API serves, as one table of applications with their NUMA findings, grouped by application
name, and each application's bound runs against its unbound ones (decide/observational.py).

Each log is summarised once: its application, duration and executors, whether its placement
is known (the affinity plugin's events) and bound, and the severity of each rule an event log
alone assesses of placement (advise.py's ``NUMA_RULES``). Logs are parsed without their task
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
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from numaspark import __version__
from numaspark.decide.advise import NUMA_RULES, Subject, advise
from numaspark.decide.observational import OBSERVATIONAL, Comparison, compare
from numaspark.decide.thresholds import Severity
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.store import RESULTS_FILE
from numaspark.metrics import history_server, logdir
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement.plugin import LEVEL_KEY
from numaspark.supervise.ledger import state_base
from numaspark.topology import CpuSet

CACHE_FORMAT = f"numaspark.advise-cache/1 {__version__}"  # another numaspark reads logs anew
NOT_ASSESSED = "not assessed"
NO_NAME = "(no name)"
# the columns of the table, in the order of advise.py's NUMA_RULES
NUMA_RULE_NAMES = ("numa-straddle", "remote-pages", "numa-balancing", "python-cpu", "python-memory")
Progress = Callable[[int, int], None]  # logs read so far, logs to read


@dataclass(frozen=True)
class LogSummary:
    """One log as the table shows it; ``error`` instead when it could not be read."""

    log: str
    app_id: str | None = None
    name: str | None = None
    spark_version: str | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    executors: int = 0
    placement: str = "not recorded"  # bound, unbound, or not recorded (no plugin events)
    bound_nodes: str | None = None  # the nodes the executors were bound to, where known
    severities: dict[str, str] = field(default_factory=dict)  # rule -> severity word
    worst: dict | None = None  # the worst finding above none: rule, severity, finding
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def duration_s(self) -> float | None:
        if self.start_ms is None or self.end_ms is None or self.end_ms < self.start_ms:
            return None
        return (self.end_ms - self.start_ms) / 1000

    @property
    def bound(self) -> bool:
        return self.placement == "bound"

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "duration_s": self.duration_s}

    @classmethod
    def from_dict(cls, data: dict) -> LogSummary:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def summarize_log(path: Path, workers: int | None = 1) -> LogSummary:
    """The summary of one log: parsed without its stage sums, the NUMA rules run on it."""
    try:
        # no stage sums: python-cpu's task CPU is the one task figure the NUMA rules read
        log = parse_event_log(path, workers, tasks=("executorCpuTime",), sums=False)
    except (NumasparkError, OSError, ValueError) as exc:  # damaged, or not a log at all
        why = " ".join(str(exc).split()).removeprefix(f"{path} ")  # the warning names the log
        return LogSummary(str(path), error=why)
    subject = Subject(log)
    advice = advise(subject, str(path), NUMA_RULES)
    severities = {f.rule: f.severity.word for f in advice.findings}
    severities |= {n.rule: NOT_ASSESSED for n in advice.not_assessed}
    worst = advice.findings[0] if advice.findings else None
    placement, nodes = _placement(subject)
    return LogSummary(
        str(path),
        app_id=log.app_id,
        name=log.app_name,
        spark_version=log.spark_version,
        start_ms=log.start_time,
        end_ms=log.end_time,
        executors=len(log.executors),
        placement=placement,
        bound_nodes=nodes,
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
            return LogSummary.from_dict(entry["summary"])
        except (KeyError, TypeError):
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


def _summaries(logs: list[Path]) -> Iterator[LogSummary]:
    """Each log's summary, in order: a few logs one at a time (each may use every CPU, as a
    large log is parsed in parallel), many logs one per CPU at a time."""
    cpus = len(os.sched_getaffinity(0))
    if cpus < 2 or len(logs) < 2 * cpus:
        for log in logs:
            yield summarize_log(log, workers=None)
        return
    # forked workers start at once; only from a process with one thread, as a fork copies no
    # other thread's held locks (forkserver otherwise: a clean process forks them)
    method = "fork" if threading.active_count() == 1 else "forkserver"
    chunk = max(1, min(16, len(logs) // (8 * cpus)))
    with ProcessPoolExecutor(cpus, mp_context=multiprocessing.get_context(method)) as pool:
        yield from pool.map(summarize_log, logs, chunksize=chunk)


def scan_logs(
    logs: list[Path], cache: SummaryCache, progress: Progress | None = None
) -> tuple[list[LogSummary], int]:
    """Every log's summary (from the cache when its log is unchanged); how many were read."""
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
    for done, (log, summary) in enumerate(zip(to_read, _summaries(to_read), strict=True), 1):
        found[log] = summary
        cache.put(log, signatures[log], summary)
        if progress is not None:
            progress(done, len(to_read))
    return [found[log] for log in logs], len(to_read)


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

    def comparisons(self) -> list[Comparison]:
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

    def to_dict(self) -> dict:
        comparisons = {c.name: c.to_dict() for c in self.comparisons()}
        return {
            "source": self.source,
            "read": self.read,
            "from_cache": self.from_cache,
            "in_progress_skipped": self.in_progress,
            "groups": [
                {
                    "name": name,
                    "applications": [s.to_dict() for s in runs],
                    "comparison": comparisons.get(name),
                }
                for name, runs in self.groups().items()
            ],
            "comparison_is": self.observational,
            "not_read": [
                {"log": s.log, "why": s.error} for s in self.summaries if s.error is not None
            ],
            "warnings": self.all_warnings(),
        }


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
        f"{path} holds neither numaspark's results ({RESULTS_FILE}) nor Spark event logs: "
        "give a results directory (--out), an event log, or a directory of event logs"
    )


def scan_source(source: str, in_progress: bool = False, progress: Progress | None = None) -> Scan:
    """The scan of a History Server's URL, or of a directory of event logs."""
    if history_server.is_url(source):
        return scan_history_server(source, in_progress, progress)
    return scan_directory(Path(source), in_progress, progress)
