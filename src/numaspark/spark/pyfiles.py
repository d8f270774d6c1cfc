"""numaspark's own Python code, zipped for executors on hosts that do not have it.

A built-in workload's tasks call functions of numaspark's job modules (``sort``'s partition
summary, for example): PySpark pickles those by reference, so an executor's Python worker
imports them. On a cluster numaspark did not start, the executors run the hosts' own
``python3``, where numaspark is not installed; the job would fail with ``No module named
'numaspark'``. The suite's runs there ship this zip (``spark.submit.pyFiles``): Spark puts it
on every executor's Python path. The modules the jobs import need only the standard library
and pyspark (which Spark ships itself).

The zip holds the package's ``.py`` files, with fixed dates so that the same sources make the
same bytes; it is made once per digest of those sources under numaspark's state directory.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

import numaspark
from numaspark.supervise.ledger import state_base

PYFILES_KEY = "spark.submit.pyFiles"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip entry can carry


def package_sources() -> list[tuple[str, Path]]:
    """Each ``.py`` file of the numaspark package, by its name inside the zip."""
    package = Path(numaspark.__file__).resolve().parent
    return [
        (str(Path("numaspark") / path.relative_to(package)), path)
        for path in sorted(package.rglob("*.py"))
        if "__pycache__" not in path.parts
    ]


def package_zip() -> Path:
    """The zip of numaspark's Python sources (made now if these sources have none yet)."""
    sources = package_sources()
    digest = hashlib.sha256()
    for name, path in sources:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    target = state_base() / "pyfiles" / f"numaspark-{digest.hexdigest()[:16]}.zip"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target.parent, prefix=".numaspark-", suffix=".zip")
    os.close(fd)
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, path in sources:
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.external_attr = 0o644 << 16
                archive.writestr(entry, path.read_bytes(), zipfile.ZIP_DEFLATED)
        os.replace(partial, target)  # whole or not at all: another run may read it
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    return target
