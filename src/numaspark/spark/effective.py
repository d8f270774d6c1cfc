"""Where a process really runs: its allowed CPUs and nodes, and its memory policy, from /proc."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from numaspark.placement import Binding, JvmPlacement, MemPolicy
from numaspark.topology import CpuSet

_POLICY_NAMES = {"bind": MemPolicy.BIND, "prefer": MemPolicy.PREFERRED,
                 "preferred": MemPolicy.PREFERRED, "interleave": MemPolicy.INTERLEAVE,
                 "local": MemPolicy.LOCAL}  # fmt: skip


@dataclass(frozen=True)
class EffectivePlacement:
    pid: int
    cpus: CpuSet  # Cpus_allowed_list
    mems: CpuSet  # Mems_allowed_list
    policy: str  # numa_maps policy of most mappings: "default", "bind:0", "interleave:0-1", ...

    def to_dict(self) -> dict:
        return {
            "pid": self.pid,
            "cpus": str(self.cpus),
            "mems": str(self.mems),
            "policy": self.policy,
        }


def read_effective(pid: int, proc: Path = Path("/proc")) -> EffectivePlacement | None:
    """Read ``pid``'s placement; None when it has gone."""
    try:
        status = (proc / str(pid) / "status").read_text()
    except OSError:
        return None
    try:
        maps = (proc / str(pid) / "numa_maps").read_text()
    except OSError:
        maps = ""
    return parse_effective(pid, status, maps)


def parse_effective(pid: int, status: str, maps: str) -> EffectivePlacement:
    """A placement from the text of ``/proc/PID/status`` and ``/proc/PID/numa_maps`` (read
    here, or on another host over SSH)."""
    cpus = re.search(r"^Cpus_allowed_list:\s*(\S*)", status, re.MULTILINE)
    mems = re.search(r"^Mems_allowed_list:\s*(\S*)", status, re.MULTILINE)
    policies = Counter(line.split()[1] for line in maps.splitlines() if len(line.split()) > 1)
    return EffectivePlacement(
        pid=pid,
        cpus=CpuSet.parse(cpus.group(1)) if cpus else CpuSet(),
        mems=CpuSet.parse(mems.group(1)) if mems else CpuSet(),
        policy=policies.most_common(1)[0][0] if policies else "unknown",
    )


def differences(planned: JvmPlacement, actual: EffectivePlacement) -> list[str]:
    """How ``actual`` departs from the plan, in words; empty when it matches."""
    found = []
    if planned.binding is not Binding.NONE and actual.cpus != planned.cpus:
        found.append(f"{planned.name}: planned CPUs {planned.cpus}, runs on {actual.cpus}")
    if planned.mem_policy is not None:
        kind, _, nodes = actual.policy.partition(":")
        expected = planned.mem_policy
        if expected is MemPolicy.LOCAL:
            ok = kind in ("local", "default")
        else:
            ok = _POLICY_NAMES.get(kind) is expected and (
                not planned.mem_nodes or CpuSet.parse(nodes) == planned.mem_nodes
            )
        if not ok:
            want = f"{expected.value}:{planned.mem_nodes}" if planned.mem_nodes else expected.value
            found.append(f"{planned.name}: planned memory policy {want}, has {actual.policy}")
    return found
