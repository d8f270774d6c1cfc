"""A running application's progress, read from its own REST API (spark/progress.py), and the
progress display in a log (cli/terminal.py): tested on Spark's own expected REST answers
(shared/spark-events, from Spark's History Server suite: data numaspark did not make), served
by a real HTTP server on 127.0.0.1. A real application's progress is asserted in
tests/test_applications.py's PySpark run."""

from __future__ import annotations

import http.server
import io
import json
import threading

import pytest
from conftest import spark_expectation
from rich.console import Console

from numaspark.cli import terminal
from numaspark.spark.app import PROGRESS_EVERY_S
from numaspark.spark.progress import (
    FIRST_S,
    POLL_ENV,
    POLL_S,
    AppProgress,
    poll_s,
    progress_line,
)


def _spark_answers() -> tuple[list, list]:
    jobs = json.loads(spark_expectation("job_list_json_expectation.json").read_text())
    stages = json.loads(spark_expectation("stage_list_json_expectation.json").read_text())
    return jobs, stages


def test_the_line_counts_jobs_and_each_active_stages_tasks():
    jobs, stages = _spark_answers()
    # Spark's answer: jobs 2 and 0 succeeded, 1 failed; stages 0-3, stage 2 failed at 7/8
    assert progress_line(jobs, []) == "jobs 2 done, 1 failed"
    running = [dict(s, status="ACTIVE") for s in stages if s["stageId"] == 2]
    assert progress_line(jobs, running) == "jobs 2 done, 1 failed; stage 2: 7/8 tasks"
    assert progress_line([dict(jobs[0], status="RUNNING")], []) == "jobs 0 done, 1 running"


@pytest.fixture
def driver():
    """A driver's UI port, as far as the monitoring API goes: Spark's own answers."""
    jobs, stages = _spark_answers()
    answers = {
        "/api/v1/applications": [{"id": "app-20260101000000-0000"}],
        "/api/v1/applications/app-20260101000000-0000/jobs": jobs,
        "/api/v1/applications/app-20260101000000-0000/stages?status=active": [
            dict(stages[1], status="ACTIVE")
        ],
    }
    asked = []

    class Api(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            asked.append(self.path)
            body = json.dumps(answers.get(self.path, {"error": "no such path"})).encode()
            self.send_response(200 if self.path in answers else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", asked
    server.shutdown()
    server.server_close()


def test_progress_is_asked_of_the_driver_late_and_only_as_often_as_a_line_is_said(
    driver, monkeypatch
):
    """Not before FIRST_S (a driver's first answer costs its application: a short one is
    never asked), then at most every POLL_S: no more often than a progress line is said."""
    monkeypatch.delenv(POLL_ENV, raising=False)
    url, asked = driver
    assert POLL_S == PROGRESS_EVERY_S and FIRST_S > POLL_S
    progress = AppProgress(url, now=100.0)
    assert progress.line(now=100.0 + FIRST_S - 0.1) is None
    assert not asked  # the UI was found just under FIRST_S ago: not asked yet
    start = 100.0 + FIRST_S
    assert progress.line(now=start) == "jobs 2 done, 1 failed; stage 2: 7/8 tasks"
    assert len(asked) == 3
    assert progress.line(now=start + POLL_S / 2) == "jobs 2 done, 1 failed; stage 2: 7/8 tasks"
    assert len(asked) == 3  # not asked again so soon: the last line is kept
    progress.line(now=start + POLL_S)
    assert len(asked) == 5  # the application's id is asked once


def test_the_interval_is_numasparks_unless_the_environment_sets_a_positive_one(monkeypatch):
    monkeypatch.delenv(POLL_ENV, raising=False)
    assert poll_s() == (FIRST_S, POLL_S)
    for value, found in (
        ("1.5", (1.5, 1.5)),
        ("0", (FIRST_S, POLL_S)),
        ("soon", (FIRST_S, POLL_S)),
    ):
        monkeypatch.setenv(POLL_ENV, value)
        assert poll_s() == found


def test_a_driver_that_does_not_answer_leaves_no_line_and_no_error():
    assert AppProgress("http://127.0.0.1:1", now=0.0).line(now=100.0) is None


def test_long_work_in_a_log_is_a_line_a_minute_not_a_live_display(monkeypatch):
    """stderr not a terminal: the first change, then at most one line a minute, then the last;
    a running application's progress (said as ``progress: ...``) likewise."""
    clock = [1000.0]
    monkeypatch.setattr(terminal.time, "monotonic", lambda: clock[0])
    log = io.StringIO()
    term = terminal.Terminal()
    term.err = Console(file=log, soft_wrap=True, force_terminal=False)
    with term.progress() as bar:
        task = bar.add_task("starting", total=3)
        for step in range(3):
            bar.update(task, description=f"configuration {step + 1}")
            clock[0] += 25  # six changes in 75 s: the first and the one after a minute
            bar.advance(task)
        clock[0] += 5
        bar.update(task, description="done")
    lines = log.getvalue().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "[0/3] configuration 1",
        "[3/3] configuration 3",
        "[3/3] done",  # the last, at the end
    ]
    log.truncate(0)
    log.seek(0)
    for _ in range(4):
        term.say("progress: jobs 1 done")
        clock[0] += 25
    assert log.getvalue().count("progress:") == 2  # at 0 s and at 75 s
