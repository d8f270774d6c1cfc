"""The results store: one JSON line per run, appended and flushed the moment the run ends.

Written as each run finishes "because we would risk losing them if a later
run fails" (hyperfine); an interrupted experiment keeps every finished run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult

RESULTS_FILE = "results.jsonl"


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

    def load(self) -> list[RunResult]:
        if not self.path.exists():
            raise UsageError(f"no results in {self.directory} ({RESULTS_FILE} is missing)")
        results = []
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                results.append(RunResult.from_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError):
                # a line cut short by a crash mid-write: the runs before it are intact
                if number != len(self.path.read_text(encoding="utf-8").splitlines()):
                    raise UsageError(f"{self.path}: line {number} is not a run result") from None
        return results
