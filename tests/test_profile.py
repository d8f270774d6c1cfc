"""--profile: async-profiler from its Maven Central artifact, one SVG flame graph per JVM that ran
tasks (in local mode, the driver is that JVM)."""

from __future__ import annotations

from numaspark.spark.flamegraph import parse_collapsed, render_svg

COLLAPSED = """\
java/lang/Thread.run;Executor$TaskRunner.run;ShuffleMapTask.runTask;Sorter.insertAll 30
java/lang/Thread.run;Executor$TaskRunner.run;ShuffleMapTask.runTask;Serializer.write 10
java/lang/Thread.run;GC_active 5
[unknown_Java];Interpreter 5
not a stack line
"""


def test_collapsed_stacks_become_a_tree_and_an_svg():
    root = parse_collapsed(COLLAPSED)
    assert root["samples"] == 50
    thread = root["children"]["java/lang/Thread.run"]
    assert thread["samples"] == 45
    task = thread["children"]["Executor$TaskRunner.run"]["children"]["ShuffleMapTask.runTask"]
    assert task["children"]["Sorter.insertAll"]["samples"] == 30
    svg = render_svg(root, "executor 0")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "Sorter.insertAll (30 samples, 60.00%)" in svg
    assert svg.count("<rect") == 1 + 9  # the background, "all" and the 8 distinct frames


def test_a_very_deep_stack_draws():
    deep = ";".join(f"frame{i}" for i in range(3000)) + " 7\n"
    assert render_svg(parse_collapsed(deep), "deep").count("<rect") == 3002


# --profile on real JVMs: tests/test_spark_runs.py (one flame graph per standalone executor)
