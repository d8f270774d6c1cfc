"""The Spark settings a suggestion carries: only those that differ from the application's own,
never the ones Spark derives or keeps for itself (`SPARK_OWN`), written as the user gives them
(``--conf KEY=VALUE`` options of their spark-submit, or properties-file lines).

For an event log alone there is no ``numaspark run`` to repeat: the changed request (a
template whose settings are the log's) is turned back into Spark's settings, its layout too
(executors, cores, heap, the affinity plugin's level), and compared with the log's.
"""

from __future__ import annotations

import fnmatch
import shlex

from numaspark.experiment.request import RunRequest
from numaspark.placement import Binding, Mode
from numaspark.placement.plugin import LEVEL_KEY, MEM_POLICY_KEY, PLUGIN_CLASS
from numaspark.units import GIB, jvm_size

HALF_GIB = GIB // 2  # a heap worked out from another is rounded down to this

# Spark's own properties: what Spark derives for each application or keeps for its own
# machinery, never a setting a user changes to tune. An event log records them with the
# user's; advice that repeated them would fail (a port in use, another application's id) or
# bury the one change in thousands of characters.
SPARK_OWN: tuple[str, ...] = (
    "spark.app.id",  # given by the cluster manager to each application
    "spark.app.name",  # the user's name for the application: kept as it is, never tuned
    "spark.app.startTime",  # when this application started
    "spark.app.submitTime",  # when it was submitted
    "spark.app.attempt.id",  # YARN's attempt number
    "spark.app.initial.*",  # the jars and files the driver served to this application
    "spark.driver.host",  # the driver's address, chosen at start
    "spark.driver.port",  # a free port, chosen at start
    "spark.driver.appUIAddress",  # the UI's address, derived from the host
    "spark.driver.blockManager.port",  # chosen at start unless pinned
    "spark.blockManager.port",  # the same, for the executors
    "spark.executor.id",  # "driver" in the driver's own copy of the properties
    "spark.master",  # where it runs: said as spark-submit's --master, never a property to copy
    "spark.submit.*",  # spark-submit's own record: deploy mode, the Python files it shipped
    "spark.eventLog.*",  # where and how this very log was written
    "spark.ui.*",  # the web UI and the proxy filters a cluster manager put on it
    "spark.repl.*",  # the shell's class server and output directory
    "spark.yarn.app.*",  # YARN's container of this attempt
    "spark.org.apache.hadoop.yarn.server.webproxy.*",  # YARN's proxy filter, per application
    "spark.sql.execution.id",  # a query's id, a local property
    "spark.job.*",  # a job's description and group, local properties
    "spark.rdd.scope*",  # the call site of an RDD operation
    "spark.history.*",  # the History Server's own settings
)


# Of those, the ones Spark sets anew for every application (ids, times, local properties): a
# stored run's settings are what its user gave, kept whole (a driver's address or port pinned
# on purpose), less these, which no user gives
SPARK_DERIVED: tuple[str, ...] = (
    "spark.app.id",
    "spark.app.startTime",
    "spark.app.submitTime",
    "spark.app.attempt.id",
    "spark.app.initial.*",
    "spark.executor.id",
    "spark.sql.execution.id",
    "spark.job.*",
    "spark.rdd.scope*",
)


# the JVM flags Spark's launcher adds to the user's spark.*.extraJavaOptions (Spark 3.3 and
# later: JavaModuleOptions, netty's and IPv6's): the launcher's, not the user's, so a setting
# of JVM options keeps the user's flags only (a run given -XX:+UseSerialGC keeps it)
LAUNCHER_FLAGS: tuple[str, ...] = (
    "--add-opens",
    "--add-exports",
    "--add-modules",
    "--enable-native-access",
    "--sun-misc-unsafe-memory-access",
    "-XX:+IgnoreUnrecognizedVMOptions",
    "-Djava.net.preferIPv6Addresses=",
    "-Djdk.reflect.useDirectMethodHandle=",
    "-Dio.netty.",
)
JAVA_OPTIONS = "spark.*JavaOptions"  # extraJavaOptions and defaultJavaOptions, driver and executor


def spark_own(key: str, patterns: tuple[str, ...] = SPARK_OWN) -> bool:
    """Whether ``key`` is one of Spark's own properties (`SPARK_OWN`, or ``patterns``)."""
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns)


def users_settings(conf: dict[str, str], drop_own: bool = True) -> dict[str, str]:
    """``conf`` without Spark's own properties (`SPARK_OWN`; with ``drop_own`` false, for a
    stored run's settings, only those Spark derives anew for each application,
    `SPARK_DERIVED`), and its JVM options without the launcher's flags (`LAUNCHER_FLAGS`):
    what a user set."""
    dropped = SPARK_OWN if drop_own else SPARK_DERIVED
    found = {}
    for key, value in conf.items():
        if spark_own(key, dropped):
            continue
        if fnmatch.fnmatchcase(key, JAVA_OPTIONS):
            value = _without_launchers(str(value))
            if not value:
                continue
        found[key] = value
    return found


def _without_launchers(options: str) -> str:
    """JVM options less the launcher's flags; as they are where they do not split as a
    shell's words (an unclosed quote)."""
    try:
        flags = shlex.split(options)
    except ValueError:
        return options
    return shlex.join(f for f in flags if not any(f.startswith(p) for p in LAUNCHER_FLAGS))


def changed_settings(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    """The settings of ``after`` that differ from ``before``'s (Spark's own left out)."""
    had = users_settings(before)
    return {
        key: value
        for key, value in users_settings(after).items()
        if str(had.get(key, "")) != str(value)
    }


def layout_settings(
    before: RunRequest,
    after: RunRequest,
    properties: dict[str, str],
    executors: int | None,
    slots: int | None,
    heap: int | None,
) -> tuple[dict[str, str], list[str]]:
    """A changed request's layout as Spark's settings, for an application known by its event
    log alone (``properties``; ``executors``, ``slots`` and ``heap``: what it ran with): its
    executors and their cores, their heap, the affinity plugin's level; and spark-submit's
    options that are not settings (``--master`` where a local application moves to a
    cluster)."""
    old, new = before.layout, after.layout
    found: dict[str, str] = {}
    options: list[str] = []
    local = old.mode is Mode.LOCAL
    if local and new.mode is not Mode.LOCAL:
        options += ["--master", "spark://HOST:7077"]  # the user's cluster: named by them
    if new.executors is not None and new.executors != old.executors:
        cores = new.cores_per_executor or (max(1, slots // new.executors) if slots else None)
        if cores:
            found["spark.executor.cores"] = str(cores)
        found.update(_executor_count(new.executors, cores, properties, local))
        if new.memory_per_executor is None and heap and executors:
            # the auto heap of numaspark's planner is not Spark's: keep the memory in all
            share = min(heap * executors // new.executors, 31 * GIB) // HALF_GIB * HALF_GIB
            found["spark.executor.memory"] = jvm_size(max(share, HALF_GIB))
    if new.memory_per_executor is not None and new.memory_per_executor != old.memory_per_executor:
        key = "spark.driver.memory" if local and new.mode is Mode.LOCAL else "spark.executor.memory"
        found[key] = jvm_size(new.memory_per_executor)
    plugin = PLUGIN_CLASS in str(properties.get("spark.plugins", ""))
    if plugin and after.binding is not before.binding and after.binding is not Binding.NONE:
        found[LEVEL_KEY] = after.binding.value
    if plugin and after.mem_policy is not None and after.mem_policy != before.mem_policy:
        found[MEM_POLICY_KEY] = after.mem_policy.value
    return changed_settings(properties, found), options


def _executor_count(
    count: int, cores: int | None, properties: dict[str, str], local: bool
) -> dict[str, str]:
    """``count`` executors as the application's cluster manager counts them: the most dynamic
    allocation may hold, else YARN's and Kubernetes' instances, else (standalone, or a local
    application moved to a cluster) the cores it may take in all."""
    if str(properties.get("spark.dynamicAllocation.enabled", "")).lower() == "true":
        return {"spark.dynamicAllocation.maxExecutors": str(count)}
    master = str(properties.get("spark.master", ""))
    if local or master.startswith("spark://") or master.startswith("local-cluster"):
        return {"spark.cores.max": str(count * cores)} if cores else {}
    return {"spark.executor.instances": str(count)}


def submit_options(settings: dict[str, str], options: list[str] = ()) -> str:
    """``settings`` as spark-submit's options, one ``--conf KEY=VALUE`` each, quoted for a
    shell, after ``options`` (spark-submit's own, e.g. ``--master``)."""
    flags = [*options]
    for key, value in settings.items():
        flags += ["--conf", f"{key}={value}"]
    return shlex.join(flags)
