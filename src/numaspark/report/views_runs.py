"""Terminal views (rich) of what was run: the warnings of runs, the lines under ``numaspark
run``, co-scheduling rounds, what a study concludes (scaling fits, HT effectiveness),
``numaspark fit`` and the workloads' catalogue."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from numaspark.decide.readings import readings
from numaspark.experiment.studies import ht_effectiveness
from numaspark.units import human_size


def warning_lines(warnings: list[str]) -> list[str]:
    """Each warning once; many spread warnings become one line that says what to do."""
    spread = [w for w in warnings if "spread" in w]
    others = [w for w in dict.fromkeys(warnings) if w not in spread]
    if len(spread) > 2:
        others.insert(
            0,
            f"{len(spread)} configurations vary by more than 10% between "
            "iterations: run more repetitions (--repeat), larger inputs (--size), "
            "or quiet the machine (numaspark doctor)",
        )
    else:
        others[:0] = spread
    return others


def run_lines(results: list) -> list[str]:
    """Under ``numaspark run``: the last measured run's Spark metrics, readings and where its
    JVMs really ran."""
    # lazy: it brings numpy, which a command that does not need it never loads
    from numaspark.report.metrics import sparkmeasure_lines

    last_ok = next((r for r in reversed(results) if r.ok and not r.spec.warmup), None)
    if last_ok is None:
        return []
    lines = sparkmeasure_lines(last_ok.metrics)
    found = readings(last_ok)
    if found:
        lines += ["", "Readings (last measured run):", *(f"  {line}" for line in found)]
    for e in last_ok.effective_placement:
        lines.append(
            f"effective placement of {e.jvm} (pid {e.pid}"
            + (f", host {e.host}" if e.host else "")
            + f"): CPUs {e.cpus}, memory nodes {e.mems}, policy {e.policy}"
            + (f"; placed by {PLACED_BY[e.placed_by]}" if e.placed_by in PLACED_BY else "")
        )
        lines += [
            f"  its Python {p.role} (pid {p.pid}{', ended' if p.ended else ''}): CPUs "
            f"{p.cpus}, policy {p.policy}, {_pages(p.bytes_per_node)}, "
            f"{p.cpu_s or 0:.1f} s CPU"
            for p in e.python
        ]
    return lines


# who placed an executor on its node, as its record says (readback/plugin_reports.py)
PLACED_BY = {
    "plugin": "the plugin, from inside",
    "cgroup": "its cgroup, before it started (on Kubernetes the kubelet's CPU Manager)",
    "nothing": "nothing: its host is one node",
}


def _pages(bytes_per_node: dict[str, int]) -> str:
    if not bytes_per_node:
        return "no pages read"
    return "pages " + ", ".join(f"node {n} {human_size(b)}" for n, b in bytes_per_node.items())


def cosched_table(rows: list[dict], window_s: float, warmup_s: float) -> Table:
    table = Table(
        title=f"co-scheduled for {window_s:.0f} s (after {warmup_s:.0f} s warm-up)",
        title_justify="left",
    )
    for column in (
        "split",
        "workload",
        "CPUs",
        "completions",
        "median s",
        "switches/s",
        "remote pages",
    ):
        table.add_column(column, justify="left" if column in ("split", "workload") else "right")
    for r in rows:
        remote, median = r["remote_page_share"], r["median_completion_s"]
        switches = r["context_switches_per_s"]
        table.add_row(
            r["split"],
            r["workload"],
            r["cpus"],
            str(r["completions"]),
            "-" if median is None else f"{median:.2f}",
            "-" if switches is None else f"{switches:,.0f}",
            "-" if remote is None else f"{remote:.1%}",
        )
    return table


def fit_views(name: str, found: dict) -> list[RenderableType]:
    """``numaspark fit``: the measured points, both models, the knee, the predictions."""
    rows = Table(title=f"{name}: measured", title_justify="left")
    for column in ("concurrency", "time s", "speedup", "efficiency"):
        rows.add_column(column, justify="right")
    for r in found["points"]:
        rows.add_row(
            f"{r['p']:g}", f"{r['time_s']:.2f}", f"{r['speedup']:.2f}", f"{r['efficiency']:.0%}"
        )
    usl, amdahl = found["models"]["usl"], found["models"]["amdahl"]
    peak = (
        f"peak at {usl['peak_concurrency']:.1f} concurrent tasks"
        if usl["peak_concurrency"]
        else "no peak (kappa = 0)"
    )
    knee = f"{found['knee']:g}" if found["knee"] is not None else "none"
    lines = [
        f"USL: sigma (contention) {usl['sigma']:.4f}, kappa (coherency) {usl['kappa']:.5f}, "
        f"T(1) {usl['t1']:.2f} s, {peak}, fit RMSE {usl['rmse_s']:.2f} s",
        f"Amdahl: serial fraction {amdahl['sigma']:.4f}, T(1) {amdahl['t1']:.2f} s, "
        f"fit RMSE {amdahl['rmse_s']:.2f} s",
        f"knee (last concurrency at >= 80% efficiency): {knee}",
        *(
            f"predicted at {p['p']:g}: USL {p['usl_time_s']:.2f} s, Amdahl "
            f"{p['amdahl_time_s']:.2f} s"
            for p in found["predictions"]
        ),
    ]
    return [rows, Text("\n".join(lines))]


def study_lines(kind: str, configs: list, medians: dict[str, float]) -> list[str]:
    """What a study concludes under its table: the scaling fits, the HT effectiveness."""
    if kind == "scaling":
        return scaling_lines(
            [(c.layout.cores_per_executor, medians[c.label]) for c in configs if c.label in medians]
        )
    if kind == "smt":
        return [smt_line({c.note: medians.get(c.label) for c in configs})]
    return []


def scaling_lines(points: list[tuple[float, float]]) -> list[str]:
    """Under ``study scaling``: speedup and efficiency per concurrency, and the fits."""
    # lazy: it brings numpy and scipy, which a command that does not need it never loads
    from numaspark.decide.scaling import efficiency_table, fit, knee

    if len(points) < 2:
        return ["scaling: fewer than two concurrency levels measured, nothing to fit"]
    lines = [
        f"p={row['p']:g}: speedup {row['speedup']:.2f}, efficiency {row['efficiency']:.0%}"
        for row in efficiency_table(points)
    ]
    amdahl = fit(points, "amdahl")
    lines.append(f"Amdahl serial fraction {amdahl.sigma:.3f}; knee {knee(points)}")
    if len(points) >= 3:
        usl = fit(points, "usl")
        lines.append(
            f"USL sigma {usl.sigma:.4f}, kappa {usl.kappa:.5f}, peak "
            f"{usl.peak if usl.peak else 'none'}"
        )
    return lines


def smt_line(named: dict[str, float | None]) -> str:
    """Under ``study smt``: Awan et al.'s HT effectiveness from the ST n, SMT n, ST 2n medians."""

    st_n = next((v for k, v in named.items() if k.startswith("ST") and v), None)
    smt_n = next((v for k, v in named.items() if k.startswith("SMT") and v), None)
    st_2n = [v for k, v in named.items() if k.startswith("ST") and v][1:]
    if st_n and smt_n and st_2n:
        effectiveness = ht_effectiveness(st_n / smt_n, st_n / st_2n[0])
        return f"HT effectiveness {effectiveness:.2f} (1 = as good as twice the cores)"
    return "HT effectiveness: not computed (needs ST n, SMT n and ST 2n measured)"


def workloads_table(workloads: list) -> Table:
    table = Table(title="Workloads", title_justify="left", show_lines=True)
    for column in ("name", "category", "API", "parameters", "sizes (rows)", "description"):
        table.add_column(column)
    for w in workloads:
        sizes = "\n".join(f"{k} {v:,}" for k, v in w.profiles.items())
        if w.streaming:
            sizes = f"live {w.stream}\n--rate events/s"
        params = "\n".join(f"{k}={v}" for k, v in w.params.items()) or "-"
        table.add_row(w.name, w.category, w.api, params, sizes, w.description)
    return table
