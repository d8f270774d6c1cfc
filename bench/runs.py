"""What the benchmarks share: one `numaspark run`, timed by its measured iteration."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def measured_wall(options: list[str], out: Path) -> float:
    """``numaspark run OPTIONS`` with one warm-up and one measured iteration and no
    collectors, stored in ``out``; the measured iteration's wall time (s)."""
    numaspark = Path(sys.executable).with_name("numaspark")
    subprocess.run(
        [
            str(numaspark),
            "run",
            *options,
            "--warmup",
            "1",
            "--repeat",
            "1",
            "--out",
            str(out),
            "--no-collect",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    runs = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    measured = [r for r in runs if not r["spec"]["warmup"] and r["status"] == "ok"]
    return measured[-1]["wall_time_s"]


def alternating_pairs(
    pairs: int, first: str, second: str, run: Callable[[str, Path, Path], float]
) -> list[float]:
    """``pairs`` pairs of ``run(name, out, data)``, alternating which of the two goes first
    (so drift and warm caches fall on both alike); each pair's ratio first/second, printed as
    the pair ends. Inputs are generated once into a shared ``data`` directory."""
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        for pair in range(pairs):
            order = (first, second) if pair % 2 == 0 else (second, first)
            times = {name: run(name, Path(tmp) / str(pair) / name, data) for name in order}
            ratios.append(times[first] / times[second])
            print(
                f"pair {pair + 1}: {first} {times[first]:.2f} s, {second} {times[second]:.2f} "
                f"s, ratio {ratios[-1]:.3f}",
                flush=True,
            )
    return ratios
