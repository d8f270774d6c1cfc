"""A standalone master's status page (``/json/``) served by the test's own process: recorded
from a real master, or changed to say what the cluster does not have."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "fixtures" / "standalone" / "master-status.json"


def recorded_status() -> dict:
    """A Spark 4.3.0 master's /json/ with one worker of 2 cores and 2048 MB, none in use."""
    return json.loads(RECORDED.read_text())


@contextlib.contextmanager
def serving(status: dict) -> Iterator[str]:
    """``status`` at /json/ on a free port of 127.0.0.1; the page's base URL."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = json.dumps(status).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
