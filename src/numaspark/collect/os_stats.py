"""OS figures per JVM and machine-wide, from /proc (psutil where it reads what we need).

Per JVM: CPU time split user/system (all threads, from /proc/PID/stat), voluntary
and involuntary context switches and CPU migrations (summed over the JVM's
threads' /proc/PID/task/TID/sched: /proc/PID/status counts only the main
thread), RSS and the process's own peak RSS (VmHWM). A thread that ends keeps
the counts it had at its last sample (the kernel drops them with the thread),
so the totals only grow; what it did after its last sample is lost.
Per JVM too, the CPU time of its Python processes (PySpark's daemon and workers; in local
mode the driver's script apart), each kept at its last sample as the threads are: a worker
that lived between two samples is not counted (readback/python_processes.py).
Machine-wide: CPU time split
user/system/iowait/idle, utilisation per CPU, context switches, load.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import psutil

from numaspark.collect.base import Collector, JvmMap
from numaspark.readback.python_processes import DRIVER
from numaspark.readback.tree import python_processes, read_tree_here

CLK_TCK = os.sysconf("SC_CLK_TCK")
_SCHED = re.compile(
    r"^(se\.nr_migrations|nr_voluntary_switches|nr_involuntary_switches)\s*:\s*(\d+)", re.MULTILINE
)
_STATUS = re.compile(r"^(VmRSS|VmHWM):\s*(\d+) kB", re.MULTILINE)


def read_jvm(pid: int, proc: Path = Path("/proc")) -> dict | None:
    """One process's cumulative CPU, switches, migrations and memory; None when it has gone."""
    base = proc / str(pid)
    try:
        stat = (base / "stat").read_text()
        status = (base / "status").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    reading = {
        "user_s": int(fields[11]) / CLK_TCK,
        "system_s": int(fields[12]) / CLK_TCK,
        "threads": int(fields[17]),
        "per_thread": {},  # tid -> [voluntary, involuntary, migrations]
    }
    memory = {key: int(value) * 1024 for key, value in _STATUS.findall(status)}
    reading["rss_bytes"] = memory.get("VmRSS")
    reading["peak_rss_bytes"] = memory.get("VmHWM")
    slot = {"nr_voluntary_switches": 0, "nr_involuntary_switches": 1, "se.nr_migrations": 2}
    try:
        tasks = list((base / "task").iterdir())
    except OSError:
        tasks = []
    for task in tasks:
        try:
            text = (task / "sched").read_text()
        except OSError:
            continue  # the thread ended between listing and reading
        counts = [0, 0, 0]
        for key, value in _SCHED.findall(text):
            counts[slot[key]] = int(value)
        reading["per_thread"][task.name] = counts
    return reading


class OsCollector(Collector):
    name = "os"

    def __init__(self) -> None:
        super().__init__()
        self._threads: dict[int, dict[str, list[int]]] = {}  # pid -> tid -> last counts
        self._python: dict[int, dict[int, tuple[str, float]]] = {}  # pid -> its Python's

    def _totals(self, pid: int, jvm: dict) -> dict:
        known = self._threads.setdefault(pid, {})
        known.update(jvm.pop("per_thread"))
        jvm["voluntary"] = sum(c[0] for c in known.values())
        jvm["involuntary"] = sum(c[1] for c in known.values())
        jvm["migrations"] = sum(c[2] for c in known.values())
        return jvm

    def sample(self, now: float, jvms: JvmMap) -> dict:
        per_cpu = psutil.cpu_times(percpu=True)
        reading = {
            "cpus": [
                {
                    "busy": _busy(t),
                    "total": _total(t),
                    "user": t.user,
                    "system": t.system,
                    "iowait": getattr(t, "iowait", 0.0),
                }
                for t in per_cpu
            ],
            "ctx_switches": psutil.cpu_stats().ctx_switches,
            "load1": os.getloadavg()[0],
            "jvms": {},
        }
        for pid, (name, _) in jvms.items():
            jvm = read_jvm(pid)
            if jvm is not None:
                reading["jvms"][str(pid)] = {
                    "name": name,
                    **self._totals(pid, jvm),
                    **self._python_cpu(pid, name == "driver"),
                }
        return reading

    def _python_cpu(self, pid: int, driver: bool) -> dict:
        """The JVM's Python processes' CPU time so far, each at its last sample; none for a
        JVM without any."""
        alive = python_processes(pid, read_tree_here(pid, maps=False), driver)
        known = self._python.setdefault(pid, {})
        for proc in alive:
            known[proc.pid] = (proc.role, max(known.get(proc.pid, ("", 0.0))[1], proc.cpu_s or 0))
        if not known:
            return {}
        return {
            "python_cpu_s": round(sum(c for role, c in known.values() if role != DRIVER), 2),
            "python_driver_cpu_s": round(sum(c for role, c in known.values() if role == DRIVER), 2),
            "python_rss_bytes": sum(p.rss_bytes or 0 for p in alive if p.role != DRIVER),
        }

    def summarize(self, start: float, end: float) -> dict:
        samples = self.window(start, end)
        if len(samples) < 2:
            return {"note": "the window was shorter than one sampling interval"}
        first, last = samples[0], samples[-1]
        seconds = last["t"] - first["t"]
        totals = {
            k: sum(c[k] for c in last["cpus"]) - sum(c[k] for c in first["cpus"])
            for k in ("total", "busy", "user", "system", "iowait")
        }
        whole = totals["total"] or 1.0
        utilisation = [
            round((b["busy"] - a["busy"]) / ((b["total"] - a["total"]) or 1.0), 4)
            for a, b in zip(first["cpus"], last["cpus"], strict=False)
        ]
        summary = {
            "seconds": round(seconds, 3),
            "cpu_utilisation": round(totals["busy"] / whole, 4),
            "cpu_user_share": round(totals["user"] / whole, 4),
            "cpu_system_share": round(totals["system"] / whole, 4),
            "cpu_iowait_share": round(totals["iowait"] / whole, 4),
            "cpu_utilisation_per_cpu": utilisation,
            "context_switches_per_s": round(
                (last["ctx_switches"] - first["ctx_switches"]) / seconds, 1
            )
            if seconds
            else None,
            "load1_mean": round(sum(s["load1"] for s in samples) / len(samples), 2),
            "jvms": [],
        }
        for pid in sorted({p for s in samples for p in s["jvms"]}, key=int):
            summary["jvms"].append(_jvm_use(pid, [s for s in samples if pid in s["jvms"]]))
        return summary


def _jvm_use(pid: str, seen: list[dict]) -> dict:
    """One JVM's CPU time, switches, migrations and memory over the samples it is ``seen`` in."""
    counters = ("user_s", "system_s", "voluntary", "involuntary", "migrations")
    first, last = seen[0]["jvms"][pid], seen[-1]["jvms"][pid]
    span = seen[-1]["t"] - seen[0]["t"]
    if len(seen) == 1:  # appeared in the last sample only: its totals so far
        first = dict.fromkeys(counters, 0)
    delta = {k: last[k] - first[k] for k in counters}
    return {
        "name": last["name"],
        "pid": int(pid),
        "cpu_user_s": round(delta["user_s"], 2),
        "cpu_system_s": round(delta["system_s"], 2),
        "voluntary_switches": max(0, delta["voluntary"]),
        "involuntary_switches": max(0, delta["involuntary"]),
        "context_switches_per_s": round(max(0, delta["voluntary"] + delta["involuntary"]) / span, 1)
        if span > 0
        else None,
        "migrations": max(0, delta["migrations"]),
        "threads": last["threads"],
        "rss_bytes": last["rss_bytes"],
        "peak_rss_bytes": max(s["jvms"][pid]["peak_rss_bytes"] or 0 for s in seen) or None,
        **_python_use([s["jvms"][pid] for s in seen]),
    }


def _python_use(readings: list[dict]) -> dict:
    """The window's Python CPU time (workers and daemon; the local-mode driver's script
    apart) and the Python workers' peak RSS, where the JVM had Python processes."""
    if not any("python_cpu_s" in r for r in readings):
        return {}
    first = readings[0] if len(readings) > 1 else {}  # one sample: its totals so far
    return {
        key: round(readings[-1].get(key, 0.0) - first.get(key, 0.0), 2)
        for key in ("python_cpu_s", "python_driver_cpu_s")
    } | {"python_peak_rss_bytes": max(r.get("python_rss_bytes", 0) for r in readings)}


def _busy(times) -> float:
    return _total(times) - times.idle - getattr(times, "iowait", 0.0)


def _total(times) -> float:
    # guest time is already inside user time on Linux: leave it out of the sum
    return sum(getattr(times, f) for f in times._fields if f not in ("guest", "guest_nice"))
