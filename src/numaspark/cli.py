"""The command line. Thin: parse options, call one package function, print."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from numaspark import __version__
from numaspark.errors import NumasparkError
from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    Mode,
    PuOrder,
    k8s_settings,
    placement_to_dict,
    plan,
    yarn_settings,
)
from numaspark.report.console import placement_view, settings_view, topology_view
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_size

app = typer.Typer(
    name="numaspark",
    help="NUMA-aware placement, running and measurement of Spark on scale-up servers.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)

XmlOption = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        "--xml", help="hwloc XML of another server (lstopo-no-graphics --of xml > f.xml)."
    ),
]
SyntheticOption = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--synthetic", help='hwloc synthetic description, e.g. "pack:2 numa:2 core:12 pu:2".'
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (schema in docs/schemas.md).")]


class Target(str, Enum):
    SPARK = "spark"
    YARN = "yarn"
    K8S = "k8s"


def _load_topology(xml: Path | None, synthetic: str | None):
    from numaspark.topology import load

    return load(xml=xml, synthetic=synthetic)


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


@app.command()
def topology(
    xml: XmlOption = None, synthetic: SyntheticOption = None, as_json: JsonOption = False
) -> None:
    """Show the machine as hwloc sees it: packages, NUMA nodes, cores, PUs, allowed sets."""
    topo = _load_topology(xml, synthetic)
    if as_json:
        _print_json(topo.to_dict())
    else:
        console.print(topology_view(topo))


@app.command("plan")
def plan_command(
    executors: Annotated[Optional[int], typer.Option(help="Executors in total.")] = None,  # noqa: UP045
    executors_per_node: Annotated[
        Optional[int], typer.Option(help="Executors on each NUMA node with CPUs.")  # noqa: UP045
    ] = None,
    cores_per_executor: Annotated[
        Optional[int], typer.Option(help="Task slots per executor (default: share the CPUs).")  # noqa: UP045
    ] = None,
    memory_per_executor: Annotated[
        str, typer.Option(help="Executor heap, e.g. 8g, or 'auto' to split node memory.")
    ] = "auto",
    driver_cores: Annotated[int, typer.Option(help="Driver cores.")] = 1,
    driver_memory: Annotated[str, typer.Option(help="Driver heap.")] = "1g",
    bind: Annotated[
        Binding, typer.Option(help="Binding level of each executor JVM.")
    ] = Binding.NONE,
    mem_policy: Annotated[
        Optional[MemPolicy],  # noqa: UP045
        typer.Option(help="Memory policy (default: bind when bound, the kernel's otherwise)."),
    ] = None,
    pu_order: Annotated[
        PuOrder,
        typer.Option(help="For --bind pu: one thread per core first, or siblings together."),
    ] = PuOrder.CORES_FIRST,
    nodes: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Use only these NUMA nodes for executors, e.g. 0 or 0-1."),
    ] = None,
    mode: Annotated[
        Mode, typer.Option(help="local: one JVM runs tasks; standalone: executors.")
    ] = (Mode.STANDALONE),
    target: Annotated[Target, typer.Option(help="Also print settings for YARN or Kubernetes.")] = (
        Target.SPARK
    ),
    xml: XmlOption = None,
    synthetic: SyntheticOption = None,
    as_json: JsonOption = False,
) -> None:
    """Place executors on the machine: CPUs, nodes, heap and the numactl prefix of each JVM."""
    topo = _load_topology(xml, synthetic)
    layout = Layout(
        executors=executors,
        executors_per_node=executors_per_node,
        cores_per_executor=cores_per_executor,
        memory_per_executor=None
        if memory_per_executor == "auto"
        else parse_size(memory_per_executor, "--memory-per-executor"),
        driver_cores=driver_cores,
        driver_memory=parse_size(driver_memory, "--driver-memory"),
        mode=mode,
    )
    only = CpuSet.parse(nodes) if nodes is not None else None
    placement = plan(topo, layout, bind, mem_policy, pu_order, only_nodes=only)
    extra = {}
    if target is Target.YARN:
        extra = yarn_settings(placement, topo)
    elif target is Target.K8S:
        extra = k8s_settings(placement, topo)
    if as_json:
        data = placement_to_dict(placement)
        if extra:
            data[target.value] = extra
        _print_json(data)
        return
    console.print(placement_view(placement))
    if extra:
        console.print(settings_view(target.value.upper(), extra))


@app.command()
def doctor(as_json: JsonOption = False) -> None:
    """Check this machine for NUMA experiments: tools, perf events, kernel settings, limits."""
    from numaspark.doctor import run_checks

    results = run_checks()
    if as_json:
        _print_json(
            {
                name: [{"level": m.level, "text": m.text} for m in messages]
                for name, messages in results
            }
        )
        return
    table = Table(title=f"numaspark {__version__} doctor", title_justify="left", show_lines=True)
    table.add_column("check", style="bold", no_wrap=True)
    table.add_column("finding")
    style = {"state": "", "advice": "cyan", "warning": "yellow", "error": "bold red"}
    for name, messages in results:
        lines = "\n".join(
            f"[{style[m.level]}]{m.level + ': ' if m.level != 'state' else ''}{m.text}[/]"
            if style[m.level]
            else m.text
            for m in messages
        )
        table.add_row(name, lines)
    console.print(table)


@app.command()
def version() -> None:
    """Print numaspark's version."""
    console.print(__version__)


def main() -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit, no traceback."""
    try:
        app()  # standalone: click reports its own usage errors (exit 2) and exits
    except NumasparkError as exc:
        err_console.print(f"[bold red]Error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("Interrupted.")
        sys.exit(130)


if __name__ == "__main__":
    main()
