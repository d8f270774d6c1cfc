"""Planning a 16-GPU server by its GPUs (issue 50's benchmark; goal: under a second).

In process, end to end without the command line's start-up: read the NVIDIA DGX-2's hwloc XML
(shared/topologies/nvidiaDGX2.xml: 16 GPUs behind 2 sockets), plan --gpus-per-executor 8
--bind node on it, and render the plan as `plan --json` and `--target standalone` do; the
median of --repeat repetitions (each a fresh read of the file), in milliseconds.

    .venv/bin/python bench/plan_devices.py [--repeat 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from numaspark.placement import Binding, Layout, Platform, placement_to_dict, plan
from numaspark.topology import load_xml

HERE = Path(__file__).resolve().parent
TOPOLOGIES = Path(os.environ.get("NUMASPARK_TOPOLOGIES", HERE.parents[1] / "shared" / "topologies"))
SERVER = "nvidiaDGX2.xml"
GOAL_S = 1.0


def plan_once(path: Path) -> float:
    """Seconds to read, plan and render the server once."""
    start = time.perf_counter()
    topology = load_xml(path)
    placement = plan(topology, Layout(resources=(("gpu", 8),)), Binding.NODE)
    placement_to_dict(placement)
    Platform.STANDALONE.settings(placement, topology)
    elapsed = time.perf_counter() - start
    assert sum(len(j.devices) for j in placement.executors) == 16, "every GPU planned"
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    path = TOPOLOGIES / SERVER
    if not path.exists():
        print(f"{path} missing: set NUMASPARK_TOPOLOGIES to shared/topologies", file=sys.stderr)
        return 2
    plan_once(path)  # warm: imports and first-call caches out of the figure
    times = [plan_once(path) for _ in range(args.repeat)]
    median = statistics.median(times)
    print(
        f"plan {SERVER} --gpus-per-executor 8 --bind node: median {median * 1000:.1f} ms "
        f"of {args.repeat} ({min(times) * 1000:.1f}-{max(times) * 1000:.1f} ms); goal "
        f"under {GOAL_S:.0f} s: {'met' if median < GOAL_S else 'MISSED'}"
    )
    return 0 if median < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
