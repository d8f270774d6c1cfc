"""Where a run happens: a `Target` starts (or finds) the JVMs a placement asks for and runs
one application on them.

- `LocalTarget`: local mode, one driver JVM that runs the tasks, under the plan's
  numactl prefix.
- `StandaloneTarget`: a Spark standalone cluster on this host, one bound worker per
  planned executor. It starts a cluster when the placement needs one and reuses it
  while later placements have the same shape (an executor takes ~15 s to start here,
  and the measurement does not depend on a fresh cluster: every application gets new
  executors); or it serves from a cluster left up by ``numaspark cluster up``
  (``attached``), which it checks but never stops.

A cluster on several hosts (over SSH) and a cluster numaspark did not start
(``--master``, seen through the plugin) are the next two targets: each answers the
same three calls, so the run loop (experiment/runner.py) does not change for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from numaspark.errors import UsageError
from numaspark.placement import Placement
from numaspark.spark.app import AppRun, Driver, run_app
from numaspark.spark.cluster import StandaloneCluster
from numaspark.spark.home import LOOPBACK
from numaspark.spark.processes import ProcessTracker, supervised

Say = Callable[[str], None]


class Target(Protocol):
    """Where a run's JVMs run."""

    def prepare(self, placement: Placement, say: Say) -> None:
        """Make the JVMs ``placement`` needs ready (start a cluster, or check the one there)."""

    def submit(self, placement: Placement, job: Path, job_args: list[str], run_dir: Path,
               **options) -> AppRun:  # fmt: skip
        """Run one application; ``options`` are `run_app`'s (conf, collectors, timeout...)."""

    @property
    def where(self) -> str | None:
        """What a run record names as the place it ran (a cluster's directory), if anything."""

    def close(self) -> None:
        """Stop what this target started."""


class LocalTarget:
    """Local mode: the driver JVM runs the tasks, bound by the plan's prefix."""

    def __init__(self, tracker: ProcessTracker) -> None:
        self.tracker = tracker

    def prepare(self, placement: Placement, say: Say) -> None:
        return None  # the JVM starts with the application

    def submit(self, placement: Placement, job: Path, job_args: list[str], run_dir: Path,
               **options) -> AppRun:  # fmt: skip
        return run_app(placement, job, job_args, run_dir, self.tracker, Driver.local(placement),
                       **options)  # fmt: skip

    @property
    def where(self) -> str | None:
        return None

    def close(self) -> None:
        return None


class StandaloneTarget:
    """A standalone cluster on this host whose workers, and so their executors, are bound."""

    def __init__(self, tracker: ProcessTracker, root: Path, attached: Path | None = None) -> None:
        self.tracker = tracker
        self.root = root  # where the clusters it starts keep their state and logs
        self.cluster: StandaloneCluster | None = None
        self._shape: tuple | None = None
        self._owned = False
        if attached is not None:
            self.cluster = StandaloneCluster.attach(attached)
            self._shape = Placement.from_dict(self.cluster.placement).shape

    def prepare(self, placement: Placement, say: Say) -> None:
        if self.cluster is not None and self._shape == placement.shape:
            return
        if self.cluster is not None and not self._owned:
            # checked before any input is generated: a mismatch is the user's to fix first
            raise UsageError(
                f"the cluster in {self.cluster.directory} runs {len(self._shape or ())} "
                "executor(s) placed differently from this run's options: give the options it "
                "was started with, or start a new cluster"
            )
        self.release()
        say(f"starting a standalone cluster: {len(placement.executors)} bound worker(s)")
        digest = hashlib.sha256(repr(placement.shape).encode()).hexdigest()[:10]
        self.cluster = StandaloneCluster.start(placement, self.root / f"cluster-{digest}",
                                               self.tracker, on_progress=say)  # fmt: skip
        self._shape, self._owned = placement.shape, True

    def submit(self, placement: Placement, job: Path, job_args: list[str], run_dir: Path,
               **options) -> AppRun:  # fmt: skip
        if self.cluster is None:
            raise RuntimeError("prepare() starts the cluster before submit()")
        return run_app(placement, job, job_args, run_dir, self.tracker,
                       Driver.standalone(self.cluster), **options)  # fmt: skip

    @property
    def where(self) -> str | None:
        return str(self.cluster.directory) if self.cluster else None

    def release(self) -> None:
        """Stop the cluster this target started (never one it was given)."""
        if self.cluster is not None and self._owned:
            self.cluster.stop()
            self.cluster, self._shape, self._owned = None, None, False

    def close(self) -> None:
        self.release()


def start_kept_cluster(placement: Placement, directory: Path, host: str = LOOPBACK,
                       say: Say | None = None) -> StandaloneCluster:  # fmt: skip
    """``numaspark cluster up``: start a cluster that outlives this process. A cluster that
    fails half-way is stopped whole; once up, ``numaspark cluster down`` stops it."""
    with supervised() as tracker:
        cluster = StandaloneCluster.start(placement, directory, tracker, host=host,
                                          on_progress=say)  # fmt: skip
        tracker.release_all()
    return cluster
