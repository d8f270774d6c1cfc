"""What a table's columns mean: numaspark's names for the columns the rules know, and their
synonyms; the roles a column's name suggests; what a user declares (``--column NAME=ROLE``)."""

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
# undo it (--column NAME=none), and the rule the role brings is a prior the runs outweigh
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


def roles(columns: list[str], declared: dict[str, str] | None = None) -> dict[str, str]:
    """Column -> numaspark name, for the columns with a prior (the first of two synonyms).
    ``declared`` (column -> numaspark name, from `parse_columns`) comes first: a declared
    column is read as declared (``none``: without a prior), and a role it takes is no other
    column's."""
    declared = declared or {}
    found = {c: n for c, n in declared.items() if n != NO_ROLE}
    for column in columns:
        name = canonical(column)
        if column not in declared and name is not None and name not in found.values():
            found[column] = name
    return {c: found[c] for c in columns if c in found}


NO_ROLE = "none"  # --column NAME=none: a column searched without a prior


def parse_columns(texts: list[str], option: str = "--column") -> dict[str, str]:
    """``NAME=ROLE`` texts (what a user declares a table's columns to mean) as column ->
    numaspark name; a role is any of `SYNONYMS` (``workers``, ``cores_per_worker``, ...) or
    ``none``. Raises UsageError (one line) for a malformed text or an unknown role."""
    found: dict[str, str] = {}
    for text in texts:
        column, _, role = text.partition("=")
        column, role = column.strip(), role.strip()
        if not column or not role:
            raise UsageError(f"{option} {text!r}: give COLUMN=ROLE, e.g. {option} scaleout=workers")
        name = NO_ROLE if role.lower() == NO_ROLE else canonical(role)
        if name is None:
            raise UsageError(
                f"{option} {text!r}: unknown role {role!r}; roles: "
                f"{', '.join(SYNONYMS)}, {NO_ROLE} (and their synonyms, e.g. "
                "workers, cores_per_worker)"
            )
        if name != NO_ROLE and name in (n for c, n in found.items() if c != column):
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
