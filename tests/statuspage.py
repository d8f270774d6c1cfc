"""A standalone master's status page (``/json/``) served by the test's own process: recorded
from a real master, or changed to say what the cluster does not have."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "fixtures" / "standalone" / "master-status.json"


def recorded_status() -> dict:
    """A Spark 4.3.0 master's /json/ with one worker of 2 cores and 2048 MB, none in use."""
    return json.loads(RECORDED.read_text())


@contextlib.contextmanager
def serving(status: dict) -> Iterator[str]:
    """``status`` at /json/ on a free port of 127.0.0.1; the page's base URL."""
    with pages(lambda url, base: json.dumps(status).encode()) as base:
        yield base


@contextlib.contextmanager
def pages(answer: Callable[[urllib.parse.ParseResult, str], bytes | None]) -> Iterator[str]:
    """A web server on a free port of 127.0.0.1 whose GET answers ``answer(url, base)`` (None:
    404), for the pages of a master, a worker or a ResourceManager; yields the base URL."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = answer(urllib.parse.urlparse(self.path), base)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base
    finally:
        server.shutdown()
        server.server_close()
