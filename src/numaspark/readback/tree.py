"""A PySpark JVM's Python processes, read back from /proc: the executor's ``pyspark.daemon``
and the workers it forks, and in local mode the driver's own Python process (the user's
script, which the driver JVM starts as its child).

The tree is read as text (one `ProcText` per descendant of the JVM): here through psutil
and /proc, on another host by one ``sh`` script over SSH (`READ_TREE`), so one pure
function (`python_processes`) turns either, or a recorded tree, into `PythonProcess`es.
A forked worker runs the daemon's command line (fork without exec), so its role comes
from its parent, not its command line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import psutil

from numaspark.readback.proc import pages_per_node, parse_effective
from numaspark.readback.python_processes import DAEMON, DRIVER, WORKER, PythonProcess

CLK_TCK = os.sysconf("SC_CLK_TCK")
# sh script: every descendant of $1 as a block of marked sections; values arrive as
# positional parameters. ps lists the tree; each /proc file is read once (a process gone
# between the two leaves empty sections, which the parser skips).
READ_TREE = (
    'kids() { for c in $(ps -o pid= --ppid "$1"); do echo "$c $1"; kids "$c"; done; }; '
    'echo "@@clk_tck@@ $(getconf CLK_TCK)"; '
    'kids "$1" | while read -r p pp; do echo "@@proc@@ $p $pp"; '
    'tr "\\0" " " < "/proc/$p/cmdline" 2>/dev/null; echo; echo @@status@@; '
    'cat "/proc/$p/status" 2>/dev/null; echo @@numa_maps@@; cat "/proc/$p/numa_maps" 2>/dev/null; '
    'echo @@stat@@; cat "/proc/$p/stat" 2>/dev/null; done'
)


@dataclass(frozen=True)
class ProcText:
    """One process of a JVM's tree as /proc shows it: the raw text, parsed later."""

    pid: int
    ppid: int
    cmdline: str
    status: str
    numa_maps: str
    stat: str


def read_tree_here(root: int, proc: Path = Path("/proc"), maps: bool = True) -> list[ProcText]:
    """Every descendant of ``root`` on this machine, as text (``maps``: with its numa_maps,
    which costs a walk of its page tables); empty when ``root`` has gone."""
    try:
        children = psutil.Process(root).children(recursive=True)
    except psutil.Error:
        return []
    found = []
    for child in children:
        base = proc / str(child.pid)
        try:
            texts = [(base / name).read_text() for name in ("status", "stat")]
            cmdline = (base / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # ended between listing and reading
        try:
            numa_maps = (base / "numa_maps").read_text() if maps else ""
        except OSError:
            numa_maps = ""
        ppid = _ppid(texts[1])
        found.append(ProcText(child.pid, ppid, cmdline.strip(), texts[0], numa_maps, texts[1]))
    return found


def parse_tree_text(text: str) -> tuple[list[ProcText], int]:
    """`READ_TREE`'s output: the processes, and the host's clock ticks per second."""
    found: list[ProcText] = []
    ticks = CLK_TCK
    for block in text.split("@@proc@@ ")[1:]:
        head, _, rest = block.partition("\n")
        cmdline, _, rest = rest.partition("@@status@@\n")
        status, _, rest = rest.partition("@@numa_maps@@\n")
        maps, _, stat = rest.partition("@@stat@@\n")
        pid, ppid = (int(v) for v in head.split()[:2])
        if status.strip() and stat.strip():
            found.append(ProcText(pid, ppid, cmdline.strip(), status, maps, stat.strip()))
    first = text.partition("\n")[0]
    if first.startswith("@@clk_tck@@"):
        ticks = int(first.split()[1])
    return found, ticks


def python_processes(
    root: int, tree: list[ProcText], driver: bool = False, ticks: int = CLK_TCK
) -> list[PythonProcess]:
    """The Python processes among ``root``'s descendants ``tree``: daemons, their workers,
    simple workers, and (``driver``: ``root`` is a local-mode driver JVM) the Python process
    it started for the user's script. Other descendants are not Spark's Python: left out."""
    by_pid = {p.pid: p for p in tree}
    roles: dict[int, str] = {}
    for proc in sorted(tree, key=lambda p: _depth(p, by_pid, root)):
        role = _role(proc, roles, root, driver, by_pid)
        if role is not None:
            roles[proc.pid] = role
    return [_parse(by_pid[pid], role, ticks) for pid, role in sorted(roles.items())]


def _role(
    proc: ProcText, roles: dict[int, str], root: int, driver: bool, by_pid: dict[int, ProcText]
) -> str | None:
    parent = roles.get(proc.ppid)
    if parent == DAEMON and (
        proc.cmdline == by_pid[proc.ppid].cmdline or _runs_python(proc.cmdline)
    ):
        # forked: the daemon's command line, the daemon's child (not a helper a launcher
        # such as pyenv's shim runs before it execs Python)
        return WORKER
    if "pyspark.daemon" in proc.cmdline and proc.ppid == root:
        return DAEMON
    if "pyspark.worker" in proc.cmdline or "pyspark.sql.worker" in proc.cmdline:
        return WORKER  # a simple worker, started without the daemon
    if driver and proc.ppid == root and _runs_python(proc.cmdline):
        return DRIVER
    return None


def _runs_python(cmdline: str) -> bool:
    program = Path(cmdline.split(" ", 1)[0]).name
    return program.startswith("python") or program == "pypy3"


def _depth(proc: ProcText, by_pid: dict[int, ProcText], root: int) -> int:
    depth, seen = 0, proc
    while seen.ppid != root and seen.ppid in by_pid and depth < 64:
        seen, depth = by_pid[seen.ppid], depth + 1
    return depth


def _ppid(stat: str) -> int:
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _parse(proc: ProcText, role: str, ticks: int) -> PythonProcess:
    placed = parse_effective(proc.pid, proc.status, proc.numa_maps)
    rest = proc.stat[proc.stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    utime, stime = (int(v) for v in rest[11:13])
    rss = next(
        (
            int(line.split()[1]) * 1024
            for line in proc.status.splitlines()
            if line.startswith("VmRSS:")
        ),
        None,
    )
    return PythonProcess(
        pid=proc.pid,
        role=role,
        cpus=str(placed.cpus),
        mems=str(placed.mems),
        policy=placed.policy,
        bytes_per_node={str(n): b for n, b in sorted(pages_per_node(proc.numa_maps).items())},
        cpu_s=round((utime + stime) / ticks, 2),
        rss_bytes=rss,
        threads=int(rest[17]),
    )
