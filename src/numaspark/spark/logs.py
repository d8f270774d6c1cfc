"""Finding the line that explains a failure in a JVM's log."""

from __future__ import annotations

import re
import socket
from pathlib import Path

LOOPBACK = "127.0.0.1"

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
        found = [i for i, line in enumerate(lines) if _EXCEPTION.match(line)]
        if found:
            last = lines[found[-1]]
            after = lines[found[-1] + 1] if found[-1] + 1 < len(lines) else ""
            if after.startswith(": "):  # py4j's "An error occurred while calling": the cause
                last = f"{last} {after[2:]}"
            return last[:500]
    return error_line(path)


# the driver's log when its UI is up: Spark 4.3 says the port ("Successfully started service
# 'SparkUI' on port 4041."), earlier versions the URL ("Bound SparkUI to H, and started at URL")
_UI_PORT = re.compile(r"Successfully started service 'SparkUI' on port (\d+)")
_UI = re.compile(r"SparkUI: Bound SparkUI to \S+, and started at (https?://\S+)")


def ui_url(text: str, host: str = LOOPBACK) -> str | None:
    """The Spark UI's URL as the driver's log says it bound it, reached at ``host`` (the
    driver's); None: not said."""
    found = _UI.search(text)
    if found:
        return found.group(1)
    port = _UI_PORT.search(text)
    return f"http://{host}:{port.group(1)}" if port else None


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


class UiWatch:
    """When a driver's Spark UI is up, and its URL: as the driver's log says it bound it
    (its port, where Spark moved on from a busy one), or else (a log not at INFO) once the
    port it was given answers on the address it binds."""

    def __init__(self, log: Path, host: str, bind: str, port: str | None) -> None:
        self.follower = LogFollower(log)
        self.host = host
        self.url = f"http://{host}:{port}" if port else None
        # a UI bound to every address answers on loopback
        self.probe = (LOOPBACK if bind in ("0.0.0.0", "::") else bind, int(port)) if port else None

    def poll(self) -> str | None:
        found = ui_url(self.follower.new_text(), self.host)
        if found or self.probe is None:
            return found
        try:
            with socket.create_connection(self.probe, timeout=0.2):
                return self.url
        except OSError:
            return None
