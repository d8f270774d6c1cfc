"""The options several commands share, declared once, and what they mean.

typer reads a command's options from its signature; the ``Annotated`` aliases
below are those options. ``@with_cluster`` gives a command the options that say where its
runs go at once (typer has no option groups), handed to it as one `ClusterOptions`. The
eleven placement options (``@with_placement``, one `PlacementOptions`) are in
placement_options.py, those that name a user's application (``@with_application``, one
`AppOptions`) in app_options.py, and how a group is made in option_group.py; their names are
importable from here too.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from numaspark.cli.app_options import APPLICATION as APPLICATION
from numaspark.cli.app_options import AppOptions as AppOptions
from numaspark.cli.app_options import cosched_workload as cosched_workload
from numaspark.cli.app_options import line_settings
from numaspark.cli.app_options import with_application as with_application
from numaspark.cli.option_group import Opt, option_group
from numaspark.cli.option_group import options_of as options_of
from numaspark.cli.placement_options import PLACEMENT as PLACEMENT
from numaspark.cli.placement_options import PlacementOptions
from numaspark.cli.placement_options import with_placement as with_placement
from numaspark.errors import UsageError
from numaspark.experiment.venue import GIVEN_ON_HOSTS, HERE, ClusterAt, SshHosts, Venue
from numaspark.hosts import Inventory, host_of, load_inventory, parse_hosts, read_topology
from numaspark.placement import Mode
from numaspark.topology import load
from numaspark.units import parse_duration, parse_pairs


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
    return read_topology(host_of(host, load_inventory(hosts_file) if hosts_file else None))


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
        (
            "image",
            Annotated[
                str | None,
                Opt(
                    "--image",
                    help="With --master k8s://: the image of the driver and executor pods (spark.kubernetes.container.image): Java 17, pyspark's jars and numaspark's plugin at /opt/numaspark/numaspark-affinity.jar (docs/kubernetes-local.md builds one).",
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
    image: str | None = None
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
                image=self.image,
            )
        if wait_s <= 0:
            raise UsageError("--executor-wait must be positive, e.g. --executor-wait 60s")
        given = next(
            (
                o
                for o, v in (
                    ("--driver-host", self.driver_host if inventory is None else None),
                    ("--python", self.python),
                    ("--image", self.image),
                    ("--master-ui", self.master_ui),
                    ("--xml", self.xml),
                    ("--synthetic", self.synthetic),
                )
                if v
            ),
            None,
        )
        if inventory is not None:
            return self._hosts(inventory, given)
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

    def _hosts(self, inventory, given: str | None) -> Venue:
        """--hosts or --hosts-file: their venue, or the option given that is not for them."""
        if given == "--master-ui":
            raise UsageError("--master-ui is a standalone master's web UI: give --master spark://")
        if given == "--python":
            raise UsageError(
                "--python names the executors' Python on a cluster numaspark did not "
                "start (--master); on --hosts give each host's python in the hosts file"
            )
        if given is not None:
            raise UsageError(GIVEN_ON_HOSTS)  # before a file is read for nothing
        return SshHosts(hosts=inventory, driver_host=self.driver_host)


# the options that say where runs go, handed to a command as one ``on: ClusterOptions``
with_cluster = option_group("on", CLUSTER, ClusterOptions)


def venue_of(on: ClusterOptions, workload) -> Venue:
    """Where a command's runs of ``workload`` go: the options' venue, or the ``--master`` of
    the user's spark-submit line (``local[N]`` there: this machine)."""
    _, _, master = line_settings(PlacementOptions(), Mode.LOCAL, on.master, workload)
    return on.venue(master)


def params(param: list[str] | None) -> dict[str, str]:
    return parse_pairs(param or [], "--param", "iterations=5")


def conf_of(conf: list[str] | None) -> dict[str, str]:
    return parse_pairs(conf or [], "--conf", "spark.executor.extraJavaOptions=-XX:+UseNUMA")


def check_repeat(repeat: int, warmup: int) -> None:
    if repeat < 1 or warmup < 0:
        raise UsageError("--repeat must be at least 1 and --warmup at least 0")
