"""A plan by devices rendered for Spark's own resource scheduling.

Spark schedules GPUs and other devices by name and address: an executor asks for
``spark.executor.resource.NAME.amount`` of them, each task for
``spark.task.resource.NAME.amount``, and learns its addresses from the cluster manager (a
standalone worker's resources file) or from a discovery script it runs as it starts. Where
numaspark starts the JVMs (``run``, ``cluster up``: one worker per executor), each worker
offers Spark exactly its executor's planned devices from a resources file of its own
(``spark.worker.resourcesFile``, `worker_env`), so the master hands that executor those, and
its environment holds their addresses in ``NUMASPARK_RESOURCE_<NAME>``, which the shipped
script (discover_resources.py, in the wheel) prints; a standing standalone worker reads the
host's from its resources file (``plan --target standalone --out DIR``). YARN and
Kubernetes hand the devices out themselves (``yarn.io/gpu``, ``nvidia.com/gpu``).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from decimal import ROUND_DOWN, Decimal
from pathlib import Path

from numaspark.placement.model import JvmPlacement, Placement

DISCOVERY_SCRIPT = Path(__file__).with_name("discover_resources.py")
RESOURCE_ENV = "NUMASPARK_RESOURCE_"  # + the resource's name in capitals: its addresses
WORKER_RESOURCES = "worker-resources.json"  # plan --target standalone --out DIR
K8S_VENDOR = "nvidia.com"  # spark.executor.resource.gpu.vendor: the pods' nvidia.com/gpu
YARN_GPU = "yarn.io/gpu"  # the YARN resource Spark maps its gpu to


def task_amount(cores: int) -> str:
    """spark.task.resource.NAME.amount: 1/cores, so each of an executor's task slots shares
    its devices; rounded down, so that Spark's 1/amount slots per device are never fewer."""
    if cores <= 1:
        return "1"
    share = (Decimal(1) / Decimal(cores)).quantize(Decimal("1e-12"), rounding=ROUND_DOWN)
    return format(share.normalize(), "f")


def resource_conf(placement: Placement, script: Path | str | None = DISCOVERY_SCRIPT) -> dict:
    """The Spark conf of each resource the plan asks for: amounts, and the discovery script
    (``script``; None where the cluster manager needs another: YARN, Kubernetes). Spark runs
    one script per resource, with no argument and the same environment: the shipped script
    serves a plan of one resource (with several, the workers' resources file hands them out)."""
    conf: dict[str, str] = {}
    cores = placement.executors[0].cores if placement.executors else 1
    resources = placement.layout.resources
    for name, amount in resources:
        conf[f"spark.executor.resource.{name}.amount"] = str(amount)
        conf[f"spark.task.resource.{name}.amount"] = task_amount(cores)
        if script is not None and len(resources) == 1:
            conf[f"spark.executor.resource.{name}.discoveryScript"] = str(script)
    return conf


def resource_env(jvm: JvmPlacement) -> dict[str, str]:
    """The environment that hands one worker (and the executor it starts) its planned
    devices, as the discovery script reads it."""
    by_name: dict[str, list[str]] = {}
    for device in jvm.devices:
        by_name.setdefault(device.resource, []).append(device.address)
    return {
        f"{RESOURCE_ENV}{name.upper().replace('.', '_').replace('-', '_')}": ",".join(addresses)
        for name, addresses in by_name.items()
    }


def worker_resources(placement: Placement) -> list[dict]:
    """A standalone worker's resources file (``spark.worker.resourcesFile``): every device
    planned for an executor of this host, by resource."""
    return allocations(placement.executors)


def allocations(jvms: Iterable[JvmPlacement]) -> list[dict]:
    """The devices planned for ``jvms``, by resource, as Spark's resources file lists them
    (``ResourceAllocation``: the component, the resource's name, its addresses)."""
    by_name: dict[str, list[str]] = {}
    for jvm in jvms:
        for device in jvm.devices:
            by_name.setdefault(device.resource, []).append(device.address)
    return [
        {"id": {"componentName": "spark.worker", "resourceName": name}, "addresses": addresses}
        for name, addresses in by_name.items()
    ]


def worker_conf(entries: list[dict], resources_file: str) -> dict[str, str]:
    """What a worker is started with to offer the devices of ``entries`` (its resources file's,
    `allocations`), as -D options in SPARK_WORKER_OPTS; empty without devices."""
    conf = {
        f"spark.worker.resource.{entry['id']['resourceName']}.amount": str(len(entry["addresses"]))
        for entry in entries
    }
    return {**conf, "spark.worker.resourcesFile": resources_file} if conf else {}


def worker_env(jvm: JvmPlacement, resources_file: str, given_opts: str = "") -> dict[str, str]:
    """The environment of the worker numaspark starts for ``jvm`` (one worker per executor)
    that offers Spark exactly its planned devices: SPARK_WORKER_OPTS naming its resources file
    (after ``given_opts``, the user's own), and the addresses for the discovery script, which
    its executor inherits. Empty for an executor without devices."""
    conf = worker_conf(allocations([jvm]), resources_file)
    if not conf:
        return {}
    # Spark's launcher splits SPARK_WORKER_OPTS as a shell would: a path with a space is quoted
    options = " ".join(f"-D{shlex.quote(f'{key}={value}')}" for key, value in conf.items())
    return {
        "SPARK_WORKER_OPTS": f"{given_opts} {options}".strip(),
        **resource_env(jvm),
    }
