"""Terminal views (rich) of the machine and where work goes on it: the topology, a
placement and its settings (``plan``, ``plan --hosts``), the launched processes, the probe's
bandwidth and latency, the doctor's checks and a standing cluster's state
(``cluster status``)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from numaspark.placement import Placement, bind_argv, spark_conf
from numaspark.placement.plugin import SLOTS_ENV
from numaspark.placement.resources import resource_env
from numaspark.probe import KERNELS
from numaspark.topology import Topology
from numaspark.topology.sysfs import SOURCE as SYSFS_SOURCE
from numaspark.units import human_size, jvm_size


def machine_line(topology: Topology) -> str:
    """The machine in one line: packages, NUMA nodes, L3 domains, cores, PUs, memory."""
    return (
        f"{len(topology.packages)} package(s), {len(topology.nodes)} NUMA node(s) "
        f"({sum(1 for n in topology.nodes if n.has_cpus)} with CPUs), {len(topology.l3)} L3 "
        f"domain(s), {len(topology.cores)} cores, {len(topology.pus)} PUs"
        f"{' (SMT)' if topology.smt else ''}, memory {human_size(topology.total_memory)}"
    )


def topology_view(topology: Topology) -> RenderableType:
    """The machine as a tree (package > node > L3 > cores) plus allowed sets and distances."""
    title = Text.assemble(
        ("Topology ", "bold"),
        (topology.source, "cyan"),
        f"  {topology.cpu_model or ''}",
        f"  fingerprint {topology.fingerprint}",
    )
    tree = Tree(title)
    tree.add(machine_line(topology))
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
        table.add_column(column, overflow="fold")
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
        table.add_column(column, overflow="fold")
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
    table.add_column("check", style="bold", overflow="fold")
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
