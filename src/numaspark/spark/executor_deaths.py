"""Executors that die as they start, as the driver's log says it first, and the one line that
says why.

A cluster numaspark did not start launches the executors; when they cannot start (the
driver's address unreachable from their host, a JVM option their Java refuses, a Python
missing), the cluster launches more, and each dies the same way. The driver hears of each:

- standalone: StandaloneAppClient's ``Executor added: APP/N on WORKER (HOST:PORT) ...`` and
  ``Executor updated: APP/N is now EXITED (Command exited with code 1)`` (or FAILED, LOST),
  StandaloneSchedulerBackend's ``Executor APP/N removed: ...``;
- YARN (client mode): the application master's YarnAllocator ``Container marked as failed:
  CONTAINER on host: HOST. Exit status: N. Diagnostics: ...`` (or ``Container from a bad
  node: ...``, as for exit status 127; the last bytes of the container's stderr among them),
  which the driver logs as it is asked to remove the executor.

A standalone executor's own error is in its stderr on the worker's host; the worker's web
UI serves it (``/log?appId=...&executorId=...&logType=stderr``) where this machine can reach
it, which it often cannot (firewalled from edge nodes): used when it answers, never needed.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

# the first 2 MB of the driver's log: the executors' deaths that matter come before the first
# executor starts, near the log's top
MAX_LOG_BYTES = 2 << 20

_ADDED = re.compile(
    r"Executor added: (?P<app>app-[\w-]+)/(?P<id>\d+) on (?P<worker>\S+) "
    r"\((?P<host>[^:\s)]+):\d+\)"
)
_UPDATED = re.compile(
    r"Executor updated: (?P<app>app-[\w-]+)/(?P<id>\d+) is now "
    r"(?P<state>FAILED|LOST|EXITED)(?: \((?P<why>.*)\))?$"
)
# Spark's YarnAllocator says "marked as failed" for some exit codes and "from a bad node" for
# others (127, a container whose java did not start: tests/fixtures/deaths/yarn-driver.log)
_YARN_FAILED = re.compile(
    r"Container (?:marked as failed|from a bad node): (?P<id>container\S+?) "
    r"on host: (?P<host>\S+?)\. Exit status: (?P<code>-?\d+)\. "
    r"(?:Diagnostics: |Possible causes: )?(?P<why>.*)"
)
_YARN_STATE = re.compile(r"Application report for (application_\d+_\d+) \(state: (\w+)\)")
_APP_ID = re.compile(r"Connected to Spark cluster with app ID (app-[\w-]+)")
_DRIVER_HOST = re.compile(r"BlockManagerId\(driver, ([^,\s]+),")
_DRIVER_PORT = re.compile(r"Successfully started service 'sparkDriver' on port (\d+)")
# a log4j line starts with its date: the lines between two are one message's continuation
_LOG_LINE = re.compile(r"^\d{2,4}[/-]\d{2}[/-]\d{2}[ T]\d{2}:\d{2}")

# what an executor that cannot reach the driver prints, and what the root cause says
_UNREACHABLE = re.compile(r"Failed to connect to /?(?P<address>[\w.\-]+|\[[\w:]+\]):(?P<port>\d+)")
_CAUSE = re.compile(
    r"(Connection refused|No route to host|Connection timed out|"
    r"connection timed out|Network is unreachable|UnknownHostException[^\n]*)"
)
_ERROR = re.compile(r"(Exception|Error|error:|No such file|not found|Unrecognized)")


@dataclass(frozen=True)
class Death:
    """One executor that ended before it ran a task, as the driver heard of it."""

    executor: str  # APP/N (standalone) or a YARN container id
    host: str | None
    reason: str  # the cluster's words: "Command exited with code 1", YARN's diagnostics
    worker: str | None = None  # a standalone worker's id: where its stderr is served


@dataclass
class DriverLog:
    """What the driver's log says so far of the application's executors."""

    app_id: str | None = None
    driver: str | None = None  # the driver's address as the executors are told it: HOST:PORT
    launched: dict[str, tuple[str, str]] = field(default_factory=dict)  # APP/N -> (host, worker)
    deaths: list[Death] = field(default_factory=list)
    yarn_state: str | None = None  # the application's last state in YARN's reports
    yarn_app: str | None = None  # its id there

    @classmethod
    def read(cls, path: Path | None) -> DriverLog:
        try:
            with open(path or "", "rb") as handle:
                text = handle.read(MAX_LOG_BYTES).decode(errors="replace")
        except OSError:
            return cls()
        return cls.parse(text)

    @classmethod
    def parse(cls, text: str) -> DriverLog:
        log = cls()
        host = port = None
        lines = text.splitlines()
        for index, line in enumerate(lines):
            if (found := _APP_ID.search(line)) is not None:
                log.app_id = found.group(1)
            elif (found := _DRIVER_HOST.search(line)) is not None and host is None:
                host = found.group(1)
            elif (found := _DRIVER_PORT.search(line)) is not None:
                port = found.group(1)
            elif (found := _ADDED.search(line)) is not None:
                full = f"{found['app']}/{found['id']}"
                log.launched[full] = (found["host"], found["worker"])
            elif (found := _UPDATED.search(line)) is not None:
                full = f"{found['app']}/{found['id']}"
                where, worker = log.launched.get(full, (None, None))
                log.deaths.append(Death(full, where, found["why"] or found["state"], worker))
            elif (found := _YARN_FAILED.search(line)) is not None:
                if any(d.executor == found["id"] for d in log.deaths):
                    continue  # the allocator's line and the driver's request to remove it
                more = _continuation(lines, index + 1)
                log.deaths.append(
                    Death(found["id"], found["host"], "\n".join([found["why"], *more]).strip())
                )
            elif (found := _YARN_STATE.search(line)) is not None:
                log.yarn_app, log.yarn_state = found.group(1), found.group(2)
        if host is not None:
            log.driver = f"{host}:{port}" if port else host
        return log

    def hosts(self) -> list[str]:
        return list(dict.fromkeys(d.host for d in self.deaths if d.host))


def _continuation(lines: list[str], start: int) -> list[str]:
    """The lines of one multi-line log message after its first (YARN's diagnostics)."""
    more = []
    for line in lines[start : start + 200]:
        if _LOG_LINE.match(line):
            break
        more.append(line)
    return more


def executor_stderr(worker_ui: str, death: Death, timeout_s: float = 2.0) -> str | None:
    """A standalone executor's stderr as its worker's web UI serves it, or None when the UI
    does not answer (unreachable from here, or the log gone)."""
    app, _, executor = death.executor.rpartition("/")
    query = urllib.parse.urlencode(
        {"appId": app, "executorId": executor, "logType": "stderr", "byteLength": 65536}
    )
    try:
        with urllib.request.urlopen(
            f"{worker_ui.rstrip('/')}/log?{query}", timeout=timeout_s
        ) as page:
            return page.read().decode(errors="replace")
    except (urllib.error.URLError, OSError, ValueError):
        return None


def explain(log: DriverLog, errors: dict[str, str], master: str) -> str:
    """The one line for executors that died as they started: their hosts, the driver's
    address, and their own error (``errors``: an executor's stderr or YARN's diagnostics,
    by executor) where it is known."""
    hosts = ", ".join(log.hosts()) or "the cluster"
    count = len(log.deaths)
    texts = [errors.get(d.executor) or d.reason for d in log.deaths]
    for text in reversed(texts):  # the newest death that says it could not connect
        unreachable = _UNREACHABLE.search(text)
        if unreachable is not None:
            cause = _CAUSE.search(text)
            said = f' ("{cause.group(1)}")' if cause else ""
            address = f"{unreachable['address']}:{unreachable['port']}"
            return (
                f"executors on {hosts} could not reach the driver at {address}{said}: give "
                "--driver-host an address they can reach"
            )
    own = next((line for text in reversed(texts) if (line := _error_line(text))), None)
    driver = f" (the driver listens on {log.driver})" if log.driver else ""
    if own is not None:
        return (
            f"executors on {hosts} died as they started ({count} of them, the cluster at "
            f'{master}){driver}: "{own}"'
        )
    return (
        f"executors on {hosts} died as they started ({count} of them, the cluster at "
        f'{master}: "{log.deaths[-1].reason}"){driver}; their own error is in their '
        "stderr on that host (the worker's work directory, APP/N/stderr), which its "
        "web UI did not serve here"
    )


def _error_line(text: str) -> str | None:
    """An executor's own last error: the last exception line of its stderr or diagnostics,
    stack frames left out."""
    found = [
        line.strip()
        for line in text.splitlines()
        if _ERROR.search(line) and not line.strip().startswith(("at ", "Spark Executor Command"))
    ]
    return found[-1][:300] if found else None
