"""What a table's columns mean: numaspark's names for the columns the rules know, and their
synonyms; the roles a column's name suggests; which columns are context (the job or its input,
held fixed: `context_columns`); what a user declares (``--column NAME=ROLE``)."""

from __future__ import annotations

import re

from numaspark.decide.tune.space import Space
from numaspark.errors import UsageError

# numaspark's column names and the synonyms other tools and papers use (compared after
# lower-casing and turning spaces and dashes into underscores)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "executors": (
        "executors",
        "workers",
        "num_executors",
        "executor_instances",
        "spark.executor.instances",
        "num_workers",
        "instances",
    ),
    "executors_per_node": ("executors_per_node", "workers_per_node"),
    "cores_per_executor": (
        "cores_per_executor",
        "cores_per_worker",
        "executor_cores",
        "spark.executor.cores",
        "worker_cores",
        "cores_per_instance",
    ),
    "slots": ("slots", "task_slots", "total_cores", "threads"),
    "threads_per_core": (
        "threads_per_core",
        "smt",
        "smt_level",
        "smt_mode",
        "smt_threads",
        "hardware_threads_per_core",
    ),
    "binding": ("binding", "bind", "affinity", "cpu_binding"),
    "mem_policy": ("mem_policy", "memory_policy", "membind", "numa_policy"),
    "mode": ("mode",),
    "partitions": (
        "partitions",
        "spark.sql.shuffle.partitions",
        "spark.default.parallelism",
        "shuffle_partitions",
        "parallelism",
        "num_partitions",
    ),
    "partitions_per_slot": ("partitions_per_slot", "tasks_per_slot", "tasks_per_core"),
    "memory": (
        "memory",
        "executor_memory",
        "spark.executor.memory",
        "memory_per_executor",
        "worker_memory",
        "memory_per_worker",
    ),
}
_CANONICAL = {alias: name for name, aliases in SYNONYMS.items() for alias in aliases}


def canonical(column: str) -> str | None:
    """The numaspark name of a column (None: a column the rules do not know)."""
    return _CANONICAL.get(re.sub(r"[\s\-]+", "_", column.strip().lower()))


# words in a column's name that say which role it has (`guessed_roles`). The tuner reads such a
# column so (models.Prior) and says it: a table's own names can mean other things (a "nodes"
# column may count NUMA nodes, a node may run several executors), so its line says how to
# undo it (--column NAME=knob), and the rule the role brings is a prior the runs outweigh
_COUNT_WORDS = {
    "nodes",
    "node",
    "instances",
    "instance",
    "scaleout",
    "machines",
    "hosts",
    "vms",
    "workers",
    "executors",
    "containers",
    "pods",
}
_CPU_WORDS = {"cores", "core", "vcpus", "vcpu", "cpus", "cpu"}
_MEMORY_WORDS = {"memory", "mem", "ram"}
_MEMORY_UNITS = {"gb", "gib", "mb", "mib", "bytes"}


def guessed_roles(columns: list[str]) -> dict[str, str]:
    """Column -> the role its name's words suggest (``workers``: how many nodes or
    instances; ``cores_per_worker``: CPUs per one of them; ``memory``: memory per one), for
    columns `canonical` does not know; each role to the first column that suggests it."""
    found: dict[str, str] = {}
    for column in columns:
        if canonical(column) is not None or column.lower().startswith("spark."):
            continue  # a Spark property the rules do not know is not guessed at
        words = set(re.split(r"[^a-z0-9]+", column.lower()))
        words.add(re.sub(r"[^a-z0-9]+", "", column.lower()))  # scale_out as scaleout
        per = "per" in words
        if words & _MEMORY_WORDS:
            role = "memory" if per or words & _MEMORY_UNITS else None  # not a fraction of it
        elif words & _CPU_WORDS:
            role = "cores_per_worker" if per else None  # all the CPUs together: no role of its own
        elif words & _COUNT_WORDS and not per:
            role = "workers"
        else:
            role = None
        if role is not None and role not in found.values():
            found[column] = role
    return found


NO_ROLE = "knob"  # --column NAME=knob: a column searched without a prior
CONTEXT = "context"  # --column NAME=context (or =none): the job or its input, held fixed
_CONTEXT_ALIASES = {CONTEXT, "none"}  # none: not a knob, so not searched (held as context)


def roles(columns: list[str], declared: dict[str, str] | None = None) -> dict[str, str]:
    """Column -> numaspark name, for the columns with a prior (the first of two synonyms).
    ``declared`` (column -> numaspark name, from `parse_columns`) comes first: a declared
    column is read as declared (``knob``: without a prior; ``context``: not a knob at all), and
    a role it takes is no other column's."""
    declared = declared or {}
    found = {c: n for c, n in declared.items() if n not in (NO_ROLE, CONTEXT)}
    for column in columns:
        name = canonical(column)
        if column not in declared and name is not None and name not in found.values():
            found[column] = name
    return {c: found[c] for c in columns if c in found}


# words in a column's name that say it describes the job or its input rather than a setting:
# the workload (algorithm, query, program, a benchmark's test case or command) and its data
# (the dataset, its input, its size). Such a column is context: the search runs within each
# of its values and never moves it (a smaller input or another job is no configuration)
_CONTEXT_WORDS = {
    "workload",
    "workloads",
    "algorithm",
    "algo",
    "job",
    "jobs",
    "query",
    "queries",
    "benchmark",
    "program",
    "application",
    "scenario",
    "command",
    "testcase",
    "dataset",
    "datasets",
    "data",
    "input",
    "size",
    "datasize",
}
# ... unless the name also says a setting (the partitions of the input, the size of a buffer)
_SETTING_WORDS = {
    "per",
    "partition",
    "partitions",
    "parallelism",
    "split",
    "splits",
    "block",
    "buffer",
    "batch",
    "max",
    "min",
    # what a size, a count of jobs or a data setting is of, when it is a setting's
    *("heap", "offheap", "overhead", "pool", "page", "cache", "fetch", "queue", "thread"),
    *("threads", "concurrent", "timeout", "interval", "fraction", "ratio", "codec", "compress"),
    *_COUNT_WORDS,
    *_CPU_WORDS,
    *_MEMORY_WORDS,
}
_WORKLOAD_PARAM = "param."  # `results --table`'s workload parameters (param.k, ...)


def context_columns(columns: list[str], declared: dict[str, str] | None = None) -> dict[str, str]:
    """Column -> why it is context (``declared`` or ``from its name``): the columns declared
    ``context`` (or ``none``), and those whose name says the job or its input (workload,
    algorithm, query, dataset, input, size, ...; a ``param.*`` column of ``results --table``)
    unless declared otherwise or named as a setting (`canonical`, ``spark.*``, partitions,
    per node, ...). In table order."""
    declared = declared or {}
    found: dict[str, str] = {}
    for column in columns:
        if column in declared:
            if declared[column] == CONTEXT:
                found[column] = "declared"
            continue
        if canonical(column) is not None or column.lower().startswith("spark."):
            continue
        # camelCase's words apart: inputSize as input_size, executorHeapSize as its three
        lower = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", column).lower()
        words = set(re.split(r"[^a-z0-9]+", lower)) | {re.sub(r"[^a-z0-9]+", "", lower)}
        if lower.startswith(_WORKLOAD_PARAM) or (
            words & _CONTEXT_WORDS and not words & _SETTING_WORDS
        ):
            found[column] = "from its name"
    return found


def parse_columns(texts: list[str], option: str = "--column") -> dict[str, str]:
    """``NAME=ROLE`` texts (what a user declares a table's columns to mean) as column ->
    numaspark name; a role is any of `SYNONYMS` (``workers``, ``cores_per_worker``, ...),
    ``knob`` (searched without a prior) or ``context`` (held fixed; ``none`` says the same:
    not a knob). Raises UsageError (one line) for a malformed text or an unknown role."""
    found: dict[str, str] = {}
    for text in texts:
        column, _, role = text.partition("=")
        column, role = column.strip(), role.strip()
        if not column or not role:
            raise UsageError(f"{option} {text!r}: give COLUMN=ROLE, e.g. {option} scaleout=workers")
        lower = role.lower()
        name = (
            CONTEXT
            if lower in _CONTEXT_ALIASES
            else NO_ROLE
            if lower == NO_ROLE
            else canonical(role)
        )
        if name is None:
            raise UsageError(
                f"{option} {text!r}: unknown role {role!r}; roles: "
                f"{', '.join(SYNONYMS)} (and their synonyms, e.g. workers, "
                f"cores_per_worker), {NO_ROLE} (searched without a prior), {CONTEXT} or none "
                "(held fixed: the search runs within each of its values)"
            )
        if name not in (NO_ROLE, CONTEXT) and name in (n for c, n in found.items() if c != column):
            raise UsageError(f"{option} {text!r}: {name} is already another column's role")
        found[column] = name
    return found


def check_columns(space: Space, columns: dict[str, str]) -> dict[str, str]:
    """``columns`` (column -> numaspark name, `parse_columns`) against the table's own
    columns: an unknown one is one line (UsageError)."""
    missing = [c for c in columns if c not in space.names]
    if missing:
        raise UsageError(
            f"--column {missing[0]}: the table has no such column; its columns: "
            f"{', '.join(space.names)}"
        )
    return dict(columns)
