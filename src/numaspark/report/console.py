"""Terminal views (rich) of a topology, a placement and the doctor's checks."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from numaspark.placement import Placement, numactl_argv, spark_conf
from numaspark.spark.affinity import SLOTS_ENV
from numaspark.topology import Topology
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
    return Group(*parts)


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


def placement_view(placement: Placement) -> RenderableType:
    """The plan as a table, the numactl prefix of each JVM, the Spark conf and the notes."""
    layout = placement.layout
    policy = placement.mem_policy.value if placement.mem_policy else "default"
    table = Table(
        title=(
            f"Placement: {len(placement.executors)} executor(s) x {placement.executors[0].cores} "
            f"cores, {layout.mode.value} mode, bind {placement.binding.value}, memory {policy}"
        ),
        title_justify="left",
    )
    for column in ("JVM", "node(s)", "CPUs", "slots", "heap", "launch prefix"):
        table.add_column(column, no_wrap=column in ("JVM", "heap"))
    for jvm in placement.jvms:
        prefix = " ".join(numactl_argv(jvm)) or "[dim](unbound)[/]"
        table.add_row(
            jvm.name,
            str(jvm.nodes),
            str(jvm.cpus),
            str(jvm.cores) if jvm.runs_tasks else "-",
            jvm_size(jvm.heap),
            prefix,
        )
    conf = Table(title="Spark configuration (spark-defaults)", title_justify="left", box=None)
    conf.add_column("key", style="cyan")
    conf.add_column("value")
    for key, value in spark_conf(placement).items():
        conf.add_row(key, value)
    parts: list[RenderableType] = [table, conf]
    pinned = [j for j in placement.executors if j.slots]
    if pinned:
        unit = (
            "core" if placement.binding.value == "core" else "hardware thread (one per core first)"
        )
        lines = [f"task pinning (affinity plugin): each running task on its own {unit}"]
        lines += [f"  {j.name}: {SLOTS_ENV}={';'.join(str(s) for s in j.slots)}" for j in pinned]
        parts.append(Text("\n".join(lines), style="green"))
    if placement.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in placement.notes), style="yellow"))
    return Group(*parts)


def settings_view(title: str, sections: dict[str, dict[str, object]]) -> RenderableType:
    parts: list[RenderableType] = []
    for name, values in sections.items():
        table = Table(title=f"{title}: {name}", title_justify="left", box=None)
        table.add_column("key", style="cyan")
        table.add_column("value")
        for key, value in values.items():
            table.add_row(key, str(value))
        parts.append(table)
    return Group(*parts)


def launch_view(record: dict) -> Table:
    """One row per launched process: planned vs effective placement, where its pages were."""
    table = Table(title="Launched processes: planned, effective, pages per node")
    for column in ("process", "planned CPUs / memory", "effective CPUs / policy", "pages per node",
                   "memory", "status"):  # fmt: skip
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
        table.add_row(entry["name"], f"{planned['cpus']} / {mem}", seen, shares or "-",
                      entry.get("memory", "-"), status)  # fmt: skip
    return table
