"""Finding the line that explains a failure in a JVM's log."""

from __future__ import annotations

import re
from pathlib import Path

_ERROR = re.compile(r"(Exception|Error|error:)")
# a JVM crash prints a block of "#" lines; these name what happened
_FATAL = re.compile(r"^#\s+(.*(SIG[A-Z]+ \(|insufficient memory|Internal Error|Out of Memory).*)")


def error_lines(path: Path) -> list[str]:
    """Lines that name an error (stack frames and Spark's command echo left out)."""
    if not path.exists():
        return []
    lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
    return [
        line
        for line in lines
        if _ERROR.search(line) and not line.startswith(("at ", "Spark Executor Command"))
    ]


def error_line(path: Path | None) -> str:
    """The most telling line of a log: its first error, or else its last line."""
    if path is None or not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace")
    fatal = [m.group(1).strip() for m in map(_FATAL.match, text.splitlines()) if m]
    if fatal:
        return f"the JVM crashed: {fatal[0]}"[:500]
    errors = error_lines(path)
    if errors:
        return errors[0][:500]
    lines = [line.strip() for line in text.splitlines() if line.strip().strip("#")]
    return lines[-1][:500] if lines else "(empty log)"


# a Python or Java exception as the driver prints it: "ValueError: ...", "Exception in thread"
_EXCEPTION = re.compile(r"^(\S*(Exception|Error)\b.*|Exception in thread .*)$")


def last_error_line(path: Path | None) -> str:
    """An application's own failure: the last exception its driver printed (a Python
    traceback ends with it), else its first error line or its last line."""
    if path is not None and path.exists():
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
        found = [line for line in lines if _EXCEPTION.match(line)]
        if found:
            return found[-1][:500]
    return error_line(path)


# SparkUI's line when it is up: "Bound SparkUI to 10.0.0.1, and started at http://h:4041"
_UI = re.compile(r"SparkUI: Bound SparkUI to \S+, and started at (https?://\S+)")


def ui_url(text: str) -> str | None:
    """The Spark UI's URL, as the driver's log says it bound it (None: not said)."""
    found = _UI.search(text)
    return found.group(1) if found else None


class LogFollower:
    """Reads what a growing log has added since the last call (whole lines only)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def new_text(self) -> str:
        try:
            with self.path.open("rb") as log:
                log.seek(self._offset)
                chunk = log.read()
        except OSError:
            return ""
        end = chunk.rfind(b"\n") + 1  # a line still being written is read next time
        self._offset += end
        return chunk[:end].decode(errors="replace")
