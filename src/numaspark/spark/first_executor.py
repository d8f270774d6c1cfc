"""Waiting for a cluster numaspark did not start to give the application its first executor.

Asked twice a second while the application runs (``run_app``'s ``check``), until the
affinity plugin reports from a first executor:

- executors that die as they start (the driver's log, spark/executor_deaths.py) stop the wait early:
  at the second death, or ``DEATH_GRACE_S`` after the first, with one line that quotes their
  own error;
- otherwise every ``PROGRESS_S`` it says what it waits for (executors launched, YARN's
  queue), and after ``wait_s`` it stops, saying "cannot hold the plan" only when the
  cluster's free cores and memory show it (the master's ``/json/``; YARN's nodes).

Under dynamic allocation with no executor at the start (minExecutors 0, Spark's default, and
no initialExecutors), no executor is not a failure: the application asks for one only when a
job's tasks are backlogged, and may end having asked for none. The wait then has no deadline
until the driver asks ("Requesting N new executor(s) because tasks are backlogged"): it ends
when the application ends, or ``wait_s`` after that first request with none started.

The clock is a parameter: the tests fake it.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.placement import Placement
from numaspark.placement.cluster_capacity import room_for
from numaspark.placement.render import DynamicAllocation
from numaspark.spark.executor_deaths import Death, DriverLog, executor_stderr, explain
from numaspark.spark.yarn import YarnCluster, rm_json
from numaspark.units import MIB

DEFAULT_WAIT_S = 300.0  # a busy YARN queue, or an emulated machine, takes minutes
PROGRESS_S = 30.0
DEATH_GRACE_S = 10.0  # a lone death this long ago is the answer: a second one is not awaited
# ExecutorAllocationManager's line (Spark 3.5 and 4.x) as it first asks for executors
ASKED = re.compile(r"Requesting \d+ new executors? because tasks are backlogged")

Say = Callable[[str], None]


def master_status(ui: str, timeout_s: float = 3.0) -> dict | None:
    """A standalone master's JSON status (``/json/`` on its web UI), or None."""
    try:
        with urllib.request.urlopen(f"{ui.rstrip('/')}/json/", timeout=timeout_s) as page:
            return json.loads(page.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def cannot_hold(status: dict | None, placement: Placement) -> str | None:
    """Why a standalone cluster cannot hold ``placement``'s executors now, from its master's
    status (alive workers' free cores and memory), or None when it can (or is unknown)."""
    if status is None:
        return None
    workers = [w for w in status.get("workers", []) if w.get("state") == "ALIVE"]
    free = [
        (
            int(w.get("cores", 0)) - int(w.get("coresused", 0)),
            int(w.get("memory", 0)) - int(w.get("memoryused", 0)),
        )
        for w in workers
    ]
    executors = placement.executors
    cores = max(e.cores for e in executors)
    heap_mb = max(e.heap for e in executors) // MIB
    room = room_for(free, cores, heap_mb)
    if room >= len(executors):
        return None
    have = (
        ", ".join(
            f"{w.get('host', '?')}: {c} cores, {m} MB free"
            for w, (c, m) in zip(workers, free, strict=True)
        )
        or "no alive worker"
    )
    return (
        f"room for {room} of {len(executors)} executor(s) of {cores} core(s) and "
        f"{heap_mb} MB heap; its alive workers: {have}"
    )


class FirstExecutorWait:
    """The check: why the application must stop before its first executor, or None."""

    def __init__(
        self,
        master: str,
        wait_s: float,
        reports: Path,
        log: Path,
        placement: Placement,
        say: Say | None = None,
        has: str | None = None,
        ui: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        stderr: Callable[[str, Death], str | None] = executor_stderr,
        dynamic: DynamicAllocation | None = None,
    ) -> None:
        self.master = master
        self.wait_s = wait_s
        self.reports = reports  # the plugin's reports: a first one is a first executor
        self.log = log  # the driver's log (spark-submit's output)
        self.placement = placement
        self.say = say or (lambda line: None)
        self.has = has  # what the cluster has, in words
        self.ui = ui  # a standalone master's web UI
        self.clock = clock
        self.stderr = stderr
        # dynamic allocation with no executor at the start: counted from the first request
        self.on_demand = dynamic is not None and dynamic.at_start == 0
        self.started = clock()
        self.said = self.started
        self.first_death: float | None = None
        self.app_id: str | None = None  # the application, once the driver's log names it
        self._reported = False
        self._errors: dict[str, str] = {}
        self._worker_uis: dict[str, str] = {}

    def __call__(self) -> str | None:
        if self._reported or _reported(self.reports):
            self._reported = True  # an executor runs: the wait is over for this application
            return None
        now = self.clock()
        log = DriverLog.read(self.log)
        self.app_id = log.app_id or self.app_id
        if self.on_demand and (log.launched or log.deaths):  # asked, though not logged so
            self.on_demand, self.started = False, now
        if self.on_demand and not self._asked(now):
            if now - self.said >= PROGRESS_S:
                self.said = now
                self.say(
                    f"no executor from {self.master} yet, none asked for: dynamic allocation "
                    "with minExecutors 0 asks for one when a job's tasks are backlogged"
                )
            return None
        if log.deaths:
            self.first_death = self.first_death if self.first_death is not None else now
            if len(log.deaths) >= 2 or now - self.first_death >= DEATH_GRACE_S:
                return explain(log, self._own_errors(log), self.master)
        if now - self.started >= self.wait_s:
            return self._no_executor(log)
        if now - self.said >= PROGRESS_S:
            self.said = now
            self.say(
                f"waiting for a first executor from {self.master}: {now - self.started:.0f} "
                f"s of --executor-wait {self.wait_s:g} s; {self._state(log)}"
            )
        return None

    def _asked(self, now: float) -> bool:
        """Whether the driver has asked for executors (dynamic allocation); once it has, the
        wait's clock starts then."""
        try:
            with open(self.log, "rb") as handle:
                text = handle.read(4 << 20).decode(errors="replace")
        except OSError:
            return False
        if ASKED.search(text) is None:
            return False
        self.on_demand = False
        self.started = self.said = now
        return True

    def _state(self, log: DriverLog) -> str:
        if log.yarn_state is not None:
            return f"the application is {log.yarn_state} in YARN"
        if log.launched:
            hosts = ", ".join(dict.fromkeys(h for h, _ in log.launched.values()))
            return f"{len(log.launched)} launched on {hosts}, none started yet"
        if log.app_id is not None:
            return f"the master took {log.app_id} and has launched no executor yet"
        return "the application has not reached the cluster yet"

    def _own_errors(self, log: DriverLog) -> dict[str, str]:
        """The dead executors' own stderr, from their workers' web UIs where those answer
        (asked once per executor; the newest two)."""
        if self.ui is None:
            return self._errors
        if not self._worker_uis:
            status = master_status(self.ui) or {}
            self._worker_uis = {
                str(w.get("id")): str(w.get("webuiaddress"))
                for w in status.get("workers", [])
                if w.get("webuiaddress")
            }
        for death in log.deaths[-2:]:
            ui = self._worker_uis.get(death.worker or "")
            if ui and death.executor not in self._errors:
                self._errors[death.executor] = self.stderr(ui, death) or ""
        return self._errors

    def _no_executor(self, log: DriverLog) -> str:
        has = f" (it has {self.has})" if self.has else ""
        head = f"no executor started within {self.wait_s:g} s: the cluster at {self.master}{has}"
        if self.master.startswith("spark://") and self.ui is not None:
            short = cannot_hold(master_status(self.ui), self.placement)
            if short is not None:
                return (
                    f"{head} cannot hold the plan now ({short}): give fewer --executors, "
                    "--cores-per-executor or --memory-per-executor, or wait until it has "
                    "room"
                )
        # an application YARN has not started: the nodes' free room is all the plan could
        # have, its application master's container included, unless YARN has already granted
        # that container (allocated, not yet registered), which the free room then leaves out
        if self.master == "yarn" and log.yarn_state == "ACCEPTED":
            try:
                yarn = YarnCluster.read()
                has = yarn.has()
                if _granted_mb(yarn.webapp, log.yarn_app) > 0:
                    has = replace(has, fitting=replace(has.fitting, reserved_mb=0))
                has.check_fits(self.placement)
            except UsageError as exc:
                return f"{head} cannot hold the plan now ({exc})"
        return (
            f"{head} gave the application none ({self._state(log)}); give --executor-wait "
            "more seconds, or see the cluster's own pages"
        )


def _granted_mb(webapp: str, app_id: str | None) -> int:
    """The memory YARN has granted ``app_id`` (its application master's container once
    allocated), from the ResourceManager's REST API; 0 when unknown."""
    if app_id is None:
        return 0
    answer = rm_json(webapp, f"/ws/v1/cluster/apps/{app_id}") or {}
    try:
        return int((answer.get("app") or {}).get("allocatedMB") or 0)
    except (TypeError, ValueError, AttributeError):
        return 0


def _reported(reports: Path) -> bool:
    with contextlib.suppress(OSError):
        return reports.stat().st_size > 0
    return False
