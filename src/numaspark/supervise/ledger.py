"""What each numaspark process has running, on disk, so that none is orphaned by SIGKILL.

Ctrl-C and SIGTERM unwind numaspark, which then stops every process it started
(supervise/processes.py). SIGKILL cannot be caught: the master, the workers, the
driver and ``perf stat`` would run on. So every process numaspark starts is also
written down as it starts, in a ledger file of the numaspark process that started
it (``running/<pid>-<start time>.jsonl`` in numaspark's state directory): its pid,
its start time and its name; a line again when it is stopped, or released to live
on (a cluster kept up on purpose). A numaspark that ends normally removes its
ledger. The next numaspark command that starts processes, and ``numaspark cluster
down``, read the ledgers of numaspark processes that are gone and stop what they
left that is still alive and still the same process (pid and start time match, so
a reused pid is never touched). A ledger of a numaspark that is still running is
left alone: two runs at once do not stop each other's JVMs.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from numaspark.supervise.stop import stop_processes


def state_base() -> Path:
    """numaspark's own state on this machine: $NUMASPARK_STATE_DIR, else ~/.cache/numaspark."""
    override = os.environ.get("NUMASPARK_STATE_DIR")
    return Path(override) if override else Path.home() / ".cache" / "numaspark"


def state_dir() -> Path:
    """Where the ledgers live: ``state_base()/running``."""
    return state_base() / "running"


def _start_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


@dataclass(frozen=True)
class OrphanProcess:
    """A process a numaspark that is gone left running."""

    name: str
    pid: int
    owner: int  # the pid of the numaspark that started it


class Ledger:
    """This numaspark process's ledger (one per process, shared by its trackers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: Path | None = None
        self._open: set[int] = set()

    def _file(self) -> Path | None:
        if self._path is None:
            me = os.getpid()
            started = _start_time(me)
            directory = state_dir()
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError:
                return None  # no ledger where none can be written: the tracker still works
            self._path = directory / f"{me}-{started:.2f}.jsonl"
        return self._path

    def _write(self, entry: dict) -> None:
        path = self._file()
        if path is None:
            return
        with contextlib.suppress(OSError), open(path, "a") as handle:
            handle.write(json.dumps(entry) + "\n")
            handle.flush()

    def started(self, pid: int, name: str) -> None:
        started = _start_time(pid)
        if started is None:
            return  # gone already
        with self._lock:
            self._open.add(pid)
            self._write({"pid": pid, "started": round(started, 2), "name": name})

    def ended(self, pid: int) -> None:
        """Stopped, exited, or released to live on (a kept cluster has its own state file)."""
        with self._lock:
            if pid not in self._open:
                return
            self._open.discard(pid)
            self._write({"pid": pid, "ended": True})
            if not self._open and self._path is not None:
                with contextlib.suppress(OSError):
                    self._path.unlink()
                self._path = None


LEDGER = Ledger()

#: Told what a reap stopped, as it stops it (the command line prints it).
notify: Callable[[str], None] | None = None


def leftovers(directory: Path | None = None) -> dict[Path, list[OrphanProcess]]:
    """The processes numaspark processes that are gone left running, by their ledger."""
    directory = directory or state_dir()
    found: dict[Path, list[OrphanProcess]] = {}
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.jsonl")):
        try:
            owner, owner_started = path.stem.split("-", 1)
            owner_pid, owner_start = int(owner), float(owner_started)
        except ValueError:
            continue
        alive = _start_time(owner_pid)
        if alive is not None and abs(alive - owner_start) < 0.05:
            continue  # that numaspark still runs: its processes are its own
        found[path] = _still_running(path, owner_pid)
    return found


def _still_running(path: Path, owner: int) -> list[OrphanProcess]:
    entries: dict[int, dict] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if entry.get("ended"):
                    entries.pop(entry.get("pid"), None)
                elif isinstance(entry.get("pid"), int):
                    entries[entry["pid"]] = entry
    left = []
    for pid, entry in entries.items():
        started = _start_time(pid)
        if started is not None and abs(started - float(entry.get("started", 0))) < 0.05:
            left.append(OrphanProcess(str(entry.get("name", "?")), pid, owner))
    return left


def reap(directory: Path | None = None) -> list[OrphanProcess]:
    """Stop what numaspark processes that are gone (killed by SIGKILL) left running; say so."""
    stopped: list[OrphanProcess] = []
    for path, left in leftovers(directory).items():
        if left:
            stop_processes([p.pid for p in left], grace_s=5.0)
            stopped += left
            if notify is not None:
                names = ", ".join(f"{p.name} ({p.pid})" for p in left)
                notify(
                    f"stopped {len(left)} process(es) left running by numaspark {left[0].owner}, "
                    f"which was killed before it could stop them: {names}"
                )
        with contextlib.suppress(OSError):
            path.unlink()
    return stopped
