"""The kernel's automatic NUMA balancing (``kernel.numa_balancing``), switched for a run and
always put back.

The binding study and ``tune`` compare ``autonuma`` (unbound, balancing on) with ``none``
(unbound, balancing off) and ``node``: Gluten removed its executor binding on the claim that
binding does no better than the kernel's balancing, and users should measure that on their own
jobs. The setting is host-wide and only root may write it, so a numaspark that changes it:

- holds an exclusive ``flock`` on a lock file for as long as it is changed; a second numaspark
  that would change it waits for the lock (``wait_s``) or refuses in one line. The kernel
  releases the lock when its holder dies, SIGKILL included;
- writes what it found (and its own pid and start time) in a record beside the lock before it
  writes the setting, and puts the setting back at once on success, failure, Ctrl-C and
  SIGTERM (a ``with`` block);
- after a SIGKILL the record remains: the next numaspark command that starts processes
  (supervise.processes.supervised, beside the ledger's reap) finds its owner gone, puts the
  setting back and says so.

The record and the lock live in ``/run/numaspark`` (a tmpfs the kernel empties at boot, when
the setting is back at its boot value too), or under ``$NUMASPARK_STATE_DIR`` when that is set.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil

from numaspark.errors import UsageError
from numaspark.kernel import NUMA_BALANCING, read_setting

ON, OFF = "1", "0"  # 2 and 3 are memory tiering (with or without balancing): also "on" to ask


def held_dir() -> Path:
    override = os.environ.get("NUMASPARK_STATE_DIR")
    return Path(override) / "host" if override else Path("/run/numaspark")


def setting_path() -> str:
    """The setting's file: $NUMASPARK_NUMA_BALANCING_FILE stands in for it in tests."""
    return os.environ.get("NUMASPARK_NUMA_BALANCING_FILE", NUMA_BALANCING)


def why_not(path: str | None = None) -> str | None:
    """None when this numaspark can switch the setting, else why not, in words."""
    path = path or setting_path()
    value = read_setting(path)
    if value is None:
        return "kernel.numa_balancing is not present (a kernel without NUMA balancing)"
    if not os.access(path, os.W_OK):
        return "kernel.numa_balancing can be switched only as root"
    return None


class BalancingBusy(UsageError):
    """Another numaspark holds kernel.numa_balancing changed."""


def _owner_alive(record: dict) -> bool:
    try:
        started = psutil.Process(int(record["pid"])).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, KeyError, TypeError, ValueError):
        return False
    return abs(started - float(record.get("started", 0))) < 0.05


def _read(record: Path) -> dict | None:
    try:
        data = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: str, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _restore(record: Path, path: str) -> str | None:
    """Put back what ``record`` says was found, when its owner is gone; returns what was put
    back (None: nothing to do). The caller holds the lock."""
    data = _read(record)
    if data is None:
        with contextlib.suppress(OSError):
            record.unlink()
        return None
    if _owner_alive(data):
        return None
    found, now = str(data.get("found", "")), read_setting(path)
    if found and now is not None and now != found and now == str(data.get("set")):
        _write(path, found)  # only what it set: someone who changed it since keeps theirs
    with contextlib.suppress(OSError):
        record.unlink()
    return found


@contextlib.contextmanager
def _locked(directory: Path, wait_s: float) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "numa-balancing.lock", "a+") as lock:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read(directory / "numa-balancing.json") or {}
                    raise BalancingBusy(
                        f"kernel.numa_balancing is held changed by numaspark "
                        f"{holder.get('pid', '(another)')}: wait until it ends, or run this "
                        f"without the autonuma comparison"
                    ) from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def balancing(
    on: bool, wait_s: float = 0.0, path: str | None = None, say: Callable[[str], None] | None = None
) -> Iterator[str]:
    """``kernel.numa_balancing`` on (1) or off (0) inside the block, put back after it; yields
    the value set. Raises UsageError where it cannot be switched, BalancingBusy when another
    numaspark holds it changed for longer than ``wait_s``."""
    path = path or setting_path()
    reason = why_not(path)
    if reason is not None:
        raise UsageError(f"{reason}: the autonuma comparison needs it")
    directory = held_dir()
    record = directory / "numa-balancing.json"
    wanted = ON if on else OFF
    with _locked(directory, wait_s):
        _restore(record, path)  # a numaspark killed while holding it: its setting back first
        found = read_setting(path) or OFF
        if (found != OFF) == on:  # already as asked (2 and 3 count as on): nothing to put back
            yield found
            return
        me = psutil.Process()
        record.write_text(
            json.dumps(
                {
                    "pid": me.pid,
                    "started": round(me.create_time(), 2),
                    "found": found,
                    "set": wanted,
                }
            )
        )
        _write(path, wanted)
        if say is not None:
            say(f"kernel.numa_balancing {found} -> {wanted} for this run")
        try:
            yield wanted
        finally:
            if read_setting(path) == wanted:
                _write(path, found)
            with contextlib.suppress(OSError):
                record.unlink()


def restore_left(path: str | None = None) -> str | None:
    """After a numaspark was killed (SIGKILL) while it held the setting changed: put back what
    it found. Returns a line saying so, or None. Called before a command starts processes."""
    path = path or setting_path()
    directory = held_dir()
    record = directory / "numa-balancing.json"
    if not record.exists():
        return None
    try:
        with _locked(directory, 0.0):
            data = _read(record) or {}
            found = _restore(record, path)
    except (BalancingBusy, OSError):
        return None  # its owner runs still (it holds the lock), or no right to act
    if found is None:
        return None
    return (
        f"kernel.numa_balancing put back to {found}: numaspark {data.get('pid', '?')} "
        f"changed it and was killed before it could"
    )
