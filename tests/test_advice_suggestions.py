"""Advice says only what to change (issue 58, items 2 and 3): on an event log alone, the Spark
settings that differ from the application's own, as spark-submit's ``--conf`` options, never
Spark's own properties, a few hundred characters at most; the change fits what the narrow
stages read (input splits, shuffle partitions, or the code's partitions); no share over 100%
is a finding; and "not assessed" is said once per command, grouped by cause, after every
finding (the terminal, ``--json``, and the HTML report once per application).

On Spark's own History Server logs (../shared/spark-events: data numaspark did not make) and
logs our runs recorded (tests/fixtures/eventlogs). Each test was checked to fail without its
fix, as its docstring says.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil

import pytest
from conftest import FIXTURES, SPARK_EVENTS, run_cli

from numaspark.decide.advise import (
    Subject,
    advise,
    advise_event_log,
    advise_results,
    not_assessed_by_cause,
)
from numaspark.decide.advise.findings import FIGURES_DO_NOT_ADD_UP
from numaspark.decide.advise.settings import SPARK_OWN, spark_own, users_settings
from numaspark.decide.advise.tasks import stage_reads
from numaspark.experiment.store import ResultStore
from numaspark.metrics.eventlog import parse_event_log
from numaspark.report.console import advice_lines

LOGS = SPARK_EVENTS / "logs"
RECORDED = FIXTURES / "eventlogs"
# what the issue found in every suggestion on a log: Spark's own, never a change
NEVER = ("spark.app.id", "spark.driver.port", "spark.executor.id")
MOST = 400  # characters in one suggestion

pytestmark = pytest.mark.skipif(not LOGS.exists(), reason="../shared/spark-events")


def _logs() -> list:
    """Spark's 28 History Server logs (25 applications, some with several attempts), and the
    standalone clusters' logs our runs recorded (one with the plugin, one with dynamic
    allocation)."""
    logs = sorted(p for p in LOGS.iterdir() if p.name != "legacy-dir")
    logs += sorted((LOGS / "legacy-dir").iterdir())
    return logs + [RECORDED / "plugin-standalone", RECORDED / "dynamic-allocation"]


def _options(command: str) -> dict[str, str]:
    """spark-submit's ``--conf KEY=VALUE`` options as settings (other options left out)."""
    words = shlex.split(command)
    return dict(words[i + 1].split("=", 1) for i, word in enumerate(words[:-1]) if word == "--conf")


@pytest.mark.slow  # 2.4 s of CPU: advice on 30 logs
def test_every_suggestion_on_a_log_is_short_and_only_what_changes():
    """Before: a ``numaspark run WORKLOAD ...`` of every property of the log, 839 to 4,373
    characters here (7,503 on the issue's log), with spark.app.id, spark.driver.port and
    spark.executor.id in it. Now each suggestion is the settings that differ from the log's
    own, as --conf options of 400 characters at most, never one of Spark's own."""
    logs = _logs()
    assert len(logs) == 30, [p.name for p in logs]
    suggested = 0
    for path in logs:
        properties = parse_event_log(path, tasks=False).spark_properties
        for finding in advise_event_log(path).findings:
            where = f"{path.name} {finding.rule}"
            assert len(finding.command) <= MOST, (where, finding.command)
            assert len(finding.recommendation) <= MOST, where
            assert not any(key in finding.command for key in NEVER), (where, finding.command)
            if not finding.command.startswith("--"):  # another command: whatif, plan
                assert not finding.change, where
                continue
            suggested += 1
            assert _options(finding.command) == finding.change, where
            for key, value in finding.change.items():
                assert not spark_own(key), (where, key)
                assert properties.get(key) != value, (where, key, "the log's own value")
    assert suggested >= 15, suggested  # the check judged real suggestions, not none


def test_spark_own_list_names_what_the_issue_found():
    """The list of Spark's own properties holds those the issue found in the suggestions,
    and a user's tuning settings are not in it."""
    for key in (*NEVER, "spark.app.startTime", "spark.driver.host", "spark.master"):
        assert spark_own(key), key
    assert spark_own("spark.submit.deployMode") and spark_own("spark.eventLog.dir")
    assert spark_own("spark.ui.port") and spark_own("spark.repl.class.uri")
    for key in ("spark.sql.shuffle.partitions", "spark.executor.memory", "spark.executor.cores"):
        assert not spark_own(key), key
    assert len(SPARK_OWN) == len(set(SPARK_OWN))


def test_jvm_options_keep_the_users_flags_without_the_launchers():
    """The recorded standalone log's executor options: 20 flags Spark's launcher added
    (--add-opens ..., netty's) and the one numaspark gave (-XX:ActiveProcessorCount=2)."""
    key = "spark.executor.extraJavaOptions"
    properties = parse_event_log(RECORDED / "plugin-standalone", tasks=False).spark_properties
    assert "--add-opens" in properties[key]
    assert users_settings({key: properties[key]}) == {key: "-XX:ActiveProcessorCount=2"}
    only_launchers = parse_event_log(RECORDED / "dynamic-allocation", tasks=False)
    assert key not in users_settings(only_launchers.spark_properties)


def test_stages_are_told_by_what_they_read():
    """Spark's log of a shell that counted a parallelized range, then a shuffle of it, then
    a cached dataset: stages 0 and 6 read input records, 2, 5, 8 and 11 read shuffle data
    (fails where every narrow stage is taken for a shuffle, as tasks-per-core did)."""
    log = parse_event_log(LOGS / "local-1642039451826")
    reads = dict(zip(log.stages["stageId"], stage_reads(log.stages), strict=True))
    assert reads == {
        0: "input",
        2: "shuffle",
        5: "shuffle",
        6: "input",
        8: "shuffle",
        11: "shuffle",
    }


def _finding(path, rule):
    return next(f for f in advise_event_log(path).findings if f.rule == rule)


def test_too_few_tasks_reading_input_get_smaller_input_splits():
    """Stages 0 and 1 read 189 MB and 135 MB in 4 tasks each on 7 slots, stage 2 reads their
    shuffle in 1: input splits for the first (a file source's maxPartitionBytes, and in words
    an RDD's partitions), shuffle partitions for the second. Before, shuffle partitions
    alone, which do not change an input stage's tasks."""
    finding = _finding(LOGS / "application_1506645932520_24630151", "tasks-per-core")
    assert finding.evidence["stages_by_what_they_read"] == {"input": [0, 1], "shuffle": [2]}
    assert finding.change["spark.sql.files.maxPartitionBytes"] == "8m"  # 189 MB / 21 tasks
    assert finding.change["spark.sql.shuffle.partitions"] == "21"  # 3 tasks per slot
    assert "repartition(21)" in finding.recommendation


def test_too_few_tasks_reading_no_shuffle_get_no_shuffle_partitions():
    """Two stages read 5 GB each in 2 tasks on 3 slots, a third reads nothing (data made in
    the driver): no shuffle partitions are suggested, as no stage reads a shuffle; 5 GB over
    9 tasks is past the file source's 128 MB splits, so the input needs partitions in the
    code (said in words); the driver's data takes spark.default.parallelism."""
    finding = _finding(LOGS / "application_1553914137147_0018", "tasks-per-core")
    assert finding.evidence["stages_by_what_they_read"] == {"input": [1, 2], "neither": [0]}
    assert finding.change == {"spark.default.parallelism": "9"}
    assert "textFile(path, 9)" in finding.recommendation
    assert "shuffle" not in finding.command
    pi = _finding(LOGS / "eventlog_v2_local-1766844910796", "tasks-per-core")  # SparkPi
    assert pi.change == {"spark.default.parallelism": "30"}
    assert "numSlices" in pi.recommendation


def test_data_made_in_the_driver_never_gets_fewer_partitions_than_it_had():
    """SparkPi's log with spark.default.parallelism 200 set: its stages' few tasks were the
    code's (numSlices), so no setting is suggested, only the words; before, 30, fewer than
    it had, under the heading 'more partitions'. With 8 set, 30."""
    log = parse_event_log(LOGS / "eventlog_v2_local-1766844910796")
    log.spark_properties["spark.default.parallelism"] = "200"
    pi = next(f for f in advise(Subject(log), "pi").findings if f.rule == "tasks-per-core")
    assert pi.change in (None, {}) and "the code gave these stages" in pi.recommendation
    log.spark_properties["spark.default.parallelism"] = "8"
    pi = next(f for f in advise(Subject(log), "pi").findings if f.rule == "tasks-per-core")
    assert pi.change == {"spark.default.parallelism": "30"}


def test_smaller_executors_on_a_log_are_smaller_than_its_own():
    """Four executors of 4 cores with GC at 10%: before, "more, smaller executors" gave 2 of
    8 cores, larger than the log's own; now 8 of 2 (its 16 slots shared out)."""
    gc = _finding(LOGS / "app-20161115172038-0000", "gc")
    assert gc.change == {"spark.executor.cores": "2", "spark.cores.max": "16"}


def test_a_share_over_the_whole_is_not_assessed_with_the_figure(tmp_path):
    """Spark 2.1's log cut after 40 KB: its tasks' GC time is 117% of their run time, which
    the GC rule called "critical gc: GC takes 117% of executor time". Now no finding has a
    share over 100%: the GC rules say the log's figures do not add up, with the figure."""
    cut = tmp_path / "app-20161115172038-0000"
    cut.write_bytes((LOGS / cut.name).read_bytes()[:40_000])
    advice = advise_event_log(cut)
    assert not any(f.rule in ("gc", "executor-count") for f in advice.findings)
    missing = {n.rule: n for n in advice.not_assessed}
    assert missing["gc"].why == FIGURES_DO_NOT_ADD_UP
    assert missing["gc"].detail == "GC time over executor run time: 117%"
    for finding in advice.findings:
        for name, value in finding.evidence.items():
            if "share" in name and isinstance(value, float):
                assert value <= 1.0, (finding.rule, name, value)


def test_not_assessed_is_said_once_per_cause_after_every_finding():
    """Three logs at once (as a results directory's configurations are): before, each printed
    its 5 to 10 "not assessed" lines; now one heading, a line per cause naming its rules (and
    its subjects where not all), after every finding."""
    paths = [
        LOGS / "application_1506645932520_24630151",
        RECORDED / "plain",
        RECORDED / "dynamic-allocation",
    ]
    advices = [advise_event_log(p) for p in paths]
    causes = not_assessed_by_cause(advices)
    lines = advice_lines(advices, show_all=False, causes=causes)
    heading = lines.index("[dim]not assessed:[/]")
    assert sum("not assessed" in line for line in lines) == 1
    assert all(line.startswith("  [dim]") for line in lines[heading + 1 :])
    assert len(lines) - heading - 1 == len(causes)
    whys = [c.why for c in causes]
    assert len(whys) == len(set(whys))
    plugin = next(c for c in causes if "affinity plugin (numaspark plan" in c.why)
    assert plugin.every_subject and {"numa-straddle", "remote-pages", "device-node"} <= set(
        plugin.rules
    )
    some = next(c for c in causes if not c.every_subject)
    line = next(line for line in lines[heading:] if some.why in line)
    assert all(subject in line for subject in some.subjects)


def test_a_results_directory_says_each_cause_once(tmp_path):
    """Two configurations (recorded runs of two applications): each cause once, not once per
    configuration, as the main job printed its 5 lines per configuration."""
    directory = tmp_path / "two"
    directory.mkdir()
    lines = [
        (FIXTURES / "runs" / name / "results.jsonl").read_text()
        for name in ("app-squares", "wordcount-core")
    ]
    (directory / "results.jsonl").write_text("".join(lines))
    advices = advise_results(ResultStore(directory).load())
    assert len(advices) == 2
    proc = run_cli("advise", str(directory), "--mixed")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out.count("not assessed:") == 1
    assert sum("no SMT measurement" in line for line in out) == 1
    heading = out.index("not assessed:")
    for advice in advices:
        assert out.index(f"{advice.subject}: worst {advice.worst.word}") < heading


def test_the_json_carries_the_printed_suggestions():
    """``advise LOG --json`` and the text of the same command: each finding's command is
    printed whole on one line, its change is the --conf options, and the causes not assessed
    are the text's lines."""
    path = LOGS / "application_1506645932520_24630151"
    document = json.loads(run_cli("advise", str(path), "--json", check=True).stdout)
    assert document["schema"] == "numaspark.advise/1"
    text = run_cli("advise", str(path), check=True).stdout
    (advice,) = document["advice"]
    commands = [f["command"] for f in advice["findings"] if f["command"]]
    assert len(commands) >= 3
    for finding in advice["findings"]:
        if finding["command"]:
            assert any(line.endswith(finding["command"]) for line in text.splitlines())
        if finding["command"].startswith("--"):
            assert _options(finding["command"]) == finding["change"]
    assert not any(key in text for key in NEVER)
    for cause in document["not_assessed"]:
        assert any(line.endswith(f": {cause['why']}") for line in text.splitlines()), cause
        assert cause["subjects"] == [str(path)] and cause["of"] == 1
    # the findings first, then not assessed
    assert text.index("not assessed:") > max(text.index(c) for c in commands)


def test_the_html_report_of_logs_says_each_cause_once_per_application(tmp_path):
    """The report of two logs: before, each application's section named the affinity plugin
    in three of its "not assessed" texts; now each section says the cause once."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(RECORDED / "plain", logs / "local-1")
    shutil.copy(LOGS / "application_1506645932520_24630151", logs)
    report = tmp_path / "r.html"
    proc = run_cli("report", str(logs), "-o", str(report))
    assert proc.returncode == 0, proc.stderr
    html = report.read_text()
    assert len(re.findall("holds placement only from the affinity plugin", html)) == 2
