"""The options several commands share, declared once, and what they mean.

typer reads a command's options from its signature; the ``Annotated`` aliases
below are those options. ``@with_placement`` gives a command the eleven placement
options at once (typer has no option groups), handed to it as one `Where`, the devices
each executor owns among them;
``@with_cluster`` the seven that say where its runs go, as one `ClusterOptions`;
``@with_application`` those that name a user's application, as one `AppOptions`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from numaspark.errors import UsageError
from numaspark.experiment.venue import GIVEN_ON_HOSTS, HERE, ClusterAt, SshHosts, Venue
from numaspark.hosts import Inventory, load_inventory, parse_hosts, read_topology
from numaspark.placement import Binding, Layout, MemPolicy, Mode, PuOrder, plan
from numaspark.placement.devices import parse_resources, refuse_missing_here
from numaspark.topology import load
from numaspark.topology.cpuset import CpuSet
from numaspark.units import parse_duration, parse_pairs, parse_size
from numaspark.workloads import application as apps
from numaspark.workloads.catalog import get_workload, register_application


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
        raise UsageError(
            f"{option} {value}: {existing} is not writable by this user: give a "
            "directory you can write"
        )
    if value != param.default:  # named by the user: made now (root passes access() anywhere)
        try:
            value.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"{option} {value}: cannot make it ({exc.strerror}): give a "
                "directory this user can write"
            ) from None
    return value


Opt = typer.Option
XmlOpt = Annotated[
    Path | None,
    Opt(
        "--xml",
        help="Another server's topology as hwloc XML, saved there by lstopo-no-graphics --of xml > f.xml.",
    ),
]
SyntheticOpt = Annotated[
    str | None,
    Opt("--synthetic", help='A hwloc synthetic description, e.g. "pack:2 numa:2 core:12 pu:2".'),
]
JsonOpt = Annotated[bool, Opt("--json", help="Print JSON (schema in docs/schemas.md).")]
# advise's, results' and report's: a SOURCE read as event logs (decide/history.py tells it)
EventLogsOpt = Annotated[
    bool,
    Opt(
        "--event-logs",
        help="Read the directory as event logs, one row per application. Without it a directory is told by what it holds: numaspark's results.jsonl (or cosched.jsonl) makes it a results directory; eventlog_v2_* directories, .inprogress logs or files whose first line is a Spark event make it a directory of event logs.",
    ),
]
InProgressOpt = Annotated[
    bool,
    Opt(
        "--in-progress",
        help="With event logs: also read those still being written (.inprogress), skipped otherwise.",
    ),
]
ExecutorsOpt = Annotated[int | None, Opt("--executors", help="Executors in total.")]
PerNodeOpt = Annotated[
    int | None, Opt("--executors-per-node", help="Executors on each NUMA node with CPUs.")
]
CoresOpt = Annotated[
    int | None,
    Opt(
        "--cores-per-executor",
        help="Task slots per executor (default: share the CPUs); with --threads-per-core, whole cores.",
    ),
]
ThreadsPerCoreOpt = Annotated[
    int | None,
    Opt(
        "--threads-per-core",
        help="SMT: hardware threads used of each core an executor owns (1 to the machine's; with --bind core or pu).",
        min=1,
    ),
]
MemoryOpt = Annotated[
    str,
    Opt("--memory-per-executor", help="Executor heap, e.g. 8g, or 'auto' to split node memory."),
]
BindOpt = Annotated[Binding, Opt("--bind", help="Binding level of each JVM that runs tasks.")]
PolicyOpt = Annotated[
    MemPolicy | None,
    Opt(
        "--mem-policy",
        help="Memory policy (default: bind when numactl binds, preferred when the plugin binds from inside on a cluster numaspark did not start, the kernel's when unbound).",
    ),
]
NodesOpt = Annotated[
    str | None, Opt("--nodes", help="Use only these NUMA nodes for executors, e.g. 0 or 0-1.")
]
PuOrderOpt = Annotated[
    PuOrder,
    Opt("--pu-order", help="For --bind pu: one thread per core first, or siblings together."),
]
GpusOpt = Annotated[
    int | None,
    Opt(
        "--gpus-per-executor",
        help="GPUs each executor owns: each node runs as many executors as its GPUs give, bound to that node (Spark's spark.executor.resource.gpu.amount).",
    ),
]
ResourceOpt = Annotated[
    list[str] | None,
    Opt(
        "--resource",
        help="NAME=N: devices of another kind each executor owns, as --gpus-per-executor (gpu, nic, nvme, accelerator); repeat for several.",
    ),
]
OutOpt = Annotated[
    Path, Opt("--out", help="Directory for results.jsonl and run artefacts.", callback=writable_dir)
]
DataOpt = Annotated[
    Path | None,
    Opt(
        "--data",
        help="Where generated inputs are (default: ./numaspark-data).",
        callback=writable_dir,
    ),
]
SizeOpt = Annotated[
    str,
    Opt(
        "--size", help="The input size: tiny, small, large, huge, bytes (64MB) or rows (1000rows)."
    ),
]
RepeatOpt = Annotated[
    int,
    Opt(
        "--repeat",
        help="Measured iterations per configuration: a built-in workload runs them in one application, your application once per iteration.",
    ),
]
WarmupOpt = Annotated[
    int, Opt("--warmup", help="Warm-up iterations before the measured ones (stored, not counted).")
]
ConfOpt = Annotated[
    list[str] | None, Opt("--conf", help="Extra Spark setting KEY=VALUE (repeatable).")
]
ParamOpt = Annotated[
    list[str] | None,
    Opt("--param", help="Workload parameter KEY=VALUE (repeatable; see workloads)."),
]
CompareTimeOpt = Annotated[
    str | None,
    Opt(
        "--time",
        help="Compare your applications by app, job or submit time (default: what each run stored).",
    ),
]
MixedOpt = Annotated[
    bool,
    Opt(
        "--mixed",
        help="Compare runs of different clusters, hosts or topologies too (refused otherwise: their times do not compare).",
    ),
]
ResumeOpt = Annotated[bool, Opt("--resume", help="Skip configurations already stored in --out.")]
WorkloadArg = Annotated[str, typer.Argument(help="Workload name (numaspark workloads).")]
StudyWorkloadArg = Annotated[
    str | None,
    typer.Argument(
        help="A workload's name (numaspark workloads), your application (./job.py, ./job.jar), or nothing and your spark-submit line after '--'.",
        show_default=False,
    ),
]
TimeOpt = Annotated[
    str,
    Opt(
        "--time",
        help="Your application's time that is compared: app (start to end, event log), job (its jobs' spans, no start-up) or submit (spark-submit's wall time).",
    ),
]
HostOpt = Annotated[
    str | None,
    Opt("--host", help="A host over SSH: a name in --hosts-file or [user@]address[:port]."),
]
HostsOpt = Annotated[
    str | None,
    Opt("--hosts", help="Hosts over SSH: a,b,c ([user@]address[:port]) or names in --hosts-file."),
]
HostsFileOpt = Annotated[
    Path | None,
    Opt(
        "--hosts-file", help="A TOML inventory of hosts: address, user, port, key (docs/hosts.md)."
    ),
]


def topology_of(
    xml: Path | None = None,
    synthetic: str | None = None,
    host: str | None = None,
    hosts_file: Path | None = None,
):
    """The topology the options name: a hwloc XML file, a synthetic description, a host read
    over SSH (a name in ``hosts_file`` or ``[user@]address[:port]``), or this machine."""

    if host is None:
        return load(xml=xml, synthetic=synthetic)

    if xml is not None or synthetic is not None:
        raise UsageError("give one of --host, --xml and --synthetic")
    return read_topology(inventory_of(None if hosts_file else host, hosts_file).get(host))


def inventory_of(hosts: str | None, hosts_file: Path | None):
    """The hosts ``--hosts`` and ``--hosts-file`` name (the file's, narrowed to ``--hosts``
    when both are given); None when neither is."""

    if hosts_file is None:
        return parse_hosts(hosts) if hosts is not None else None
    inventory = load_inventory(hosts_file)
    if hosts is None:
        return inventory
    return Inventory(
        tuple(inventory.get(n.strip()) for n in hosts.split(",")),
        inventory.driver_address,
        inventory.encrypt,
    )


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
    threads_per_core: int | None = None
    gpus_per_executor: int | None = None
    resource: list[str] | None = None

    @property
    def only_nodes(self) -> CpuSet | None:
        return CpuSet.parse(self.nodes) if self.nodes is not None else None

    @property
    def resources(self) -> tuple[tuple[str, int], ...]:
        """The devices each executor owns, by Spark resource name (--gpus-per-executor,
        --resource), checked."""
        return parse_resources(self.gpus_per_executor, self.resource or [])

    def layout(self, mode: Mode, driver_cores: int = 1, driver_memory: str = "1g") -> Layout:
        memory = self.memory_per_executor
        return Layout(
            executors=self.executors,
            executors_per_node=self.executors_per_node,
            cores_per_executor=self.cores_per_executor,
            memory_per_executor=None
            if memory == "auto"
            else parse_size(memory, "--memory-per-executor"),
            driver_cores=driver_cores,
            driver_memory=parse_size(driver_memory, "--driver-memory"),
            mode=mode,
            threads_per_core=self.threads_per_core,
            resources=self.resources,
        )

    def place(self, topo, mode: Mode, **driver):
        return plan(
            topo,
            self.layout(mode, **driver),
            self.bind,
            self.mem_policy,
            self.pu_order,
            only_nodes=self.only_nodes,
        )

    def check_here(self, topo) -> None:
        """On this machine, where numaspark starts the JVMs (run, cluster up, launch): a
        device kind it lacks is one line that points to ``plan --xml``."""
        refuse_missing_here(topo, self.resources)

    def place_here(self, topo, mode: Mode, **driver):
        """`place` on this machine, checked first (`check_here`)."""
        self.check_here(topo)
        return self.place(topo, mode, **driver)


WHERE = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=option)
    for name, option, default in (
        ("executors", ExecutorsOpt, None),
        ("executors_per_node", PerNodeOpt, None),
        ("cores_per_executor", CoresOpt, None),
        ("memory_per_executor", MemoryOpt, "auto"),
        ("bind", BindOpt, Binding.NONE),
        ("mem_policy", PolicyOpt, None),
        ("nodes", NodesOpt, None),
        ("pu_order", PuOrderOpt, PuOrder.CORES_FIRST),
        ("threads_per_core", ThreadsPerCoreOpt, None),
        ("gpus_per_executor", GpusOpt, None),
        ("resource", ResourceOpt, None),
    )
]


def option_group(argument: str, parameters: list[inspect.Parameter], make):
    """A decorator that gives a command ``parameters`` as one argument, ``argument``, made by
    ``make(**values)``. typer reads a command's options from its signature and has no option
    groups of its own, so the wrapper shows the command's own parameters and then these."""

    def decorate(command):
        own = [
            p
            for p in inspect.signature(command, eval_str=True).parameters.values()
            if p.name != argument
        ]

        @functools.wraps(command)
        def wrapper(**options):
            grouped = make(**{p.name: options.pop(p.name) for p in parameters})
            return command(**{argument: grouped}, **options)

        wrapper.__signature__ = inspect.Signature([*own, *parameters])
        return wrapper

    return decorate


# the eleven placement options, handed to a command as one ``where: Where``
with_placement = option_group("where", WHERE, Where)


# --- where the runs go: this machine, hosts, or a cluster (experiment/venue.py) ------------

CLUSTER = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=option)
    for name, option, default in (
        (
            "master",
            Annotated[
                str | None,
                Opt(
                    "--master",
                    help="A cluster numaspark did not start: spark://HOST:PORT, yarn, k8s://URL.",
                ),
            ],
            None,
        ),
        (
            "master_ui",
            Annotated[
                str | None,
                Opt(
                    "--master-ui",
                    help="With --master spark://: the master's web UI, whose status sizes the run (default: port 8080 on the master's host).",
                ),
            ],
            None,
        ),
        (
            "executor_wait",
            Annotated[
                str,
                Opt(
                    "--executor-wait",
                    help="With --master: stop an application that has no executor after this long (executors that die as they start stop it at once).",
                    envvar="NUMASPARK_EXECUTOR_WAIT",
                ),
            ],
            "300s",
        ),
        (
            "driver_host",
            Annotated[
                str | None,
                Opt(
                    "--driver-host",
                    help="With --master or --hosts: the address the executors reach the driver at (default: the local address the route to the cluster leaves from).",
                ),
            ],
            None,
        ),
        (
            "python",
            Annotated[
                str | None,
                Opt(
                    "--python",
                    help="With --master: the Python the executors run on their hosts (spark.pyspark.python; default: python3).",
                ),
            ],
            None,
        ),
        ("hosts", HostsOpt, None),
        ("hosts_file", HostsFileOpt, None),
        (
            "xml",
            Annotated[
                Path | None,
                Opt(
                    "--xml",
                    help="The topology of the machine the runs are on where numaspark cannot read it: with --master, the cluster's hosts (hwloc XML, saved on one by lstopo-no-graphics --of xml > f.xml; default: learned from an earlier run, else its manager's cores and memory); with tune --replay, the table's.",
                ),
            ],
            None,
        ),
        (
            "synthetic",
            Annotated[
                str | None,
                Opt(
                    "--synthetic",
                    help='As --xml, a hwloc synthetic description, e.g. "pack:2 numa:2 core:12 pu:2".',
                ),
            ],
            None,
        ),
    )
]


@dataclass(frozen=True)
class ClusterOptions:
    """Where a command's runs go, as its options name it (``@with_cluster``): nothing, for
    this machine; ``--master`` or ``--hosts``/``--hosts-file`` for a cluster."""

    master: str | None = None
    master_ui: str | None = None
    executor_wait: str = "300s"
    driver_host: str | None = None
    python: str | None = None
    hosts: str | None = None
    hosts_file: Path | None = None
    xml: Path | None = None  # the cluster's hosts' topology (tune --replay: the table's)
    synthetic: str | None = None

    @classmethod
    def from_table(cls, table: dict[str, str], source: str) -> ClusterOptions:
        """A sweep spec's ``[cluster]`` table (experiment/spec.py's ``cluster_table``)."""
        values = dict(table)
        for key in ("hosts_file", "xml"):  # a file named relative to the spec
            if key in values:
                given = Path(values[key]).expanduser()
                values[key] = given if given.is_absolute() else Path(source).parent / given
        return cls(**values)

    @property
    def names_cluster(self) -> bool:
        """Whether they send runs to a cluster (--master, --hosts or --hosts-file)."""
        return any(v is not None for v in (self.master, self.hosts, self.hosts_file))

    def machine(self):
        """--xml's or --synthetic's topology; None when neither is given."""
        if self.xml is None and self.synthetic is None:
            return None
        return topology_of(self.xml, self.synthetic)

    def over(self, other: ClusterOptions) -> ClusterOptions:
        """These options where given, ``other``'s (a spec's [cluster] table) elsewhere."""
        mine = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != f.default
        }
        return dataclasses.replace(other, **mine)

    def venue(self, master: str | None = None) -> Venue:
        """Where they send runs (``master``: a spark-submit line's, when the options name
        none), with its hosts' topology where --xml or --synthetic gives it, checked: this
        machine when they name no cluster."""
        master = master or self.master
        wait_s = parse_duration(self.executor_wait, "--executor-wait")  # checked anywhere
        inventory = inventory_of(self.hosts, self.hosts_file)
        if master is not None and inventory is not None:
            raise UsageError("give one of --master and --hosts (or --hosts-file), not both")
        if master is not None:
            return ClusterAt(
                master=master,
                ui=self.master_ui,
                driver_host=self.driver_host,
                executor_wait_s=wait_s,
                python=self.python,
                node_topology=self.machine(),
            )
        if wait_s <= 0:
            raise UsageError("--executor-wait must be positive, e.g. --executor-wait 60s")
        given = next(
            (
                o
                for o, v in (
                    ("--driver-host", self.driver_host if inventory is None else None),
                    ("--python", self.python),
                    ("--master-ui", self.master_ui),
                    ("--xml", self.xml),
                    ("--synthetic", self.synthetic),
                )
                if v
            ),
            None,
        )
        if inventory is not None:
            if given == "--master-ui":
                raise UsageError(
                    "--master-ui is a standalone master's web UI: give --master spark://"
                )
            if given == "--python":
                raise UsageError(
                    "--python names the executors' Python on a cluster numaspark did not "
                    "start (--master); on --hosts give each host's python in the hosts file"
                )
            if given is not None:
                raise UsageError(GIVEN_ON_HOSTS)  # before a file is read for nothing
            return SshHosts(hosts=inventory, driver_host=self.driver_host)
        if given in ("--xml", "--synthetic"):
            raise UsageError(
                f"{given} describes the hosts of a cluster (--master), or a tune --replay "
                "table's machine: runs here are planned on this machine's own topology "
                f"(to plan another server without running anything: numaspark plan {given})"
            )
        if given is not None:
            raise UsageError(
                f"{given} is for a cluster on other hosts (--master, and --driver-host "
                "for --hosts too): here the driver and executors share this machine"
            )
        return HERE


# the options that say where runs go, handed to a command as one ``on: ClusterOptions``
with_cluster = option_group("on", CLUSTER, ClusterOptions)


def venue_of(on: ClusterOptions, workload) -> Venue:
    """Where a command's runs of ``workload`` go: the options' venue, or the ``--master`` of
    the user's spark-submit line (``local[N]`` there: this machine)."""
    _, _, master = line_target(Where(), Mode.LOCAL, on.master, workload)
    return on.venue(master)


def params(param: list[str] | None) -> dict[str, str]:
    return parse_pairs(param or [], "--param", "iterations=5")


def conf_of(conf: list[str] | None) -> dict[str, str]:
    return parse_pairs(conf or [], "--conf", "spark.executor.extraJavaOptions=-XX:+UseNUMA")


def check_repeat(repeat: int, warmup: int) -> None:
    if repeat < 1 or warmup < 0:
        raise UsageError("--repeat must be at least 1 and --warmup at least 0")


# --- a user's application as the workload (workloads/application.py) -----------------------

APPLICATION = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option)
    for name, option in (
        (
            "app_args",
            Annotated[
                list[str] | None,
                typer.Argument(
                    help="Your application's arguments, after '--' (or: -- spark-submit [its options] APP [ARGS]).",
                    show_default=False,
                ),
            ],
        ),
        (
            "main_class",
            Annotated[
                str | None,
                Opt(
                    "--class",
                    help="Your JAR's main class (default: the Main-Class of its manifest).",
                ),
            ],
        ),
        (
            "name",
            Annotated[
                str | None,
                Opt(
                    "--name",
                    help="The name your application's runs are shown by (default: the file's stem).",
                ),
            ],
        ),
        (
            "py_files",
            Annotated[
                str | None, Opt("--py-files", help="Your application's spark-submit --py-files.")
            ],
        ),
        (
            "files",
            Annotated[str | None, Opt("--files", help="Your application's spark-submit --files.")],
        ),
        (
            "jars",
            Annotated[str | None, Opt("--jars", help="Your application's spark-submit --jars.")],
        ),
        (
            "packages",
            Annotated[
                str | None, Opt("--packages", help="Your application's spark-submit --packages.")
            ],
        ),
        (
            "check",
            Annotated[
                str | None,
                Opt(
                    "--check",
                    help="A command run after each of your application's runs (NUMASPARK_RUN_DIR set; not a shell); its exit status is the run's check.",
                ),
            ],
        ),
    )
]


@dataclass(frozen=True)
class AppOptions:
    """What names a user's application besides its file or line (``@with_application``)."""

    app_args: list[str] | None = None
    main_class: str | None = None
    name: str | None = None
    py_files: str | None = None
    files: str | None = None
    jars: str | None = None
    packages: str | None = None
    check: str | None = None

    def workload(self, text: str | None):
        """The workload ``text`` names: a built-in, or the user's application (a file, or a
        spark-submit line given after ``--``), registered under its name for this process."""
        if text is None:
            raise UsageError(
                "give a workload (numaspark workloads), your application (a .py or "
                "a .jar), or your line after '--': -- spark-submit ... APP"
            )
        args = list(self.app_args or [])
        if text == "spark-submit" or text.endswith("/spark-submit"):
            if self.main_class or self.py_files or self.files or self.jars or self.packages:
                raise UsageError(
                    "--class, --py-files, --files, --jars and --packages belong in "
                    "your spark-submit line when you give one"
                )
            return register_application(apps.from_line([text, *args], self.name, self.check))
        if apps.is_application(text):
            options = {
                "--py-files": self.py_files,
                "--files": self.files,
                "--jars": self.jars,
                "--packages": self.packages,
            }
            return register_application(
                apps.from_file(text, args, self.main_class, options, self.name, self.check)
            )
        given = [
            o
            for o, v in (
                ("arguments after --", args),
                ("--class", self.main_class),
                ("--check", self.check),
                ("--py-files", self.py_files),
                ("--jars", self.jars),
                ("--files", self.files),
                ("--packages", self.packages),
            )
            if v
        ]
        if given:
            raise UsageError(
                f"{text} is a built-in workload: {', '.join(given)} are for your own "
                "application (a .py or a .jar)"
            )
        return get_workload(text)


# the options that name a user's application, handed to a command as one
# ``application: AppOptions`` (its arguments come last, after ``--``)
with_application = option_group("application", APPLICATION, AppOptions)


def line_target(
    where: Where, mode, master: str | None, workload
) -> tuple[Where, object, str | None]:
    """Where a spark-submit line's own settings say it runs, for what numaspark's options
    leave open: its ``--master`` (``local[N]`` is local mode with N task slots; any other is
    a cluster numaspark did not start) and its executors, cores and heap."""
    application = getattr(workload, "application", None)
    if application is None or not application.given_line:
        return where, mode, master
    line = application.line
    changes: dict = {}
    if line.master and line.master.startswith("local"):
        if master is not None:
            raise UsageError(f"your line runs {line.master} and --master says {master}: give one")
        mode = Mode.LOCAL
        slots = line.master.removeprefix("local").strip("[]").split(",")[0]
        if where.cores_per_executor is None and slots.isdigit():
            changes["cores_per_executor"] = int(slots)
        elif where.cores_per_executor is None and not slots:
            changes["cores_per_executor"] = 1
    elif line.master:
        if master is not None and master != line.master:
            raise UsageError(
                f"your line's --master {line.master} and numaspark's --master "
                f"{master} differ: give one"
            )
        master = line.master
    if where.executors is None and where.executors_per_node is None and line.num_executors:
        changes["executors"] = _count(line.num_executors, "--num-executors")
    if where.cores_per_executor is None and line.executor_cores:
        changes["cores_per_executor"] = _count(line.executor_cores, "--executor-cores")
    if where.memory_per_executor == "auto" and line.executor_memory:
        changes["memory_per_executor"] = line.executor_memory
    return dataclasses.replace(where, **changes), mode, master


def _count(text: str, option: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"your line's {option} {text!r}: give a whole number of at least 1")
    return int(text)


def cosched_workload(text: str) -> str:
    """A co-scheduled workload's name: a built-in, or an application given with its
    arguments as one word (``'./etl.py in out'``, split as a shell would, never run by one)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{text!r}: {exc}: quote it as a shell would") from None
    if not words:
        raise UsageError("an empty workload: give a name or your application")
    if len(words) == 1 and not apps.is_application(words[0]):
        return get_workload(words[0]).name
    return AppOptions(app_args=words[1:]).workload(words[0]).name
