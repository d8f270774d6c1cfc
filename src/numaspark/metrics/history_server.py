"""A Spark History Server's event logs, fetched over its REST API into a local directory.

``GET /api/v1/applications`` lists the applications and their attempts;
``GET /api/v1/applications/APP_ID[/ATTEMPT_ID]/logs`` is a zip of one attempt's log as the
server keeps it (a file, or an ``eventlog_v2_*`` directory of a rolling log). Each attempt is
fetched once and kept under numaspark's state directory (``$NUMASPARK_STATE_DIR``, else
``~/.cache/numaspark``), ``history-servers/<host_port>/``, with an index of what each attempt
was when fetched: it is fetched again only when the server says it changed (its last update,
its end, whether it completed). What is fetched is then read as a directory of logs is
(metrics/logdir.py). Only the standard library's urllib, with timeouts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from numaspark.errors import UsageError
from numaspark.supervise.ledger import state_base

LIST_TIMEOUT_S = 15.0
LOG_TIMEOUT_S = 120.0
FETCHERS = 4  # downloads at once: the server zips each log as it sends it
INDEX = "index.json"


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


@dataclass
class FetchedLogs:
    """The logs of the server's listed attempts, as local paths; what could not be fetched."""

    directory: Path
    logs: list[Path] = field(default_factory=list)
    fetched: int = 0  # attempts downloaded now (the rest were kept from an earlier fetch)
    in_progress: int = 0  # attempts not completed, skipped
    warnings: list[str] = field(default_factory=list)


def api_base(url: str) -> str:
    """The server's address without a trailing slash or ``/api/v1``."""
    return re.sub(r"(/api/v1)?/*$", "", url.strip())


def cache_directory(url: str) -> Path:
    """Where one server's logs are kept: by host and port, and the path a proxy adds."""
    parts = urllib.parse.urlsplit(url)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", parts.netloc)
    if parts.path.strip("/"):
        name += "-" + hashlib.sha256(parts.path.encode()).hexdigest()[:8]
    return state_base() / "history-servers" / name


def list_applications(base: str) -> list[dict]:
    """The server's ``/api/v1/applications``; one line when it does not answer as one."""
    url = f"{base}/api/v1/applications"
    try:
        with urllib.request.urlopen(url, timeout=LIST_TIMEOUT_S) as answer:
            listed = json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        raise UsageError(
            f"{url}: HTTP {exc.code} {exc.reason}: is {base} a Spark History Server? "
            "(give its address, e.g. http://host:18080)"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        why = getattr(exc, "reason", exc)
        raise UsageError(
            f"{base}: no answer ({why}): give a Spark History Server's address this machine "
            "reaches, e.g. http://host:18080"
        ) from None
    except ValueError:
        raise UsageError(
            f"{url}: the answer is not JSON: is {base} a Spark History Server?"
        ) from None
    if not isinstance(listed, list):
        raise UsageError(f"{url}: the answer is not a list of applications")
    return [app for app in listed if isinstance(app, dict) and app.get("id")]


def _attempts(applications: list[dict]) -> list[tuple[str, str | None, dict]]:
    """(application id, attempt id or None, the attempt) for each attempt listed."""
    found = []
    for app in applications:
        for attempt in app.get("attempts") or [{}]:
            attempt = attempt if isinstance(attempt, dict) else {}
            found.append((str(app["id"]), attempt.get("attemptId"), attempt))
    return found


def fetch_logs(url: str, in_progress: bool = False) -> FetchedLogs:
    """Every listed attempt's log (completed ones, unless ``in_progress``), fetched into the
    server's cache directory when it is new or changed."""
    base = api_base(url)
    attempts = _attempts(list_applications(base))
    found = FetchedLogs(cache_directory(base))
    found.directory.mkdir(parents=True, exist_ok=True)
    index = _read_index(found.directory)
    wanted = []
    for app_id, attempt_id, attempt in attempts:
        if attempt.get("completed") is False and not in_progress:
            found.in_progress += 1
            continue
        key = f"{app_id}/{attempt_id}" if attempt_id else app_id
        version = [attempt.get(k) for k in ("lastUpdatedEpoch", "endTimeEpoch", "completed")]
        kept = index.get(key)
        if kept and kept.get("version") == version and _present(found.directory, kept):
            found.logs += [found.directory / name for name in kept["entries"]]
        else:
            wanted.append((key, version))
    with ThreadPoolExecutor(FETCHERS) as pool:
        for key, version, entries, warning in pool.map(
            lambda kv: _fetch_one(base, found.directory, index.get(kv[0]), *kv), wanted
        ):
            if warning:
                found.warnings.append(warning)
                continue
            index[key] = {"version": version, "entries": entries}
            found.logs += [found.directory / name for name in entries]
            found.fetched += 1
    _write_index(found.directory, index)
    return found


def _present(directory: Path, kept: dict) -> bool:
    entries = kept.get("entries")
    return isinstance(entries, list) and all((directory / str(e)).exists() for e in entries)


def _fetch_one(
    base: str, directory: Path, kept: dict | None, key: str, version: list
) -> tuple[str, list, list[str], str | None]:
    """One attempt's zip, downloaded and unpacked: (key, version, its top-level entries, a
    warning instead when it could not be)."""
    quoted = "/".join(urllib.parse.quote(part, safe="") for part in key.split("/"))
    url = f"{base}/api/v1/applications/{quoted}/logs"
    with tempfile.TemporaryFile(dir=directory) as body:
        try:
            with urllib.request.urlopen(url, timeout=LOG_TIMEOUT_S) as answer:
                shutil.copyfileobj(answer, body)
        except (urllib.error.URLError, OSError) as exc:
            return key, version, [], f"{url}: not fetched ({getattr(exc, 'reason', exc)})"
        for name in (kept or {}).get("entries") or []:  # the attempt's earlier copy
            _remove(directory / str(name))
        try:
            return key, version, _unzip(body, directory), None
        except (zipfile.BadZipFile, UsageError) as exc:
            return key, version, [], f"{url}: not a zip of event logs ({exc})"


def _unzip(body, directory: Path) -> list[str]:
    """Unpack a logs zip into ``directory``; its top-level names. A member that would land
    outside the directory refuses the whole zip."""
    with zipfile.ZipFile(body) as archive:
        names = archive.namelist()
        for name in names:
            parts = PurePosixPath(name).parts
            if not parts or name.startswith("/") or ".." in parts or "\\" in name:
                raise UsageError(f"member {name!r} would land outside the log directory")
        archive.extractall(directory)
    return sorted({PurePosixPath(name).parts[0] for name in names})


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink()


def _read_index(directory: Path) -> dict:
    try:
        index = json.loads((directory / INDEX).read_text())
    except (OSError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}


def _write_index(directory: Path, index: dict) -> None:
    partial = directory / f".{INDEX}.{os.getpid()}"
    partial.write_text(json.dumps(index, indent=1, sort_keys=True))
    partial.replace(directory / INDEX)
