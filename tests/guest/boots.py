"""Several guest boots at once: ``scripts/test-guest.sh`` with ``NUMASPARK_GUEST_PARALLEL=N``.

A guest's vCPUs share one host thread (build.py's GUEST_ACCEL), so a boot keeps one core busy
for 5 to 110 minutes, and a machine of N cores can run N of them side by side. Each boot is a
module-scoped ``guest*`` fixture of tests/test_numa_guest.py with the tests that read it; they
must run in one pytest process, or the boot runs twice. This driver collects the selected tests
(pytest's own collection, with the caller's arguments: ``-k``, ``-m``), groups them by the boot they read (a
test that boots its own guest is a group of itself), and runs each group in a pytest process
of its own, at most N at a time, the longest boots first, each started as soon as one ends.
Each group's output goes to ``test-artifacts/numa-guest/pytest-GROUP.log`` (``--out``); a line
says when each starts and ends.

Why not pytest-xdist, whose ``--dist loadgroup`` means to do this: on pytest 9.2 it no longer
groups at all (pytest-xdist issue #1386: its worker renames each test's node ID, which pytest
now ignores), and its schedulers give a worker a second group while its first still has two
tests or fewer to run, so two long boots could queue on one worker while the other idles.

Ctrl-C or SIGTERM: every pytest it started gets SIGINT with its whole process group, as from a
terminal, so build.py under it ends QEMU; nothing is left behind (SIGINT to pytest alone left
both boots of the first try running). The exit status is the first non-zero
one of the groups (pytest's 5, no test selected, counts as passed, as scripts/test.sh does).

    python tests/guest/boots.py --parallel 2 [--tests tests/test_numa_guest.py] [-- PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "numa-guest"
GROUP_LINE = "NUMASPARK-BOOT-GROUP "
# Each boot's minutes on one host thread, measured 2026-12-07 (docs/tests.md): only the order
# in which boots start, longest first, so that the last to end is not a long one started late.
MINUTES = {
    "guest_k8s": 110,
    "guest_churn": 68,
    "guest_python": 35,
    "guest_four": 24,
    "guest": 23,
    "guest_yarn": 20,
    "guest_devices": 17,
    "guest_jvm_stress": 5,
}
NO_TESTS = 5  # pytest's exit status when nothing was selected
GRACE_S = 120  # for an interrupted boot to end its guest before its process group is killed

# Loaded into the collecting pytest (-p): prints each test's boot group.
PLUGIN = f"""
def pytest_collection_finish(session):
    print({GROUP_LINE!r} + "rootdir\\t" + str(session.config.rootpath))
    for item in session.items:
        boots = sorted(f for f in item.fixturenames if f.startswith("guest"))
        print({GROUP_LINE!r} + (boots[0] if boots else item.nodeid) + "\\t" + item.nodeid)
"""


class BootsError(Exception):
    """A problem with the request or the collection, said in one line."""


def collect(tests: Path, args: list[str], scratch: Path) -> tuple[Path, dict[str, list[str]]]:
    """pytest's rootdir (node IDs are relative to it) and the selected tests' node IDs by boot
    group, in collection order."""
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "numaspark_boot_groups.py").write_text(PLUGIN)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--long"]
        + ["-p", "numaspark_boot_groups", str(tests), *args],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(scratch), os.environ.get("PYTHONPATH", "")]),
        },
        capture_output=True,
        text=True,
    )
    groups: dict[str, list[str]] = {}
    rootdir = ROOT
    for line in done.stdout.splitlines():
        if line.startswith(GROUP_LINE):
            group, nodeid = line[len(GROUP_LINE) :].split("\t", 1)
            if group == "rootdir":
                rootdir = Path(nodeid)
            else:
                groups.setdefault(group, []).append(nodeid)
    if done.returncode not in (0, NO_TESTS):
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise BootsError(f"collecting {tests} failed (exit {done.returncode}): {' | '.join(tail)}")
    return rootdir, groups


def log_name(group: str) -> str:
    """A file name for a group: a boot's fixture name, or a test's node ID made safe."""
    return "pytest-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", group.split("::")[-1]).strip("_") + ".log"


def _signal(proc: subprocess.Popen, number: int) -> None:
    """Signal ``proc``'s process group (its own session: see Boots._run)."""
    with contextlib.suppress(ProcessLookupError):  # ended meanwhile
        os.killpg(proc.pid, number)


class Boots:
    """Runs the groups, at most ``parallel`` at a time; :meth:`stop` interrupts them all."""

    def __init__(
        self,
        rootdir: Path,
        groups: dict[str, list[str]],
        parallel: int,
        out: Path,
        grace_s: float = GRACE_S,
    ):
        self.grace_s = grace_s
        self.rootdir = rootdir
        self.queue = sorted(groups, key=lambda g: -MINUTES.get(g, 0))  # stable: ties keep order
        self.groups = groups
        self.parallel = parallel
        self.out = out
        self.lock = threading.Lock()
        self.running: dict[str, subprocess.Popen] = {}
        self.codes: dict[str, int] = {}
        self.stopping = False

    def say(self, text: str) -> None:
        print(f"boots: {time.strftime('%H:%M:%S')} {text}", flush=True)

    def _run(self, group: str) -> int:
        log = self.out / log_name(group)
        with open(log, "w") as saved:
            argv = [sys.executable, "-m", "pytest", "-ra", "-s", "--durations=15", "--long"]
            # no .pytest_cache: the groups' pytest processes would each write its lastfailed
            argv += ["-p", "no:cacheprovider"]
            proc = subprocess.Popen(
                [*argv, *self.groups[group]],
                cwd=self.rootdir,
                stdout=saved,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                # a process group of its own, which stop() interrupts whole, as a terminal's
                # Ctrl-C would: pytest, and build.py under it, which ends QEMU (pytest alone
                # interrupted leaves build.py and its guest running)
                start_new_session=True,
            )
            with self.lock:
                self.running[group] = proc
                if self.stopping:  # stop() came between the check and the start
                    _signal(proc, signal.SIGINT)
            code = proc.wait()
        with self.lock:
            del self.running[group]
        return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says

    def _lane(self) -> None:
        while True:
            with self.lock:
                if self.stopping or not self.queue:
                    return
                group = self.queue.pop(0)
                waiting = len(self.queue)
            self.say(f"{group}: {len(self.groups[group])} test(s) started; {waiting} waiting")
            began = time.monotonic()
            try:
                code = self._run(group)
            except Exception as problem:  # noqa: BLE001 (the group fails; the others go on)
                code = 1
                self.say(f"{group}: could not run: {problem}")
            with self.lock:
                self.codes[group] = code
            took = f"in {time.monotonic() - began:.0f} s, log {self.out / log_name(group)}"
            if code in (0, NO_TESTS):
                self.say(f"{group}: passed {took}")
            else:
                self.say(f"{group}: FAILED (exit {code}) {took}")
                print(_summary(self.out / log_name(group)), flush=True)

    def run(self) -> int:
        self.out.mkdir(parents=True, exist_ok=True)
        lanes = [threading.Thread(target=self._lane, daemon=True) for _ in range(self.parallel)]
        for lane in lanes:
            lane.start()
        try:
            while any(lane.is_alive() for lane in lanes):
                time.sleep(0.2)
        finally:  # Ctrl-C (KeyboardInterrupt here) or SIGTERM (turned into one): end them all
            self.stop(lanes)
        every = set(self.groups) - set(self.queue)  # the groups started
        failed = [self.codes.get(g, 1) for g in every if self.codes.get(g, 1) not in (0, NO_TESTS)]
        return failed[0] if failed else 0

    def stop(self, lanes: list[threading.Thread]) -> None:
        """SIGINT to every group still running, each unwinding its boot (build.py ends its
        QEMU); SIGKILL to the groups of those still there after ``grace_s``, or at once on a
        second Ctrl-C or SIGTERM."""
        with self.lock:
            self.stopping = True
            for proc in self.running.values():
                _signal(proc, signal.SIGINT)
        deadline = time.monotonic() + self.grace_s
        try:
            while any(lane.is_alive() for lane in lanes) and time.monotonic() < deadline:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        with self.lock:
            for proc in self.running.values():
                _signal(proc, signal.SIGKILL)  # QEMU and all: one process group
        for lane in lanes:
            lane.join(timeout=10)


def _summary(log: Path) -> str:
    """A failed group's pytest summary: its last lines from "short test summary info"."""
    lines = log.read_text(errors="replace").splitlines()
    start = max((i for i, x in enumerate(lines) if "short test summary info" in x), default=-1)
    return "\n".join(lines[start:][-15:] if start >= 0 else lines[-15:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tests/guest/boots.py",
        description="Run the guest boots' tests, N boots at once (one pytest process each).",
    )
    parser.add_argument("--parallel", type=int, default=2, help="boots at once (2)")
    parser.add_argument("--tests", type=Path, default=ROOT / "tests" / "test_numa_guest.py")
    parser.add_argument("--out", type=Path, default=ARTIFACTS, help="the groups' logs")
    parser.add_argument(
        "--grace",
        type=float,
        default=GRACE_S,
        help=f"seconds an interrupted boot has to end before it is killed ({GRACE_S})",
    )
    parser.add_argument(
        "pytest_args",
        nargs="*",
        help="after --: pytest's, which select the tests (-k ...); the chosen node IDs then run",
    )
    options = parser.parse_args(argv)
    if options.parallel < 1:
        print(
            f"boots: --parallel {options.parallel}: give 1 or more boots at once", file=sys.stderr
        )
        return 2
    # SIGTERM and SIGHUP as Ctrl-C: the finally in Boots.run interrupts every pytest it started.
    # SIGINT handled too, even where it came ignored (a shell's background job): a handled
    # signal is reset to its default in a child, so each pytest and build.py gets Ctrl-C's
    # KeyboardInterrupt from stop(), and build.py ends its QEMU
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.default_int_handler)
    try:
        rootdir, groups = collect(
            options.tests.resolve(), options.pytest_args, options.out / "boots"
        )
    except BootsError as problem:
        print(f"boots: {problem}", file=sys.stderr)
        return 2
    if not groups:
        print("boots: no test selected", flush=True)
        return NO_TESTS
    boots = Boots(rootdir, groups, options.parallel, options.out.resolve(), options.grace)
    boots.say(f"{len(groups)} group(s), {options.parallel} at a time: {', '.join(boots.queue)}")
    try:
        return boots.run()
    except KeyboardInterrupt:
        boots.say("interrupted: every boot stopped")
        return 130


if __name__ == "__main__":
    sys.exit(main())
