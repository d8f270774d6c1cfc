"""The built-in streaming workloads (Structured Streaming), fed by numaspark's own source.

The source (workloads/streamsource.py) sends ``--rate`` events a second for a
warm-up and then the measured ``--duration``; every workload's check compares
its final result table with what the source's ledger says was sent. Windows
are by event time (the millisecond each event was sent), so window totals are
exact: a sliding window of ``window_s`` every ``slide_s`` counts each event
``window_s / slide_s`` times.
"""

from __future__ import annotations

from numaspark.workloads.registry import CheckResult, Workload, register
from numaspark.workloads.registry import check_all as _all
from numaspark.workloads.registry import check_close as _close
from numaspark.workloads.registry import check_equal as _equal

COMMON = {"trigger_s": 1.0}
WORDS = {**COMMON, "words_per_event": 5, "vocabulary": 1000}
CLICKS = dict(COMMON)


def _no_files(directory, size, seed, params) -> dict:
    raise AssertionError("streaming workloads read the live source, not generated files")


def _received(facts: dict, answer: dict) -> CheckResult:
    return _equal("events received", answer.get("received"), facts["events"])


def _factor(facts: dict) -> int:
    params = facts["params"]
    return round(params["window_s"] / params["slide_s"])


def _word_totals(facts: dict, answer: dict) -> CheckResult:
    return _all(
        _received(facts, answer),
        _equal("words", answer.get("words"), facts["words"]),
        _equal("distinct words", answer.get("distinct_words"), facts["distinct_words"]),
        _equal(
            "sum of squared counts", answer.get("words_sum_squares"), facts["words_sum_squares"]
        ),
    )


def _windowed_words(facts: dict, answer: dict) -> CheckResult:
    return _all(
        _received(facts, answer),
        _equal("window word total", answer.get("window_total"), facts["words"] * _factor(facts)),
        _equal("distinct words", answer.get("distinct_words"), facts["distinct_words"]),
    )


def _page_totals(facts: dict, answer: dict) -> CheckResult:
    return _all(
        _received(facts, answer),
        _equal("clicks", answer.get("events"), facts["events"]),
        _equal("distinct pages", answer.get("distinct_pages"), facts["distinct_pages"]),
        _equal(
            "sum of squared counts", answer.get("pages_sum_squares"), facts["pages_sum_squares"]
        ),
    )


def _sliding_pages(facts: dict, answer: dict) -> CheckResult:
    return _all(
        _received(facts, answer),
        _equal("window click total", answer.get("window_total"), facts["events"] * _factor(facts)),
        _equal("distinct pages", answer.get("distinct_pages"), facts["distinct_pages"]),
    )


def _error_rate(facts: dict, answer: dict) -> CheckResult:
    return _all(
        _received(facts, answer),
        _equal("clicks", answer.get("events"), facts["events"]),
        _equal("errors", answer.get("errors"), facts["errors"]),
        _equal("(window, zip) groups", answer.get("window_zips"), facts["window_zips"]),
    )


def _active_users(facts: dict, answer: dict) -> CheckResult:
    return _all(
        _received(facts, answer),
        _equal("windows", answer.get("windows"), facts["windows"]),
        # HyperLogLog++ at 1% standard error: 5% is five of them
        _close(
            "active users summed over windows",
            answer.get("window_users"),
            facts["window_users"],
            rel=0.05,
        ),
    )


_STREAMING = [
    (
        "network-wordcount",
        "words",
        "DStream-style word count of lines from a socket",
        WORDS,
        _word_totals,
    ),
    (
        "sql-wordcount",
        "words",
        "the same word count as a SQL query over a streaming view",
        WORDS,
        _word_totals,
    ),
    (
        "windowed-wordcount",
        "words",
        "word counts over sliding event-time windows",
        {**WORDS, "window_s": 10, "slide_s": 5},
        _windowed_words,
    ),
    (
        "stateful-wordcount",
        "words",
        "running word counts in user-managed state (applyInPandasWithState)",
        WORDS,
        _word_totals,
    ),
    ("clicks-page-counts", "clicks", "clicks per page, running totals", CLICKS, _page_totals),
    (
        "clicks-sliding-page-counts",
        "clicks",
        "clicks per page over sliding event-time windows",
        {**CLICKS, "window_s": 10, "slide_s": 5},
        _sliding_pages,
    ),
    (
        "clicks-error-rate",
        "clicks",
        "share of non-200 responses per zip code per window",
        {**CLICKS, "window_s": 10},
        _error_rate,
    ),
    (
        "clicks-active-users",
        "clicks",
        "distinct users per window (approx_count_distinct)",
        {**CLICKS, "window_s": 10},
        _active_users,
    ),
]

for _name, _kind, _description, _params, _check in _STREAMING:
    register(
        Workload(
            name=_name,
            category="streaming",
            api="Structured Streaming",
            description=_description,
            job="streaming.py",
            generator=_no_files,
            check=_check,
            profiles={},
            row_bytes=1,
            params=dict(_params),
            stream=_kind,
        )
    )
