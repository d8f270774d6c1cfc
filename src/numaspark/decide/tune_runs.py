"""The tuner on this machine: a search space of real configurations and an objective that runs
them (each trial is a normal run, stored in the results directory; a trial already stored
there is read back, not run again)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from numaspark.decide.prior import Machine
from numaspark.decide.steer import Observation, observe
from numaspark.decide.tune import Objective, Params, Space
from numaspark.errors import ClusterRefusal, NumasparkError, UsageError
from numaspark.experiment.placing import refusals
from numaspark.experiment.placing import refusals_on as placing_refusals_on
from numaspark.experiment.result import DEFAULT_TIME, measured
from numaspark.experiment.runner import Runner, TargetFactory
from numaspark.experiment.spec import Config, Experiment, check_configs
from numaspark.experiment.store import ResultStore, recorded_topology
from numaspark.experiment.sweep import run_sweep
from numaspark.experiment.venue import HERE, Venue
from numaspark.placement import Binding, Layout, Mode
from numaspark.placement.cluster_capacity import ClusterCapacity
from numaspark.topology import Topology
from numaspark.workloads import get_workload

PARAMETERS = (
    "mode",
    "executors",
    "cores_per_executor",
    "threads_per_core",
    "binding",
    "partitions_per_slot",
)
PER_SLOT = (1, 2, 4)  # tasks per task slot in every shuffle (spark.default/sql partitions)


def _powers(limit: int) -> list[int]:
    values, v = [], 1
    while v <= limit:
        values.append(v)
        v *= 2
    return values


def tune_machine(
    workload: str | None,
    replay: Path | None,
    given: Topology | None,
    topology_of: Callable,
    planned: Topology | None = None,
) -> Machine | None:
    """The machine the tuner's rules reason about: for real runs the one they are planned on
    (``planned``: a cluster's, with its hosts' topology where --xml gave it; else this
    machine); for a replayed table ``given`` (--xml/--synthetic's), or the topology.json of
    the results directory the table was written into (`numaspark results DIR --table
    DIR/t.csv`); None without any (the rules then take the table's largest layout for the
    machine, and say so)."""
    if (workload is None) == (replay is None):
        raise UsageError("give a WORKLOAD to tune by real runs, or --replay FILE.csv (not both)")
    if workload is not None:
        return Machine.of(planned if planned is not None else topology_of())
    if given is None:
        described, side = recorded_synthetic(replay)
        if described is not None:  # bench/record_table.py's table, with its machine beside it
            try:
                topology = topology_of(None, described)
            except NumasparkError as e:
                raise UsageError(
                    f"the machine in {side}: {e} (mend it, or give --xml or --synthetic)"
                ) from e
            return replace(Machine.of(topology), source=str(side))

        topology, path = recorded_topology(replay.parent, levels=1)
        return Machine.of(topology, str(path)) if topology else None
    return Machine.of(given)


def recorded_synthetic(table: Path) -> tuple[str | None, Path]:
    """The hwloc synthetic description of the machine a table was recorded on, from the
    ``<table>.json`` that bench/record_table.py writes beside it (``"synthetic"``); None when
    there is no such file, or it is some other JSON."""
    side = table.with_suffix(".json")
    try:
        data = json.loads(side.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None, side
    described = data.get("synthetic") if isinstance(data, dict) else None
    return (described if isinstance(described, str) and described.strip() else None), side


def live_space(
    topology: Topology,
    workload: str,
    size: str,
    params: dict | None = None,
    conf: dict | None = None,
    autonuma: bool = False,
    local: bool = True,
    refuses: Callable[[Config], str | None] | None = None,
    refused: list[str] | None = None,
) -> tuple[Space, dict[tuple, Config]]:
    """Layouts (local p; standalone e x c, e x c <= cores), bindings, partitions per slot; the
    candidates are the combinations the planner accepts on ``topology``. Where the machine
    has SMT, core- and pu-bound layouts also take threads per core (1 up to its SMT width,
    doubling): executors own whole cores, c of them, each running that many task threads;
    node-bound and unbound layouts run one task thread per core (threads per core 1) and
    leave their placement to the kernel. ``autonuma``: one binding more, ``autonuma``
    (unbound, kernel.numa_balancing on), and ``none`` then runs with it off; the caller has
    checked that it can be switched. ``local``: local mode's layouts too (not on a cluster,
    where local mode would run here). ``refuses``: why the cluster cannot hold a
    configuration now (`cluster_refusals`); those are left out, each said in ``refused``."""
    chosen = get_workload(workload).with_params(params or {})
    if chosen.streaming:
        raise UsageError(f"{workload} is a streaming workload: the tuner minimizes batch wall time")
    if chosen.application is None:
        chosen.size(size)
    width = max((len(cpus) for _, cpus in topology.allowed_cores()), default=1)  # SMT width
    smt = width > 1
    bindings = [
        "none",
        *(["autonuma"] if autonuma else []),
        "node",
        "core",
        *(["pu"] if smt else []),
    ]
    keys = [
        (mode, executors, per, per_core, binding, per_slot)
        for mode, executors, per in _layouts(topology, local)
        for binding in bindings
        for per_core in (
            sorted(set(_powers(width)) | {width}) if smt and binding in ("core", "pu") else [1]
        )
        for per_slot in PER_SLOT
    ]
    configs = {key: _config(key, workload, size, params, conf, smt, autonuma) for key in keys}
    runnable, _ = check_configs(list(configs.values()), topology)
    runnable_keys = {c.key for c in runnable}
    configs = {k: c for k, c in configs.items() if c.key in runnable_keys}
    if refuses is not None:
        configs = _held(configs, refuses, refused if refused is not None else [])
    values = {
        name: sorted({k[i] for k in configs}, key=lambda v: (str(type(v)), v))
        for i, name in enumerate(PARAMETERS)
    }
    return Space(values, list(configs)), configs


def _held(
    configs: dict[tuple, Config], refuses: Callable[[Config], str | None], refused: list[str]
) -> dict[tuple, Config]:
    """The configurations the cluster can hold now; the others said in ``refused``, and none
    at all one line."""
    why = {k: refuses(c) for k, c in configs.items()}
    refused.extend(f"{configs[k].label}: {w}" for k, w in why.items() if w)
    if configs and all(why.values()):
        first = next(iter(why.values()))
        raise UsageError(f"the cluster can hold no configuration of the search now: {first}")
    return {k: c for k, c in configs.items() if not why[k]}


def cluster_refusals(venue: Venue) -> Callable[[Config], str | None] | None:
    """Why ``venue`` cannot hold a configuration now (None: it can), from what its manager
    says it has, read once (experiment/placing.py's `refusals`). None where no manager says
    it (this machine; hosts numaspark starts its workers on)."""
    experiment = Experiment("tune", [], venue=venue)
    return refusals(venue, lambda config: experiment.request(config, Path(".")))


def refusals_on(has: ClusterCapacity, venue: Venue) -> Callable[[Config], str | None]:
    """Why the cluster ``has`` describes cannot hold a configuration sent there: the
    runner's own check before each run, so a configuration it would refuse is never
    proposed."""
    experiment = Experiment("tune", [], venue=venue)
    return placing_refusals_on(has, lambda config: experiment.request(config, Path(".")))


def _layouts(topology: Topology, local: bool) -> list[tuple[str, int, int]]:
    """(mode, executors, cores per executor) to try: local mode of each width (with
    ``local``), and standalone executors x widths that fit the cores. Executors and widths are
    doublings, and the multiples of the nodes and divisors of a node's cores that fill nodes
    exactly (6-core nodes: 3 and 6)."""
    cores = len(topology.allowed_cores())
    nodes = max(1, len(topology.cpu_nodes))
    per_node = max(1, cores // nodes)
    divisors = {d for d in range(1, per_node + 1) if per_node % d == 0}
    counts = sorted(set(_powers(cores)) | {nodes * d for d in divisors})
    widths = sorted(set(_powers(cores)) | divisors)
    layouts = [("local", 1, p) for p in widths] if local else []
    layouts += [("standalone", e, c) for e in counts for c in widths if e * c <= cores]
    return layouts


def _config(
    key: tuple,
    workload: str,
    size: str,
    params: dict | None,
    conf: dict | None,
    smt: bool,
    autonuma: bool,
) -> Config:
    """The configuration of one candidate (``key``: its values of PARAMETERS): its layout
    (threads per core where core- or pu-bound executors own whole cores of an SMT machine),
    its binding, a shuffle of ``per_slot`` tasks per task slot over ``conf``; with
    ``autonuma``, kernel.numa_balancing on for the ``autonuma`` binding, off for ``none``."""
    mode, executors, per, per_core, binding, per_slot = key
    balancing = (
        None if not autonuma or binding not in ("none", "autonuma") else (binding == "autonuma")
    )
    partitions = str(executors * per * per_core * per_slot)
    threads = per_core if smt and binding in ("core", "pu") else None
    layout = (
        Layout(cores_per_executor=per, mode=Mode.LOCAL, threads_per_core=threads)
        if mode == "local"
        else Layout(executors=executors, cores_per_executor=per, threads_per_core=threads)
    )
    return Config(
        workload,
        size,
        dict(params or {}),
        layout,
        Binding.NONE if binding == "autonuma" else Binding(binding),
        None,
        {
            **(conf or {}),
            "spark.default.parallelism": partitions,
            "spark.sql.shuffle.partitions": partitions,
        },
        numa_balancing=balancing,
    )


def live_objective(
    configs: dict[tuple, Config],
    topology: Topology,
    out: Path,
    repeat: int,
    warmup: int,
    data: Path | None = None,
    say: Callable[[str], None] | None = None,
    time: str = DEFAULT_TIME,
    targets: TargetFactory | None = None,
    venue: Venue = HERE,
    runner: Runner | None = None,
) -> Objective:
    """Run a configuration as an experiment of one (stored in ``out``); its value is the
    median wall time of its measured runs, None when it failed. The first time a
    configuration is asked for, runs already stored in ``out`` count (an earlier tune
    resumed); asked again (the tuner re-measuring a tie), it runs again and its value is the
    median of the new runs. ``venue``: where the runs go. ``runner``: the tune session's run
    loop, kept open across trials, so that a cluster numaspark started serves every trial whose
    placement has its shape and is restarted only when the shape changes (None: a run loop
    per trial)."""
    asked: set[str] = set()

    def runs_of(config: Config) -> list:
        return [r for r in ResultStore(out).load() if r.spec.config == config.key]

    def objective(params: Params) -> Observation:
        config = configs[tuple(params[n] for n in PARAMETERS)]
        again = config.key in asked
        asked.add(config.key)
        before = len(runs_of(config)) if again else 0
        experiment = Experiment(
            "tune", [config], repeat=repeat, warmup=warmup, time=time, venue=venue
        )
        try:
            run_sweep(
                experiment,
                topology,
                out,
                resume=not again,
                data_root=data,
                say=say,
                targets=targets,
                runner=runner,
            )
        except ClusterRefusal as exc:  # the cluster's room changed since the search began
            return Observation(None, failure=str(exc), refused="resources")
        runs = runs_of(config)[before:]
        # its median wall time, and the readings that name the next axis (decide/steer.py);
        # failed, why, in its runs' own words
        return observe(measured(runs), failed=[r for r in runs if not r.ok])

    return objective


def resumed_trials(configs: dict[tuple, Config], out: Path, resume: bool) -> list[tuple]:
    """The candidates an earlier tune measured in ``out`` (its runs' configuration keys), in
    the order it first ran them: with ``resume`` they go back into the search first. Without
    it, a tune that would mix its runs with an earlier one's is refused in one line."""
    store = ResultStore(out)
    if not store.path.exists():  # a first tune
        return []
    keys = {config.key: candidate for candidate, config in configs.items()}
    stored = [r.spec.config for r in measured(store.load()) if r.spec.config in keys]
    found = [keys[key] for key in dict.fromkeys(stored)]
    if found and not resume:
        raise UsageError(
            f"{out} holds {len(found)} configuration(s) an earlier tune measured: --resume reads "
            "them back into the search (they count against --budget), or give another --out"
        )
    return found
