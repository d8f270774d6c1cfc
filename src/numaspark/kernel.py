"""Small readers of kernel settings, shared by `doctor` and the run environment."""

from __future__ import annotations

import re

NUMA_BALANCING = "/proc/sys/kernel/numa_balancing"
THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"
THP_DEFRAG = "/sys/kernel/mm/transparent_hugepage/defrag"


def read_setting(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def selected(text: str | None) -> str | None:
    """The chosen value of a sysfs choice list: ``always [madvise] never`` -> ``madvise``."""
    if text is None:
        return None
    match = re.search(r"\[([\w+]+)\]", text)
    return match.group(1) if match else text.strip()
