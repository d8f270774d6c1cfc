"""A performance engineer's first hour (issue 58): output kept in a file or sent through a
pipe holds every value whole, -h and --version, ``run --help`` under headings, ``topology
--host [user@]address[:port]``, and a ``schema`` in every command's ``--json``.

Each test runs the real command line (`run_cli`: stdout is a file, never a terminal, and
COLUMNS=200), on the shared hwloc XMLs and Spark's own event logs. How each was checked to fail
without its fix is said in its docstring.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from numaspark.cli.terminal import VERSIONS
from numaspark.hosts import host_of, load_inventory

SHARED = Path(__file__).resolve().parents[2] / "shared"
DGX2 = SHARED / "topologies" / "nvidiaDGX2.xml"
LOGS = SHARED / "spark-events" / "logs"
FIXTURES = Path(__file__).parent / "fixtures"
DOCS = Path(__file__).resolve().parents[1] / "docs"

pytestmark = pytest.mark.skipif(
    not (DGX2.exists() and LOGS.exists()), reason="../shared's topologies and event logs"
)


def _cut(text: str) -> list[str]:
    """What says a value was cut: rich's ellipsis, or a character lost to its encoding."""
    return [line for line in text.splitlines() if "…" in line or "\ufffd" in line]


def _on_one_line(text: str, *values: str) -> bool:
    return any(all(v in line for v in values) for line in text.splitlines())


def _piped(*args: str) -> str:
    """``numaspark ARGS > file`` in a fresh process, as a user's shell runs it: no COLUMNS
    (rich's 80), and a C locale whose ASCII Python would keep for stdout; stdout decoded
    strictly, so that a split or unencodable character fails here."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    env.pop("PYTHONIOENCODING", None)
    proc = subprocess.run(
        [sys.executable, "-m", "numaspark", *args], capture_output=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode("utf-8")


def test_a_plan_in_a_file_keeps_its_commands_and_conf_whole():
    """Without the Terminal's width for a pipe (rich's 80 columns), the prefix read
    ``numactl --cpunodeb…`` and the discovery script's key and path were cut (checked by
    printing through ``self.out.print`` alone); without `utf8_streams`, the C locale's
    ASCII stdout failed on the first box-drawing character (UnicodeEncodeError)."""
    args = ("plan", "--xml", str(DGX2), "--gpus-per-executor", "8", "--bind", "node")
    planned = json.loads(run_cli(*args, "--json", check=True).stdout)
    shown = _piped(*args)
    assert not _cut(shown), _cut(shown)
    assert "┏" in shown  # rich's box, in UTF-8
    for jvm in planned["jvms"]:
        if jvm["prefix"]:
            assert " ".join(jvm["prefix"]) in shown, jvm["prefix"]
    for key, value in planned["spark_conf"].items():
        assert _on_one_line(shown, key, str(value)), (key, value)


@pytest.mark.slow  # two scans of 25 logs: about 3 s of CPU
def test_results_and_advise_of_many_logs_through_a_pipe_keep_ids_and_names_whole():
    """Without the fix, at COLUMNS=200, ``results`` folded application ids over lines and
    ``advise`` cut the application names (its column is capped at 28); checked as above."""
    listing = json.loads(run_cli("results", str(LOGS), "--json", check=True).stdout)
    apps = listing["applications"]
    assert len(apps) >= 20
    for command in ("results", "advise"):
        shown = run_cli(command, str(LOGS), check=True).stdout
        assert not _cut(shown), (command, _cut(shown))
        for app in apps:  # a group's name is on its first row only
            assert _on_one_line(shown, app["app_id"]), (command, app)
            assert _on_one_line(shown, app["application"]), (command, app)


def test_version_and_h_on_every_command():
    """Without ``--version`` (the app's callback) and ``help_option_names``, both were
    "No such option" (exit 2): checked by removing each."""
    version = run_cli("--version", check=True)
    assert re.fullmatch(r"numaspark \d+\.\d+\.\d+\S*\n", version.stdout), version.stdout
    for path in (("-h",), ("run", "-h"), ("plan", "-h"), ("cluster", "up", "-h")):
        proc = run_cli(*path, check=True)
        assert proc.stdout.startswith("Usage: numaspark"), (path, proc.stdout[:200])
        assert "-h, --help" in proc.stdout


def test_run_help_lists_its_options_under_headings():
    """Without `PanelledCommand` every option was under one "Options:" heading (checked with
    ``cls=`` left out of run's ``@app.command``)."""
    text = run_cli("run", "--help", check=True).stdout
    headings = re.findall(r"^([A-Z][\w ]*):$", text, flags=re.MULTILINE)
    assert headings == [
        "Arguments",
        "Where",
        "Layout",
        "Binding",
        "Measurement",
        "Workload",
        "Output",
        "Options",
    ], headings
    options = text.split("\nOptions:\n", 1)[1]
    assert options.split() == ["-h,", "--help", "Show", "this", "message", "and", "exit."]
    where = text.split("\nWhere:\n", 1)[1].split("\nLayout:\n", 1)[0]
    assert "--master" in where and "--hosts" in where and "--bind" not in where


def test_topology_host_takes_user_address_port(tmp_path):
    """``topology --host spark@node2`` (docs/clusters.md, docs/hosts.md) looked the whole
    text up as a host's name: "no host 'spark@node2' in the inventory" (checked with the old
    ``inventory_of(host, None).get(host)``). Now SSH is tried as spark@node2, port 2222; the
    host does not resolve, which is the one line that comes back."""
    proc = run_cli("topology", "--host", "spark@node2.invalid:2222")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "in the inventory" not in proc.stderr, proc.stderr
    assert "spark@node2.invalid port 2222" in proc.stderr, proc.stderr
    refused = run_cli("topology", "--host", "node1,node2")
    assert refused.returncode == 2 and "give one host" in refused.stderr, refused.stderr
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[defaults]\nuser = "spark"\n[[host]]\nname = "n1"\naddress = "10.0.0.11"\n')
    inventory = load_inventory(hosts)
    assert host_of("n1", inventory).destination == "spark@10.0.0.11"
    assert host_of("root@n1:2200", inventory).destination == "root@10.0.0.11"
    assert host_of("root@n1:2200", inventory).port == 2200
    for doc in ("clusters.md", "hosts.md"):
        for given in re.findall(r"topology --host (\S+)", (DOCS / doc).read_text()):
            if given != "H":
                assert host_of(given).address, given


def _document(*args: str) -> dict:
    proc = run_cli(*args, "--json")
    assert proc.returncode == 0, (args, proc.stderr)
    return json.loads(proc.stdout)


@pytest.mark.slow  # eleven commands, a tune among them: about 4 s of CPU
def test_every_json_document_names_its_schema(tmp_path):
    """Before, none of these had ``schema`` (checked by writing ``term.json`` for
    ``term.document``), doctor's keys had spaces and analyze's document was a list."""
    table = tmp_path / "t.csv"
    table.write_text("executors,cores_per_executor,wall_s\n1,1,10\n1,2,6\n2,1,7\n2,2,4\n")
    points = tmp_path / "points.csv"
    points.write_text("concurrency,time_s\n1,10\n2,6\n4,4\n")
    runs = FIXTURES / "runs" / "wordcount-core"
    log = FIXTURES / "eventlogs" / "plain"
    documents = {
        "doctor": [("doctor",)],
        "results": [("results", str(LOGS)), ("results", str(runs))],
        "advise": [("advise", str(LOGS)), ("advise", str(log)), ("advise", str(runs))],
        "classify": [("classify", str(runs))],
        "whatif": [("whatif", str(log))],
        "analyze": [("analyze", str(log), str(log))],
        "fit": [("fit", str(points))],
        "tune": [
            ("tune", "--replay", str(table), "--budget", "2", "--synthetic", "node:2 core:2 pu:1")
        ],
    }
    promised = (DOCS / "schemas.md").read_text()
    for name, commands in documents.items():
        version = VERSIONS.get(name, 1)
        assert f"`numaspark.{name}/{version}`" in promised, name
        for args in commands:
            found = _document(*args)
            assert isinstance(found, dict) and next(iter(found)) == "schema", args
            assert found["schema"] == f"numaspark.{name}/{version}", (args, found["schema"])
    doctor = _document("doctor")
    assert {"java", "affinity_plugin", "c_compiler"} <= set(doctor["checks"])
    assert all(re.fullmatch(r"[a-z0-9_]+", key) for key in doctor["checks"]), doctor["checks"]
    analyzed = _document("analyze", str(log), str(log))
    assert [one["app_id"] for one in analyzed["logs"]] == ["local-1795304333972"] * 2


def test_docs_say_plugin_jar_is_plans_and_mem_policy_as_plan_prints_it():
    """docs/quickstart.md read as if ``run`` took ``--plugin-jar``; docs/place.md and
    ``--mem-policy``'s help gave preferred as the default without saying that ``plan``'s
    table shows numactl's bind (the plugin's settings of ``--target standalone`` leave
    preferred): checked against the old texts."""
    quickstart = (DOCS / "quickstart.md").read_text()
    assert "(or give `--plugin-jar URL`)" not in quickstart
    assert "`run` has no `--plugin-jar`" in quickstart
    assert "--plugin-jar" not in run_cli("run", "--help", check=True).stdout
    assert "--plugin-jar" in run_cli("plan", "--help", check=True).stdout
    place = (DOCS / "place.md").read_text()
    assert "the placement `plan` prints" in place and "`plan --target standalone`" in place
    help_text = " ".join(run_cli("plan", "--help", check=True).stdout.split())
    assert "bind where numactl binds the JVMs numaspark starts, as plan shows" in help_text
    shown = run_cli(
        "plan", "--xml", str(DGX2), "--bind", "node", "--target", "standalone", check=True
    ).stdout
    assert "memory preferred (the plugin's default)" in shown and "memory bind" not in shown
    assert "spark.numaspark.affinity.memPolicy" not in shown


def _few_logs(tmp_path) -> Path:
    """Three of Spark's logs: a name longer than the name column (29 characters), and two
    attempts of one application."""
    where = tmp_path / "logs"
    where.mkdir()
    for name in (
        "eventlog_v2_local-1766844910796",
        "local-1430917381535_1",
        "local-1430917381535_2",
    ):
        source = LOGS / name
        if source.is_dir():
            import shutil

            shutil.copytree(source, where / name)
        else:
            (where / name).write_bytes(source.read_bytes())
    return where


def _folded(lines: list[str], value: str) -> bool:
    """Whether ``value`` is in a column, folded over the lines below where it starts."""
    for i, line in enumerate(lines):
        start = line.find(value[:8])
        if start < 0:
            continue
        text = ""
        for below in lines[i : i + 4]:
            text += below[start:].split("  ")[0].strip()
            if text.replace(" ", "") == value.replace(" ", ""):  # a fold at a space drops it
                return True
    return False


def test_many_logs_on_a_narrow_terminal_fold_never_ellipsise(tmp_path):
    """history_table and applications_table at 140 columns: without overflow="fold" on their
    columns, the 29-character name "<script>alert('XSS')</script>" was cut to 28 with "…"
    (checked by removing the overflow arguments). Attempts are named."""
    from rich.console import Console

    from numaspark.decide import history
    from numaspark.report import console as views

    scan = history.read_logs(str(_few_logs(tmp_path)))
    for view in (views.history_table, views.applications_table):
        out = Console(width=140, record=True, force_terminal=True, color_system=None)
        out.print(view(scan))
        shown = out.export_text()
        assert not _cut(shown), (view.__name__, _cut(shown))
        lines = shown.splitlines()
        assert _folded(lines, "<script>alert('XSS')</script>"), (view.__name__, shown)
        for attempt in ("1", "2"):  # both attempts, named
            assert _folded(lines, f"local-1430917381535 attempt {attempt}"), view.__name__


@pytest.mark.slow  # 1.1 s of CPU: what-if of 25 logs, twice
def test_whatif_of_a_directory_through_a_pipe_has_one_row_per_application(tmp_path):
    """``whatif DIR`` replayed one application picked from the directory (checked against
    the code before: it parsed the directory as one log); now a row each, ids whole."""
    where = _few_logs(tmp_path)
    found = json.loads(run_cli("whatif", str(where), "--json", check=True).stdout)
    assert found["schema"].startswith("numaspark.whatif/")
    apps = found["applications"]
    assert sorted(a["application"] for a in apps) == [
        "local-1430917381535 attempt 1",
        "local-1430917381535 attempt 2",
        "local-1766844910796",
    ]
    assert all(len(a["predictions"]) == len(found["counts"]) for a in apps)
    shown = _piped("whatif", str(where))
    assert not _cut(shown), _cut(shown)
    for app in apps:
        assert _on_one_line(shown, app["application"], f"{app['measured_s']:.1f}"), app
