"""Terminal views (rich) of what every command prints: the topology, a placement and its
settings, runs and studies, advice, classification, the tuner's trials, fits, the doctor's
checks and more; one function per view, none of them starts work."""

from __future__ import annotations

import json

from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from numaspark.decide.readings import readings
from numaspark.decide.thresholds import Severity
from numaspark.experiment.studies import ht_effectiveness
from numaspark.placement import Placement, bind_argv, spark_conf, spark_defaults_text
from numaspark.placement.plugin import SLOTS_ENV
from numaspark.placement.resources import resource_env
from numaspark.probe import KERNELS
from numaspark.topology import Topology
from numaspark.topology.sysfs import SOURCE as SYSFS_SOURCE
from numaspark.units import human_size, jvm_size


def topology_view(topology: Topology) -> RenderableType:
    """The machine as a tree (package > node > L3 > cores) plus allowed sets and distances."""
    title = Text.assemble(
        ("Topology ", "bold"),
        (topology.source, "cyan"),
        f"  {topology.cpu_model or ''}",
        f"  fingerprint {topology.fingerprint}",
    )
    tree = Tree(title)
    summary = (
        f"{len(topology.packages)} package(s), {len(topology.nodes)} NUMA node(s) "
        f"({sum(1 for n in topology.nodes if n.has_cpus)} with CPUs), {len(topology.l3)} L3 "
        f"domain(s), {len(topology.cores)} cores, {len(topology.pus)} PUs"
        f"{' (SMT)' if topology.smt else ''}, memory {human_size(topology.total_memory)}"
    )
    tree.add(summary)
    if topology.source == SYSFS_SOURCE:
        tree.add("read from the kernel's sysfs: hwloc's lstopo-no-graphics is not on the PATH")
    elif topology.source == "this machine" and topology.hwloc_version:
        tree.add(f"read by hwloc {topology.hwloc_version} (lstopo-no-graphics on the PATH)")
    for package in topology.packages:
        branch = tree.add(
            f"[bold]Package L#{package.logical_index}[/] (P#{package.os_index}) CPUs {package.cpus}"
        )
        for node in topology.nodes:
            if node.os_index not in package.nodes:
                continue
            branch.add(_node_line(topology, node)).children.extend(
                Tree(_core_line(topology, core))
                for core in topology.cores
                if core.package == package.logical_index and core.node == node.os_index
            )
    floating = [
        n for n in topology.nodes if not any(n.os_index in p.nodes for p in topology.packages)
    ]
    for node in floating:
        tree.add(_node_line(topology, node))
    allowed = tree.add("[bold]Allowed[/] (cgroup / cpuset / affinity)")
    allowed.add(f"CPUs {topology.allowed_cpus or '-'} of {topology.complete_cpus}")
    allowed.add(f"NUMA nodes {topology.allowed_nodes or '-'}")
    if topology.offline_cpus:
        allowed.add(f"[yellow]offline or absent CPUs {topology.offline_cpus}[/]")
    if topology.cgroup is not None:
        quota = topology.cgroup.cpu_quota
        limit = topology.cgroup.memory_limit
        allowed.add(
            f"cgroup v{topology.cgroup.version}: CPU quota "
            f"{'none' if quota is None else f'{quota:g} CPUs'}, memory limit "
            f"{'none' if limit is None else human_size(limit)}"
        )
    parts: list[RenderableType] = [tree]
    if topology.distances is not None:
        parts.append(distance_table(topology))
    if topology.devices:
        parts.append(device_table(topology))
    return Group(*parts)


def device_table(topology: Topology) -> Table:
    """The PCI devices that matter to Spark (GPUs, NICs, NVMe drives), node by node."""
    table = Table(title="Devices (PCI), by the NUMA node they hang off", title_justify="left")
    for column in ("node", "kind", "name", "PCI bus id", "class", "vendor:device", "OS devices"):
        table.add_column(column, no_wrap=column != "OS devices")
    by_node = sorted(topology.devices, key=lambda d: (d.node is None, d.node or 0, d.pci_busid))
    for device in by_node:
        table.add_row(
            "none known" if device.node is None else str(device.node),
            device.kind,
            device.name,
            device.pci_busid,
            device.pci_class,
            device.pci_id,
            " ".join(device.names) or "-",
        )
    return table


def _node_line(topology: Topology, node) -> str:
    kind = f"({node.subtype}) " if node.subtype else ""
    cpus = f"CPUs {node.cpus}" if node.has_cpus else "[magenta]memory only[/]"
    flag = "" if node.allowed else " [red]not allowed[/]"
    return (
        f"[bold]NUMANode L#{node.logical_index}[/] {kind}P#{node.os_index} "
        f"{human_size(node.memory)}  {cpus}{flag}"
    )


def _core_line(topology: Topology, core) -> str:
    pus = " ".join(
        f"P#{cpu}" if cpu in topology.allowed_cpus else f"[dim]P#{cpu}(disallowed)[/]"
        for cpu in (topology.pus[i].os_index for i in _pu_logical(topology, core))
    )
    l3 = f" L3#{core.l3}" if core.l3 is not None else ""
    return f"Core L#{core.logical_index}{l3}: {pus}"


def _pu_logical(topology: Topology, core) -> list[int]:
    return [p.logical_index for p in topology.pus if p.core == core.logical_index]


def distance_table(topology: Topology) -> Table:
    table = Table(title="NUMA distances (relative latency, 10 = local)", title_justify="left")
    table.add_column("node")
    for node in topology.distance_nodes:
        table.add_column(str(node), justify="right")
    for node, row in zip(topology.distance_nodes, topology.distances or (), strict=False):
        table.add_row(str(node), *(str(v) for v in row))
    return table


def placement_view(placement: Placement, manager: str | None = None) -> RenderableType:
    """The plan as a table, the numactl prefix of each JVM, the Spark conf and the notes.
    ``manager``: the cluster manager that starts the executors (YARN, Kubernetes), named in
    the title instead of the mode."""
    layout = placement.layout
    policy = placement.mem_policy.value if placement.mem_policy else "default"
    first = placement.executors[0]
    width = (
        f"{first.cores // layout.threads_per_core} cores x {layout.threads_per_core} "
        f"threads per core ({first.cores} task slots)"
        if layout.threads_per_core
        else f"{first.cores} cores"
    )
    table = Table(
        title=(
            f"Placement: {len(placement.executors)} executor(s) x {width}, "
            f"{f'on {manager}' if manager else f'{layout.mode.value} mode'}, "
            f"bind {placement.binding.value}, memory {policy}"
        ),
        title_justify="left",
    )
    with_devices = any(j.devices for j in placement.jvms)
    columns = ("JVM", "node(s)", "CPUs", "slots", "heap", "launch prefix")
    for column in columns + (("devices",) if with_devices else ()):
        table.add_column(column, no_wrap=column in ("JVM", "heap"))
    for jvm in placement.jvms:
        prefix = " ".join(bind_argv(jvm)) or "[dim](unbound)[/]"
        table.add_row(
            jvm.name,
            str(jvm.nodes),
            str(jvm.cpus),
            str(jvm.cores) if jvm.runs_tasks else "-",
            jvm_size(jvm.heap),
            prefix,
            *((" ".join(d.name for d in jvm.devices) or "-",) if with_devices else ()),
        )
    conf = Table(title="Spark configuration (spark-defaults)", title_justify="left", box=None)
    conf.add_column("key", style="cyan")
    conf.add_column("value")
    for key, value in spark_conf(placement).items():
        conf.add_row(key, value)
    parts: list[RenderableType] = [table, conf]
    if any(j.slots for j in placement.executors):
        parts.append(Text("\n".join(_pinning_lines(placement)), style="green"))
    if with_devices:
        parts.append(Text("\n".join(_device_lines(placement)), style="green"))
    if placement.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in placement.notes), style="yellow"))
    return Group(*parts)


def _pinning_lines(placement: Placement) -> list[str]:
    """Core and pu binding: each executor's task slots, as the affinity plugin takes them."""
    layout = placement.layout
    pinned = [j for j in placement.executors if j.slots]
    unit = "core" if placement.binding.value == "core" else "hardware thread (one per core first)"
    if layout.threads_per_core and placement.binding.value == "core":
        unit = f"core, {layout.threads_per_core} tasks sharing its threads"
    lines = [f"task pinning (affinity plugin): each running task on its own {unit}"]
    lines += [f"  {j.name}: {SLOTS_ENV}={';'.join(str(s) for s in j.slots)}" for j in pinned]
    if layout.threads_per_core:  # which hardware threads of each of its cores it runs on
        lines += [
            f"  {j.name} owns {len(set(j.slots))} cores, runs on hardware threads "
            + " | ".join(str(c) for c in dict.fromkeys(j.slots))
            for j in pinned
        ]
    return lines


def _device_lines(placement: Placement) -> list[str]:
    """Each executor's devices by PCI bus id, and the addresses its worker is handed for
    Spark's scheduler (the discovery script prints them)."""
    lines = ["devices: the addresses each executor's worker is handed (discovery script)"]
    for jvm in placement.executors:
        env = " ".join(f"{k}={v}" for k, v in resource_env(jvm).items())
        held = ", ".join(
            d.pci_busid if d.name == d.pci_busid else f"{d.name} {d.pci_busid}" for d in jvm.devices
        )
        lines.append(f"  {jvm.name}: {env} ({held})")
    return lines


def hosts_view(plans: list, driver: str) -> RenderableType:
    """``plan --hosts``: each host's plan under its name, address and topology fingerprint."""
    parts: list[RenderableType] = [Text(f"driver: this machine, reached at {driver}")]
    for found in plans:
        parts.append(
            Text.assemble(
                (f"\nhost {found.host.name}", "bold"),
                f" ({found.host.address}), topology {found.topology.fingerprint}",
            )
        )
        parts.append(placement_view(found.placement))
    return Group(*parts)


def spark_defaults_fragment(conf: dict[str, str]) -> RenderableType:
    """``plan --target standalone``: lines to paste into a standing cluster's
    spark-defaults.conf (the jar must be at the class paths' path on every host)."""
    text = (
        "# numaspark: the affinity plugin, for a standalone cluster numaspark did not start;\n"
        f"# copy {conf.get('spark.executor.extraClassPath', 'the jar')} to the same path on "
        "every worker host\n" + spark_defaults_text(conf)
    )
    return Text(text)  # printed with soft_wrap: pasted whole, never wrapped


def settings_view(title: str, sections: dict[str, dict[str, object]]) -> RenderableType:
    parts: list[RenderableType] = []
    for name, values in sections.items():
        table = Table(title=f"{title}: {name}", title_justify="left", box=None)
        table.add_column("key", style="cyan")
        table.add_column("value")
        for key, value in values.items():
            # the kubelet's maps and lists, and the pod template, as their JSON: one line each
            table.add_row(key, value if isinstance(value, str) else json.dumps(value))
        parts.append(table)
    return Group(*parts)


def launch_view(record: dict) -> Table:
    """One row per launched process: planned vs effective placement, where its pages were."""
    table = Table(title="Launched processes: planned, effective, pages per node")
    for column in (
        "process",
        "planned CPUs / memory",
        "effective CPUs / policy",
        "pages per node",
        "memory",
        "status",
    ):
        table.add_column(column)
    for entry in record["processes"]:
        planned = entry["planned"]
        mem = planned["mem_policy"] or "kernel default"
        if planned["mem_policy"]:
            mem += f":{planned['mem_nodes']}"
        effective = entry.get("effective")
        seen = f"{effective['cpus']} / {effective['policy']}" if effective else "(not read)"
        pages = entry.get("pages") or {}
        shares = ", ".join(
            f"N{node} {human_size(size)} ({pages['share_per_node'].get(node, 0):.0%})"
            for node, size in pages.get("bytes_per_node", {}).items()
        )
        problems = "; ".join(entry.get("problems", []))
        status = entry["status"] + (f"\n[red]{problems}[/]" if problems else "")
        table.add_row(
            entry["name"],
            f"{planned['cpus']} / {mem}",
            seen,
            shares or "-",
            entry.get("memory", "-"),
            status,
        )
    return table


# --- what the commands print (cli/commands.py keeps the options and calls these) --------------------


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
            f"effective placement of {e.jvm} (pid {e.pid}): CPUs {e.cpus}, memory "
            f"nodes {e.mems}, policy {e.policy}"
        )
        lines += [
            f"  its Python {p.role} (pid {p.pid}{', ended' if p.ended else ''}): CPUs "
            f"{p.cpus}, policy {p.policy}, {_pages(p.bytes_per_node)}, "
            f"{p.cpu_s or 0:.1f} s CPU"
            for p in e.python
        ]
    return lines


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


def whatif_table(app_id: str, measured_s: float, predictions: list) -> Table:
    table = Table(title=f"{app_id}: measured {measured_s:.1f} s", title_justify="left")
    for column in ("cores", "predicted s", "utilisation", "critical path s", "driver only s"):
        table.add_column(column, justify="right")
    for p in predictions:
        table.add_row(
            str(p.cores),
            f"{p.time_s:.1f}",
            f"{p.utilisation:.0%}",
            f"{p.critical_path_s:.1f}",
            f"{p.driver_s:.1f}",
        )
    return table


def classification_table(found, directory: object) -> Table:
    table = Table(
        title=f"{directory}: configurations by what explains their time", title_justify="left"
    )
    for column in ("configuration", "runs", "median s", "vs best", "group", "evidence"):
        table.add_column(
            column, justify="right" if column in ("runs", "median s", "vs best") else "left"
        )
    best = found.configs[0].wall_s
    for c in found.configs:
        for number, label in enumerate(c.labels):
            first = number == 0
            table.add_row(
                c.label if first else "",
                str(c.runs) if first else "",
                f"{c.wall_s:.2f}" if first else "",
                f"{c.wall_s / best - 1:+.0%}" if first else "",
                label.text,
                _evidence_text(label.evidence),
            )
    return table


def _evidence_text(evidence: dict) -> str:
    parts = []
    for name, value in evidence.items():
        if isinstance(value, dict) and "value" in value:
            parts.append(f"{name} {_fmt(value['value'])} (best {_fmt(value['best'])})")
        elif isinstance(value, list):
            parts.append(f"{name}: {', '.join(map(str, value))}")
        else:
            parts.append(f"{name} {_fmt(value)}")
    return "; ".join(parts)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return "-" if value is None else str(value)


SEVERITY_COLOURS = {
    Severity.NONE: "green",
    Severity.LOW: "cyan",
    Severity.MODERATE: "yellow",
    Severity.SEVERE: "red",
    Severity.CRITICAL: "bold red",
}


def advice_lines(advices: list, show_all: bool) -> list[str]:
    """The findings of each advice with their severity colour, recommendation and command."""

    colours = SEVERITY_COLOURS
    lines = []
    for advice in advices:
        lines.append(f"[bold]{advice.subject}[/]: worst {advice.worst.word}")
        for f in advice.findings:
            if f.severity is Severity.NONE and not show_all:
                continue
            lines.append(f"  [{colours[f.severity]}]{f.severity.word:>8}[/] {f.rule}: {f.finding}")
            if f.recommendation:
                lines.append(f"           -> {f.recommendation}")
            if f.command:
                lines.append(f"           $ {f.command}")
            if f.check:
                lines.append(f"           ! {f.check}")
        quiet = [f.rule for f in advice.findings if f.severity is Severity.NONE]
        if quiet and not show_all:
            lines.append(f"  nothing found by: {', '.join(quiet)}")
        lines += [f"  [dim]not assessed {n.rule}: {n.why}[/]" for n in advice.not_assessed]
    return lines


def trials_table(found, space, value_name: str) -> Table:
    table = Table(
        title=f"{len(found.trials)} trial(s) of {len(space.candidates)} candidates",
        title_justify="left",
    )
    table.add_column("#", justify="right")
    for name in space.names:
        table.add_column(name)
    table.add_column(value_name, justify="right")
    table.add_column("chosen by")
    best = found.best
    for trial in found.trials:
        value = "failed" if trial.value is None else f"{trial.value:.4g}"
        mark = " best" if best is not None and trial.number == best.number else ""
        table.add_row(
            str(trial.number),
            *(str(trial.params[n]) for n in space.names),
            value + mark,
            trial.source,
        )
    return table


def trial_failures(found) -> list[str]:
    """A line per failed trial that says why, then what the failures taught the search."""
    return [
        *(escape(f"trial {t.number} failed: {t.failure}") for t in found.trials if t.failure),
        *(escape(f"learned: {line}") for line in found.learned),
    ]


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


def probe_table(found: dict) -> Table:

    table = Table(title="Memory bandwidth (MB/s) and latency (ns per load)", title_justify="left")
    for column in ("measure", "CPUs on"):
        table.add_column(column)
    for node in found["mem_nodes"]:
        table.add_column(f"memory node {node}", justify="right")
    blocks = [
        *((f"{k} MB/s", found["bandwidth_mbps"][k]) for k in KERNELS),
        ("latency ns", found["latency_ns"]),
    ]
    for name, rows in blocks:
        for node, row in zip(found["cpu_nodes"], rows, strict=True):
            table.add_row(
                name,
                f"node {node}",
                *("-" if v is None else f"{v:,.1f}" if v < 100 else f"{v:,.0f}" for v in row),
            )
    return table


def doctor_table(results: list, version: str) -> Table:
    table = Table(title=f"numaspark {version} doctor", title_justify="left", show_lines=True)
    table.add_column("check", style="bold", no_wrap=True)
    table.add_column("finding")
    style = {"state": "", "advice": "cyan", "warning": "yellow", "error": "bold red"}
    for name, messages in results:
        table.add_row(
            name,
            "\n".join(
                f"[{style[m.level]}]{m.level + ': ' if m.level != 'state' else ''}{m.text}[/]"
                if style[m.level]
                else m.text
                for m in messages
            ),
        )
    return table


def cluster_table(state: dict) -> Table:
    """``cluster status``: the master's view and where each worker really runs."""
    table = Table(title=f"{state['master_url']}: {state['status'] or '?'}", title_justify="left")
    hosts = any(w.get("host") for w in state["workers"])
    for column in ("host",) * hosts + (
        "worker",
        "state",
        "cores",
        "memory MB",
        "pid",
        "launch prefix",
        "effective CPUs / policy",
        "pages per node",
    ):
        table.add_column(column)
    for w in state["workers"]:
        seen = w["effective"]
        table.add_row(
            *((w.get("host") or "-",) if hosts else ()),
            str(w["index"]),
            w["state"],
            str(w["cores"]),
            str(w["memory_mb"]),
            str(w["pid"]),
            " ".join(w["prefix"]) or "(unbound)",
            f"{seen['cpus']} / {seen['policy']}" if seen else "(gone)",
            ", ".join(f"N{n} {b >> 20} MiB" for n, b in w["bytes_per_node"].items()) or "-",
        )
    return table


def yarn_table(state: dict) -> Table:
    """``cluster status`` of a mini YARN: the ResourceManager's view of its NodeManagers."""
    table = Table(
        title=f"yarn: {state['status'] or '?'} at {state['rm_webapp']} (HADOOP_CONF_DIR="
        f"{state['hadoop_conf_dir']})",
        title_justify="left",
    )
    for column in ("NodeManager", "state", "containers", "vcores free", "memory free MB"):
        table.add_column(column)
    for n in state["nodes"]:
        table.add_row(
            str(n["id"]),
            str(n["state"]),
            str(n["containers"]),
            str(n["vcores_free"]),
            str(n["memory_free_mb"]),
        )
    return table


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


def log_lines(log, summary: dict) -> list[str]:
    """``numaspark analyze`` of one event log: its metrics in sparkMeasure's terms, readings."""
    # lazy: it brings numpy, which a command that does not need it never loads
    from numaspark.report.metrics import sparkmeasure_lines

    return [
        f"[bold]{log.app_id}[/] {log.app_name or ''} (Spark {log.spark_version or '?'}) {log.path}",
        *sparkmeasure_lines(summary["aggregates"]),
        "",
        "Readings:",
        *(f"  {line}" for line in summary["readings"]),
        "  (CPU, context switches and counters are recorded by numaspark run; "
        "an event log alone does not have them)",
        "",
        *placement_lines(summary.get("placement") or []),
    ]


def placement_lines(placement: list[dict]) -> list[str]:
    """Where each JVM ran, as the affinity plugin reported it into the event log."""
    if not placement:
        return [
            "Placement: none in this log (the affinity plugin was not in the application: "
            "numaspark plan --target ... --out DIR writes its settings)"
        ]
    lines = ["Placement (the affinity plugin's reports, the latest of each JVM):"]
    for jvm in placement:
        nodes = f"node {jvm['nodes']}" if jvm["nodes"] else "nodes unknown"
        share = jvm["local_share"]
        local = f", {share:.0%} of pages on node {jvm['bound_nodes']}" if jvm["bound_nodes"] else ""
        if share is not None and not jvm["bound_nodes"]:
            local = f", {share:.0%} of pages local"
        python = (
            f", {jvm['python_processes']} Python process(es)" if jvm["python_processes"] else ""
        )
        lines.append(
            f"  {jvm['jvm']} on {jvm['host']}: CPUs {jvm['cpus']} ({nodes}), "
            f"policy {jvm['policy']}{local}, {jvm['pinned_tasks'] or 0} task(s) pinned, "
            f"{jvm['task_migrations'] or 0} migrated{python}, "
            f"numa_balancing={jvm['numa_balancing'] or '?'}{_devices_text(jvm)}"
        )
    return lines


def _devices_text(jvm: dict) -> str:
    """``, gpu 0 on node 1, traffic via eth0 (node 0)``: the devices Spark gave a JVM and the
    interface its traffic leaves by, each with its node as the plugin read it."""
    parts = [
        f"{d.get('resource')} {d.get('address')} on "
        + (f"node {d['node']}" if d.get("node") is not None else "no known node")
        for d in jvm.get("devices") or []
    ]
    nic = jvm.get("nic") or {}
    if nic.get("name"):
        where = f"node {nic['node']}" if nic.get("node") is not None else "no known node"
        parts.append(f"traffic via {nic['name']} ({where})")
    return "".join(f", {p}" for p in parts)


# --- many event logs (advise DIR or URL) -----------------------------------------------------

#: the NUMA rules' columns, as the table heads them
_RULE_HEADS = {
    "numa-straddle": "straddle",
    "remote-pages": "pages",
    "numa-balancing": "balancing",
    "python-cpu": "py cpu",
    "python-memory": "py mem",
}
_BY_WORD = {severity.word: colour for severity, colour in SEVERITY_COLOURS.items()}


def _severity_cell(word: str | None) -> Text:
    if word is None or word not in _BY_WORD:
        return Text("-", style="dim")  # not assessed: the log has no placement events
    return Text(word, style=_BY_WORD[word])


def _scan_placement(summary) -> str:
    if summary.placement == "bound":
        return f"bound {summary.bound_nodes}" if summary.bound_nodes else "bound"
    return summary.placement


def history_table(scan) -> Table:
    """``numaspark advise DIR|URL``: one row per application, grouped by name (a section
    each), with its placement and the severity of each NUMA rule (-: not assessed)."""
    groups = scan.groups()
    table = Table(
        title=f"{sum(map(len, groups.values()))} application(s) in {escape(scan.source)}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("application", min_width=12, max_width=28)
    table.add_column("app id", no_wrap=True)
    table.add_column("Spark", min_width=5, max_width=14)
    table.add_column("duration", justify="right", no_wrap=True)
    table.add_column("executors", justify="right")
    table.add_column("placement", no_wrap=True)
    for head in _RULE_HEADS.values():
        table.add_column(head, no_wrap=True)
    for name, runs in groups.items():
        for i, summary in enumerate(runs):
            duration = summary.duration_s
            table.add_row(
                Text(name) if i == 0 else "",
                Text(summary.app_id or "-"),
                Text(summary.spark_version or "-"),
                "-" if duration is None else f"{duration:,.1f} s",
                str(summary.executors),
                _scan_placement(summary),
                *(_severity_cell(summary.severities.get(rule)) for rule in _RULE_HEADS),
                end_section=i == len(runs) - 1,
            )
    return table


def history_lines(scan) -> list[str]:
    """Under the table: each worst finding in words, bound against unbound from history, and
    how many logs were read."""
    lines = []
    findings = [
        (s, s.worst) for runs in scan.groups().values() for s in runs if s.worst is not None
    ]
    if findings:
        lines.append("Worst NUMA finding of each application that has one:")
        lines += [
            f"  {escape(s.app_id or s.log)}: {w['severity']} {w['rule']}: {escape(w['finding'])}"
            for s, w in findings
        ]
    comparisons = scan.comparisons()
    if comparisons:
        lines.append(f"Bound against unbound runs, {scan.observational}:")
        lines += [f"  {escape(c.line())}" for c in comparisons]
    lines.append(scan.tally())
    return lines


def applications_table(scan) -> Table:
    """``numaspark results DIR|LOG`` of event logs: one row per application, grouped by name
    (a section each): what ran, how long, and where as the affinity plugin reported it."""
    groups = scan.groups()
    table = Table(
        title=f"{sum(map(len, groups.values()))} application(s) in {escape(scan.source)}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    # narrow terminals: cells wrap (an id folds) rather than lose their ends to an ellipsis
    table.add_column("application", max_width=28)
    table.add_column("app id", overflow="fold")
    table.add_column("Spark", max_width=14, overflow="fold")
    table.add_column("start (UTC)")
    table.add_column("duration", justify="right")
    table.add_column("status")
    for head in ("jobs", "stages", "tasks", "executors"):
        table.add_column(head, justify="right", overflow="fold")
    table.add_column("placement")
    table.add_column("local pages", justify="right")
    for name, runs in groups.items():
        for i, summary in enumerate(runs):
            row = summary.row()
            failed = f" ({row['failed_jobs']} failed)" if row["failed_jobs"] else ""
            table.add_row(
                Text(name) if i == 0 else "",
                Text(row["app_id"] or "-"),
                Text(row["spark_version"] or "-"),
                (row["start"] or "-").replace("T", " ").removesuffix("Z"),
                "-" if row["duration_s"] is None else f"{row['duration_s']:,.1f} s",
                Text(row["status"], style="red" if row["status"] == "failed" else ""),
                f"{row['jobs']:,}{failed}",
                f"{row['stages']:,}",
                f"{row['tasks']:,}",
                str(row["executors"]),
                _scan_placement(summary),
                "-" if row["local_share"] is None else f"{row['local_share']:.0%}",
                end_section=i == len(runs) - 1,
            )
    return table
