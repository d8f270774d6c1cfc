"""The HTML report: one self-contained file (plotly.js inline, no network) for a results dir.

Sections appear when the results have what they need: the environment; the
topology with each configuration's placement drawn on it; the runs; the
configurations with their classification; the layout grid as a heat map;
bindings compared with error bars; co-scheduling completions; speedup with the
fitted model and knee; CPU and per-node memory over time for each
application; the advice; links to flame graphs. Rendered with jinja2, by the
template that the report of event logs (report/applications.py) renders too.
"""

from __future__ import annotations

import html
import json
import os
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from numaspark import __version__, records
from numaspark.decide.advise import Severity, advise_results
from numaspark.decide.classify import classify
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.result import (
    RunResult,
    RunSpec,
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
from numaspark.placement import Binding, JvmPlacement, Placement
from numaspark.topology import Topology, load
from numaspark.topology.cpuset import CpuSet
from numaspark.topology.model import Core, NumaNode, Package

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
MAX_TIME_SERIES = 40  # applications with a time series in the report (the latest ones)


@dataclass
class Plot:
    id: str
    title: str
    html: str
    note: str = ""


@dataclass
class ConfigRow:
    key: str
    label: str
    spec: RunSpec
    walls: list[float]
    classes: list[str]

    @property
    def median(self) -> float:
        return statistics.median(self.walls)


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


def _conf_text(spec: RunSpec) -> str:
    conf = {k: v for k, v in spec.own_conf.items() if k != "spark.master"}
    params = spec.params
    parts = [f"{k.removeprefix('spark.')}={v}" for k, v in sorted(conf.items())]
    parts += [f"{k}={v}" for k, v in sorted(params.items())]
    return ", ".join(parts)


def _div(fig, div_id: str) -> str:
    # "plot-" keeps the div's id apart from its section's (Plotly draws into the first match)
    return fig.to_html(
        full_html=False, include_plotlyjs=False, div_id=f"plot-{div_id}", config=PLOT_CONFIG
    )


def _dropdown(fig, groups: list[tuple[str, list[int]]], total: int) -> None:
    """A menu that shows one group of traces at a time."""
    buttons = []
    for label, traces in groups:
        visible = [i in traces for i in range(total)]
        buttons.append({"label": label[:80], "method": "update", "args": [{"visible": visible}]})
    if len(groups) > 1:
        fig.update_layout(
            updatemenus=[
                {"buttons": buttons, "x": 0, "xanchor": "left", "y": 1.18, "yanchor": "top"}
            ]
        )


def layout_heatmap(configs: list[ConfigRow]) -> Plot | None:
    """Median wall time over executors x cores per executor, per binding and setting."""
    import plotly.graph_objects as go

    groups: dict[str, dict[tuple[int, int], ConfigRow]] = {}
    for c in configs:
        spec = c.spec
        if spec.mode != "standalone" or not spec.executors:
            continue
        name = f"bind={spec.binding} {_conf_text(spec)}".strip()
        groups.setdefault(name, {})[(spec.executors, spec.cores_per_executor or 0)] = c
    groups = {k: v for k, v in groups.items() if len(v) >= 2}
    if not groups:
        return None
    fig = go.Figure()
    menu = []
    for number, (name, cells) in enumerate(groups.items()):
        executors = sorted({e for e, _ in cells})
        cores = sorted({c for _, c in cells})
        z = [[cells[(e, c)].median if (e, c) in cells else None for c in cores] for e in executors]
        text = [
            [
                (
                    f"{cells[(e, c)].median:.2f} s<br>{'; '.join(cells[(e, c)].classes)}"
                    if (e, c) in cells
                    else "cannot run"
                )
                for c in cores
            ]
            for e in executors
        ]
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=[str(c) for c in cores],
                y=[str(e) for e in executors],
                text=text,
                texttemplate="%{text}",
                colorscale="Viridis",
                reversescale=True,
                visible=number == 0,
                name=name,
                colorbar={"title": "median s"},
                hovertemplate="%{y} executors x %{x} cores: %{text}<extra></extra>",
            )
        )
        menu.append((name, [number]))
    _dropdown(fig, menu, len(groups))
    fig.update_layout(
        xaxis_title="cores per executor", yaxis_title="executors", height=420, margin={"t": 70}
    )
    note = "" if len(groups) == 1 else f"{len(groups)} groups: pick one in the menu"
    return Plot(
        "layout-grid",
        "Layout grid: median wall time and classification",
        _div(fig, "layout-grid"),
        note,
    )


def binding_bars(configs: list[ConfigRow]) -> Plot | None:
    """Each layout and setting under every binding measured: median with min-max bars."""
    import plotly.graph_objects as go

    groups: dict[str, dict[str, ConfigRow]] = {}
    for c in configs:
        spec = c.spec
        layout = (
            f"{spec.mode} {spec.executors or 1}x"
            f"{spec.cores_per_executor or 'all'} {_conf_text(spec)}"
        ).strip()
        note = c.label.split(" ")[0] if c.label[:1].isdigit() else ""  # a study's nU / nB
        key = f"{spec.binding}{' mem=' + spec.mem_policy if spec.mem_policy else ''}"
        groups.setdefault(layout, {})[key + (f" ({note})" if note else "")] = c
    groups = {k: v for k, v in groups.items() if len(v) >= 2}
    if not groups:
        return None
    fig = go.Figure()
    bindings = sorted({b for v in groups.values() for b in v})
    layouts = list(groups)
    for number, binding in enumerate(bindings):
        rows = [groups[g].get(binding) for g in layouts]
        y = [r.median if r else None for r in rows]
        fig.add_trace(
            go.Bar(
                name=binding,
                x=layouts,
                y=y,
                marker_color=PALETTE[number % len(PALETTE)],
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [max(r.walls) - r.median if r else 0 for r in rows],
                    "arrayminus": [r.median - min(r.walls) if r else 0 for r in rows],
                },
            )
        )
    fig.update_layout(
        barmode="group",
        yaxis_title="wall time per iteration, s (median, min-max)",
        height=460,
        legend_title="binding",
    )
    return Plot("bindings", "Bindings compared", _div(fig, "bindings"))


def speedup_plot(configs: list[ConfigRow]) -> Plot | None:
    """Local-mode series over the task count p: speedup, Amdahl (and USL) fits, the knee."""
    import plotly.graph_objects as go

    # lazy: it brings numpy and scipy, which a command that does not need it never loads
    from numaspark.decide.scaling import efficiency_table, fit, knee

    series: dict[str, dict[int, float]] = {}
    for c in configs:
        spec = c.spec
        if spec.mode != "local" or not spec.cores_per_executor:
            continue
        name = f"{spec.workload} bind={spec.binding} {_conf_text(spec)}".strip()
        series.setdefault(name, {})[int(spec.cores_per_executor)] = c.median
    series = {k: v for k, v in series.items() if len(v) >= 2}
    if not series:
        return None
    fig = go.Figure()
    notes = []
    for number, (name, by_p) in enumerate(series.items()):
        colour = PALETTE[number % len(PALETTE)]
        points = sorted(by_p.items())
        table = efficiency_table([(float(p), t) for p, t in points])
        fig.add_trace(
            go.Scatter(
                x=[r["p"] for r in table],
                y=[r["speedup"] for r in table],
                mode="markers",
                name=f"{name} (measured)",
                marker={"color": colour, "size": 10},
            )
        )
        model = fit([(float(p), t) for p, t in points], "usl" if len(points) >= 3 else "amdahl")
        grid = [1 + i * (points[-1][0] - 1) / 50 for i in range(51)]
        fig.add_trace(
            go.Scatter(
                x=grid,
                y=[model.speedup(p) for p in grid],
                mode="lines",
                name=f"{name} ({model.model}, sigma {model.sigma:.3f})",
                line={"color": colour, "dash": "dash"},
            )
        )
        found = knee([(float(p), t) for p, t in points])
        if found is not None:
            fig.add_vline(x=found, line_dash="dot", line_color=colour)
            notes.append(f"{name}: knee at p={found:g}")
    top = max(max(v) for v in series.values())
    fig.add_trace(
        go.Scatter(
            x=[1, top], y=[1, top], mode="lines", name="linear", line={"color": "#999", "width": 1}
        )
    )
    fig.update_layout(xaxis_title="concurrent tasks p", yaxis_title="speedup T(1)/T(p)", height=440)
    return Plot(
        "speedup",
        "Speedup, fitted model and knee",
        _div(fig, "speedup"),
        "; ".join(notes) or "no knee: every p kept 80% efficiency",
    )


def cosched_plot(rows: list[dict]) -> Plot | None:
    import plotly.graph_objects as go

    if not rows:
        return None
    fig = go.Figure()
    for number, bound in enumerate((True, False)):
        chosen = [r for r in rows if bool(r.get("bound")) is bound]
        if chosen:
            fig.add_trace(
                go.Bar(
                    name="bound" if bound else "unbound",
                    x=[f"{r['workload']} ({r['split']})" for r in chosen],
                    y=[r["completions"] for r in chosen],
                    marker_color=PALETTE[number],
                    text=[r["completions"] for r in chosen],
                    textposition="auto",
                )
            )
    fig.update_layout(barmode="group", yaxis_title="completions in the window", height=420)
    return Plot("cosched", "Co-scheduling: completions per workload", _div(fig, "cosched"))


def _series(path: Path) -> tuple[list[float], list[float], dict[str, tuple[list, list]]] | None:
    """Machine CPU utilisation, and resident bytes per NUMA node over time: the JVMs', and
    their Python workers' (``node N Python``) where they had any."""
    try:
        records = {r["collector"]: r for r in read_json_lines(path)}
    except (OSError, ValueError, KeyError):
        return None
    samples = (records.get("os") or {}).get("samples") or []
    if len(samples) < 2:
        return None
    start = samples[0]["t"]
    times, cpu = [], []
    for before, after in zip(samples, samples[1:], strict=False):
        busy = sum(
            a["busy"] - b["busy"] for a, b in zip(after["cpus"], before["cpus"], strict=False)
        )
        total = sum(
            a["total"] - b["total"] for a, b in zip(after["cpus"], before["cpus"], strict=False)
        )
        times.append(after["t"] - start)
        cpu.append(busy / total if total > 0 else 0.0)
    nodes: dict[str, list[float]] = {}
    numa = (records.get("numa") or {}).get("samples") or []
    numa_times = [s["t"] - start for s in numa]
    for index, sample in enumerate(numa):
        for jvm in (sample.get("jvms") or {}).values():
            for node, nbytes in (jvm.get("bytes_per_node") or {}).items():
                nodes.setdefault(f"{node} JVM", [0.0] * len(numa))[index] += nbytes
            for node, nbytes in (jvm.get("python_bytes_per_node") or {}).items():
                nodes.setdefault(f"{node} Python", [0.0] * len(numa))[index] += nbytes
    return times, cpu, {node: (numa_times, values) for node, values in nodes.items()}


def time_series_plot(results: list[RunResult]) -> Plot | None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    apps = _applications_sampled(results)
    chosen = list(apps.values())[-MAX_TIME_SERIES:]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=(
            "CPU utilisation (machine)",
            "JVM and Python resident memory per NUMA node",
        ),
    )
    menu, count = [], 0
    for number, (label, path) in enumerate(chosen):
        found = _series(path)
        if found is None:
            continue
        scatters = _application_scatters(number, *found, visible=not menu)
        for row, scatter in scatters:
            fig.add_trace(go.Scatter(**scatter), row=row, col=1)
        menu.append((label, list(range(count, count + len(scatters)))))
        count += len(scatters)
    if not menu:
        return None
    _dropdown(fig, menu, count)
    fig.update_yaxes(title_text="busy share", range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(title_text="MiB", row=2, col=1)
    fig.update_xaxes(title_text="seconds since the application started", row=2, col=1)
    fig.update_layout(height=560, margin={"t": 90})
    note = f"{len(menu)} application(s): pick one in the menu" + (
        f" (the latest {MAX_TIME_SERIES} of {len(apps)})" if len(apps) > len(chosen) else ""
    )
    return Plot("timeseries", "CPU and per-node memory over time", _div(fig, "timeseries"), note)


def _applications_sampled(results: list[RunResult]) -> dict[str, tuple[str, Path]]:
    """Each application whose collectors' samples are still there, once however many of
    its runs name them: its label and the samples' file, by that file."""
    apps: dict[str, tuple[str, Path]] = {}
    for r in results:
        path = r.artifacts.collector_samples
        if path and Path(path).exists():
            apps.setdefault(path, (f"{r.spec.title} ({r.app_id})", Path(path)))
    return apps


def _application_scatters(
    number: int,
    times: list[float],
    cpu: list[float],
    nodes: dict[str, tuple[list, list]],
    visible: bool,
) -> list[tuple[int, dict]]:
    """One application's traces as the plot's rows and their Scatter arguments: its CPU
    utilisation (row 1) and its memory per node, stacked (row 2)."""
    cpu_line = {
        "x": times,
        "y": cpu,
        "mode": "lines",
        "name": "CPU",
        "visible": visible,
        "line": {"color": PALETTE[0]},
    }
    scatters = [(1, cpu_line)]
    for index, (node, (xs, ys)) in enumerate(sorted(nodes.items())):
        memory = {
            "x": xs,
            "y": [v / 2**20 for v in ys],
            "mode": "lines",
            "name": f"node {node}",
            "visible": visible,
            "stackgroup": f"m{number}",
            "line": {"color": PALETTE[(index + 1) % len(PALETTE)]},
        }
        scatters.append((2, memory))
    return scatters


def topology_svg(topology: Topology, placement: Placement) -> str:
    """Packages, NUMA nodes, cores and hardware threads; each JVM's CPUs in its colour."""
    # the standalone driver runs no task: the executors only
    return jvms_svg(topology, placement.executors)


def jvms_svg(topology: Topology, jvms: tuple[JvmPlacement, ...]) -> str:
    """`topology_svg` of these JVMs (a placement's, or those a log's reports describe)."""
    drawing = _TopologyDrawing.of(topology, jvms)
    parts, y, width = [], 10, 0
    for package in topology.packages or [Package(None, 0, CpuSet(), CpuSet(), None)]:
        package_parts, package_w, nodes_h = drawing.package(package, y)
        parts += package_parts
        width = max(width, package_w + 20)
        y += 26 + nodes_h + _PAD + 16
    legend_y = y + 8
    parts += drawing.legend(legend_y)
    height = legend_y + len(drawing.jvms) * 20 + 10
    # packages first so nodes draw over them
    packages = [p for p in parts if 'class="package"' in p]
    others = [p for p in parts if 'class="package"' not in p]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(width, 520)}" height="{height}" '
        f'class="topology">{"".join(packages + others)}</svg>'
    )


# the topology drawing's measures in pixels: cores in a row of a node, a hardware thread's
# width, a core's height, and the padding inside a box
_CORES_PER_ROW, _PU_W, _CORE_H, _PAD = 8, 34, 34, 10


@dataclass(frozen=True)
class _TopologyDrawing:
    """What the SVG of one placement on one topology draws from: each CPU's JVM, with
    bound JVMs claiming a CPU before unbound ones that may run there too."""

    topology: Topology
    jvms: tuple[JvmPlacement, ...]
    bound: set[int]  # the numbers of the JVMs that are bound
    owner: dict[int, int]  # CPU to the number of the JVM drawn on it
    cores_by_node: dict[int | None, list[Core]]

    @classmethod
    def of(cls, topology: Topology, jvms: tuple[JvmPlacement, ...]) -> _TopologyDrawing:
        bound = {number for number, jvm in enumerate(jvms) if jvm.binding is not Binding.NONE}
        owner: dict[int, int] = {}
        for number in sorted(range(len(jvms)), key=lambda n: n not in bound):  # bound first
            for cpu in jvms[number].cpus:
                owner.setdefault(cpu, number)
        cores_by_node: dict[int | None, list[Core]] = {}
        for core in topology.cores:
            cores_by_node.setdefault(core.node, []).append(core)
        return cls(topology, jvms, bound, owner, cores_by_node)

    def package(self, package: Package, top: int) -> tuple[list[str], int, int]:
        """A package's box at height ``top`` with its nodes in a row inside it; its parts,
        its width and the height of its nodes' row."""
        on_package = [n for n in self.topology.nodes if n.os_index in package.nodes]
        parts, x, row_h = [], 10 + _PAD, 0
        for node in on_package or self.topology.nodes:  # a package without nodes: all of them
            node_parts, node_w, node_h = self.node(node, x, top + 26)
            parts += node_parts
            x += node_w + _PAD
            row_h = max(row_h, node_h)
        package_w = x - 10
        model = package.cpu_model or ""
        parts.append(
            f'<rect x="10" y="{top}" width="{package_w}" height="{row_h + 26 + _PAD}" '
            f'rx="8" class="package"/><text x="18" y="{top + 17}" class="label">'
            f"Package L#{package.logical_index} {html.escape(model)}</text>"
        )
        return parts, package_w, row_h

    def node(self, node: NumaNode, x: int, y: int) -> tuple[list[str], int, int]:
        """A NUMA node's box with its cores in rows; its parts, its width and its height."""
        cores = self.cores_by_node.get(node.os_index, [])
        ways = max((len(c.cpus) for c in cores), default=1)
        core_w = ways * _PU_W + 8
        columns = min(_CORES_PER_ROW, max(1, len(cores)))
        title = _node_title(self.topology, node)
        node_w = max(columns * (core_w + 6) + 2 * _PAD, 8 * len(title) + 16)
        node_h = 34 + ((len(cores) + _CORES_PER_ROW - 1) // _CORES_PER_ROW) * (_CORE_H + 6) + _PAD
        parts = [
            f'<rect x="{x}" y="{y}" width="{node_w}" height="{node_h}" rx="6" '
            f'class="node"/><text x="{x + 8}" y="{y + 18}" class="label">'
            f"{html.escape(title)}</text>"
        ]
        for index, core in enumerate(cores):
            cx = x + _PAD + (index % _CORES_PER_ROW) * (core_w + 6)
            cy = y + 28 + (index // _CORES_PER_ROW) * (_CORE_H + 6)
            parts.append(
                f'<rect x="{cx}" y="{cy}" width="{core_w}" height="{_CORE_H}" '
                f'rx="3" class="core"><title>core L#{core.logical_index}</title></rect>'
            )
            parts += (self.pu(cpu, cx + 4 + k * _PU_W, cy) for k, cpu in enumerate(core.cpus))
        return parts, node_w, node_h

    def pu(self, cpu: int, x: int, core_y: int) -> str:
        """A hardware thread in its JVM's colour (dashed: an unbound JVM may run there), white
        where it is free, grey where this process may not use it."""
        allowed = cpu in self.topology.allowed_cpus
        who = self.owner.get(cpu)
        fill = (
            PALETTE[who % len(PALETTE)]
            if who is not None
            else ("#ffffff" if allowed else "#d9d9d9")
        )
        dash = "" if who is None or who in self.bound else ' stroke-dasharray="3,2"'
        tip = (
            f"P#{cpu}: {self.jvms[who].role} {self.jvms[who].index}"
            if who is not None
            else f"P#{cpu}: {'free' if allowed else 'not allowed'}"
        )
        return (
            f'<rect x="{x}" y="{core_y + 4}" width="{_PU_W - 4}" '
            f'height="{_CORE_H - 8}" fill="{fill}" class="pu"{dash}>'
            f"<title>{html.escape(tip)}</title></rect>"
            f'<text x="{x + (_PU_W - 4) / 2}" y="{core_y + _CORE_H / 2 + 4}" '
            f'class="pu-label">{cpu}</text>'
        )

    def legend(self, top: int) -> list[str]:
        """One line per JVM: its colour, its CPUs, nodes and binding."""
        parts = []
        for number, jvm in enumerate(self.jvms):
            text = (
                f"{jvm.role} {jvm.index}: CPUs {jvm.cpus}, nodes "
                f"{jvm.nodes}, {jvm.binding.value}"
                + ("" if number in self.bound else " (unbound: may run on any allowed CPU)")
            )
            parts.append(
                f'<rect x="12" y="{top + number * 20}" width="14" height="14" '
                f'fill="{PALETTE[number % len(PALETTE)]}"/><text x="32" '
                f'y="{top + number * 20 + 12}" class="legend">{html.escape(text)}</text>'
            )
        return parts


def _node_title(topology: Topology, node: NumaNode) -> str:
    memory = node.memory
    return (
        f"NUMA node P#{node.os_index}"
        + (f" · {memory / 2**30:.1f} GiB" if memory else "")
        + ("" if node.has_cpus else " · memory only")
        + _devices_on(topology, node.os_index)
    )


def _devices_on(topology: Topology, node: int) -> str:
    """A node's devices in its title, counted by kind (" · 8 gpu, 2 nic"); names in the JSON."""
    kinds = Counter(d.kind for d in topology.devices if d.node == node and d.kind != "display")
    return (" · " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))) if kinds else ""


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
