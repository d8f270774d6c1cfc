"""What numaspark learned of a cluster it did not start: each host's topology, as the affinity
plugin reported it from inside the first executor there, kept for the next plan of that
cluster (numaspark cannot read those hosts itself; a standalone worker or a YARN node says
its cores and memory, never its NUMA nodes).

One file per cluster, ``STATE/clusters/<hash of the cluster's name>.json`` (STATE is
numaspark's state directory: ``$NUMASPARK_STATE_DIR``, else ``~/.cache/numaspark``), written
whole or not at all. A cluster is named by its master URL; YARN's by its ResourceManager's
address in ``HADOOP_CONF_DIR``'s yarn-site.xml (``yarn://HOST:PORT``), since ``yarn`` names
whichever cluster the configuration points at.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from numaspark import records
from numaspark.errors import UsageError
from numaspark.jsonlines import read_json_lines
from numaspark.placement.plugin import PlacementReport
from numaspark.records import Shape
from numaspark.spark.yarn import RM_KEY, conf_dir, read_site
from numaspark.supervise.ledger import state_base
from numaspark.topology import Topology
from numaspark.topology.reported import from_report

#: Version of a learned cluster's file. History:
#: 1 - first version: the cluster, and each host's topology (numaspark.topology/1) and when.
LEARNED_SCHEMA = "numaspark.learned/1"

Warn = Callable[[str], None]


@dataclass(frozen=True)
class LearnedHost:
    """One host's topology and when the plugin reported it."""

    host: str
    topology: Topology
    learned: datetime  # UTC

    # stored under its host's name: when, then what
    __json__: ClassVar[Shape] = Shape(skip=("host",), order=("learned", "topology"))


@dataclass(frozen=True)
class LearnedCluster:
    """Every host of one cluster whose topology numaspark has learned, by host name."""

    cluster: str
    hosts: tuple[LearnedHost, ...]  # by name

    def host(self, name: str) -> LearnedHost | None:
        return next((h for h in self.hosts if h.host == name), None)

    def largest(self) -> LearnedHost:
        """The host with the most CPUs (then the first by name): a plan's one machine."""
        return min(self.hosts, key=lambda h: (-len(h.topology.online_cpus), h.host))

    def say(self) -> str:
        """Which topology a plan used, in words."""
        dates = sorted({h.learned.strftime("%Y-%m-%d %H:%M UTC") for h in self.hosts})
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        names = ", ".join(h.host for h in self.hosts)
        whose = f"{names}'s topology" if len(self.hosts) == 1 else f"the topologies of {names}"
        return (
            f"planned with {whose}, learned from the plugin's report on {when}; "
            "--xml/--synthetic override"
        )


def cluster_name(master: str, hadoop_conf: Path | None = None) -> str:
    """What names the cluster ``master`` points at: the master URL, or for ``yarn`` its
    ResourceManager's address (``yarn`` alone when there is no yarn-site.xml to read it from)."""
    if master != "yarn":
        return master
    directory = hadoop_conf or conf_dir()
    site = directory / "yarn-site.xml" if directory else None
    if site is None or not site.is_file():
        return "yarn"
    try:
        return f"yarn://{read_site(site)[RM_KEY]}"
    except UsageError:
        return "yarn"


def cluster_file(cluster: str) -> Path:
    digest = hashlib.sha256(cluster.encode()).hexdigest()[:16]
    return state_base() / "clusters" / f"{digest}.json"


def load_learned(cluster: str, warn: Warn) -> LearnedCluster | None:
    """What was learned of ``cluster``; None when nothing was, or its file cannot be read (one
    warning: the plan goes on without it, and the next run writes it afresh)."""
    path = cluster_file(cluster)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        if data.get("schema") != LEARNED_SCHEMA or data.get("cluster") != cluster:
            raise ValueError(f"not {LEARNED_SCHEMA} of {cluster}")
        hosts = tuple(
            records.load(LearnedHost, {**entry, "host": name})
            for name, entry in sorted(data["hosts"].items())
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        warn(f"what was learned of {cluster} is unreadable ({path}: {exc}): planned without it")
        return None
    return LearnedCluster(cluster, hosts) if hosts else None


def reported_hosts(reports: Path, now: datetime) -> tuple[LearnedHost, ...]:
    """The first ``host_topology`` of each host among a run's placement reports."""
    found: dict[str, LearnedHost] = {}
    for line in read_json_lines(reports):
        report = PlacementReport.from_json(line)
        if report.host is None or report.host_topology is None or report.host in found:
            continue
        try:
            topology = from_report(report.host, report.host_topology)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a plugin of another version: nothing learned from it
        found[report.host] = LearnedHost(report.host, topology, now)
    return tuple(found[h] for h in sorted(found))


def learn(
    cluster: str, reports: Path, warn: Warn, now: datetime | None = None
) -> tuple[LearnedHost, ...]:
    """Keep the host topologies a run's reports carry for ``cluster``'s next plan (hosts
    learned before and not seen now are kept); the hosts that are new or changed."""
    seen = reported_hosts(reports, now or datetime.now(UTC))
    if not seen:
        return ()
    before = load_learned(cluster, warn)
    kept = {h.host: h for h in (before.hosts if before else ())}
    changed = tuple(
        h
        for h in seen
        if h.host not in kept or kept[h.host].topology.fingerprint != h.topology.fingerprint
    )
    kept.update({h.host: h for h in seen})
    data = {
        "schema": LEARNED_SCHEMA,
        "cluster": cluster,
        "hosts": {name: records.dump(kept[name]) for name in sorted(kept)},
    }
    try:
        _write_whole(cluster_file(cluster), json.dumps(data, indent=1))
    except OSError as exc:
        warn(f"what was learned of {cluster} is not kept ({exc})")
        return ()
    return changed


def _write_whole(path: Path, text: str) -> None:
    """``text`` in ``path`` whole or not at all: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
