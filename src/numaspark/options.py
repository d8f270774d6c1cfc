"""The options several commands share, declared once, and what they mean.

typer reads a command's options from its signature; the ``Annotated`` aliases
below are those options. ``@with_placement`` gives a command the eight placement
options at once (typer has no option groups), handed to it as one `Where`.
"""

from __future__ import annotations

import functools
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from numaspark.errors import UsageError
from numaspark.placement import Binding, Layout, MemPolicy, Mode, PuOrder
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_pairs, parse_size


def writable_dir(param: typer.CallbackParam, value: Path | None) -> Path | None:
    """An output directory, checked before any work starts (and not made yet): a file, or a
    place this user cannot write, is one clear line."""
    if value is None:
        return None
    option = f"--{param.name}" if param.name else "the directory"
    if value.exists() and not value.is_dir():
        raise UsageError(f"{option} {value} is a file: give a directory (it is made when missing)")
    existing = value.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option} {value}: {existing} is a file: give a directory path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {value}: {existing} is not writable by this user: give a "
                         "directory you can write")  # fmt: skip
    if value != param.default:  # named by the user: made now (root passes access() anywhere)
        try:
            value.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{option} {value}: cannot make it ({exc.strerror}): give a "
                             "directory this user can write") from None  # fmt: skip
    return value


# fmt: off
Opt = typer.Option
XmlOpt = Annotated[Path | None, Opt("--xml", help="hwloc XML of another server (lstopo-no-graphics --of xml > f.xml).")]
SyntheticOpt = Annotated[str | None, Opt("--synthetic", help='hwloc synthetic description, e.g. "pack:2 numa:2 core:12 pu:2".')]
JsonOpt = Annotated[bool, Opt("--json", help="Print JSON (schema in docs/schemas.md).")]
ExecutorsOpt = Annotated[int | None, Opt("--executors", help="Executors in total.")]
PerNodeOpt = Annotated[int | None, Opt("--executors-per-node", help="Executors on each NUMA node with CPUs.")]
CoresOpt = Annotated[int | None, Opt("--cores-per-executor", help="Task slots per executor (default: share the CPUs).")]
MemoryOpt = Annotated[str, Opt("--memory-per-executor", help="Executor heap, e.g. 8g, or 'auto' to split node memory.")]
BindOpt = Annotated[Binding, Opt("--bind", help="Binding level of each JVM that runs tasks.")]
PolicyOpt = Annotated[MemPolicy | None, Opt("--mem-policy", help="Memory policy (default: bind when bound, the kernel's otherwise).")]
NodesOpt = Annotated[str | None, Opt("--nodes", help="Use only these NUMA nodes for executors, e.g. 0 or 0-1.")]
PuOrderOpt = Annotated[PuOrder, Opt("--pu-order", help="For --bind pu: one thread per core first, or siblings together.")]
OutOpt = Annotated[Path, Opt("--out", help="Directory for results.jsonl and run artefacts.", callback=writable_dir)]
DataOpt = Annotated[Path | None, Opt("--data", help="Where generated inputs live (default ./numaspark-data).", callback=writable_dir)]
SizeOpt = Annotated[str, Opt("--size", help="tiny, small, large, huge, bytes (64MB) or rows (1000rows).")]
RepeatOpt = Annotated[int, Opt("--repeat", help="Measured iterations per configuration, in one application.")]
WarmupOpt = Annotated[int, Opt("--warmup", help="Warm-up iterations before the measured ones (stored, not counted).")]
ConfOpt = Annotated[list[str] | None, Opt("--conf", help="Extra Spark setting KEY=VALUE (repeatable).")]
ParamOpt = Annotated[list[str] | None, Opt("--param", help="Workload parameter KEY=VALUE (repeatable; see workloads).")]
ResumeOpt = Annotated[bool, Opt("--resume", help="Skip configurations already stored in --out.")]
WorkloadArg = Annotated[str, typer.Argument(help="Workload name (numaspark workloads).")]
HostOpt = Annotated[str | None, Opt("--host", help="A host over SSH: a name in --hosts-file or [user@]address[:port].")]
HostsOpt = Annotated[str | None, Opt("--hosts", help="Hosts over SSH: a,b,c ([user@]address[:port]) or names in --hosts-file.")]
HostsFileOpt = Annotated[Path | None, Opt("--hosts-file", help="A TOML inventory of hosts: address, user, port, key (docs/hosts.md).")]
# fmt: on


def topology_of(xml: Path | None = None, synthetic: str | None = None, host: str | None = None,
                hosts_file: Path | None = None):  # fmt: skip
    """The topology the options name: a hwloc XML file, a synthetic description, a host read
    over SSH (a name in ``hosts_file`` or ``[user@]address[:port]``), or this machine."""
    from numaspark.topology import load

    if host is None:
        return load(xml=xml, synthetic=synthetic)
    from numaspark.hosts import read_topology

    if xml is not None or synthetic is not None:
        raise UsageError("give one of --host, --xml and --synthetic")
    return read_topology(inventory_of(None if hosts_file else host, hosts_file).get(host))


def inventory_of(hosts: str | None, hosts_file: Path | None):
    """The hosts ``--hosts`` and ``--hosts-file`` name (the file's, narrowed to ``--hosts``
    when both are given); None when neither is."""
    from numaspark.hosts import Inventory, load_inventory, parse_hosts

    if hosts_file is None:
        return parse_hosts(hosts) if hosts is not None else None
    inventory = load_inventory(hosts_file)
    if hosts is None:
        return inventory
    return Inventory(tuple(inventory.get(n.strip()) for n in hosts.split(",")),
                     inventory.driver_address, inventory.encrypt)  # fmt: skip


@dataclass(frozen=True)
class Where:
    """The placement options that plan, run, launch and cluster up share (``@with_placement``)."""

    executors: int | None = None
    executors_per_node: int | None = None
    cores_per_executor: int | None = None
    memory_per_executor: str = "auto"
    bind: Binding = Binding.NONE
    mem_policy: MemPolicy | None = None
    nodes: str | None = None
    pu_order: PuOrder = PuOrder.CORES_FIRST

    @property
    def only_nodes(self) -> CpuSet | None:
        return CpuSet.parse(self.nodes) if self.nodes is not None else None

    def layout(self, mode: Mode, driver_cores: int = 1, driver_memory: str = "1g") -> Layout:
        memory = self.memory_per_executor
        return Layout(executors=self.executors, executors_per_node=self.executors_per_node,
                      cores_per_executor=self.cores_per_executor,
                      memory_per_executor=None if memory == "auto"
                      else parse_size(memory, "--memory-per-executor"),
                      driver_cores=driver_cores,
                      driver_memory=parse_size(driver_memory, "--driver-memory"), mode=mode)  # fmt: skip

    def place(self, topo, mode: Mode, **driver):
        from numaspark.placement import plan

        return plan(topo, self.layout(mode, **driver), self.bind, self.mem_policy, self.pu_order,
                    only_nodes=self.only_nodes)  # fmt: skip


# fmt: off
WHERE = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=option)
          for name, option, default in (
              ("executors", ExecutorsOpt, None), ("executors_per_node", PerNodeOpt, None),
              ("cores_per_executor", CoresOpt, None), ("memory_per_executor", MemoryOpt, "auto"),
              ("bind", BindOpt, Binding.NONE), ("mem_policy", PolicyOpt, None),
              ("nodes", NodesOpt, None), ("pu_order", PuOrderOpt, PuOrder.CORES_FIRST))]
# fmt: on


def with_placement(command):
    """Give ``command`` the shared placement options, passed to it as one ``where: Where``.
    typer reads a command's options from its signature, so the wrapper shows the command's
    own parameters and then these (typer has no option groups of its own)."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values()
           if p.name != "where"]  # fmt: skip

    @functools.wraps(command)
    def wrapper(**options):
        where = Where(**{p.name: options.pop(p.name) for p in WHERE})
        return command(where=where, **options)

    wrapper.__signature__ = inspect.Signature([*own, *WHERE])
    return wrapper


def params(param: list[str] | None) -> dict[str, str]:
    return parse_pairs(param or [], "--param", "iterations=5")


def conf_of(conf: list[str] | None) -> dict[str, str]:
    return parse_pairs(conf or [], "--conf", "spark.executor.extraJavaOptions=-XX:+UseNUMA")


def check_repeat(repeat: int, warmup: int) -> None:
    if repeat < 1 or warmup < 0:
        raise UsageError("--repeat must be at least 1 and --warmup at least 0")
