"""The PCI devices that matter to a Spark host, from hwloc's I/O objects or the kernel's sysfs.

A device is a PCI function, counted once however many OS devices name it (hwloc shows one GPU
as ``cuda0``, ``opencl0d0`` and ``nvml0``), and classified by its PCI class, never by hwloc's
``osdev_type`` (its numbers changed between hwloc versions: the POWER8 file in
shared/topologies has ``nvml0`` as type 1, the DGX-2 file as type 5):

- ``gpu``: 3D (0302) and other display (0380) controllers; a VGA controller (0300) only where
  it computes (an OS device of CUDA, NVML, ROCm SMI, Level Zero or OpenCL) or is NVIDIA's;
  else it is a server's console display (Matrox, ASPEED, ATI ES1000): ``display``;
- ``accelerator``: processing accelerators (12xx), ``gpu`` where a GPU library names them;
- ``nic``: network controllers (02xx: Ethernet, InfiniBand, other), and the InfiniBand
  serial-bus class (0c06) of older Mellanox cards;
- ``nvme``: NVM Express storage (0108).

Its node: the NUMA node of the nearest non-I/O object above it in hwloc's tree (a Package, a
Group, the Machine), or the kernel's ``numa_node``; none known (None) when that object spans
several nodes or the kernel says -1, except on a machine of one node, where every device is
local to it (so hwloc and sysfs agree there, as they do on the rest of the topology).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from numaspark.topology.cpuset import CpuSet
from numaspark.topology.model import Device

_IO_TYPES = {"Bridge", "PCIDev", "OSDev"}
_COMPUTE_NAME = re.compile(r"^(cuda|nvml|rsmi|ze|opencl)\d")
_NVIDIA = "10de"
_BUSID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
#: preferred display names of a computing device, best first
_GPU_NAMES = ("nvml", "cuda", "rsmi", "ze", "opencl")


def classify(pci_class: str, vendor: str, names: tuple[str, ...]) -> str | None:
    """The kind of a PCI device from its class (4 hex digits), vendor and OS device names;
    None for one that does not matter to a Spark host (bridges, SATA, USB, NVSwitches)."""
    computes = any(_COMPUTE_NAME.match(n) for n in names)
    base = pci_class[:2]
    if pci_class in ("0302", "0380"):
        return "gpu"
    if pci_class == "0300":
        return "gpu" if computes or vendor == _NVIDIA else "display"
    if base == "12":
        return "gpu" if computes else "accelerator"
    if base == "02" or pci_class == "0c06":
        return "nic"
    if pci_class == "0108":
        return "nvme"
    return None


def _index(names: tuple[str, ...]) -> int | None:
    """The NVML index where an OS device gives it, else the CUDA index (nvidia-smi's and
    Spark's discovery scripts' numbering is NVML's)."""
    for prefix in ("nvml", "cuda"):
        for name in names:
            found = re.fullmatch(rf"{prefix}(\d+)", name)
            if found:
                return int(found.group(1))
    return None


def _display_name(kind: str, names: tuple[str, ...], network: tuple[str, ...], busid: str) -> str:
    if kind in ("gpu", "accelerator"):
        for prefix in _GPU_NAMES:
            chosen = next((n for n in names if n.startswith(prefix)), None)
            if chosen:
                return chosen
    if kind == "nic" and network:
        return network[0]
    return names[0] if names else busid


def make_device(
    pci_class: str,
    pci_id: str,
    busid: str,
    node: int | None,
    names: tuple[str, ...],
    network: tuple[str, ...] = (),
) -> Device | None:
    """The device of one PCI function, or None when its class does not matter here;
    ``network``: those of ``names`` that are network interfaces (a NIC's shown name)."""
    kind = classify(pci_class, pci_id.partition(":")[0], names)
    if kind is None:
        return None
    return Device(
        kind=kind,
        name=_display_name(kind, names, network, busid),
        pci_busid=busid,
        node=node,
        pci_class=pci_class,
        pci_id=pci_id,
        names=names,
        index=_index(names) if kind in ("gpu", "accelerator") else None,
    )


# --- hwloc XML ---------------------------------------------------------------------------


def hwloc_devices(machine: ET.Element, nodes: CpuSet) -> tuple[Device, ...]:
    """The devices below hwloc's Machine object; ``nodes``: every NUMA node of the machine."""
    found: list[Device] = []

    def walk(obj: ET.Element, node: int | None) -> None:
        if obj.get("type") not in _IO_TYPES:
            node = _local_node(obj, nodes)
        elif obj.get("type") == "PCIDev":
            device = _pci_device(obj, node)
            if device is not None:
                found.append(device)
        for child in obj.findall("object"):
            walk(child, node)

    walk(machine, None)
    return tuple(sorted(found, key=lambda d: d.pci_busid))


def _local_node(obj: ET.Element, nodes: CpuSet) -> int | None:
    """The one NUMA node local to a non-I/O object (its nodeset), if there is one."""
    local = CpuSet.from_hwloc(obj.get("nodeset", "0x0")) & nodes
    if len(local) == 1:
        return local.first()
    return nodes.first() if len(nodes) == 1 else None


def _pci_device(obj: ET.Element, node: int | None) -> Device | None:
    pci_type = (obj.get("pci_type") or "").split()
    busid = obj.get("pci_busid") or ""
    if len(pci_type) < 2 or not busid:
        return None
    osdevs = [c for c in obj.findall("object") if c.get("type") == "OSDev" and c.get("name")]
    names = tuple(str(c.get("name")) for c in osdevs)
    # hwloc gives a network interface its hardware address; an OpenFabrics one (mlx5_0) none
    network = tuple(
        str(c.get("name"))
        for c in osdevs
        if any(i.get("name") == "Address" for i in c.findall("info"))
    )
    return make_device(
        pci_type[0].lower(), pci_type[1].strip("[]").lower(), busid, node, names, network
    )


# --- sysfs -------------------------------------------------------------------------------


def sysfs_devices(root: Path, nodes: CpuSet) -> tuple[Device, ...]:
    """The devices of ``root``'s ``sys/bus/pci/devices`` (``root`` ``/``: this machine);
    ``nodes``: the machine's NUMA nodes. None where the kernel shows no PCI bus."""
    found = []
    pci = root / "sys/bus/pci/devices"
    for entry in sorted(pci.glob("*")) if pci.is_dir() else []:
        pci_class = (_read(entry / "class") or "").removeprefix("0x")[:4].lower()
        vendor = (_read(entry / "vendor") or "").removeprefix("0x").lower()
        device_id = (_read(entry / "device") or "").removeprefix("0x").lower()
        if len(pci_class) < 4 or classify(pci_class, vendor, ()) is None:
            continue
        network, others = _os_names(entry)
        device = make_device(
            pci_class,
            f"{vendor}:{device_id}",
            entry.name,
            _kernel_node(_read(entry / "numa_node"), nodes),
            (*network, *others),
            network,
        )
        if device is not None:
            found.append(device)
    return tuple(found)


def _kernel_node(text: str | None, nodes: CpuSet) -> int | None:
    """``numa_node``: -1 (or absent) is none known, except on a machine of one node."""
    try:
        value = int(text or "-1")
    except ValueError:
        value = -1
    if value >= 0 and value in nodes:
        return value
    return nodes.first() if len(nodes) == 1 else None


def _os_names(device: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A PCI function's network interfaces, and its other OS devices (NVMe namespaces, DRM
    cards, InfiniBand devices), as the kernel lists them under it (``/sys/class/net/*/device``
    points at the same directory; a virtio function keeps them one level down)."""
    network = _children(device, "net")
    namespaces = tuple(sorted((p.name for p in device.glob("nvme/nvme*/nvme*n*")), key=_natural))
    others = namespaces + _children(device, "drm", "card") + _children(device, "infiniband")
    return network, others


def _children(device: Path, subsystem: str, prefix: str = "") -> tuple[str, ...]:
    """Names in ``device/SUBSYSTEM`` or ``device/X/SUBSYSTEM`` (X not a PCI function of its own:
    a bridge's directory holds the functions behind it)."""
    subdirs = (p for p in device.iterdir() if p.is_dir() and not _BUSID.match(p.name))
    places = [device / subsystem, *(p / subsystem for p in subdirs)]
    names = {
        e.name
        for place in places
        if place.is_dir()
        for e in place.iterdir()
        if e.name.startswith(prefix)
    }
    return tuple(sorted(names, key=_natural))


def _natural(name: str) -> list:
    """nvme0n2 before nvme0n10, eth2 before eth10."""
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name)]


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
