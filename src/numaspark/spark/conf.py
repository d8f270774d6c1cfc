"""numaspark's settings over a user's own: one merge, with what it replaced in words.

An application brings its own Spark settings (its spark-submit line's ``--conf``, options and
properties file). numaspark's plan decides some keys (executor size, cores, the plugin,
the event log it reads back); those replace the user's values, and each replacement is
named in one line. Keys that hold lists are merged instead, the user's items first, so a
user's ``--jars`` keeps the affinity plugin's jar and the plan's JVM options are added to
the user's, not put in their place.
"""

from __future__ import annotations

from numaspark.placement.render import INSTANCES, DynamicAllocation
from numaspark.workloads.submitline import merge_java_options, merge_list

# key -> how its items are joined
LIST_KEYS: dict[str, str] = {
    "spark.jars": ",",
    "spark.plugins": ",",
    "spark.submit.pyFiles": ",",
    "spark.files": ",",
    "spark.archives": ",",
    "spark.jars.packages": ",",
    "spark.driver.extraJavaOptions": " ",
    "spark.executor.extraJavaOptions": " ",
    "spark.driver.extraClassPath": ":",
    "spark.executor.extraClassPath": ":",
}
# why numaspark sets a key the user had set, where "the plan" is not the reason
WHY = {
    "spark.eventLog.dir": "numaspark reads the event log back, so it writes it in the run "
    "directory",
    "spark.eventLog.enabled": "numaspark reads the event log back",
    "spark.eventLog.compress": "numaspark reads the event log back",
    # numaspark sets neither where the user has (spark/address.py): only numaspark's own
    # --conf replaces a value of the application's
    "spark.driver.host": "numaspark's --conf gives it",
    "spark.driver.bindAddress": "numaspark's --conf gives it",
}


# Spark's own -XX:ActiveProcessorCount for executors (SPARK-53209; pyspark 4.3: YARN only): it
# gives each executor its spark.executor.cores. Spark 3.5 has no such setting.
SPARK_PROCESSOR_COUNT_KEY = "spark.executor.limitActiveProcessorCount.enabled"
PROCESSOR_COUNT = "-XX:ActiveProcessorCount="
EXECUTOR_OPTIONS = "spark.executor.extraJavaOptions"


def with_dynamic_allocation(
    conf: dict[str, str], users: dict[str, str], master: str
) -> tuple[dict[str, str], list[str]]:
    """``conf`` (numaspark's merged over ``users``, the application's and the run's --conf)
    when the user turned dynamic allocation on, and the one line that says what numaspark did
    about it; unchanged, and no line, when it is off.

    The plan's spark.executor.instances would be Spark's initial and lowest executor count
    (Spark starts with the most of minExecutors, initialExecutors and it): it is left out
    unless the user gave it, and kept as the user gave it. On a standalone master the plan's
    spark.cores.max would cap the executors below maxExecutors: it becomes maxExecutors x
    spark.executor.cores (left out when maxExecutors is unset), unless the user gave it."""
    allocation = DynamicAllocation.of(conf)
    if allocation is None:
        return conf, []
    conf = dict(conf)
    done = []
    if INSTANCES in users:
        conf[INSTANCES] = users[INSTANCES]
    elif conf.pop(INSTANCES, None) is not None:
        done.append("left spark.executor.instances unset (the plan's count would be its floor)")
    if master.startswith("spark://") and "spark.cores.max" not in users:
        cores = int(conf.get("spark.executor.cores") or 1)
        if allocation.maximum is None:
            conf.pop("spark.cores.max", None)
            done.append("left spark.cores.max unset (maxExecutors is)")
        else:
            conf["spark.cores.max"] = str(allocation.maximum * cores)
            done.append(f"set spark.cores.max to maxExecutors x cores, {conf['spark.cores.max']}")
    allocation = DynamicAllocation.of(conf) or allocation
    most = allocation.maximum if allocation.maximum is not None else "unbounded"
    line = (
        f"dynamic allocation is on: executors come and go between {allocation.minimum} and "
        f"{most}, {allocation.at_start} at the start"
        + (f"; numaspark {' and '.join(done)}" if done else "")
    )
    return conf, [line]


def spark_processor_count(conf: dict[str, str], master: str) -> tuple[dict[str, str], list[str]]:
    """Spark's own processor count asked for on YARN (``SPARK_PROCESSOR_COUNT_KEY``): Spark
    puts -XX:ActiveProcessorCount=spark.executor.cores on each executor's command line, and
    numaspark's (the plan's, in spark.executor.extraJavaOptions) would stand beside it. Where
    both would be given, numaspark's is left out and one line says so; elsewhere (standalone,
    Kubernetes, Spark 3.5, which has no such setting) the setting does nothing and the
    plan's stands."""
    if master != "yarn" or conf.get(SPARK_PROCESSOR_COUNT_KEY, "").strip().lower() != "true":
        return conf, []
    options = conf.get(EXECUTOR_OPTIONS, "").split()
    ours = [o for o in options if o.startswith(PROCESSOR_COUNT)]
    if not ours:
        return conf, []
    conf = dict(conf)
    kept = " ".join(o for o in options if not o.startswith(PROCESSOR_COUNT))
    if kept:
        conf[EXECUTOR_OPTIONS] = kept
    else:
        conf.pop(EXECUTOR_OPTIONS)
    return conf, [
        f"{SPARK_PROCESSOR_COUNT_KEY}=true: Spark gives each executor "
        f"-XX:ActiveProcessorCount={conf.get('spark.executor.cores', '1')} (its cores); "
        f"numaspark's {ours[-1]} is left out"
    ]


def layered(base: dict[str, str], over: dict[str, str]) -> dict[str, str]:
    """``over`` on top of ``base``: list keys joined (``base``'s items first), the rest
    replaced. numaspark's own layers (the plan, then the run's --conf and what a target adds)
    meet here, so that a class path or a plugin given in one is not lost to another's."""
    conf = dict(base)
    for key, value in over.items():
        conf[key] = _join(key, conf[key], value) if key in LIST_KEYS and conf.get(key) else value
    return conf


def merged(user: dict[str, str], ours: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """``ours`` over ``user``: list keys joined, the rest replaced; and one line per user
    setting that was replaced by a different value."""
    conf = dict(user)
    notes = []
    for key, value in ours.items():
        if key in LIST_KEYS and conf.get(key):
            conf[key] = _join(key, conf[key], value)
            continue
        if key in conf and conf[key] != value:
            why = WHY.get(key, "numaspark's placement decides it")
            notes.append(f"your {key}={conf[key]} was replaced by {value}: {why}")
        conf[key] = value
    return conf, notes


def _join(key: str, first: str, second: str) -> str:
    separator = LIST_KEYS[key]
    if separator == ",":
        return merge_list(first, second)
    if separator == " ":
        return merge_java_options(first, second)
    return separator.join(dict.fromkeys(p for p in (*first.split(":"), *second.split(":")) if p))
