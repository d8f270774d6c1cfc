"""What binding an executor from inside costs (issue 32): the time from the plugin's start at
level node until the executor is bound and its pages are moved, per GiB resident.

`BindCost` (jvm/) touches MIB MiB of heap, then does what the plugin does when an executor
starts at level node (`NodeBinder`: a node slot in a lock directory, every thread bound to the
node's CPUs, resident pages migrated there, each step read back from /proc) and prints the
milliseconds it took. Here it runs at several sizes, --repeat times each (the median kept),
and a straight line ms = fixed + per_gib * GiB is fitted by least squares.

Where it is measured matters: on a machine with one NUMA node the only node is the one the
JVM is on, so nothing is bound or moved and the figures are the fixed cost of choosing a slot
and reading /proc/self (numa_maps grows with the resident size); the line says so. On several
nodes the heap is touched from the last node's CPUs (--touch-node) and the binder, choosing
node 0, binds every thread and migrates those pages: the MiB per node before and after are
printed. Under QEMU's software emulation (scripts/numa-guest.sh) times are no guide to real
hardware; the pages moved are.

    .venv/bin/python bench/binding_cost.py [--sizes 0,256,1024,2048] [--repeat 3]
    bash scripts/numa-guest.sh --nodes 2 --memory-per-node 3G -- \
        python bench/binding_cost.py --sizes 0,256,512,1024 --repeat 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from numaspark.spark.affinity import build_jar
from numaspark.spark.home import spark_home
from numaspark.topology import load

GIB = 1024**3


def measure(jar: Path, mib: int, locks: Path, touch_node: int | None) -> dict:
    classpath = f"{jar}:{spark_home() / 'jars'}/*"  # SLF4J and Jackson: Spark's own jars
    heap = f"-Xmx{mib * 3 + 512}m"  # 1 MiB arrays are humongous objects to G1: room for them
    proc = subprocess.run(
        [
            "java",
            heap,
            "-cp",
            classpath,
            "io.numaspark.affinity.spark.BindCost",
            str(mib),
            str(locks),
            *([] if touch_node is None else [str(touch_node)]),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,256,1024,2048", help="MiB of heap touched first")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--touch-node",
        type=int,
        default=None,
        help="touch the heap from this node's CPUs (default: the last node, "
        "when there are several)",
    )
    args = parser.parse_args()
    jar = build_jar()
    node_ids = sorted(n.os_index for n in load().cpu_nodes)
    nodes = len(node_ids)
    touch = (
        args.touch_node if args.touch_node is not None else (node_ids[-1] if nodes > 1 else None)
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="numaspark-bindcost-") as locks:
        for mib in (int(s) for s in args.sizes.split(",")):
            runs = [measure(jar, mib, Path(locks), touch) for _ in range(args.repeat)]
            rows.append(
                {
                    "touched_mib": mib,
                    "resident_gib": statistics.median(r["resident_bytes"] for r in runs) / GIB,
                    "bind_ms": statistics.median(r["bind_ms"] for r in runs),
                    "binding": runs[-1]["binding"],
                    "mib_before": runs[-1]["mib_before"],
                    "mib_after": runs[-1]["mib_after"],
                }
            )
    per_gib, fixed = np.polyfit([r["resident_gib"] for r in rows], [r["bind_ms"] for r in rows], 1)
    print(
        f"{'touched MiB':>12} {'resident GiB':>13} {'ms (median)':>12}  MiB per node before -> after"
    )
    for row in rows:
        print(
            f"{row['touched_mib']:>12} {row['resident_gib']:>13.2f} {row['bind_ms']:>12.1f}  "
            f"{row['mib_before']} -> {row['mib_after']}"
        )
    moved = not all("already confined" in r["binding"] for r in rows)
    print(
        f"fit: {fixed:.1f} ms + {per_gib:.1f} ms per GiB resident; this machine has {nodes} "
        f"NUMA node(s): "
        + (
            "threads bound and pages migrated"
            if moved
            else "nothing bound or moved (the cost of choosing and reading)"
        )
    )
    print(f"what the plugin said: {rows[-1]['binding']}")
    print(
        json.dumps(
            {
                "nodes": nodes,
                "touch_node": touch,
                "fixed_ms": round(fixed, 2),
                "per_gib_ms": round(per_gib, 2),
                "moved": moved,
                "rows": rows,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
