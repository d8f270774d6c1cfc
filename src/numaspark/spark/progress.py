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
import time
import urllib.request

POLL_S = 2.0  # the driver is asked at most this often
ANSWER_S = 1.0  # and waited for this long


class AppProgress:
    """The progress of the application whose Spark UI is at ``ui_url``."""

    def __init__(self, ui_url: str) -> None:
        self.api = ui_url.rstrip("/") + "/api/v1/applications"
        self.app_id: str | None = None
        self.asked = 0.0
        self.last: str | None = None

    def line(self, now: float | None = None) -> str | None:
        """The progress in one line, asked of the driver at most every `POLL_S` seconds."""
        now = time.monotonic() if now is None else now
        if now - self.asked < POLL_S:
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
