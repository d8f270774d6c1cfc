"""The HTML report: one self-contained file (plotly.js inline, no network) for a results dir.

Sections appear when the results have what they need: the environment; the
topology with each configuration's placement drawn on it; the runs; the
configurations with their classification; the layout grid as a heat map;
bindings compared with error bars; co-scheduling completions; speedup with the
fitted model and knee; CPU and per-node memory over time for each
application; the advice; links to flame graphs. Rendered with jinja2, by the
template that the report of event logs (report/applications.py) renders too; the
figures are report/plots.py's, the topology drawing report/drawing.py's.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from numaspark import __version__, records
from numaspark.decide.advise import Severity, advise_results, not_assessed_by_cause
from numaspark.decide.classify import classify
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.result import (
    RunResult,
    by_configuration,
    measured,
    refuse_mixed,
    retimed,
)
from numaspark.experiment.store import (
    COSCHED_FILE,
    RESULTS_FILE,
    TOPOLOGY_FILE,
    ResultStore,
    recorded_topology,
    topology_file,
)
from numaspark.jsonlines import read_json_lines
from numaspark.metrics.streaming import STREAM_METRICS
from numaspark.placement import Placement
from numaspark.report.drawing import topology_svg
from numaspark.report.plots import (
    ConfigRow,
    Plot,
    binding_bars,
    cosched_plot,
    layout_heatmap,
    speedup_plot,
    time_series_plot,
)
from numaspark.topology import Topology, load


def _configs(results: list[RunResult], classes: dict[str, list[str]]) -> list[ConfigRow]:
    rows = [
        ConfigRow(
            key,
            runs[0].spec.title,
            runs[0].spec,
            [r.wall_time_s for r in runs],
            classes.get(key, []),
        )  # type: ignore[misc]
        for key, runs in by_configuration(results).items()
    ]
    return sorted(rows, key=lambda c: c.median)


def _topology(directory: Path, results: list[RunResult]) -> tuple[Topology | None, str]:
    path = directory / TOPOLOGY_FILE
    if path.exists():
        try:
            return records.load(Topology, json.loads(path.read_text())), f"from {TOPOLOGY_FILE}"
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None, f"{TOPOLOGY_FILE} is not one numaspark wrote"
    fingerprints = {r.environment.topology_fingerprint for r in results}
    try:
        here = load()
    except (NumasparkError, OSError):  # no hwloc here: the report goes on without the picture
        return None, "no topology.json and hwloc is not available here"
    if here.fingerprint in fingerprints:
        return here, "this machine (same fingerprint as the runs)"
    return None, "no topology.json, and the runs were on another machine"


def by_host(placement: Placement) -> list[tuple[str | None, Placement]]:
    """The placement itself, or on several hosts one placement per host (its executors)."""
    from dataclasses import replace

    if not placement.hosts:
        return [(None, placement)]
    return [
        (
            host,
            replace(
                placement,
                jvms=tuple(j for j in placement.jvms if j.host == host or not j.runs_tasks),
            ),
        )
        for host in placement.hosts
    ]


def _host_topology(directory: Path, host: str) -> Topology | None:
    path = directory / topology_file(host)
    try:
        return records.load(Topology, json.loads(path.read_text())) if path.exists() else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # not one numaspark wrote: that host's placements are not drawn


def where_they_ran(results: list[RunResult]) -> list[dict]:
    """Per host, each executor's planned and effective placement in the latest ok run of each
    configuration (runs on several hosts only)."""
    latest: dict[str, RunResult] = {}
    for r in results:
        if r.ok and r.spec.placement is not None and r.spec.placement.hosts:
            latest[r.config_key] = r
    rows = [
        {
            "host": e.host or "-",
            "configuration": r.spec.title,
            "jvm": e.jvm,
            "pid": e.pid,
            "planned_cpus": e.planned_cpus,
            "cpus": e.cpus,
            "planned_mem_nodes": e.planned_mem_nodes,
            "policy": e.policy,
            "pages": ", ".join(f"N{n} {b >> 20} MiB" for n, b in (e.bytes_per_node or {}).items())
            or "-",
        }
        for r in latest.values()
        for e in r.effective_placement
    ]
    return sorted(rows, key=lambda row: (row["host"], row["configuration"], str(row["jvm"])))


def _environment(results: list[RunResult]) -> tuple[dict, list[str]]:
    if not results:
        return {}, []
    first = records.dump(results[0].environment)
    differing = sorted(
        {k for r in results for k, v in records.dump(r.environment).items() if first.get(k) != v}
    )
    return first, differing


def build_report(
    directory: Path,
    links_from: Path | None = None,
    compare_by: str | None = None,
    mixed: bool = False,
) -> str:
    """The report of a results directory, as one HTML document; links (flame graphs) are
    relative to ``links_from`` (the report's folder; default: the directory). ``compare_by``:
    which of an application's times is compared (result.TIMES; default: what each run stored).
    ``mixed``: runs of several places (clusters, hosts, topologies) too, else refused."""
    directory = Path(directory)
    results, cosched_rows = _stored_runs(directory, compare_by, mixed)
    classification = classify(results)
    classes = {c.config: [x.text for x in c.labels] for c in classification.configs}
    configs = _configs(results, classes)
    advices = advise_results(results, recorded_topology(directory)[0]) if results else []
    topology, topology_source = _topology(directory, results)
    placements = _placement_drawings(directory, configs, topology)
    plots = _plots(configs, cosched_rows, results)
    environment, differing = _environment(results)
    flame_graphs = _flame_graphs(directory, links_from or directory)
    streaming = [r for r in measured(results) if r.streaming]
    return render(
        f"numaspark report: {directory.resolve().name}",
        str(directory.resolve()),
        environment=environment,
        differing=differing,
        topology=records.dump(topology) if topology else None,
        topology_source=topology_source,
        placements=placements,
        runs=results,
        configs=configs,
        classification=classification,
        best=configs[0].median if configs else None,
        plots=plots,
        cosched=cosched_rows,
        advices=advices,
        advice_causes=not_assessed_by_cause(advices),  # said once, under every configuration's
        flame_graphs=flame_graphs,
        streaming=streaming,
        where=where_they_ran(results),
    )


# every section the template has, empty: a report fills those it has what they need for
_NO_SECTIONS: dict[str, object] = {
    "environment": {},
    "differing": [],
    "topology": None,
    "topology_source": "",
    "placements": [],
    "runs": [],
    "configs": [],
    "classification": None,
    "best": None,
    "plots": [],
    "cosched": [],
    "advices": [],
    "advice_causes": [],  # the rules the advice could not assess, one entry per cause
    "flame_graphs": [],
    "streaming": [],
    "where": [],
    "applications": [],  # the report of event logs (report/applications.py): every one
    "groups": [],  # and a section per application read whole, by application name
    "notes": [],
}


def render(title: str, source: str, **sections: object) -> str:
    """The report's one template with ``sections`` (every other section left out)."""
    import jinja2
    from plotly.offline import get_plotlyjs

    if unknown := set(sections) - set(_NO_SECTIONS):
        raise TypeError(f"the report's template has no section {sorted(unknown)}")
    template = jinja2.Environment(
        loader=jinja2.PackageLoader("numaspark.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
    ).get_template("report.html.j2")
    return template.render(
        title=title,
        generated=time.strftime("%Y-%m-%d %H:%M:%S %z"),
        version=__version__,
        directory=source,
        plotly_js=get_plotlyjs(),
        Severity=Severity,
        stream_metrics=STREAM_METRICS,
        **(_NO_SECTIONS | sections),
    )


def _stored_runs(
    directory: Path, compare_by: str | None, mixed: bool
) -> tuple[list[RunResult], list[dict]]:
    """The runs and co-scheduling rounds stored in ``directory``; a UsageError where it
    holds neither, or runs of several places that ``mixed`` does not allow."""
    results_path, cosched_path = directory / RESULTS_FILE, directory / COSCHED_FILE
    if not results_path.exists() and not cosched_path.exists():
        raise UsageError(
            f"{directory} has no {RESULTS_FILE} or {COSCHED_FILE}: give a --out "
            "directory of run, sweep, study or characterize"
        )
    results = retimed(ResultStore(directory).load(), compare_by) if results_path.exists() else []
    refuse_mixed(results, directory, mixed)
    cosched_rows = read_json_lines(cosched_path) if cosched_path.exists() else []
    if not results and not cosched_rows:
        raise UsageError(f"{directory}: no runs are stored there yet: nothing to report")
    return results, cosched_rows


def _placement_drawings(
    directory: Path, configs: list[ConfigRow], topology: Topology | None
) -> list[dict]:
    """One picture per configuration that runs tasks, of its placement on its topology; on
    several hosts one per host, on that host's topology (none where it is not known)."""
    placements = []
    seen = set()
    for c in configs:
        if c.key in seen or not c.spec.task_jvms:
            continue
        seen.add(c.key)
        for host, shown in by_host(c.spec.placement):
            drawn_on = _host_topology(directory, host) if host else topology
            if drawn_on is not None:
                label = f"{c.label} · {host}" if host else c.label
                placements.append({"label": label, "svg": topology_svg(drawn_on, shown)})
    return placements


def _plots(
    configs: list[ConfigRow], cosched_rows: list[dict], results: list[RunResult]
) -> list[Plot]:
    """Each plot the runs have what it needs for, in the report's order."""
    return [
        p
        for p in (
            layout_heatmap(configs),
            binding_bars(configs),
            speedup_plot(configs),
            cosched_plot(cosched_rows),
            time_series_plot(results),
        )
        if p
    ]


def _flame_graphs(directory: Path, links_from: Path) -> list[tuple[str, str]]:
    """Each flame graph under ``directory``: its name there, and its link from the folder
    ``links_from`` (the report's)."""
    base = links_from.resolve()
    return [
        (str(p.relative_to(directory)), os.path.relpath(p.resolve(), base))
        for p in sorted(directory.glob("**/*.svg"))
    ]


def write_report(
    directory: Path, target: Path, time: str | None = None, mixed: bool = False
) -> Path:
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory: give the --out of a run or study")
    check_target(target)
    return write_html(
        target, build_report(directory, links_from=target.parent, compare_by=time, mixed=mixed)
    )


def check_target(target: Path) -> None:
    """A UsageError where ``target`` cannot be the report's file (before any work)."""
    if target.is_dir():
        raise UsageError(
            f"-o {target} is a directory: give the HTML file to write, e.g. "
            f"{target / 'report.html'}"
        )


def write_html(target: Path, text: str) -> Path:
    """Write the report to ``target`` (its folder made); ``target``."""
    check_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
