"""Thread affinity inside the JVM: the affinity plugin's jar, its settings, and its records.

numactl binds a whole JVM; `core` and `pu` binding also pin each running task's
thread to its own core or hardware thread, with the Spark plugin in jvm/
(`io.numaspark.affinity.spark.AffinityPlugin`, Java, JNA for the native calls).
The planner decides each JVM's slots (its CPUs grouped by core); they reach the
JVM as the ``SLOTS_ENV`` environment variable (a standalone executor inherits
its worker's environment), so one Spark conf serves executors on different
nodes. Each executor appends one JSON line per task to ``RUN_DIR/affinity/``:
its slot, the CPU it started and ended on, its times. placement/plugin.py holds
the contract (keys, and the fields read back: ``TaskRecord``, ``PlacementReport``;
jvm/contract.json lists them for both sides).

The jar is built by scripts/setup.sh (`build_jar`: Maven, against the Spark jars
of the installed pyspark) into the venv, next to the probe kernel.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from itertools import combinations
from pathlib import Path

from numaspark.errors import NumasparkError, ToolMissingError
from numaspark.placement.plugin import RECORD_DIR, TaskRecord, jar_path
from numaspark.readback.plugin_reports import PluginReports
from numaspark.readback.proc import EffectiveJvm
from numaspark.spark.maven import mvn_package, sources_digest, up_to_date
from numaspark.topology import CpuSet

SOURCE = Path(__file__).resolve().parents[3] / "jvm"  # the repository's jvm/ (editable install)


def require_jar() -> Path:
    path = jar_path()
    if not path.exists():
        raise ToolMissingError(
            f"--bind core/pu pins tasks with numaspark's affinity plugin, not built yet "
            f"({path}): run scripts/setup.sh (it builds jvm/ with Maven)"
        )
    return path


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def _version(jars: Path, prefix: str) -> str:
    """The version in the name of ``prefix-VERSION.jar`` among pyspark's jars."""
    pattern = re.compile(re.escape(prefix) + r"-(\d[\w.]*)\.jar$")
    for jar in sorted(jars.glob(f"{prefix}-*.jar")):
        match = pattern.match(jar.name)
        if match:
            return match.group(1)
    raise NumasparkError(f"no {prefix}-*.jar in {jars}: is pyspark installed whole?")


def maven_properties() -> list[str]:
    """The ``-D`` options that compile jvm/ against the installed pyspark's own jars (their
    directory and versions): every Maven run of jvm/ passes them, the sabotage runner's too."""
    jars = _pyspark_jars()
    # the version in spark-core's file name: the one the pom's systemPath names (Scala 2.13)
    return [
        f"-Dspark.jars={jars}",
        f"-Dspark.version={_version(jars, 'spark-core_2.13')}",
        f"-Dscala.version={_version(jars, 'scala-library')}",
        f"-Djackson.version={_version(jars, 'jackson-databind')}",
        f"-Djackson.annotations.version={_version(jars, 'jackson-annotations')}",
        f"-Dslf4j.version={_version(jars, 'slf4j-api')}",
        f"-Dmetrics.version={_version(jars, 'metrics-core')}",
    ]


def build_jar(force: bool = False, run_tests: bool = False) -> Path:
    """Build jvm/ with Maven against the installed pyspark's jars and install the jar; only
    when its sources (or pyspark) changed, unless ``force``. ``run_tests``: JUnit too."""
    import pyspark

    target = jar_path()
    stamp = target.with_suffix(".sources")
    if not (SOURCE / "pom.xml").exists():
        if target.exists():
            return target  # an installed numaspark without its checkout: keep the jar
        raise ToolMissingError(f"{SOURCE}/pom.xml is missing: build from a checkout of numaspark")
    # what the jar is built from: jvm/'s sources and pom, and the pyspark it compiles against
    # its Java, the NUMA page's HTML, the service files: every file under src with a suffix
    current = sources_digest(SOURCE, "*.*", salt=pyspark.__version__)
    if not force and not run_tests and up_to_date(target, stamp, current):
        return target
    mvn_package(
        SOURCE / "pom.xml",
        [*maven_properties(), *([] if run_tests else ["-DskipTests"])],
        "the affinity plugin",
    )
    built = SOURCE / "target" / "numaspark-affinity-0.1.0.jar"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    shutil.copyfile(built, partial)
    partial.replace(target)
    stamp.write_text(current)
    return target


# each task of a run's ``affinity`` summary: these fields of its record, in this order
TASK_DETAIL = (
    "task",
    "stage",
    "partition",
    "executor",
    "slot",
    "cpus",
    "cpu_start",
    "cpu_end",
    "start_ms",
    "end_ms",
    "unpinned",
)


def read_records(run_dir: Path) -> list[TaskRecord]:
    """Every task record the executors of one application wrote."""
    records = []
    for path in sorted((run_dir / RECORD_DIR).glob("affinity-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    records.append(TaskRecord.from_json(json.loads(line)))
                except json.JSONDecodeError:
                    continue  # a line cut short when the executor was killed
    return records


def plugin_effective(path: Path) -> list[EffectiveJvm]:
    """The effective placement of each executor as the plugin reported it from inside (its
    latest report, ``PLACEMENT_FILE``): what a run records when this machine cannot read the
    executors' /proc (a cluster numaspark did not start). The event log's reports are read
    by the same reader (readback/plugin_reports.py)."""
    return PluginReports.read(path).effective()


def overlapping_on_one_cpu(
    records: Iterable[TaskRecord | dict],
) -> list[tuple[TaskRecord, TaskRecord]]:
    """Pairs of pinned tasks of one executor JVM that overlapped in time on a shared CPU
    (records as read, or a summary's ``tasks_detail``)."""
    typed = [r if isinstance(r, TaskRecord) else TaskRecord.from_json(r) for r in records]
    pinned = [r for r in typed if r.cpus and r.end_ms is not None]
    pairs = []
    for a, b in combinations(pinned, 2):
        if (a.executor, a.pid) != (b.executor, b.pid):
            continue
        overlap = a.start_ms < b.end_ms and b.start_ms < a.end_ms  # type: ignore[operator]
        if overlap and set(_cpus(a.cpus)) & set(_cpus(b.cpus)):
            pairs.append((a, b))
    return pairs


def _cpus(text: str | None) -> list[int]:
    return list(CpuSet.parse(text)) if text else []


def summarize(records: list[TaskRecord], stage_ids: set[int] | None = None) -> dict | None:
    """The affinity of one iteration's tasks: pinned or not (and why), the CPUs they ran on,
    whether any two overlapping tasks shared a CPU."""
    if stage_ids is not None:
        records = [r for r in records if r.stage in stage_ids]
    if not records:
        return None
    pinned = [r for r in records if r.cpus]
    reasons = sorted({r.unpinned for r in records if r.unpinned})
    stayed = [r for r in pinned if r.cpu_end in _cpus(r.cpus)]
    ended_on = {r.cpu_end for r in records if r.cpu_end is not None and r.cpu_end >= 0}
    return {
        "level": records[0].level,
        "tasks": len(records),
        "pinned": len(pinned),
        "unpinned": len(records) - len(pinned),
        "unpinned_reasons": reasons,
        "cpus_used": sorted(ended_on),
        "ended_on_their_slot": len(stayed),
        "overlapping_pairs_sharing_a_cpu": len(overlapping_on_one_cpu(records)),
        "tasks_detail": [{k: getattr(r, k) for k in TASK_DETAIL} for r in records],
    }
