"""Fault trials on real standalone runs: numaspark or an executor killed, what is left.

    .venv/bin/python tests/faults.py [TRIAL ...]      # all of them: bash scripts/faults.sh

Each trial starts `numaspark run` (or a sweep, or a study) with a standalone
cluster of two bound executors on this machine, strikes while it runs, and
then checks: how many Spark JVMs and `perf stat` processes are left (orphans),
whether every iteration that finished is stored (results lost), and whether
the next command (a rerun, `--resume`, or `numaspark cluster down`) completes
and says what it cleaned up. tests/test_faults.py runs some of them in CI; the
script runs them all and prints the counts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

SPARK = ("org.apache.spark.deploy", "org.apache.spark.executor")
STANDALONE = [
    "--mode",
    "standalone",
    "--executors",
    "2",
    "--cores-per-executor",
    "1",
    "--bind",
    "core",
    "--warmup",
    "0",
]
SWEEP_SPEC = """
name = "faults"
repeat = 2
warmup = 0

[[workloads]]
name = "wordcount"
size = "tiny"

[[layouts.list]]
mode = "local"
cores_per_executor = 1

[[layouts.list]]
mode = "standalone"
executors = 1
cores_per_executor = 1
"""


@dataclass
class Trial:
    name: str
    orphans: int = 0  # Spark JVMs or perf stat left once the trial's commands ended
    lost: int = 0  # finished iterations not in results.jsonl
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def leftovers() -> list[str]:
    """Spark JVMs and perf stat processes on this machine now."""
    found = []
    for proc in psutil.process_iter(["cmdline", "name"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if any(s in cmdline for s in SPARK) or (
            proc.info.get("name") == "perf" and " stat " in cmdline
        ):
            found.append(f"{proc.pid}: {cmdline[-120:]}")
    return found


def _settle(timeout_s: float = 20) -> list[str]:
    deadline = time.monotonic() + timeout_s
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.5)
    return leftovers()


def numaspark(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "numaspark", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finished(out: Path) -> int:
    """Iterations whose answers an application wrote (finished, whether stored or not)."""
    return sum(
        len((d / "answers.jsonl").read_text().splitlines())
        for d in (out / "runs").glob("*")
        if (d / "answers.jsonl").exists()
    )


def stored(out: Path) -> list[dict]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_until(
    predicate: Callable[[], bool], proc: subprocess.Popen, timeout_s: float = 240
) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(
                f"numaspark ended first (exit {proc.returncode}): {proc.stderr.read()[-1500:]}"
            )
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the trial's moment never came")
        time.sleep(0.3)


def _run_args(out: Path, data: Path, repeat: int) -> list[str]:
    return [
        "run",
        "wordcount",
        *STANDALONE,
        "--repeat",
        str(repeat),
        "--out",
        str(out),
        "--data",
        str(data),
    ]


def _lost(out: Path, trial: Trial) -> None:
    made = finished(out)
    kept = len(stored(out))
    trial.lost = max(0, made - kept)
    if trial.lost:
        trial.problems.append(
            f"{trial.lost} finished iteration(s) not stored ({made} made, {kept} stored)"
        )


def _orphans(trial: Trial) -> None:
    left = _settle()
    trial.orphans = len(left)
    if left:
        trial.problems.append(f"left running: {left}")


# --- the trials ---------------------------------------------------------------------------


def sigkill_run_then_next_run(work: Path, data: Path, env: dict) -> Trial:
    """SIGKILL numaspark after an iteration finished: the next run stops what it left, stores
    the finished iterations, and runs."""
    trial, out = Trial("SIGKILL of numaspark mid-run, then the next run"), work / "out"
    proc = numaspark(*_run_args(out, data, 4), env=env)
    wait_until(lambda: finished(out) >= 1, proc)
    proc.kill()
    proc.wait()
    trial.notes.append(f"left by the killed numaspark: {len(leftovers())} process(es)")
    nxt = numaspark(*_run_args(out, data, 1), env=env)
    _, err = nxt.communicate(timeout=300)
    if nxt.returncode != 0:
        trial.problems.append(f"the next run exited {nxt.returncode}: {err[-800:]}")
    if "cleaned up:" not in err or "left running by numaspark" not in err:
        trial.problems.append(f"the next run did not say what it stopped: {err[-800:]}")
    _orphans(trial)
    _lost(out, trial)
    return trial


def sigkill_run_then_cluster_down(work: Path, data: Path, env: dict) -> Trial:
    """SIGKILL numaspark mid-run: `numaspark cluster down` stops the JVMs and perf stat."""
    trial, out = Trial("SIGKILL of numaspark mid-run, then cluster down"), work / "out"
    proc = numaspark(*_run_args(out, data, 4), env=env)
    wait_until(lambda: finished(out) >= 1, proc)
    proc.kill()
    proc.wait()
    clusters = sorted((out / "clusters").glob("*"))
    down = numaspark("cluster", "down", str(clusters[0]) if clusters else str(out), env=env)
    _, err = down.communicate(timeout=120)
    if down.returncode != 0:
        trial.problems.append(f"cluster down exited {down.returncode}: {err[-500:]}")
    _orphans(trial)
    rerun = numaspark(*_run_args(out, data, 1), env=env)  # stores what the killed one had not
    rerun.communicate(timeout=300)
    _lost(out, trial)
    return trial


def _signal_run(sig: signal.Signals) -> Callable[[Path, Path, dict], Trial]:
    def trial_fn(work: Path, data: Path, env: dict) -> Trial:
        trial, out = Trial(f"{sig.name} of numaspark mid-run"), work / "out"
        proc = numaspark(*_run_args(out, data, 4), env=env)
        wait_until(lambda: finished(out) >= 1, proc)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        if proc.returncode not in (130, 143):
            trial.problems.append(f"exit {proc.returncode}, not 130/143: {err[-500:]}")
        _orphans(trial)
        _lost(out, trial)
        return trial

    trial_fn.__name__ = f"{sig.name.lower()}_run"
    return trial_fn


def kill_an_executor(work: Path, data: Path, env: dict) -> Trial:
    """kill -9 of an executor JVM mid-run: Spark relaunches it, the run ends, the iteration it
    fell in is marked disturbed, not measured."""
    trial, out = Trial("kill -9 of an executor JVM mid-run"), work / "out"
    proc = numaspark(*_run_args(out, data, 4), env=env)

    def executors() -> list[psutil.Process]:
        return [
            p
            for p in psutil.process_iter(["cmdline"])
            if "CoarseGrainedExecutorBackend" in " ".join(p.info.get("cmdline") or [])
        ]

    wait_until(lambda: finished(out) >= 1 and bool(executors()), proc)
    victim = executors()[0]
    victim.kill()
    _, err = proc.communicate(timeout=300)
    if proc.returncode != 0:
        trial.problems.append(f"the run exited {proc.returncode}: {err[-800:]}")
    statuses = [r["status"] for r in stored(out)]
    trial.notes.append(f"iterations: {statuses}")
    _orphans(trial)
    _lost(out, trial)
    return trial


def sigkill_sweep_then_resume(work: Path, data: Path, env: dict) -> Trial:
    """SIGKILL numaspark inside the second configuration of a sweep (a standalone cluster);
    `--resume` stops what it left, says so, and completes the sweep with exactly each
    configuration's repetitions."""
    trial, out = Trial("SIGKILL of numaspark mid-sweep, then --resume"), work / "out"
    spec = work / "faults.toml"
    spec.write_text(SWEEP_SPEC)
    args = ["sweep", str(spec), "--out", str(out), "--data", str(data)]
    proc = numaspark(*args, env=env)
    wait_until(lambda: len(stored(out)) >= 2 and finished(out) >= 3, proc)
    proc.kill()
    proc.wait()
    resumed = numaspark(*args, "--resume", env=env)
    _, err = resumed.communicate(timeout=400)
    if resumed.returncode != 0:
        trial.problems.append(f"--resume exited {resumed.returncode}: {err[-800:]}")
    if "cleaned up:" not in err or "left running by numaspark" not in err:
        trial.problems.append(f"--resume did not say what it stopped: {err[-800:]}")
    from numaspark.experiment.result import measured
    from numaspark.experiment.store import ResultStore

    counts: dict[str, int] = {}
    for r in measured(ResultStore(out).load()):
        counts[r.spec.config] = counts.get(r.spec.config, 0) + 1
    trial.notes.append(f"measured runs per configuration after --resume: {sorted(counts.values())}")
    if sorted(counts.values()) != [2, 2]:
        trial.problems.append(f"configurations counted {counts}, not 2 runs each")
    _orphans(trial)
    _lost(out, trial)
    return trial


def two_runs_at_once(work: Path, data: Path, env: dict) -> Trial:
    """Two standalone runs at once on one machine: free ports each, neither stops the other."""
    trial = Trial("two standalone runs at once")
    procs = [
        numaspark(
            "run",
            "wordcount",
            "--mode",
            "standalone",
            "--executors",
            "1",
            "--cores-per-executor",
            "1",
            "--repeat",
            "2",
            "--out",
            str(work / f"out{i}"),
            "--data",
            str(data),
            env=env,
        )
        for i in (1, 2)
    ]
    for i, proc in enumerate(procs, 1):
        _, err = proc.communicate(timeout=400)
        if proc.returncode != 0:
            trial.problems.append(f"run {i} exited {proc.returncode}: {err[-600:]}")
        ok = sum(1 for r in stored(work / f"out{i}") if r["status"] == "ok")
        if ok != 2:
            trial.problems.append(f"run {i} stored {ok} ok run(s), not 2")
    _orphans(trial)
    return trial


def sigint_study(work: Path, data: Path, env: dict) -> Trial:
    """SIGINT to a study's numaspark alone (as `kill -INT`): exit 130, nothing left, resumable."""
    trial, out = Trial("SIGINT of a study, then --resume"), work / "out"
    args = [
        "study",
        "binding",
        "wordcount",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--out",
        str(out),
        "--data",
        str(data),
    ]
    proc = numaspark(*args, env=env)
    wait_until(lambda: finished(out) >= 1, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 130:
        trial.problems.append(f"exit {proc.returncode}, not 130: {err[-600:]}")
    _orphans(trial)
    resumed = numaspark(*args, "--resume", env=env)
    _, err = resumed.communicate(timeout=400)
    if resumed.returncode != 0:
        trial.problems.append(f"--resume exited {resumed.returncode}: {err[-600:]}")
    _orphans(trial)
    _lost(out, trial)
    return trial


TRIALS: dict[str, Callable[[Path, Path, dict], Trial]] = {
    "sigkill-run": sigkill_run_then_next_run,
    "sigkill-cluster-down": sigkill_run_then_cluster_down,
    "sigint-run": _signal_run(signal.SIGINT),
    "sigterm-run": _signal_run(signal.SIGTERM),
    "kill-executor": kill_an_executor,
    "sigkill-sweep": sigkill_sweep_then_resume,
    "two-at-once": two_runs_at_once,
    "sigint-study": sigint_study,
}


def run_trial(name: str, work: Path, data: Path) -> Trial:
    """One trial in ``work``, with a ledger directory of its own (so that what it checks is
    what its own numaspark processes left)."""
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "NUMASPARK_STATE_DIR": str(work / "state"), "COLUMNS": "200"}
    started = time.monotonic()
    try:
        trial = TRIALS[name](work, data, env)
    except AssertionError as exc:
        trial = Trial(name, problems=[str(exc)])
    trial.seconds = time.monotonic() - started
    return trial


def main(names: list[str]) -> int:
    names = names or list(TRIALS)
    unknown = [n for n in names if n not in TRIALS]
    if unknown:
        print(f"unknown trial(s) {unknown}: choose from {', '.join(TRIALS)}", file=sys.stderr)
        return 2
    if leftovers():
        print(f"Spark JVMs or perf stat already running; stop them first: {leftovers()}")
        return 2
    trials = []
    with tempfile.TemporaryDirectory(prefix="numaspark-faults-") as tmp:
        data = Path(tmp) / "data"
        for name in names:
            trial = run_trial(name, Path(tmp) / name, data)
            trials.append(trial)
            verdict = "ok" if not trial.problems else "FAILED: " + "; ".join(trial.problems)
            print(
                f"{trial.name}: {verdict} ({trial.seconds:.0f} s)"
                + "".join(f"\n    {n}" for n in trial.notes),
                flush=True,
            )
    failed = [t for t in trials if t.problems]
    print(
        f"\n{len(trials)} trials: {sum(t.orphans for t in trials)} orphans, "
        f"{sum(t.lost for t in trials)} finished results lost, {len(failed)} failed"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
