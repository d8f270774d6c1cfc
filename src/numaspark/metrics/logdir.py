"""A directory of Spark event logs, as a History Server reads one (its
``spark.history.fs.logDirectory``, the ``spark.eventLog.dir`` applications write to).

Each entry is one application's log: a file (plain, or compressed with the codec its name
ends with), an ``eventlog_v2_<app>`` directory of a rolling log, or a Spark 1.x directory with
an ``EVENT_LOG_1`` file. Spark names a log still being written ``.inprogress`` (a rolling one:
its ``appstatus_<app>.inprogress`` file; a Spark 1.x one lacks ``APPLICATION_COMPLETE``).
Hidden files (Hadoop's ``.crc``) are not logs. The directory is listed, never walked: as the
History Server, its subdirectories other than these are not logs.

Several attempts of one application (YARN re-runs a failed driver) are logs with the same
application id: each is named with its attempt wherever applications are listed.

A directory is told apart from a results directory by what it holds: numaspark's
``results.jsonl`` makes a results directory; logs (by name, or a first line that is a Spark
event) make an event-log directory.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.errors import NumasparkError
from numaspark.metrics.logfiles import Segment, lines

IN_PROGRESS = ".inprogress"
ROLLING_PREFIX = "eventlog_v2_"
LEGACY_LOG = "EVENT_LOG_1"  # Spark 1.x: a directory per application, its events in this file
_ROLLING_FILE = re.compile(r"^events_\d+_")
SNIFFED = 20  # files whose first line is read, at most, to tell an event-log directory


@dataclass
class LogDirectory:
    """What a directory holds: its logs (in name order), those still being written, and the
    entries that are not logs (each with why)."""

    path: Path
    logs: list[Path] = field(default_factory=list)
    in_progress: list[Path] = field(default_factory=list)
    not_logs: list[str] = field(default_factory=list)


def list_logs(directory: Path, in_progress: bool = False) -> LogDirectory:
    """The event logs in ``directory``; those still being written among them if asked."""
    found = LogDirectory(directory)
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith("."):
            continue
        try:
            log, running, why = _as_log(entry)
        except OSError as exc:  # a directory this user cannot list: a warning, not the scan's end
            log, running, why = None, False, f"cannot be read ({exc.strerror})"
        if log is None:
            found.not_logs.append(f"{entry.name}: {why}; skipped")
        elif running and not in_progress:
            found.in_progress.append(log)
        else:
            found.logs.append(log)
    return found


def still_written(log: Path) -> bool:
    """Whether Spark is still writing ``log`` (named ``.inprogress``; a rolling log with its
    ``appstatus_*.inprogress`` file): its last line may not be whole yet."""
    try:
        return _as_log(log)[1]
    except OSError:
        return False


def _as_log(entry: Path) -> tuple[Path | None, bool, str]:
    """The log an entry is (None: not one, and why) and whether it is still being written."""
    if entry.is_file():
        return entry, entry.name.endswith(IN_PROGRESS), ""
    if not entry.is_dir():
        return None, False, "neither a file nor a directory"
    names = {p.name for p in entry.iterdir()}
    if entry.name.startswith(ROLLING_PREFIX):
        running = any(n.startswith("appstatus_") and n.endswith(IN_PROGRESS) for n in names)
        return entry, running, ""
    if LEGACY_LOG in names:
        if any(n.startswith("COMPRESSION_CODEC_") for n in names):
            return None, False, "a compressed Spark 1.x log, which numaspark does not read"
        return entry / LEGACY_LOG, "APPLICATION_COMPLETE" not in names, ""
    if any(_ROLLING_FILE.match(n) for n in names):
        return entry, False, ""  # a rolling log renamed: its files say what it is
    return None, False, "a directory that is not an event log (no events_N_* or EVENT_LOG_1)"


def attempt_named(app_id: str | None, attempt_id: str | None) -> str | None:
    """An application's id named with its attempt, as every listing of applications names it."""
    if app_id is None or attempt_id is None:
        return app_id
    return f"{app_id} attempt {attempt_id}"


def is_one_log(directory: Path) -> bool:
    """Whether a directory is itself one rolling log (by its name, or its events_N_ files)."""
    return directory.name.startswith(ROLLING_PREFIX) or any(
        _ROLLING_FILE.match(p.name) and p.is_file() for p in directory.iterdir()
    )


def holds_event_logs(directory: Path) -> bool:
    """Whether ``directory`` is a directory of event logs: a rolling or Spark 1.x log among its
    entries, a log named in progress, or a file whose first line is a Spark event."""
    files = []
    for entry in directory.iterdir():
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if _as_log(entry)[0] is not None:
                return True
        elif entry.name.endswith(IN_PROGRESS):
            return True
        elif entry.is_file():
            files.append(entry)
    return any(_starts_like_a_log(f) for f in itertools.islice(sorted(files), SNIFFED))


def _starts_like_a_log(path: Path) -> bool:
    """Whether the file's first line (decompressed by the codec its name says) is a Spark
    event."""
    warnings: list[str] = []
    try:
        batch = next(lines(Segment(path), warnings), [])
    except (OSError, ValueError, NumasparkError):  # unreadable, or lzf: not judged a log
        return False
    first = next((line for line in batch if line.strip()), b"")
    return first.lstrip().startswith(b'{"Event":')


def signature(log: Path) -> str:
    """What changes when a log changes: size, modification time and (for a directory) its
    number of files; a rolling log that grew, or finished, reads differently."""
    if log.is_file():
        stat = log.stat()
        return f"{stat.st_size}:{stat.st_mtime_ns}"
    stats = [p.stat() for p in log.iterdir() if p.is_file()]
    size = sum(s.st_size for s in stats)
    newest = max([s.st_mtime_ns for s in stats] + [log.stat().st_mtime_ns])
    return f"{size}:{newest}:{len(stats)}"
