"""The results store: one JSON line per run, appended and flushed the moment the run ends.

Written as each run finishes "because we would risk losing them if a later
run fails" (hyperfine); an interrupted experiment keeps every finished run.
A results directory holds ``results.jsonl``, the machine the runs ran on
(``topology.json``, once), and each application's artefacts under ``runs/``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path

from numaspark import records
from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult, json_kinds
from numaspark.topology import Topology

RESULTS_FILE = "results.jsonl"
COSCHED_FILE = "cosched.jsonl"  # study cosched's rounds (experiment/cosched.py writes it)
TOPOLOGY_FILE = "topology.json"


def recorded_topology(source: Path, levels: int = 6) -> tuple[Topology | None, Path | None]:
    """The topology the runs of ``source`` ran on, as stored with them: a results directory's
    topology.json (or, for runs on other hosts, its first topology-HOST.json), found from the
    directory itself or from a file inside it (an event log under runs/). (None, None) when
    there is none: the caller must not assume this machine. ``levels``: how many directories
    up from ``source`` to look."""
    source = Path(source).resolve()
    for directory in [source, *source.parents][:levels]:
        if not directory.is_dir():
            continue
        candidates = [directory / TOPOLOGY_FILE, *sorted(directory.glob("topology-*.json"))]
        for path in candidates:
            if path.is_file():
                try:
                    return records.load(Topology, json.loads(path.read_text())), path
                except (OSError, ValueError, KeyError, TypeError, AttributeError):
                    continue  # not a topology numaspark wrote: the next candidate
    return None, None


def topology_file(host: str) -> str:
    """Where a results directory keeps the topology of one of the hosts its runs used."""
    return f"topology-{host}.json"


class ResultStore:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / RESULTS_FILE
        self.skipped: list[str] = []  # what the last load() left out, and why

    #: Told each note of ``skipped`` as a load makes it (the command line prints them).
    notify: Callable[[str], None] | None = None

    def append(self, result: RunResult) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        line = json.dumps(records.dump(result), default=str) + "\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def count(self) -> int:
        """Runs stored so far (0 when nothing is)."""
        return len(self.path.read_text().splitlines()) if self.path.exists() else 0

    def load(self) -> list[RunResult]:
        """Every stored run. Lines that are not run results are skipped and named in
        ``self.skipped`` (none usable: an error), and so are the runs of an interrupted
        application whose configuration a later application ran again (``--resume``)."""
        if not self.path.exists():
            raise UsageError(f"no results in {self.directory} ({RESULTS_FILE} is missing)")
        if not self.path.is_file():
            raise UsageError(f"{self.path} is not a file: give the directory numaspark wrote")
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"{self.path} cannot be read as text ({exc}): give a results "
                "directory numaspark wrote"
            ) from None
        results, bad = [], []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                # a line cut short by a crash mid-write: the runs before it are intact
                bad.append((number, "cut short" if number == len(lines) else "not JSON"))
                continue
            result, problem = _run_result(data)
            if problem:
                bad.append((number, problem))
            else:
                results.append(result)
        self.skipped = []
        if bad and not results:
            number, why = bad[0]
            raise UsageError(
                f"{self.path}: no line is a run result (line {number}: {why}); "
                "numaspark writes one JSON object per line"
            )
        if bad:
            shown = "; ".join(f"line {n}: {why}" for n, why in bad[:3])
            more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
            self.skipped.append(
                f"{self.path}: skipped {len(bad)} line(s) that are not run results ({shown}{more})"
            )
        results = self._latest_applications(results)
        for note in self.skipped if ResultStore.notify else ():
            ResultStore.notify(note)
        return results

    def _latest_applications(self, results: list[RunResult]) -> list[RunResult]:
        """Drop the runs of an application that stopped part-way through a configuration
        when a later application ran that configuration again: a resumed configuration
        counts the runs of one application, not of two."""
        apps: dict[str, list[str]] = {}  # configuration -> its applications, in order
        records: dict[tuple[str, str], list[RunResult]] = {}
        for r in results:
            if r.spec.config and r.app_id:
                order = apps.setdefault(r.spec.config, [])
                if r.app_id not in order:
                    order.append(r.app_id)
                records.setdefault((r.spec.config, r.app_id), []).append(r)
        dropped: set[tuple[str, str]] = set()
        for config, order in apps.items():
            for app_id in order[:-1]:
                runs = records[(config, app_id)]
                if len(runs) < max(r.spec.iterations or 0 for r in runs):
                    dropped.add((config, app_id))
        if not dropped:
            return results
        count = sum(len(records[k]) for k in dropped)
        self.skipped.append(
            f"{count} run(s) of {len(dropped)} interrupted application(s) "
            "left out: their configurations were run again"
        )
        return [r for r in results if (r.spec.config, r.app_id) not in dropped]

    def save_topology(self, topology: Topology, host: str | None = None) -> None:
        """The machine the runs ran on (or one of the hosts), once: the report draws
        placements on it."""
        path = self.directory / (topology_file(host) if host else TOPOLOGY_FILE)
        if not path.exists():
            self.directory.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(records.dump(topology), indent=1))


def _run_result(data: object) -> tuple[RunResult | None, str | None]:
    """A stored line as a run, or why it is not one."""
    if not isinstance(data, dict):
        return None, f"a JSON {type(data).__name__} where a run (an object) belongs"
    if "\\u0000" in json.dumps(data):  # how json writes a NUL character
        return None, "holds a NUL byte"
    for key, kinds in _TYPES.items():
        value = data.get(key)
        if value is not None and not isinstance(value, kinds):
            return None, f'"{key}" is of type {type(value).__name__}'
        if value is None and key in ("spec", "status"):
            return None, f'no "{key}"'
    if data.get("wall_time_s") is not None and isinstance(data["wall_time_s"], bool):
        return None, '"wall_time_s" is of type bool'
    if not isinstance(data["spec"].get("workload"), str):
        return None, "its spec names no workload"
    wall = data.get("wall_time_s")
    if wall is not None and not math.isfinite(wall):
        return None, f'"wall_time_s" is {wall}'
    for key in ("executors", "cores_per_executor", "iteration", "iterations", "repetition"):
        value = data["spec"].get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            return None, f'spec "{key}" is of type {type(value).__name__}'
    for name, value in (data.get("metrics") or {}).items():
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
            return None, f'metric "{name}" is of type {type(value).__name__}'
    try:
        return records.load(RunResult, data), None
    except UsageError as exc:  # a schema this version does not read
        return None, str(exc)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return None, f"not a run result ({exc})"


# the JSON type of each field, read from the typed record itself (no table of our own)
_TYPES = json_kinds(RunResult)
