"""The results store: one JSON line per run, appended and flushed the moment the run ends.

Written as each run finishes "because we would risk losing them if a later
run fails" (hyperfine); an interrupted experiment keeps every finished run.
A results directory holds ``results.jsonl``, the machine the runs ran on
(``topology.json``, once), and each application's artefacts under ``runs/``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult
from numaspark.topology import Topology

RESULTS_FILE = "results.jsonl"
TOPOLOGY_FILE = "topology.json"


def topology_file(host: str) -> str:
    """Where a results directory keeps the topology of one of the hosts its runs used."""
    return f"topology-{host}.json"


class ResultStore:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / RESULTS_FILE

    def append(self, result: RunResult) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        line = json.dumps(result.to_dict(), default=str) + "\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def count(self) -> int:
        """Runs stored so far (0 when nothing is)."""
        return len(self.path.read_text().splitlines()) if self.path.exists() else 0

    def load(self) -> list[RunResult]:
        if not self.path.exists():
            raise UsageError(f"no results in {self.directory} ({RESULTS_FILE} is missing)")
        results = []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                results.append(RunResult.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError, ValueError, AttributeError):
                # a line cut short by a crash mid-write: the runs before it are intact
                if number != len(lines):
                    raise UsageError(f"{self.path}: line {number} is not a run result") from None
        return results

    def save_topology(self, topology: Topology, host: str | None = None) -> None:
        """The machine the runs ran on (or one of the hosts), once: the report draws
        placements on it."""
        path = self.directory / (topology_file(host) if host else TOPOLOGY_FILE)
        if not path.exists():
            self.directory.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(topology.to_dict(), indent=1))
