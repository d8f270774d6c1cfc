"""Record a configuration table for the tuner benchmark: run an experiment spec, then write
one row per configuration (what varies, median wall time) to bench/tables/<name>.csv, and the
machine it ran on (an hwloc synthetic description the tuner is given) to <name>.json.

    .venv/bin/python bench/record_table.py bench/specs/tune-wordcount.toml [--out DIR]

Resumable: configurations already stored in --out are not run again.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from numaspark.decide.prior import Machine
from numaspark.experiment.spec import load_spec
from numaspark.experiment.store import ResultStore
from numaspark.report.export import config_frame
from numaspark.topology import load

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--out", type=Path, help="results directory (default numaspark-out/NAME)")
    args = parser.parse_args()
    topology = load()
    experiment = load_spec(args.spec, topology)
    out = args.out or Path("numaspark-out") / experiment.name
    numaspark = Path(sys.executable).with_name("numaspark")
    subprocess.run(
        [str(numaspark), "sweep", str(args.spec), "--out", str(out), "--resume"], check=True
    )
    keys = {c.key for c in experiment.configs}
    runs = [r for r in ResultStore(out).load() if r.spec.config in keys]
    frame = config_frame(runs)
    target = HERE / "tables" / f"{experiment.name}.csv"
    target.parent.mkdir(exist_ok=True)
    frame.to_csv(target, index=False)
    machine = Machine.of(topology)
    per_node, per_core = machine.cores // machine.nodes, machine.threads // machine.cores
    side = {
        "spec": str(args.spec),
        "minimize": "wall_s",
        "synthetic": f"numa:{machine.nodes} core:{per_node} pu:{per_core}",
        "machine": f"{topology.cpu_model or 'this machine'}: {machine.describe()}",
    }
    target.with_suffix(".json").write_text(json.dumps(side, indent=2) + "\n")
    print(f"{len(frame)} configurations -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
