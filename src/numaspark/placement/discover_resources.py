#!/usr/bin/env python3
"""Spark's resource discovery script for the devices numaspark planned for a worker or executor.

Spark runs it with no arguments (``spark.worker.resource.NAME.discoveryScript``,
``spark.executor.resource.NAME.discoveryScript``) and reads one JSON object from its output,
``{"name": "gpu", "addresses": ["0", "1"]}`` (Spark's ``ResourceInformation``). It prints the
devices numaspark planned for the JVM it runs for, which numaspark hands each worker in its
environment: ``NUMASPARK_RESOURCE_GPU=0,1``, the addresses, comma-separated (its executors
inherit it). Where the environment names several resources, ``NUMASPARK_RESOURCE_NAME`` says
which one this script reports. Nothing planned is an error (exit 1, one line on stderr), not
an empty list: Spark would start an executor that owns no device.

Standard library only, and nothing of numaspark: it runs on each worker host as a file of its
own, with that host's python3 (the wheel ships it beside placement/resources.py).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

PREFIX = "NUMASPARK_RESOURCE_"
NAME_ENV = PREFIX + "NAME"


def discover(environ: Mapping[str, str]) -> dict[str, object]:
    """Spark's resource JSON for the resource ``environ`` plans; LookupError when it plans none."""
    planned = {
        key[len(PREFIX) :].lower(): value
        for key, value in environ.items()
        if key.startswith(PREFIX) and key != NAME_ENV
    }
    name = environ.get(NAME_ENV, "").strip().lower()
    if not name:
        if not planned:
            raise LookupError(f"no resource planned: the environment has no {PREFIX}NAME=ADDRESSES")
        if len(planned) > 1:
            raise LookupError(
                f"{len(planned)} resources planned in the environment ({PREFIX}*): "
                f"set {NAME_ENV} to the one this script reports"
            )
        name = next(iter(planned))
    addresses = [a.strip() for a in planned.get(name, "").split(",") if a.strip()]
    if not addresses:
        raise LookupError(f"no {name} planned: {PREFIX}{name.upper()} is unset or empty")
    return {"name": name, "addresses": addresses}


def main() -> int:
    try:
        found = discover(os.environ)
    except LookupError as error:
        print(f"numaspark resource discovery: {error}", file=sys.stderr)
        return 1
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
