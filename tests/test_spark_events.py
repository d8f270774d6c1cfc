"""Every event log of Spark's own History Server test data (shared/spark-events: Spark 1.2 to
4.2, written by Spark itself) read with no traceback, checked against the answers Spark's
History Server gives for them (its expectation files), and the two defects that data showed:
Spark before 1.4 wrote no submission or completion time on a job (the jobs' spans then come
from their stages, so `advise` no longer calls the whole application driver time), and a log
whose application ends before it starts (an altered start time) is said, not printed as a
negative elapsed time. No JVM."""

from __future__ import annotations

import json

import pytest
from conftest import SPARK_EVENTS, spark_expectation

from numaspark.decide.advise import advise_event_log
from numaspark.decide.history import summarize_log
from numaspark.metrics.aggregate import aggregate
from numaspark.metrics.eventlog import parse_event_log

LOGS = SPARK_EVENTS / "logs"


def _logs() -> list:
    logs = sorted(p for p in LOGS.iterdir() if p.name != "legacy-dir")
    return logs + sorted((LOGS / "legacy-dir").iterdir())


def test_every_log_is_read_with_a_non_negative_elapsed_time():
    logs = _logs()
    assert len(logs) == 28, [p.name for p in logs]
    for path in logs:
        assert aggregate(parse_event_log(path))["elapsedTime"] >= 0, path


def test_each_applications_start_end_and_duration_are_the_history_servers():
    expected = json.loads(spark_expectation("application_list_json_expectation.json").read_text())
    by_id = {}
    for path in _logs():
        log = parse_event_log(path, tasks=False)
        by_id.setdefault(log.app_id, log)
    matched = 0
    for app in expected:
        log = by_id.get(app["id"])
        if log is None or len(app["attempts"]) != 1:  # multi-attempt apps: one log each
            continue
        (attempt,) = app["attempts"]
        assert log.start_time == attempt["startTimeEpoch"], app["id"]
        assert log.end_time == attempt["endTimeEpoch"], app["id"]
        matched += 1
    assert matched == 14, matched  # the 16 applications less the two of several attempts


@pytest.mark.parametrize(
    "name", ["local-1422981759269", "local-1425081759269", "legacy-dir/local-1426533911241"]
)
def test_jobs_of_spark_before_1_4_get_their_stages_span(name):
    log = parse_event_log(LOGS / name)
    assert log.jobs["submissionTime"].notna().all() and log.jobs["completionTime"].notna().all()
    assert any("Spark before 1.4" in w for w in log.warnings)
    driver = next(f for f in advise_event_log(LOGS / name).findings if f.rule == "driver-time")
    assert driver.evidence["driver_ms"] < driver.evidence["application_ms"]  # jobs ran


def test_a_legacy_directory_names_its_spark_version():
    assert parse_event_log(LOGS / "legacy-dir" / "local-1426533911241").spark_version == "1.2.0"


def test_a_log_that_ends_before_it_starts_says_so_and_times_its_tasks():
    # local-1426533911242: Spark's own test log whose start was moved 100,000 s later
    log = parse_event_log(LOGS / "local-1426533911242")
    assert log.end_time < log.start_time
    assert any("ends" in w and "before it starts" in w for w in log.warnings), log.warnings
    elapsed = aggregate(log)["elapsedTime"]
    assert 0 < elapsed < 60_000, elapsed
    why = {n.rule: n.why for n in advise_event_log(LOGS / "local-1426533911242").not_assessed}
    assert why["driver-time"] == "the log ends before the application starts"


def test_a_driver_that_exited_with_1_makes_its_application_failed():
    """Spark writes the driver's exit status at the application's end (ExitCode, in Spark's
    own test data; Spark 3.5 and later): 1 is failed even with every job succeeded, 0 ok, and
    a log without one keeps what its jobs say."""
    failed = summarize_log(LOGS / "local-1430917381536")
    assert failed.exit_code == 1 and failed.failed_jobs == 0 and failed.status == "failed"
    ok = summarize_log(LOGS / "eventlog_v2_local-1766844910796")
    assert ok.exit_code == 0 and ok.status == "ok"
    unsaid = summarize_log(LOGS / "application_1538416563558_0014")
    assert unsaid.exit_code is None and unsaid.status == "ok"
