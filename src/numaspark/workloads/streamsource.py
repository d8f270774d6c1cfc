"""The event source of the streaming workloads: lines sent over TCP at a controlled rate.

Data velocity is an experiment parameter (the studies used 10 to 10,000
events/s), so numaspark runs the source itself instead of reading a broker:
one process, listening on 127.0.0.1 on a free port, that Spark's socket source
connects to. Each connection is one iteration: the source sends ``rate``
events a second for the warm-up and the measured duration, closes the
connection, and appends to a ledger (JSON lines) what it sent - totals,
per-key sums, window facts - which the workload's check compares Spark's
answer with. Events carry the millisecond they were sent, so the job can
measure end-to-end latency and window by event time exactly as the ledger does.

Event contents are drawn from a seeded generator (the same seed sends the
same events); timestamps are wall-clock and so are not.

Lines: ``words``  ``<ts_ms>\\t<w1> <w2> ...`` (Zipfian words)
       ``clicks`` ``<ts_ms>\\t<user>\\t<page>\\t<zip>\\t<status>``
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from pathlib import Path

import numpy as np

from numaspark.workloads.generators import ZIPF_EXPONENT, _vocabulary
from numaspark.workloads.harness import read_json_lines

TICK_S = 0.005  # how often the sender tops up to rate x elapsed
USERS = 10_000
PAGES = 1_000
ZIPS = 100
STATUSES = np.array([200, 404, 500])
STATUS_P = np.array([0.95, 0.03, 0.02])


class Events:
    """Seeded event contents for one stream kind, and the tallies the checks need."""

    def __init__(self, kind: str, seed: int, params: dict) -> None:
        if kind not in ("words", "clicks"):
            raise ValueError(f"unknown stream kind {kind!r}")
        self.kind = kind
        self.rng = np.random.default_rng(seed)
        self.window_ms = int(float(params.get("window_s", 10)) * 1000)
        if kind == "words":
            self.per_event = int(params.get("words_per_event", 5))
            self.vocab = _vocabulary(self.rng, int(params.get("vocabulary", 1000)))
            self.tokens = self.vocab.astype(object)
            self.counts = np.zeros(len(self.vocab), dtype=np.int64)
        else:
            self.users = np.array([f"u{i:05d}" for i in range(USERS)], dtype=object)
            self.pages = np.array([f"/page/{i}" for i in range(PAGES)], dtype=object)
            self.zips = np.array([f"{10000 + 97 * i}" for i in range(ZIPS)], dtype=object)
            self.page_counts = np.zeros(PAGES, dtype=np.int64)
            self.errors = 0
            self.window_users: dict[int, set[int]] = {}  # tumbling window start -> users seen
            self.window_zips: set[tuple[int, int]] = set()  # (window start, zip)
        self.events = 0

    def _zipf(self, n: int, size: int, shape=None) -> np.ndarray:
        return (self.rng.zipf(ZIPF_EXPONENT, size=shape or n) - 1) % size

    def make(self, n: int, ts_ms: int) -> bytes:
        """``n`` events stamped ``ts_ms``, as lines; tallied."""
        self.events += n
        stamp = f"{ts_ms}\t"
        if self.kind == "words":
            ranks = self._zipf(n, len(self.vocab), (n, self.per_event))
            np.add.at(self.counts, ranks.ravel(), 1)
            words = self.tokens[ranks]
            lines = [stamp + " ".join(row) + "\n" for row in words.tolist()]
        else:
            users = self._zipf(n, USERS)
            pages = self._zipf(n, PAGES)
            zips = self.rng.integers(0, ZIPS, size=n)
            statuses = self.rng.choice(STATUSES, size=n, p=STATUS_P)
            np.add.at(self.page_counts, pages, 1)
            self.errors += int((statuses != 200).sum())
            window = ts_ms - ts_ms % self.window_ms  # Spark's tumbling windows start at the epoch
            self.window_users.setdefault(window, set()).update(users.tolist())
            self.window_zips.update((window, z) for z in set(zips.tolist()))
            lines = [
                f"{stamp}{self.users[u]}\t{self.pages[p]}\t{self.zips[z]}\t{s}\n"
                for u, p, z, s in zip(users, pages, zips, statuses.tolist(), strict=True)
            ]
        return "".join(lines).encode()

    def facts(self) -> dict:
        if self.kind == "words":
            seen = self.counts[self.counts > 0]
            return {
                "words": int(seen.sum()),
                "distinct_words": int(len(seen)),
                "words_sum_squares": int((seen * seen).sum()),
            }
        seen = self.page_counts[self.page_counts > 0]
        return {
            "errors": self.errors,
            "distinct_pages": int(len(seen)),
            "pages_sum_squares": int((seen * seen).sum()),
            "windows": len(self.window_users),
            "window_users": sum(len(users) for users in self.window_users.values()),
            "window_zips": len(self.window_zips),
        }


def send(conn: socket.socket, events: Events, rate: float, seconds: float) -> dict:
    """Send ``rate`` events a second for ``seconds``; what was sent, and how closely."""
    started = time.time()
    sent = 0
    late_ticks = 0
    total = int(round(rate * seconds))
    while sent < total:
        now = time.time()
        due = min(total, int((now - started) * rate))
        if due - sent > max(1.0, rate * 0.1):
            late_ticks += 1  # over 100 ms of events overdue: the sender is not keeping up
        if due > sent:
            conn.sendall(events.make(due - sent, int(now * 1000)))
            sent = due
        time.sleep(TICK_S)
    ended = time.time()
    return {
        "events": sent,
        "first_ms": int(started * 1000),
        "last_ms": int(ended * 1000),
        "send_rate": sent / max(ended - started, 1e-9),
        "late_ticks": late_ticks,
    }


def serve(
    listener: socket.socket,
    kind: str,
    rate: float,
    warmup_s: float,
    duration_s: float,
    seed: int,
    params: dict,
    ledger: Path,
    connections: int,
    accept_timeout_s: float = 900.0,
) -> None:
    """Serve ``connections`` iterations, one per connection, appending each to ``ledger``."""
    listener.settimeout(accept_timeout_s)
    for index in range(connections):
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            return  # nobody came: the application failed before it connected
        events = Events(kind, seed + index, params)
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                sent = send(conn, events, rate, warmup_s + duration_s)
            except OSError as exc:  # the query stopped reading
                sent = {"events": events.events, "error": str(exc)}
        entry = {
            "connection": index,
            "kind": kind,
            "rate": rate,
            "warmup_s": warmup_s,
            "duration_s": duration_s,
            **sent,
            **events.facts(),
        }
        if "first_ms" in sent:
            entry["measure_from_ms"] = sent["first_ms"] + int(warmup_s * 1000)
        with open(ledger, "a") as out:
            out.write(json.dumps(entry) + "\n")
            out.flush()
            os.fsync(out.fileno())


def read_ledger(path: Path) -> list[dict]:
    """What the source sent, one entry per connection."""
    return read_json_lines(path)


def source_argv(
    directory: Path,
    kind: str,
    rate: float,
    warmup_s: float,
    duration_s: float,
    seed: int,
    params: dict,
    connections: int,
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "numaspark.workloads.streamsource",
        "--dir",
        str(directory),
        "--kind",
        kind,
        "--rate",
        repr(float(rate)),
        "--warmup",
        repr(float(warmup_s)),
        "--duration",
        repr(float(duration_s)),
        "--seed",
        str(seed),
        "--params",
        json.dumps(params),
        "--connections",
        str(connections),
    ]


PORT_FILE = "port"
LEDGER_FILE = "ledger.jsonl"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True, help="port file and ledger go here")
    parser.add_argument("--kind", choices=("words", "clicks"), required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--warmup", type=float, default=0.0)
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--params", default="{}")
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    with socket.create_server((args.host, 0)) as listener:
        port_file = args.dir / PORT_FILE
        port_file.with_suffix(".tmp").write_text(str(listener.getsockname()[1]))
        port_file.with_suffix(".tmp").replace(port_file)  # readers never see half a number
        serve(
            listener,
            args.kind,
            args.rate,
            args.warmup,
            args.duration,
            args.seed,
            json.loads(args.params),
            args.dir / LEDGER_FILE,
            args.connections,
        )


if __name__ == "__main__":
    main()
