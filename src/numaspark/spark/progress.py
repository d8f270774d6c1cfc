"""What a running application has done so far, from its own REST API (`AppProgress`).

The driver serves Spark's monitoring API on its UI port (``/api/v1/applications``, the same
answers the History Server gives), so the jobs, stages and tasks of an application still
running can be read while it runs, wherever its executors are. `AppProgress.line` is one line
for a person watching: the jobs done, and each active stage's tasks done of its total.

Measurement never breaks the job it measures: an answer that does not come in a second, or
is not what Spark serves, leaves the line as it was (None before the first answer).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request

# The driver is asked first `FIRST_S` after its UI is found, then at most every `POLL_S`: no
# more often than a line is said (spark/app.py's PROGRESS_EVERY_S). Its first answer costs
# the driver about 1.5 s on the cores its application runs on (Spark's REST API starts on
# the first request: Jersey, on a cold JVM): asked from the UI's start, it made a 16 s
# application on a cluster at another address 1.6 s slower, asked every 2 s or every 10 s
# alike (docs/benchmarks.md). An application shorter than FIRST_S is never asked (it needs no
# progress); a longer one pays it once. $NUMASPARK_PROGRESS_S sets both (a test's short
# application is asked within its life)
FIRST_S = 30.0
POLL_S = 10.0
POLL_ENV = "NUMASPARK_PROGRESS_S"
ANSWER_S = 1.0  # and waited for this long


def poll_s() -> tuple[float, float]:
    """(`FIRST_S`, `POLL_S`), or $NUMASPARK_PROGRESS_S for both where it is a positive number
    of seconds."""
    try:
        found = float(os.environ.get(POLL_ENV, ""))
    except ValueError:
        return FIRST_S, POLL_S
    return (found, found) if found > 0 else (FIRST_S, POLL_S)


class AppProgress:
    """The progress of the application whose Spark UI is at ``ui_url`` (found at ``now``)."""

    def __init__(self, ui_url: str, now: float | None = None) -> None:
        self.api = ui_url.rstrip("/") + "/api/v1/applications"
        self.app_id: str | None = None
        first, self.every = poll_s()
        self.asked = (time.monotonic() if now is None else now) + first - self.every
        self.last: str | None = None

    def line(self, now: float | None = None) -> str | None:
        """The progress in one line, asked of the driver `FIRST_S` after its UI was found and
        then at most every `POLL_S` (`poll_s`)."""
        now = time.monotonic() if now is None else now
        if now - self.asked < self.every:
            return self.last
        self.asked = now
        try:
            if self.app_id is None:
                self.app_id = _get(self.api)[0]["id"]
            jobs = _get(f"{self.api}/{self.app_id}/jobs")
            stages = _get(f"{self.api}/{self.app_id}/stages?status=active")
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return self.last  # not up yet, ending, or not Spark's answer: said as before
        self.last = progress_line(jobs, stages)
        return self.last


def progress_line(jobs: list[dict], stages: list[dict]) -> str:
    """``jobs 3 done, 1 running; stage 7: 12/40 tasks`` from the API's job and active-stage
    lists (Spark's JobData and StageData: status, numCompleteTasks, numTasks)."""
    done = sum(1 for j in jobs if j.get("status") == "SUCCEEDED")
    running = sum(1 for j in jobs if j.get("status") == "RUNNING")
    failed = sum(1 for j in jobs if j.get("status") == "FAILED")
    parts = [f"jobs {done} done" + (f", {running} running" if running else "")]
    if failed:
        parts[0] += f", {failed} failed"
    for stage in sorted(stages, key=lambda s: s.get("stageId", 0)):
        parts.append(
            f"stage {stage.get('stageId')}: {stage.get('numCompleteTasks', 0)}/"
            f"{stage.get('numTasks', 0)} tasks"
        )
    return "; ".join(parts)


def _get(url: str) -> list:
    with urllib.request.urlopen(url, timeout=ANSWER_S) as answer:  # noqa: S310 (the driver's)
        found = json.load(answer)
    if not isinstance(found, list):
        raise ValueError(f"{url} answered {type(found).__name__}, not a list")
    return found
