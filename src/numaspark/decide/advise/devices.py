"""The device rules: executors on another node than their devices (`device_node`) or than
the network interface their traffic leaves by (`nic_node`)."""

from __future__ import annotations

import shlex

from numaspark.decide.advise.findings import Finding, NotAssessed
from numaspark.decide.advise.subject import NO_REPORTS, Subject
from numaspark.decide.thresholds import Severity
from numaspark.placement.devices import RESOURCE_KINDS
from numaspark.placement.plugin import DEVICE_RESOURCE_KEY, LEVEL_KEY
from numaspark.readback.plugin_reports import ReportedJvm
from numaspark.topology import CpuSet


def _devices_of(jvm: ReportedJvm) -> list[dict]:
    """A JVM's devices as evidence: each resource's address, PCI function and node."""
    keys = ("resource", "address", "pci_busid", "node")
    return [{k: d.get(k) for k in keys} for d in jvm.latest.devices or ()]


def _device_fix(subject: Subject, jvms: list[ReportedJvm]) -> str:
    """``numaspark plan`` giving each executor the devices of its own node, as many of each
    resource as these executors had (the cluster manager's target from the log's master)."""
    counts: dict[str, int] = {}
    for jvm in jvms:
        for device in jvm.latest.devices or ():
            name = str(device.get("resource"))
            had = sum(1 for d in jvm.latest.devices or () if d.get("resource") == name)
            counts[name] = max(counts.get(name, 0), had)
    flags = [
        flag
        for name, n in sorted(counts.items())
        if name in RESOURCE_KINDS
        for flag in (
            ["--gpus-per-executor", str(n)] if name == "gpu" else ["--resource", f"{name}={n}"]
        )
    ]
    master = str(subject.conf.get("spark.master", ""))
    target = "yarn" if master == "yarn" else "k8s" if master.startswith("k8s://") else "standalone"
    return shlex.join(
        ["numaspark", "plan", "--target", target, "--bind", "node", *flags, "--out", "DIR"]
    )


def device_node(subject: Subject) -> Finding | NotAssessed:
    """Executors whose devices (the resources Spark gave them, each device's node read from
    sysfs inside its host by the plugin) sit on another node than their CPUs."""
    reported = subject.reported()
    given = [j for j in reported if j.latest.devices]
    if not given:
        why = "no executor reported devices (none was given a resource: spark.executor.resource"
        return NotAssessed("device-node", f"{why}.NAME.amount)" if reported else NO_REPORTS)
    judged = [j for j in given if j.device_nodes and j.nodes is not None]
    if not judged:
        unknown = next((d.get("unknown") for j in given for d in j.latest.devices or ()), None)
        why = f"their nodes are not known ({unknown})" if unknown else "their hosts are unknown"
        return NotAssessed("device-node", f"executors reported devices, but {why}")
    off = [j for j in judged if j.nodes != j.device_nodes]
    evidence = {
        "executors": [
            {
                "jvm": j.name,
                "host": j.latest.host,
                "devices": _devices_of(j),
                "device_nodes": str(j.device_nodes),
                "cpu_nodes": str(j.nodes),
            }
            for j in off
        ]
    }
    if not off:
        text = f"every executor given devices ({len(judged)}) runs on its devices' node(s)"
        return Finding("device-node", Severity.NONE, text, evidence)
    first = off[0]
    apart = [j for j in off if not set(j.nodes or ()) & set(j.device_nodes)]
    return Finding(
        "device-node",
        Severity.MODERATE if apart else Severity.LOW,
        f"{len(off)} of {len(judged)} executor(s) given devices run on other nodes than their "
        f"devices: {first.name} on node(s) {first.nodes}, its devices on node(s) "
        f"{first.device_nodes}: host-to-device copies and the threads that feed them cross "
        "the interconnect",
        evidence,
        _device_advice(subject),
        command=_device_fix(subject, off),
    )


def _device_advice(subject: Subject) -> str:
    """What binds executors by their devices, or, where level node was on, why it did not."""
    if str(subject.conf.get(LEVEL_KEY, "none")).strip().lower() == "node":
        return (
            "level node is set, yet they were not bound by their devices: each one's choice "
            "says why (an older plugin, their devices' node outside their container's CPUs, "
            f"or a resource {DEVICE_RESOURCE_KEY} does not name); or let numaspark plan give "
            "each executor its own node's devices"
        )
    return (
        "bind each executor to its devices' node: the affinity plugin does it from inside on "
        f"any cluster manager (--conf {LEVEL_KEY}=node; {DEVICE_RESOURCE_KEY} names the "
        "resources, default gpu), or numaspark plan gives each executor its own node's devices"
    )


def nic_node(subject: Subject) -> Finding | NotAssessed:
    """Executors on another node than the interface their traffic leaves by (the route to
    the driver, as the plugin read it): advice only, nothing is bound by it."""
    reported = subject.reported()
    with_nic = [j for j in reported if (j.latest.nic or {}).get("name")]
    if not with_nic:
        why = "no executor reported the interface its traffic leaves by (an older plugin)"
        return NotAssessed("nic-node", why if reported else NO_REPORTS)
    known = [j for j in with_nic if j.nic_node is not None and j.nodes is not None]
    if not known:
        nic = with_nic[0].latest.nic or {}
        why = nic.get("unknown") or "its node, or the executor's host, is not known"
        return NotAssessed("nic-node", f"the interface {nic['name']}: {why}")
    elsewhere = [j for j in known if j.nic_node not in (j.nodes or ())]
    interfaces = sorted({(str(j.latest.host), j.latest.nic["name"], j.nic_node) for j in known})
    evidence = {
        "executors": len(known),
        "interfaces": [{"host": h, "name": n, "node": node} for h, n, node in interfaces],
        "elsewhere": [
            {"jvm": j.name, "host": j.latest.host, "nodes": str(j.nodes)} for j in elsewhere
        ],
    }
    first = (elsewhere or known)[0]
    iface, node = first.latest.nic["name"], first.nic_node
    if not elsewhere:
        text = f"every executor runs on the node of the interface it talks through ({iface}, node {node})"
        return Finding("nic-node", Severity.NONE, text, evidence)
    nodes = CpuSet(n for j in elsewhere for n in j.nodes or ())
    return Finding(
        "nic-node",
        Severity.LOW,
        f"{len(elsewhere)} of {len(known)} executor(s) run on node {nodes} while their traffic "
        f"leaves by {iface} on node {node}: their shuffle and the driver's messages cross the "
        "interconnect to reach it",
        evidence,
        f"try binding one executor per node and comparing the executors of node {node} with "
        f"the others (shuffle fetch wait, task times); where node {node}'s are faster, give "
        f"that node the shuffle-heavy executors, and keep {iface}'s interrupts on its CPUs "
        "(/proc/irq/N/smp_affinity_list). Advice only: numaspark binds nothing by it",
    )
