"""The HTML report of event logs (``numaspark report DIR|LOG|URL`` where it names Spark's event
logs, not numaspark's results): the results directory's template (report/html.py), plots
(report/plots.py) and topology drawing (report/drawing.py), with a table of every application
and a section for each of the latest, grouped by application name as advise's table is: its
stage times, its NUMA findings (advise's rules on the log alone) and its executors' placement
as the affinity plugin reported it, drawn on each host's topology from the same reports.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from numaspark.placement import Binding, JvmPlacement
from numaspark.readback.plugin_reports import DRIVER, ReportedJvm
from numaspark.report.drawing import jvms_svg
from numaspark.report.html import render, write_html
from numaspark.report.plots import PALETTE, Plot, figure_div
from numaspark.topology import CpuSet
from numaspark.topology.reported import from_report

MAX_APPLICATIONS = 40  # applications with a section (the latest ones); the table has every one
MAX_STAGES = 500  # stages drawn in an application's stage times (its longest ones)


def write_log_report(scan, applications: list, warnings: list[str], target: Path) -> Path:
    """Write the report of a scan of event logs (decide/history.py's ``Scan``) to ``target``:
    ``applications`` (its ``read_applications``, at most `MAX_APPLICATIONS`) each with a
    section; ``warnings``: of those that could not be read again."""
    return write_html(target, build_log_report(scan, applications, warnings))


def build_log_report(scan, applications: list, warnings: list[str]) -> str:
    """`write_log_report`'s HTML."""
    anchors = {a.summary.log: f"app-{number}" for number, a in enumerate(applications, 1)}
    overview = [
        s.row() | {"anchor": anchors.get(s.log), "severities": s.severities}
        for runs in scan.groups().values()
        for s in runs
    ]
    name_of = {s.log: name for name, runs in scan.groups().items() for s in runs}
    groups: dict[str, list[dict]] = {}
    for app in applications:
        section = _section(app, anchors[app.summary.log])
        groups.setdefault(name_of[app.summary.log], []).append(section)
    notes = [scan.tally()]
    if len(applications) < len(overview):
        notes.append(
            f"The latest {len(applications)} of {len(overview)} applications have a section "
            f"(at most {MAX_APPLICATIONS}); numaspark results lists every one."
        )
    notes += [f"warning: {w}" for w in scan.all_warnings() + warnings]
    return render(
        f"numaspark report: {PurePosixPath(scan.where).name}",
        scan.where,
        applications=overview,
        groups=[{"name": n, "applications": groups[n]} for n in sorted(groups)],
        notes=notes,
    )


def _section(app, anchor: str) -> dict:
    """What an application's section shows."""
    return {
        "anchor": anchor,
        "summary": app.summary.row(),
        "advice": app.advice,
        "placement": app.placement,
        "drawings": _drawings(app),
        "stages": app.stages,
        "plot": stage_plot(app.stages, anchor),
        "executors": app.executors,
        "executors_plot": executors_plot(app.executors, anchor),
    }


def executors_plot(executors: dict, anchor: str) -> Plot | None:
    """Executors alive on each node over time, a step line per node (``host node N``, and
    ``host unbound`` before an executor's plugin bound it, or without the plugin), stacked:
    the nodes fill as dynamic allocation adds executors and empty as it removes them."""
    # lazy: plotly is large, and loaded only where a report draws
    import plotly.graph_objects as go

    lanes = executors.get("per_node") or {}
    # drawn where executors came and went; a fixed set of executors is a flat line
    came_and_went = executors.get("dynamic_allocation") or (
        executors.get("total", 0) > executors.get("peak_executors", 0)
    )
    if not lanes or not came_and_went:
        return None
    fig = go.Figure()
    for number, (lane, series) in enumerate(lanes.items()):
        fig.add_trace(
            go.Scatter(
                x=[t for t, _ in series],
                y=[n for _, n in series],
                name=lane,
                mode="lines",
                line={"shape": "hv", "color": PALETTE[number % len(PALETTE)]},
                stackgroup="executors",
                hovertemplate=f"{lane}: %{{y}} executor(s) from %{{x:.1f}} s<extra></extra>",
            )
        )
    fig.update_xaxes(rangemode="tozero")
    fig.update_yaxes(rangemode="tozero", dtick=1)
    fig.update_layout(
        xaxis_title="seconds since the application started",
        yaxis_title="executors alive",
        height=320,
        margin={"t": 20},
    )
    endings = ", ".join(f"{n} {kind}" for kind, n in (executors.get("endings") or {}).items())
    note = (
        f"{executors.get('total', 0)} executor(s) added in all, at most "
        f"{executors.get('peak_executors', 0)} at once ({executors.get('peak_slots', 0)} "
        f"task slots); ended: {endings or 'none'}"
    )
    share = (executors.get("placement_seconds") or {}).get("bound_share")
    if share is not None:  # unbound: before the plugin bound an executor, or never
        note += f"; {share:.0%} of the executor-seconds bound"
    div = f"{anchor}-executors"
    return Plot(div, "Executors per node over time", figure_div(fig, div), note)


def stage_plot(stages: list[dict], anchor: str) -> Plot | None:
    """Each stage attempt as a bar from its submission to its completion (failed ones red),
    in seconds from the application's start: where its time went."""
    import plotly.graph_objects as go

    timed = [s for s in stages if s["start_s"] is not None and s["duration_s"] is not None]
    if not timed:
        return None
    drawn = sorted(timed, key=lambda s: -s["duration_s"])[:MAX_STAGES]
    drawn.sort(key=lambda s: (s["start_s"], s["stage"], s["attempt"]))
    labels = [f"stage {s['stage']}" + (f".{s['attempt']}" if s["attempt"] else "") for s in drawn]
    fig = go.Figure(
        go.Bar(
            x=[s["duration_s"] for s in drawn],
            base=[s["start_s"] for s in drawn],
            y=labels,
            orientation="h",
            marker_color=[PALETTE[3] if s["failure"] else PALETTE[0] for s in drawn],
            customdata=[[s["start_s"], s["name"][:120], s["tasks"] or 0] for s in drawn],
            hovertemplate="%{y}: %{x:.2f} s from %{customdata[0]:.2f} s<br>%{customdata[1]}"
            "<br>%{customdata[2]} task(s)<extra></extra>",
        )
    )
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_xaxes(rangemode="tozero")  # from the start: the driver's own time shows
    fig.update_layout(
        xaxis_title="seconds since the application started",
        height=min(140 + 22 * len(drawn), 720),
        margin={"t": 20},
    )
    note = (
        f"the longest {len(drawn)} of {len(timed)} stage attempts"
        if len(drawn) < len(timed)
        else ""
    )
    return Plot(f"{anchor}-stages", "Stage times", figure_div(fig, f"{anchor}-stages"), note)


def _drawings(app) -> list[dict]:
    """Each host's topology as the plugin reported it, with the task-running JVMs on it."""
    drawings = []
    for host, data in sorted(app.hosts.items()):
        try:
            topology = from_report(host, data)
        except (ValueError, KeyError, TypeError, AttributeError):  # not one the plugin wrote
            continue
        jvms = tuple(_placed(j, n) for n, j in enumerate(app.jvms) if str(j.latest.host) == host)
        if jvms:
            label = f"{host}: the task-running JVMs' CPUs, as the plugin reported them"
            drawings.append({"label": label, "svg": jvms_svg(topology, jvms)})
    return drawings


def _placed(jvm: ReportedJvm, number: int) -> JvmPlacement:
    """A reported JVM as the drawing's `JvmPlacement`: its CPUs and nodes, bound to a node
    where its reports show one chosen or a bind/preferred policy (sizes are not reported)."""
    executor = str(jvm.latest.executor)
    bound = jvm.bound_nodes
    nodes = jvm.nodes if jvm.nodes is not None else CpuSet()
    return JvmPlacement(
        role="driver" if executor == DRIVER else "executor",
        index=int(executor) if executor.isdigit() else (0 if executor == DRIVER else number),
        cores=0,
        heap=0,
        overhead=0,
        binding=Binding.NONE if bound is None else Binding.NODE,
        cpus=CpuSet.parse(jvm.latest.cpus) if jvm.latest.cpus else CpuSet(),
        nodes=nodes,
        mem_policy=None,
        mem_nodes=bound if bound is not None else CpuSet(),
        host=jvm.latest.host,
    )
