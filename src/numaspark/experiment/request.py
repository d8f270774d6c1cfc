"""`RunRequest`: what one run asks for; the request a stored run came from; its command line.

A request is a frozen value: its defaults are declared once, in its fields (and
workloads/defaults.py), and `RunRequest.checked` is its one check. Where it runs is its
``venue`` (experiment/venue.py); `RunRequest.at` sends it there. The run loop executes a
request (experiment/runner.py) and plans it with `plan_request`; advice changes one and has
the planner check it on the run's own machine (decide/advise/). `request_of` is the one place
a stored `RunSpec` becomes a request again, and `run_argv` the one place a request becomes
``numaspark run``'s options: the spellings of cli/placement_options.py and cli/run.py's
``run``, which tests/test_decide.py parses back through the real command line to the same
request.

Nothing here starts work: the report may import it (it imports advice).
"""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.experiment.result import DEFAULT_TIME, TIMES, RunSpec
from numaspark.experiment.venue import HERE, Venue
from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    Mode,
    Placement,
    PuOrder,
    memory_on,
    plan,
)
from numaspark.placement.render import DynamicAllocation
from numaspark.topology import CpuSet, Topology
from numaspark.units import jvm_size
from numaspark.workloads import Size, Workload, get_workload
from numaspark.workloads.application import Application
from numaspark.workloads.datagen import DEFAULT_SEED
from numaspark.workloads.defaults import STREAM_RATE, STREAM_WARMUP_S, STREAM_WINDOW_S, TIMEOUT_S

# the placeholder of a command built from an event log alone: no stored run names the workload
TEMPLATE_WORKLOAD = "WORKLOAD"
STREAM_PARTITIONS = "spark.sql.shuffle.partitions"  # a stream's default: one per task slot
DEFAULT_OUT = Path("numaspark-out")


@dataclass(frozen=True)
class RunRequest:
    """What one run asks for: the workload, where its JVMs go and how, where it runs
    (``venue``), and how it is measured. Its defaults are here and nowhere else; `checked`
    is its one check."""

    workload: str
    size: str = "tiny"
    layout: Layout = field(default_factory=Layout)
    binding: Binding = Binding.NONE
    mem_policy: MemPolicy | None = None
    pu_order: PuOrder = PuOrder.CORES_FIRST
    only_nodes: CpuSet | None = None  # executors only on these NUMA nodes
    mem_nodes: CpuSet | None = None  # memory bound here instead of the CPUs' own nodes (remote)
    # kernel.numa_balancing on/off for the run, put back after it (None: left as found)
    numa_balancing: bool | None = None
    repeat: int = 1
    warmup: int = 0
    out: Path = DEFAULT_OUT
    venue: Venue = HERE  # where it runs: this machine, hosts over SSH, a cluster at an address
    cluster_dir: Path | None = None  # here: a cluster left up by `numaspark cluster up`
    data_root: Path | None = None
    seed: int = DEFAULT_SEED
    timeout_s: float = TIMEOUT_S
    label: str | None = None  # a name for this configuration in tables
    config_key: str | None = None  # the experiment configuration it belongs to (--resume)
    spark_conf: dict[str, str] = field(default_factory=dict)  # extra settings, recorded in the spec
    params: dict[str, str] = field(default_factory=dict)  # workload parameter overrides (text)
    # streaming workloads: events a second, measured seconds, warm-up seconds before them
    rate: float = STREAM_RATE
    duration_s: float = STREAM_WINDOW_S
    stream_warmup_s: float = STREAM_WARMUP_S
    # measurement: OS/NUMA/perf collectors and their interval; JVM GC logs per executor
    collect: bool = True
    interval_s: float = 1.0
    gc_log: bool = False
    profile: bool = False  # async-profiler flame graph per task-running JVM
    # a user's application: which of its times wall_time_s is (TIMES), and when to stop one
    # that never ends by itself (a streaming application; None: when it ends)
    time: str = DEFAULT_TIME
    stop_after_s: float | None = None

    def at(self, venue: Venue) -> RunRequest:
        """This request sent to ``venue``: on a cluster in standalone mode (local mode's one
        JVM runs on this machine), with the venue's Spark settings under its own."""
        mode = self.layout.mode if venue.here else Mode.STANDALONE
        return dataclasses.replace(
            self,
            venue=venue,
            layout=dataclasses.replace(self.layout, mode=mode),
            spark_conf={**venue.conf, **self.spark_conf},
        )

    def checked(self) -> tuple[Workload, Size | None]:
        """The workload and its size, once the request is known to make sense (a UsageError
        that says what to change when it does not): the one check of a request."""
        if self.repeat < 1 or self.warmup < 0:
            raise UsageError("--repeat must be at least 1 and --warmup at least 0")
        if self.interval_s <= 0:
            raise UsageError("--interval must be positive, e.g. --interval 1s")
        workload = get_workload(self.workload).with_params(self.params)
        self.venue.check(self.numa_balancing, workload.application)
        if workload.application is not None:
            if self.time not in TIMES:
                raise UsageError(f"--time {self.time!r}: choose one of {', '.join(TIMES)}")
            if self.stop_after_s is not None and self.stop_after_s <= 0:
                raise UsageError("--duration must be positive, e.g. --duration 60s")
            return workload, None
        if not workload.streaming:
            return workload, workload.size(self.size)
        if self.rate <= 0 or self.duration_s <= 0 or self.stream_warmup_s < 0:
            raise UsageError(
                "--rate and --duration must be positive and --stream-warmup at least 0 "
                "(e.g. --rate 1000 --duration 60s)"
            )
        window, slide = workload.params.get("window_s"), workload.params.get("slide_s")
        if window is not None and slide is not None and (slide <= 0 or window % slide):
            raise UsageError(
                f"window_s={window} must be a whole multiple of slide_s={slide} "
                "(e.g. --param window_s=10 --param slide_s=5)"
            )
        return workload, Size(f"{self.rate:g}/s", 0)  # a stream's size is its velocity


def dynamic_allocation(request: RunRequest) -> DynamicAllocation | None:
    """The request's dynamic-allocation settings (its --conf over its application's own
    spark-submit line's), when they turn it on; None when off."""
    try:
        application = get_workload(request.workload).application
    except UsageError:
        application = None
    own = application.conf() if application is not None else {}
    return DynamicAllocation.of({**own, **request.spark_conf})


def plan_request(topology: Topology, request: RunRequest, at_most: int | None = None) -> Placement:
    """Where every JVM of ``request`` goes on ``topology`` (PlacementError or UsageError when
    it does not fit): the run loop plans every run with it, and advice checks its requests.
    ``at_most``: the most executors the cluster may run at once when that is more than
    planned (dynamic allocation's maxExecutors on a cluster numaspark did not start)."""
    placement = plan(
        topology,
        request.layout,
        request.binding,
        request.mem_policy,
        request.pu_order,
        only_nodes=request.only_nodes,
        max_executors=at_most,
    )
    if request.mem_nodes is not None:
        placement = memory_on(placement, request.mem_nodes)
    return placement


def request_of(spec: RunSpec) -> RunRequest:
    """The request a stored run came from, as far as its record and ``numaspark run`` say it.

    A record keeps the layout the planner made, not the one asked for: its executor count
    (or count per node) and task slots are kept; its heap is left to the planner (auto), as
    a record does not say whether the heap was asked for. What the record does not keep
    (--nodes, --pu-order, --repeat, --warmup, --out, the cluster or hosts it ran on) and what
    ``numaspark run`` has no option for (the driver's size, the seed, remote memory nodes)
    are a fresh request's defaults, so the request is exactly what `run_argv` prints."""
    recorded = spec.placement.layout if spec.placement is not None else Layout()
    mode = Mode(spec.mode) if spec.mode else recorded.mode
    per_node = recorded.executors_per_node if mode is Mode.STANDALONE else None
    count = recorded.executors or spec.executors
    layout = Layout(
        executors=count if mode is Mode.STANDALONE and not per_node else None,
        executors_per_node=per_node,
        cores_per_executor=recorded.cores_per_executor or spec.cores_per_executor,
        mode=mode,
        threads_per_core=recorded.threads_per_core,
        resources=recorded.resources,
    )
    own = spec.application is not None
    stream = spec.stream or {}
    streaming = bool(stream) and not own
    conf = dict(spec.spark_conf)
    if streaming and conf.get(STREAM_PARTITIONS) == str(max(1, spec.slots)):
        conf.pop(STREAM_PARTITIONS)  # the runner's default for the slots, not the user's
    stop = stream.get("duration_s") if own else None
    binding = Binding(spec.binding or "none")
    policy = MemPolicy(spec.mem_policy) if spec.mem_policy else None
    if binding is not Binding.NONE and policy is MemPolicy.BIND:
        policy = None  # what the planner gives a bound JVM unless told otherwise
    return RunRequest(
        workload=spec.workload or TEMPLATE_WORKLOAD,
        size=spec.size if spec.size and not own and not streaming else "tiny",
        layout=layout,
        binding=binding,
        mem_policy=policy,
        numa_balancing={"on": True, "off": False}.get(spec.numa_balancing or ""),
        spark_conf=conf,
        params=_changed_params(spec),
        rate=float(stream.get("rate", STREAM_RATE)) if streaming else STREAM_RATE,
        duration_s=float(stream.get("duration_s", STREAM_WINDOW_S)) if stream else STREAM_WINDOW_S,
        stream_warmup_s=(
            float(stream.get("warmup_s", STREAM_WARMUP_S)) if streaming else STREAM_WARMUP_S
        ),
        time=spec.timed if own and spec.timed in TIMES else DEFAULT_TIME,
        stop_after_s=float(stop) if stop is not None else None,
    )


def _changed_params(spec: RunSpec) -> dict[str, str]:
    """The run's workload parameters that differ from the workload's own, as --param text (all
    of them when the workload is not known to this version)."""
    if not spec.params:
        return {}
    try:
        defaults = get_workload(spec.workload or "").params
    except UsageError:
        defaults = {}
    return {
        key: _text(value)
        for key, value in spec.params.items()
        if key not in defaults or defaults[key] != value
    }


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _seconds(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") + "s"


def run_argv(request: RunRequest, application: Application | None = None) -> list[str]:
    """``numaspark run``'s arguments that ask for ``request``: every option of ``run`` is
    spelled here, each left out at its default except ``--mode`` (the command line's default,
    local, is not a request's). ``application``: the user's application the request names
    (its file, class and arguments stand where the workload's name would). What ``run`` has
    no option for (the driver's size, the seed, --mem-nodes, a label) and the hosts it runs
    on are not said."""
    options: list[tuple[str, object]] = [
        ("--size", None if application is not None or request.size == "tiny" else request.size),
        *_placement_options(request),
        *_run_options(request),
    ]
    argv = []
    for option, value in options:
        if value is not None:
            argv += [option, str(value)]
    for flag, on in (
        ("--no-collect", not request.collect),
        ("--gc-log", request.gc_log),
        ("--profile", request.profile),
    ):
        argv += [flag] if on else []
    for key, value in sorted(request.params.items()):
        argv += ["--param", f"{key}={value}"]
    for key, value in sorted(request.spark_conf.items()):
        argv += ["--conf", f"{key}={value}"]
    if application is not None:  # the user's own, with its class and arguments
        return application.command(argv)
    return [request.workload, *argv]


def _placement_options(request: RunRequest) -> list[tuple[str, object]]:
    """``run``'s options of where the JVMs go, in its order; a value None: left out."""
    layout = request.layout
    return [
        ("--mode", layout.mode.value),
        ("--executors", layout.executors),
        ("--executors-per-node", layout.executors_per_node),
        ("--cores-per-executor", layout.cores_per_executor),
        ("--threads-per-core", layout.threads_per_core),
        (
            "--memory-per-executor",
            jvm_size(layout.memory_per_executor) if layout.memory_per_executor else None,
        ),
        ("--bind", request.binding.value if request.binding is not Binding.NONE else None),
        ("--mem-policy", request.mem_policy.value if request.mem_policy else None),
        (
            "--pu-order",
            request.pu_order.value if request.pu_order is not PuOrder.CORES_FIRST else None,
        ),
        ("--nodes", str(request.only_nodes) if request.only_nodes is not None else None),
        *_device_options(layout.resources),
        (
            "--numa-balancing",
            None if request.numa_balancing is None else ("on" if request.numa_balancing else "off"),
        ),
    ]


def _device_options(resources: tuple[tuple[str, int], ...]) -> list[tuple[str, object]]:
    """The devices each executor owns, as ``run`` spells them: GPUs by their own option."""
    return [
        ("--gpus-per-executor", amount) if name == "gpu" else ("--resource", f"{name}={amount}")
        for name, amount in resources
    ]


def _run_options(request: RunRequest) -> list[tuple[str, object]]:
    """``run``'s options of how the run goes (a stream's, the times, the repetitions, where
    its results and data go, measurement), in its order; a value None: left out."""
    duration = request.stop_after_s  # your application: stopped after it
    if duration is None and request.duration_s != STREAM_WINDOW_S:  # a stream's measured window
        duration = request.duration_s
    return [
        ("--rate", f"{request.rate:g}" if request.rate != STREAM_RATE else None),
        ("--duration", _seconds(duration) if duration is not None else None),
        (
            "--stream-warmup",
            _seconds(request.stream_warmup_s)
            if request.stream_warmup_s != STREAM_WARMUP_S
            else None,
        ),
        ("--time", request.time if request.time != DEFAULT_TIME else None),
        ("--repeat", request.repeat if request.repeat != 1 else None),
        ("--warmup", request.warmup if request.warmup else None),
        ("--out", str(request.out) if request.out != DEFAULT_OUT else None),
        ("--cluster", str(request.cluster_dir) if request.cluster_dir else None),
        ("--master", request.venue.master_url),
        ("--data", str(request.data_root) if request.data_root else None),
        ("--timeout", f"{request.timeout_s:g}" if request.timeout_s != TIMEOUT_S else None),
        ("--interval", _seconds(request.interval_s) if request.interval_s != 1.0 else None),
    ]


def run_command(request: RunRequest, application: Application | None = None) -> str:
    """The ``numaspark run`` command line that asks for ``request``, quoted for a shell."""
    return shlex.join(["numaspark", "run", *run_argv(request, application)])
