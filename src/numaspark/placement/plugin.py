"""The contract with jvm/ (the affinity library and its Spark plugin), in one place.

Both Python sides that talk to the plugin import it from here: the renderer
that turns a placement into Spark conf (placement/render.py) and the runner
that reads what the plugin recorded (spark/affinity.py, readback/proc.py). The
Java side parses the same keys in ``AffinityConf.java`` and writes the same
fields (``TaskRecord``, ``PlacementReport``); ``jvm/contract.json`` lists both,
and a test on each side checks its names against it
(tests/test_affinity_contract.py, ContractTest.java).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Self

PLUGIN_CLASS = "io.numaspark.affinity.spark.AffinityPlugin"
CONF_PREFIX = "spark.numaspark.affinity."  # AffinityConf.PREFIX
LEVEL_KEY = CONF_PREFIX + "level"  # none, node, core or pu
RECORD_DIR_KEY = CONF_PREFIX + "recordDir"  # where each executor appends one line per task
SLOTS_ENV = "NUMASPARK_AFFINITY_CORES"  # AffinityConf.DEFAULT_ENV: this JVM's slots
RECORD_DIR = "affinity"  # the records' directory inside a run directory
# the driver plugin appends every executor's placement reports here (one JSON line each)
PLACEMENT_KEY = CONF_PREFIX + "placementFile"
REPORT_INTERVAL_KEY = CONF_PREFIX + "reportIntervalMs"  # how often executors report (5000)
PLACEMENT_FILE = "placement.jsonl"  # the reports' file inside a run directory
# with Spark's event log on, the driver writes the reports into it as events of this class,
# in batches every so many milliseconds (30000; the contract's placement_event)
PLACEMENT_EVENT = "io.numaspark.affinity.spark.NumaPlacementEvent"
EVENT_LOG_INTERVAL_KEY = CONF_PREFIX + "eventLogIntervalMs"
# level node: the host-local directory of node-slot lock files executors spread by, and
# where their memory goes (preferred, bind or interleave); the plugin's defaults unless set
LOCK_DIR_KEY = CONF_PREFIX + "lockDir"
DEFAULT_LOCK_DIR = "/tmp/numaspark-affinity"  # the plugin's default (jvm/contract.json)
MEM_POLICY_KEY = CONF_PREFIX + "memPolicy"
# level node: the Spark resources (comma-separated; none: none) whose devices choose the node an
# executor binds to, on a cluster whose manager assigns them (the plugin's default: gpu)
DEVICE_RESOURCE_KEY = CONF_PREFIX + "deviceResource"
JAR_NAME = "numaspark-affinity.jar"
JAR_ENV = "NUMASPARK_AFFINITY_JAR"  # overrides where the built jar is


def jar_path() -> Path:
    """Where the plugin's jar is: ``NUMASPARK_AFFINITY_JAR``; else the one built from jvm/
    into the venv (a checkout, beside the probe kernel); else the one an installed wheel
    carries (built once, no Maven or JDK compiler needed)."""
    override = os.environ.get(JAR_ENV)
    if override:
        return Path(override)
    built = Path(sys.prefix) / "lib" / "numaspark" / JAR_NAME
    packaged = Path(__file__).resolve().parents[1] / "jvm" / JAR_NAME
    return packaged if packaged.exists() and not built.exists() else built


def slots_env(slots: Iterable[object]) -> dict[str, str]:
    """The environment that gives one JVM its slots (cores as CPU lists, ';'-separated)."""
    text = ";".join(str(s) for s in slots)
    return {SLOTS_ENV: text} if text else {}


@dataclass(frozen=True)
class TaskRecord:
    """One task as the plugin recorded it (a line of ``RECORD_DIR/affinity-*.jsonl``): the
    fields numaspark reads, by their JSON names (the contract's ``task_record``). A field
    the line lacks is None (a task with no TaskContext, an unpinned task)."""

    executor: str | None = None
    pid: int | None = None
    level: str | None = None  # none, node, core or pu
    task: int | None = None
    stage: int | None = None
    partition: int | None = None
    slot: int | None = None
    cpus: str | None = None  # the slot's CPUs; None: unpinned
    unpinned: str | None = None  # why, at a pinning level
    cpu_start: int | None = None  # -1: unknown
    cpu_end: int | None = None
    start_ms: int | None = None
    end_ms: int | None = None

    @classmethod
    def from_json(cls, line: dict[str, Any]) -> Self:
        return cls(**{f.name: line.get(f.name) for f in fields(cls)})


@dataclass(frozen=True)
class PlacementReport:
    """One executor's report of where it runs (a line of ``PLACEMENT_FILE``): the fields
    numaspark reads, by their JSON names (the contract's ``placement_report``)."""

    executor: str | None = None
    host: str | None = None
    pid: int | None = None
    cpus: str | None = None
    mems: str | None = None
    policy: str | None = None
    bytes_per_node: dict[str, int] | None = None
    home_nodes: str | None = None  # the nodes its memory should be on: the policy's, else CPUs'
    local_share: float | None = None  # of its and its Python processes' pages, on home_nodes
    remote_bytes: int | None = None
    pinned_tasks: int | None = None
    task_migrations: int | None = None
    time_ms: int | None = None  # when it was read (epoch milliseconds)
    numa_balancing: str | None = None  # its host's kernel.numa_balancing (None: unreadable)
    cpu_s: float | None = None  # the JVM's own CPU time so far (None: an older plugin)
    # level node, chosen from inside: the nodes, why (its slot in the lock directory), and
    # what was applied (threads bound, memory migrated, policies set) or why it ran unbound
    chosen_nodes: str | None = None
    choice: str | None = None
    binding: str | None = None
    # an executor's first report only: its host as sysfs shows it (every CPU of the host),
    # which numaspark keeps to plan the next run on that cluster (topology/reported.py)
    host_topology: dict[str, Any] | None = None
    # the executor's Python processes (pyspark.daemon and its workers), read from inside by
    # walking its child processes: pid, role, cpus, mems, policy, bytes_per_node, cpu_s,
    # rss_bytes, threads (readback/python_processes.py PythonProcess)
    python: list[dict[str, Any]] | None = None
    # the devices Spark gave the executor (its resources' addresses): resource, address,
    # pci_busid, node (absent: not known), unknown (why not); read from sysfs inside its host
    devices: list[dict[str, Any]] | None = None
    # the interface its traffic to the driver leaves by: name, node (absent: not known),
    # pci_busid, route (how it was found), unknown (why its node is not known)
    nic: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, line: dict[str, Any]) -> Self:
        return cls(**{f.name: line.get(f.name) for f in fields(cls)})
