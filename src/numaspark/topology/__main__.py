"""``python -m numaspark.topology``: this machine's topology as JSON (`records.dump`), read as
`numaspark.topology.load_machine` reads it (hwloc, else sysfs). A host over SSH that has no
hwloc answers with it: the wheel is all it needs."""

from __future__ import annotations

import json
import sys

from numaspark import records
from numaspark.topology import load_machine

if __name__ == "__main__":
    json.dump(records.dump(load_machine()), sys.stdout)
