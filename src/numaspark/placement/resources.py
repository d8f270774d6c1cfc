"""A plan by devices rendered for Spark's own resource scheduling.

Spark schedules GPUs and other devices by name and address: an executor asks for
``spark.executor.resource.NAME.amount`` of them, each task for
``spark.task.resource.NAME.amount``, and learns its addresses from the cluster manager (a
standalone worker's resources file) or from a discovery script it runs as it starts. Where
numaspark starts the JVMs, each worker is handed its executor's planned addresses in
``NUMASPARK_RESOURCE_<NAME>`` and the shipped script (discover_resources.py, in the wheel)
prints them; a standing standalone worker reads them from its resources file
(``spark.worker.resourcesFile``). YARN and Kubernetes hand the devices out themselves
(``yarn.io/gpu``, ``nvidia.com/gpu``).
"""

from __future__ import annotations

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
    by_name: dict[str, list[str]] = {}
    for jvm in placement.executors:
        for device in jvm.devices:
            by_name.setdefault(device.resource, []).append(device.address)
    return [
        {"id": {"componentName": "spark.worker", "resourceName": name}, "addresses": addresses}
        for name, addresses in by_name.items()
    ]


def worker_conf(placement: Placement, resources_file: str) -> dict[str, str]:
    """What each worker is started with to offer them (in SPARK_WORKER_OPTS as -D options)."""
    conf = {
        f"spark.worker.resource.{entry['id']['resourceName']}.amount": str(len(entry["addresses"]))
        for entry in worker_resources(placement)
    }
    return {**conf, "spark.worker.resourcesFile": resources_file} if conf else {}
