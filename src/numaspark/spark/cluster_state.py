"""A cluster's state file (``cluster.json`` in its directory, docs/schemas.md): its hosts, its
processes (ports, pids, logs), its placement and its kind, written as each process starts so
that ``numaspark cluster down`` can always find what to stop. The state files of earlier
versions (a local ``numaspark.cluster/1``, a ``numaspark.hosts-cluster/1``) are read too.

The cluster (spark/standalone.py, ``Cluster``) is the record; this module is how it is
stored and read back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from numaspark import records
from numaspark.errors import UsageError

CLUSTER_SCHEMA = "numaspark.cluster/2"
OLD_SCHEMAS = ("numaspark.cluster/1", "numaspark.hosts-cluster/1")
STATE_FILE = "cluster.json"
STANDALONE, YARN_MINI = "standalone", "yarn-mini"  # the kinds of cluster

# its state file: what a live object holds (its directory: where the file is; its shells,
# binders and clients) is not stored; a numaspark.hosts-cluster/1 has no ``local`` (on
# hosts), a numaspark.cluster/1 reads through records.UPGRADES
SHAPE = records.Shape(
    skip=("directory", "_shells", "_binders", "_clients"),
    computed=("schema", "saved_at"),
    absent={"local": False},
    schemas=(*OLD_SCHEMAS, CLUSTER_SCHEMA),
)

T = TypeVar("T")


def save_state(cluster: Any) -> None:
    """Write ``cluster``'s state into its directory (whole, or not at all)."""
    path = cluster.directory / STATE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(records.dump(cluster), indent=2))
    tmp.replace(path)


def load_state(cls: type[T], directory: Path) -> T:
    """The cluster (of ``cls``) the state file in ``directory`` (resolved) describes; one
    line naming the file when it cannot be read."""
    path = directory / STATE_FILE
    if not path.exists():
        raise UsageError(
            f"no cluster in {directory}: start one with 'numaspark cluster up {directory}'"
        )
    try:
        state = json.loads(path.read_text())
        if not isinstance(state, dict):
            raise ValueError(f"a JSON {type(state).__name__}, not an object")
        # the directory it is in is the live object's, never stored
        return records.load(cls, {**state, "directory": directory})
    except records.SchemaError as exc:  # a newer numaspark's: one line, naming the file
        raise UsageError(f"{path}: {exc}") from None
    except ValueError as exc:
        raise UsageError(
            f"{path} is not a cluster's state ({exc}): remove it, and stop its "
            "processes by hand if any are left"
        ) from None


def has_state(directory: Path) -> bool:
    return (directory / STATE_FILE).exists()


def forget_state(directory: Path) -> None:
    """Remove the state file: nothing it names is left."""
    (directory / STATE_FILE).unlink(missing_ok=True)
