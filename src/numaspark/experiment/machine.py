"""This machine now: the `Environment` a run's records carry (host, kernel, CPU model, Java,
Spark, numaspark, topology, the NUMA balancing and THP settings), read once per run."""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
from functools import lru_cache

from numaspark import __version__
from numaspark.experiment.result import Environment
from numaspark.kernel import THP_ENABLED, read_setting, selected
from numaspark.supervise.balancing import setting_path
from numaspark.supervise.processes import refuse_jvm


def environment(topology_fingerprint: str, spark_version: str | None) -> Environment:
    """This machine now, for the runs about to start."""
    return Environment(
        host=socket.gethostname(),
        kernel=platform.release(),
        cpu_model=_cpu_model(),
        java=java_version(),
        spark=spark_version,
        python=platform.python_version(),
        numaspark=__version__,
        topology_fingerprint=topology_fingerprint,
        numa_balancing=read_setting(setting_path()),  # as switched for the run, if it was
        transparent_hugepages=selected(read_setting(THP_ENABLED)),
        cpus=os.cpu_count(),
    )


def java_version() -> str | None:
    """The Java Spark's scripts run: ``$JAVA_HOME/bin/java``, else the ``java`` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    return _java_version(os.path.join(home, "bin", "java") if home else "java")


@lru_cache(maxsize=4)
def _java_version(java: str) -> str | None:
    refuse_jvm([java])
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "([^"]+)"', proc.stderr)
    return match.group(1) if match else None


def _cpu_model() -> str | None:
    text = read_setting("/proc/cpuinfo") or ""
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.processor() or None
