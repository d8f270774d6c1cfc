"""Executors placed by their devices (``--gpus-per-executor N``, ``--resource NAME=N`` of
``plan``, ``run``, ``cluster up`` and ``launch``).

Rules (each tested in tests/test_plan_devices.py):
- a node runs as many executors as its devices give: floor(its devices / N), the fewest of
  any two resources asked; devices with no known node, and a node's remainder, go to none;
- each executor owns N devices of its own node, none of them another's, and is bound at the
  level asked to that node (the planner's home node);
- a request no node can hold is one line: no device of the kind, none with a known node, or
  more per executor than any node has (the planner refuses a node with fewer cores than the
  executors its devices ask for); where numaspark starts the JVMs here, a kind this machine
  lacks says so and points to ``plan --xml`` (`refuse_missing_here`);
- a device's address, as Spark's scheduler hands it out: a GPU's NVML (else CUDA) index
  where hwloc names every GPU so, else its rank in PCI bus id order; a NIC's or an NVMe
  drive's name.
"""

from __future__ import annotations

import re

from numaspark.errors import PlacementError, UsageError
from numaspark.placement.model import ExecutorDevice
from numaspark.topology import CpuSet, Topology
from numaspark.topology.model import Device

#: Spark resource names numaspark plans by, each the topology's device kind it takes
RESOURCE_KINDS = {"gpu": "gpu", "accelerator": "accelerator", "nic": "nic", "nvme": "nvme"}
#: how a message names each kind
NOUNS = {"gpu": "GPU", "accelerator": "accelerator", "nic": "NIC", "nvme": "NVMe drive"}
_NUMBERED = ("gpu", "accelerator")  # addressed by index; the others by their names
_REQUEST = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*)=(\d+)$")


def parse_resources(
    gpus_per_executor: int | None, given: list[str] | tuple[str, ...] = ()
) -> tuple[tuple[str, int], ...]:
    """``--gpus-per-executor N`` and ``--resource NAME=N`` as (name, devices per executor)."""
    requests: dict[str, int] = {}
    if gpus_per_executor is not None:
        requests["gpu"] = gpus_per_executor
    for text in given:
        found = _REQUEST.match(text.strip())
        if not found:
            raise UsageError(f"--resource {text!r}: give NAME=N, e.g. --resource gpu=2")
        name, amount = found.group(1).lower(), int(found.group(2))
        if name not in RESOURCE_KINDS:
            raise UsageError(
                f"--resource {text}: numaspark plans by the devices "
                f"{', '.join(RESOURCE_KINDS)}: give one of them"
            )
        if name in requests:
            raise UsageError(
                f"--resource {text}: {name} is asked for twice (--gpus-per-executor is "
                "--resource gpu=N): give it once"
            )
        requests[name] = amount
    for name, amount in requests.items():
        if amount < 1:
            raise UsageError(f"{asked(name, amount)}: give at least 1 device per executor")
    return tuple(requests.items())


def asked(name: str, amount: int) -> str:
    """The option as the user gives it."""
    return f"--gpus-per-executor {amount}" if name == "gpu" else f"--resource {name}={amount}"


def refuse_missing_here(topology: Topology, resources: tuple[tuple[str, int], ...]) -> None:
    """Where numaspark starts the JVMs on this machine (run, cluster up, launch): a device
    kind it lacks is one line that points to the plan of a server that has them."""
    for name, amount in resources:
        kind = RESOURCE_KINDS[name]
        if not topology.devices_of(kind):
            raise UsageError(
                f"this machine has no {name}: {asked(name, amount)} gives each executor "
                f"numaspark starts here {NOUNS[kind]}s of its own NUMA node (numaspark "
                "topology lists this machine's devices); plan --xml SERVER.xml shows a "
                "server's plan"
            )


def executors_by_node(topology: Topology, resources: tuple[tuple[str, int], ...]) -> dict[int, int]:
    """How many executors each node with allowed CPUs runs: its devices of each resource
    asked, divided by the devices per executor, the fewest of them. One line when none can."""
    nodes = [n.os_index for n in topology.cpu_nodes]
    counts = dict.fromkeys(nodes, -1)
    for name, amount in resources:
        kind = RESOURCE_KINDS[name]
        on_node = {n: len(topology.devices_of(kind, n)) for n in nodes}
        _check_holds(topology, name, amount, on_node)
        for node in nodes:
            fits = on_node[node] // amount
            counts[node] = fits if counts[node] < 0 else min(counts[node], fits)
    if not any(counts.values()):
        raise PlacementError(
            "no NUMA node holds "
            + " and ".join(f"{amount} {NOUNS[RESOURCE_KINDS[n]]}(s)" for n, amount in resources)
            + " at once: ask for fewer per executor (numaspark topology lists the devices)"
        )
    return counts


def _check_holds(topology: Topology, name: str, amount: int, on_node: dict[int, int]) -> None:
    kind = RESOURCE_KINDS[name]
    everywhere = topology.devices_of(kind)
    if not everywhere:
        raise PlacementError(
            f"{asked(name, amount)}: {topology.source} has no {NOUNS[kind]} "
            "(numaspark topology lists its devices)"
        )
    if not any(on_node.values()):
        raise PlacementError(
            f"{asked(name, amount)}: none of its {len(everywhere)} {NOUNS[kind]}(s) hangs off a "
            f"NUMA node this plan may use (allowed nodes with CPUs: "
            f"{CpuSet(on_node) or '-'}; numaspark topology shows each device's node)"
        )
    most = max(on_node.values())
    if amount > most:
        spread = ", ".join(f"node {n}: {c}" for n, c in on_node.items())
        raise PlacementError(
            f"{asked(name, amount)}: no NUMA node has {amount} {NOUNS[kind]}s ({spread}): "
            f"give at most {most}"
        )


def device_addresses(topology: Topology, kind: str) -> dict[str, str]:
    """PCI bus id -> the address Spark hands the device out by (module docstring)."""
    devices = topology.devices_of(kind)
    if kind not in _NUMBERED:
        return {d.pci_busid: d.name for d in devices}
    indexes = [d.index for d in devices]
    if None not in indexes and len(set(indexes)) == len(indexes):
        return {d.pci_busid: str(d.index) for d in devices}
    ranked = sorted(devices, key=lambda d: d.pci_busid)
    return {d.pci_busid: str(rank) for rank, d in enumerate(ranked)}


def assign_devices(
    topology: Topology, resources: tuple[tuple[str, int], ...], homes: list[int]
) -> list[tuple[ExecutorDevice, ...]]:
    """The devices of each executor (``homes``: its node, in executor order): each node's
    devices in address order, ``amount`` at a time, none given twice."""
    owned: list[list[ExecutorDevice]] = [[] for _ in homes]
    for name, amount in resources:
        kind = RESOURCE_KINDS[name]
        addresses = device_addresses(topology, kind)
        free = {
            node: sorted(topology.devices_of(kind, node), key=lambda d: _order(addresses, d))
            for node in set(homes)
        }
        for number, node in enumerate(homes):
            mine, free[node] = free[node][:amount], free[node][amount:]
            owned[number].extend(_planned(name, addresses, d) for d in mine)
    return [tuple(devices) for devices in owned]


def _order(addresses: dict[str, str], device: Device) -> tuple[int, str]:
    address = addresses[device.pci_busid]
    return (int(address), "") if address.isdigit() else (0, address)


def _planned(name: str, addresses: dict[str, str], device: Device) -> ExecutorDevice:
    return ExecutorDevice(
        resource=name,
        address=addresses[device.pci_busid],
        name=device.name,
        pci_busid=device.pci_busid,
        node=device.node,
        kind=device.kind,
    )


def unplanned_notes(
    topology: Topology, resources: tuple[tuple[str, int], ...], counts: dict[int, int]
) -> list[str]:
    """What the plan leaves out: devices of no known node, a node's remainder."""
    notes = []
    for name, amount in resources:
        kind = RESOURCE_KINDS[name]
        unknown = [d.name for d in topology.devices_of(kind) if d.node is None]
        if unknown:
            notes.append(
                f"{len(unknown)} {NOUNS[kind]}(s) hang off no known NUMA node and go to no "
                f"executor: {', '.join(unknown)}"
            )
        for node, executors in counts.items():
            left = len(topology.devices_of(kind, node)) - executors * amount
            if left > 0:
                notes.append(
                    f"node {node}: {left} of its {left + executors * amount} {NOUNS[kind]}(s) "
                    f"go to no executor ({executors} executor(s) x {amount})"
                )
    return notes
