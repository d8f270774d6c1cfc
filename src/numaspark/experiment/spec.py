"""Experiment specs: what to run, as TOML, expanded into configurations and checked first.

    name = "layouts"
    repeat = 3                 # measured iterations per configuration
    warmup = 1                 # warm-up iterations, in the same application
    order = "listed"           # or "random" (spreads drift over configurations), with seed
    seed = 1
    budget = "30m"             # start no configuration after this much time
    time = "app"               # your application's time compared: app, job or submit
    bindings = ["none", "core"]    # above every [table]: below one, TOML puts it in that table
    mem_policies = ["default"]     # or bind, preferred, interleave, local

    [[workloads]]
    name = "wordcount"
    size = "tiny"
    params = { keyword_rank = 10 }

    [[workloads]]              # your own application (a path relative to the spec's folder)
    app = "jobs/etl.py"        # or a .jar, with class = "com.acme.Main"
    args = ["--day", "2026-11-24"]
    name = "etl"               # optional: the file's stem by default
    check = "test -s out/_SUCCESS"   # optional: its exit status is each run's check

    [layouts]                  # a grid ...
    mode = "standalone"
    executors = [1, 2]
    cores_per_executor = [1, 2]
    # ... or an explicit list:  [[layouts.list]]  mode = "local"  cores_per_executor = 2

    [[conf]]                   # Spark conf variations (default: one, empty)
    "spark.sql.shuffle.partitions" = "8"

Every combination is planned on the machine before anything runs; those it
cannot hold are listed with the planner's reason and skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import random
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.errors import PlacementError, UsageError
from numaspark.experiment.request import RunRequest
from numaspark.experiment.result import DEFAULT_TIME, TIMES
from numaspark.experiment.venue import HERE, Venue
from numaspark.placement import Binding, Layout, MemPolicy, Mode, plan
from numaspark.topology import CpuSet, Topology
from numaspark.units import parse_duration, parse_size
from numaspark.workloads import Workload, get_workload
from numaspark.workloads.application import URI, from_file
from numaspark.workloads.catalog import register_application
from numaspark.workloads.defaults import STREAM_RATE, STREAM_WARMUP_S, STREAM_WINDOW_S

TOP_KEYS = {
    "name",
    "repeat",
    "warmup",
    "order",
    "seed",
    "budget",
    "workloads",
    "layouts",
    "bindings",
    "mem_policies",
    "conf",
    "nodes",
    "stream",
    "time",
    "cluster",
}
#: a spec's [cluster] table: the command line's options for where runs go
CLUSTER_KEYS = {
    "master",
    "master_ui",
    "driver_host",
    "executor_wait",
    "python",
    "hosts",
    "hosts_file",
    "xml",
    "synthetic",
}
LAYOUT_KEYS = {
    "mode",
    "executors",
    "cores_per_executor",
    "executors_per_node",
    "memory_per_executor",
    "threads_per_core",
    "list",
}


@dataclass(frozen=True)
class Config:
    """One configuration of an experiment: run with warm-ups and repetitions in one app."""

    workload: str
    size: str
    params: dict
    layout: Layout
    binding: Binding
    mem_policy: MemPolicy | None
    conf: dict
    only_nodes: CpuSet | None = None
    mem_nodes: CpuSet | None = None  # memory on these nodes instead of the CPUs' own
    numa_balancing: bool | None = None  # kernel.numa_balancing for its runs (None: as found)
    note: str = ""  # what the study calls it (e.g. "2B", "remote 0->1")
    title: str = ""  # a whole name instead of the composed one (characterize's)

    @property
    def label(self) -> str:
        if self.title:
            return self.title
        parts = [self.note] if self.note else []
        layout = self.layout
        count = (
            f"{layout.executors_per_node}/node"
            if layout.executors is None and layout.executors_per_node
            else str(layout.executors or 1)
        )
        parts += [
            f"{layout.mode.value} {count}x{layout.cores_per_executor or 'all'}"
            + (f"x{layout.threads_per_core}t" if layout.threads_per_core else ""),
            f"bind={self.binding.value}",
        ]
        if self.mem_policy is not None:
            parts.append(f"mem={self.mem_policy.value}")
        if self.numa_balancing is not None:
            parts.append(f"balancing={'on' if self.numa_balancing else 'off'}")
        if self.conf:
            parts.append(
                ",".join(f"{k.removeprefix('spark.')}={v}" for k, v in sorted(self.conf.items()))
            )
        if self.params:
            parts.append(",".join(f"{k}={v}" for k, v in sorted(self.params.items())))
        return " ".join(parts)

    @property
    def key(self) -> str:
        """Stable id of the configuration: what --resume matches stored runs by."""
        document = {
            "workload": self.workload,
            "size": self.size,
            "params": self.params,
            "label": self.label,
            "nodes": str(self.only_nodes),
            "mem": str(self.mem_nodes),
        }
        return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Experiment:
    name: str
    configs: list[Config]
    skipped: list[tuple[Config, str]] = field(default_factory=list)
    repeat: int = 3
    warmup: int = 1
    budget_s: float | None = None
    stream: dict = field(default_factory=dict)  # rate, duration, warm-up for streaming workloads
    time: str = DEFAULT_TIME  # which of an application's times is compared (result.TIMES)
    venue: Venue = HERE  # where its runs go

    def request(self, config: Config, out: Path, data_root: Path | None = None) -> RunRequest:
        """The run of ``config`` in this experiment, stored in ``out``, at its venue."""
        stream = self.stream
        request = RunRequest(
            workload=config.workload,
            size=config.size,
            layout=config.layout,
            binding=config.binding,
            mem_policy=config.mem_policy,
            only_nodes=config.only_nodes,
            mem_nodes=config.mem_nodes,
            numa_balancing=config.numa_balancing,
            repeat=self.repeat,
            warmup=self.warmup,
            out=out,
            data_root=data_root,
            label=config.label,
            config_key=config.key,
            spark_conf=dict(config.conf),
            params=dict(config.params),
            rate=float(stream.get("rate", STREAM_RATE)),
            duration_s=float(stream.get("duration_s", STREAM_WINDOW_S)),
            stream_warmup_s=float(stream.get("warmup_s", STREAM_WARMUP_S)),
            time=self.time,
        )
        return request.at(self.venue)


def _fail(source: str, message: str) -> UsageError:
    return UsageError(f"{source}: {message}")


def _list(value, what: str, source: str) -> list:
    if isinstance(value, list):
        return value
    if isinstance(value, (str, int)):
        return [value]
    raise _fail(source, f"{what} must be a value or a list, not {type(value).__name__}")


def read_spec(path: Path) -> dict:
    """A TOML spec's tables, read (not yet checked: `build` does that)."""
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise UsageError(f"spec {path} {what}: give a TOML experiment spec (docs/experiments.md)")
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"spec {path} is not valid TOML: {exc}") from None


def load_spec(path: Path, topology: Topology) -> Experiment:
    """Read, validate and expand a TOML spec; every impossible configuration is set aside."""
    return build(read_spec(path), topology, source=str(path))


def cluster_table(data: dict, source: str) -> dict[str, str]:
    """A spec's ``[cluster]`` table: where its runs go, in the keys of the command line's
    options (master, master_ui, driver_host, executor_wait, python, hosts, hosts_file; xml or
    synthetic: the hosts' topology), as text; {} when it has none."""
    table = data.get("cluster", {})
    if not isinstance(table, dict):
        raise _fail(source, 'cluster must be a table: [cluster] master = "spark://HOST:7077"')
    unknown = set(table) - CLUSTER_KEYS
    if unknown:
        raise _fail(
            source,
            f"[cluster]: unknown key(s) {', '.join(sorted(unknown))}; known: "
            f"{', '.join(sorted(CLUSTER_KEYS))}",
        )
    return {str(k): str(v) for k, v in table.items()}


def at_venue(
    experiment: Experiment, venue: Venue, topology: Topology
) -> tuple[Experiment, list[str]]:
    """``experiment`` sent to ``venue`` (planned on ``topology``, the machine the venue is
    planned as): the configurations whoever places the JVMs there can realise, and a line for
    each reason why the others cannot run, naming them. This machine realises them all."""
    experiment = dataclasses.replace(experiment, venue=venue)
    if venue.here:
        return experiment, []
    realiser = venue.realiser
    every_node = CpuSet(n.os_index for n in topology.cpu_nodes)
    why_not: dict[str, list[str]] = {}
    kept = []
    for config in experiment.configs:
        if config.layout.mode is Mode.LOCAL:
            why = "local mode runs its one JVM on this machine, not on the cluster"
        elif config.mem_nodes is not None and realiser.remote_memory:
            why = realiser.remote_memory
        elif config.only_nodes not in (None, every_node) and realiser.some_nodes:
            why = realiser.some_nodes
        elif config.numa_balancing is not None:
            why = realiser.balancing
        else:
            kept.append(config)
            continue
        why_not.setdefault(why, []).append(config.label)
    cannot = [f"{', '.join(labels)}: {why}" for why, labels in why_not.items()]
    return dataclasses.replace(experiment, configs=kept), cannot


def build(data: dict, topology: Topology, source: str = "spec") -> Experiment:
    """A spec's tables (`read_spec`) checked and expanded: every workload in every
    combination of the settings, planned on ``topology``; any mistake is one line
    (UsageError) before anything runs."""
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise _fail(
            source,
            f"unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(TOP_KEYS))}",
        )
    workloads = data.get("workloads")
    if not workloads or not isinstance(workloads, list):
        raise _fail(source, "needs at least one [[workloads]] table with a name")
    repeat, warmup = data.get("repeat", 3), data.get("warmup", 1)
    if not isinstance(repeat, int) or repeat < 1 or not isinstance(warmup, int) or warmup < 0:
        raise _fail(source, "repeat must be an integer >= 1 and warmup an integer >= 0")
    settings = _settings(data, source)
    configs = [
        Config(
            workload.name,
            size,
            params,
            layout,
            binding,
            policy,
            {str(k): str(v) for k, v in conf.items()},
            only_nodes=nodes,
        )
        for workload, size, params in (_checked_workload(entry, source) for entry in workloads)
        for layout, binding, policy, conf, nodes in settings
    ]
    _order(configs, data, source)
    budget = data.get("budget")
    experiment = Experiment(
        name=str(data.get("name", Path(source).stem)),
        configs=[],
        repeat=repeat,
        warmup=warmup,
        budget_s=parse_duration(str(budget), "budget") if budget is not None else None,
        stream=dict(data.get("stream", {})),
        time=str(data.get("time", DEFAULT_TIME)),
    )
    if experiment.time not in TIMES:
        raise _fail(source, f"time must be one of {', '.join(TIMES)}, not {experiment.time!r}")
    experiment.configs, experiment.skipped = check_configs(configs, topology)
    return experiment


def _settings(
    data: dict, source: str
) -> list[tuple[Layout, Binding, MemPolicy | None, dict, CpuSet | None]]:
    """Every combination of a spec's layouts, bindings, memory policies, [[conf]] tables and
    node sets, in the order each workload runs them."""
    layouts = _layouts(data.get("layouts", {}), source)
    bindings = [
        _enum(Binding, b, "bindings", source)
        for b in _list(data.get("bindings", ["none"]), "bindings", source)
    ]
    policies = [
        None if p == "default" else _enum(MemPolicy, p, "mem_policies", source)
        for p in _list(data.get("mem_policies", ["default"]), "mem_policies", source)
    ]
    confs = data.get("conf", [{}])
    if isinstance(confs, dict):
        confs = [confs]
    if not all(isinstance(c, dict) for c in confs):
        raise _fail(source, "[[conf]] entries must be tables of Spark settings")
    node_sets = [
        None if n == "all" else CpuSet.parse(str(n))
        for n in _list(data.get("nodes", ["all"]), "nodes", source)
    ]
    return list(itertools.product(layouts, bindings, policies, confs, node_sets))


def _checked_workload(entry: dict, source: str) -> tuple[Workload, str, dict[str, str]]:
    """A ``[[workloads]]`` entry's workload, size ("-" for an application) and parameters,
    checked: unknown or mistyped parameters and sizes fail here, before any run."""
    workload = _workload(entry, source)
    params = {str(k): str(v) for k, v in (entry.get("params") or {}).items()}
    workload.with_params(params)
    size = str(entry.get("size", "tiny"))
    if workload.application is not None:
        size = "-"
    elif not workload.streaming:
        workload.size(size)
    return workload, size, params


def _order(configs: list[Config], data: dict, source: str) -> None:
    """The spec's ``order``: as listed, or shuffled in place by its ``seed`` (which spreads
    drift over the configurations)."""
    order = data.get("order", "listed")
    if order not in ("listed", "random"):
        raise _fail(source, f"order must be 'listed' or 'random', not {order!r}")
    if order == "random":
        random.Random(data.get("seed", 1)).shuffle(configs)


def _workload(entry: object, source: str) -> Workload:
    """A ``[[workloads]]`` entry's workload: a built-in by ``name``, or the user's ``app``
    (with ``class``, ``args``, ``check``; ``name`` then names it)."""
    if not isinstance(entry, dict) or not ("name" in entry or "app" in entry):
        raise _fail(
            source,
            "every [[workloads]] entry needs a name (a built-in) or an app (your .py or .jar)",
        )
    what = entry.get("name") or entry.get("app")
    allowed = (
        {"app", "class", "args", "name", "check"} if "app" in entry else {"name", "size", "params"}
    )
    extra = set(entry) - allowed
    if extra:
        raise _fail(
            source,
            f"workload {what}: unknown key(s) {', '.join(sorted(extra))}; "
            f"known: {', '.join(sorted(allowed))}",
        )
    if "app" not in entry:
        return get_workload(entry["name"])
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise _fail(source, f"workload {what}: args must be a list of strings")
    base = Path(source).parent if source != "spec" else Path.cwd()
    path = str(entry["app"])
    if not URI.match(path) and not Path(path).is_absolute():
        path = str(base / path)
    return register_application(
        from_file(
            path,
            [str(a) for a in args],
            entry.get("class"),
            name=entry.get("name"),
            check=entry.get("check"),
        )
    )


def check_configs(
    configs: list[Config], topology: Topology
) -> tuple[list[Config], list[tuple[Config, str]]]:
    """The configurations the machine can hold, and the others with the planner's reason."""
    runnable, skipped, seen = [], [], set()
    for config in configs:
        if config.key in seen:
            continue
        seen.add(config.key)
        try:
            plan(
                topology,
                config.layout,
                config.binding,
                config.mem_policy,
                only_nodes=config.only_nodes,
            )
            if config.mem_nodes is not None and not config.mem_nodes.issubset(
                topology.allowed_nodes
            ):
                raise PlacementError(f"memory nodes {config.mem_nodes} are not allowed here")
        except (PlacementError, UsageError) as exc:
            skipped.append((config, str(exc)))
            continue
        runnable.append(config)
    return runnable, skipped


def _enum(kind, value, what: str, source: str):
    try:
        return kind(str(value))
    except ValueError:
        choices = ", ".join(m.value for m in kind)
        raise _fail(source, f"{what}: {value!r} is not one of {choices}") from None


def _layouts(data: dict, source: str) -> list[Layout]:
    if not isinstance(data, dict):
        raise _fail(source, "[layouts] must be a table")
    unknown = set(data) - LAYOUT_KEYS
    if unknown:
        raise _fail(
            source,
            f"[layouts]: unknown key(s) {', '.join(sorted(unknown))}; known: "
            f"{', '.join(sorted(LAYOUT_KEYS))}",
        )
    if "list" in data:
        return [_layout(entry, source) for entry in data["list"]]
    grid = []
    for mode in _list(data.get("mode", "standalone"), "mode", source):
        for executors in _list(data.get("executors", [1]), "executors", source):
            for cores in _list(
                data.get("cores_per_executor", [None]) if "cores_per_executor" in data else [None],
                "cores_per_executor",
                source,
            ):
                for per_core in _list(
                    data.get("threads_per_core", [None]) if "threads_per_core" in data else [None],
                    "threads_per_core",
                    source,
                ):
                    grid.append(
                        _layout(
                            {
                                "mode": mode,
                                "executors": executors,
                                "cores_per_executor": cores,
                                "memory_per_executor": data.get("memory_per_executor"),
                                "threads_per_core": per_core,
                            },
                            source,
                        )
                    )
    return grid


def _layout(entry: dict, source: str) -> Layout:
    # a key TOML put in a [[layouts.list]] entry by mistake (one written below the entry's
    # header, such as bindings) is refused, not ignored
    known = LAYOUT_KEYS - {"list"}
    if not isinstance(entry, dict) or set(entry) - known:
        raise _fail(
            source,
            f"a [[layouts.list]] entry has unknown key(s) in {entry!r}; known: "
            f"{', '.join(sorted(known))} (keys such as bindings go above the "
            "first [table], or TOML puts them in it)",
        )
    mode = _enum(Mode, entry.get("mode", "standalone"), "mode", source)
    executors = entry.get("executors")
    cores = entry.get("cores_per_executor")
    per_core = entry.get("threads_per_core")
    for what, value in (
        ("executors", executors),
        ("cores_per_executor", cores),
        ("threads_per_core", per_core),
    ):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise _fail(source, f"{what} must be a positive integer, not {value!r}")
    memory = entry.get("memory_per_executor")
    if mode is Mode.LOCAL and executors not in (None, 1):
        raise _fail(source, "local mode runs one JVM: use executors = 1 or mode = 'standalone'")
    return Layout(
        executors=None if mode is Mode.LOCAL else (executors or 1),
        executors_per_node=entry.get("executors_per_node"),
        cores_per_executor=cores,
        memory_per_executor=parse_size(str(memory), "memory_per_executor") if memory else None,
        mode=mode,
        threads_per_core=per_core,
    )
