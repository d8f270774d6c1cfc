"""The HTML report's plotly figures: the layout grid as a heat map, bindings compared with
error bars, speedup with the fitted model and knee, co-scheduling completions, and CPU and
per-node memory over time for each application; each as a `Plot` whose HTML the page
(report/html.py) places in its section. plotly is imported inside each figure's function."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from numaspark.experiment.result import RunResult, RunSpec
from numaspark.jsonlines import read_json_lines

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


def _conf_text(spec: RunSpec) -> str:
    conf = {k: v for k, v in spec.own_conf.items() if k != "spark.master"}
    params = spec.params
    parts = [f"{k.removeprefix('spark.')}={v}" for k, v in sorted(conf.items())]
    parts += [f"{k}={v}" for k, v in sorted(params.items())]
    return ", ".join(parts)


def figure_div(fig, div_id: str) -> str:
    """A figure's HTML for a section of the page (plotly.js left out: the page has it once)."""
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
        figure_div(fig, "layout-grid"),
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
    return Plot("bindings", "Bindings compared", figure_div(fig, "bindings"))


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
        figure_div(fig, "speedup"),
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
    return Plot("cosched", "Co-scheduling: completions per workload", figure_div(fig, "cosched"))


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
    return Plot(
        "timeseries", "CPU and per-node memory over time", figure_div(fig, "timeseries"), note
    )


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
