"""Stopping processes with their descendants: SIGTERM, a grace period, then SIGKILL. The one
way numaspark stops what it started (supervise/processes.py) and what a killed numaspark left
behind (supervise/ledger.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import psutil

DEFAULT_GRACE_S = 10.0


def stop_processes(pids: Sequence[int], grace_s: float = DEFAULT_GRACE_S) -> list[int]:
    """SIGTERM ``pids`` and all their descendants, SIGKILL the survivors; returns what was killed."""
    victims: dict[int, psutil.Process] = {}
    for pid in pids:
        try:
            proc = psutil.Process(pid)
        except psutil.NoSuchProcess:
            continue
        for child in _descendants(proc):
            victims.setdefault(child.pid, child)
        victims[pid] = proc
    for proc in victims.values():
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.terminate()
    _gone, alive = psutil.wait_procs(list(victims.values()), timeout=grace_s)
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)
    return [p.pid for p in alive]


def _descendants(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return []
