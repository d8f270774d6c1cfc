"""JSON-lines files that a killed process may have cut short: read every whole line."""

from __future__ import annotations

import json
from pathlib import Path


def read_json_lines(path: Path) -> list[dict]:
    """Every whole JSON line of ``path`` (a line cut short by a kill is ignored); [] if absent."""
    if not Path(path).exists():
        return []
    found = []
    for line in Path(path).read_text().splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found
