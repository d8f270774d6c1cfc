"""Every guest boot of the long lane, one JSON line each, and how many passed in a row.

Issue 57 asks for every guest proof to pass three boots in a row, and a boot takes 10 to 60
minutes here, so the boots of one proof spread over several runs of ``scripts/test-guest.sh``.
tests/test_numa_guest.py appends a line to ``boots.jsonl`` in the guest's cache
(``~/.cache/numaspark/numa-guest``, shared by a checkout and its worktrees) after each boot:
when, the commit booted (and whether its tree had changes), the guest's CPU model with the
caller's ``NUMASPARK_GUEST_*`` choices (``cpu``), the host's CPU, how long it took, its exit
status, the checks it passed and failed, and every JVM crash a check reported.
``python tests/guest/ledger.py`` prints, for each kind of boot, its newest boots' run of passes
(``streak``): a failed boot, or one of another ``cpu``, ends it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# beside the guest's kernel in its cache (build.py's CACHE), not in one checkout's
# test-artifacts: the boots of the main checkout and of its worktrees make one history
CACHE = Path(os.environ.get("NUMASPARK_GUEST_CACHE", Path.home() / ".cache/numaspark/numa-guest"))
LEDGER = CACHE / "boots.jsonl"
CHECK = "NUMASPARK-CHECK "
CRASH = "NUMASPARK-JVM-CRASH "


def commit_now() -> str:
    """HEAD of the booted repository, ``+changes`` when its tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
    except OSError:  # no git: the ledger still says what ran
        return "unknown"
    return (head or "unknown") + ("+changes" if dirty else "")


def host_cpu() -> str:
    """This machine's CPU model and its vector extensions: QEMU's TCG translates the guest's
    code with the host's (AVX2, AVX-512), so a crash seen on one host may not come on another."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    model = next((x.split(":", 1)[1].strip() for x in info.splitlines() if "model name" in x), "?")
    flags = next(
        (x.split(":", 1)[1].split() for x in info.splitlines() if x.startswith("flags")), []
    )
    vector = [f for f in ("avx", "avx2", "avx512f", "avx512vl", "avx512bw") if f in flags]
    return f"{model} ({' '.join(vector) or 'no AVX'})"


def outcome(lines: list[str]) -> dict:
    """The checks' last verdicts in a console (``NUMASPARK-CHECK PASS|FAIL name: ...``), and
    the JVM crashes they named (checks.py reports one as "...'s JVM crashed: SIGSEGV ...")."""
    last: dict[str, str] = {}
    for line in lines:
        if line.startswith(CHECK):
            verdict, _, rest = line[len(CHECK) :].partition(" ")
            last[rest.split(":", 1)[0]] = verdict
    crashes = [line[:400] for line in lines if line.startswith(CHECK) and "JVM crashed" in line]
    report = [line[len(CRASH) :] for line in lines if line.startswith(CRASH)]
    return {
        "passed": sorted(n for n, v in last.items() if v == "PASS"),
        "failed": sorted(n for n, v in last.items() if v == "FAIL"),  # SKIP is neither
        "jvm_crashes": crashes,
        "crash_report": report[:60],  # the error files' telling sections (checks.py)
        "finished": any(line.startswith("NUMASPARK-CHECKS END") for line in lines),
    }


def record(
    boot: str,
    cpu: str,
    seconds: float,
    code: int,
    lines: list[str],
    path=LEDGER,
    commit: str | None = None,
) -> dict:
    """Append one boot to the ledger (a line written whole, as the boot ends) and return it.
    ``commit``: what the boot ran, read as it began (``commit_now()``); HEAD as it ends when not
    given, which a merge during a two-hour boot makes another commit's."""
    entry = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "boot": boot,
        "commit": commit or commit_now(),
        "cpu": cpu,
        "host": host_cpu(),
        "seconds": round(seconds, 1),
        "code": code,
        **outcome(lines),
    }
    entry["ok"] = code == 0 and entry["finished"] and not entry["failed"]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(json.dumps(entry) + "\n")
    return entry


def streaks(path=LEDGER) -> dict[str, dict]:
    """For each kind of boot: its newest boot, and how many of its newest boots in a row
    passed on that boot's CPU model (a line that is not JSON is skipped: a run cut mid-write)."""
    boots: dict[str, list[dict]] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        boots.setdefault(entry["boot"], []).append(entry)
    said = {}
    for boot, entries in boots.items():
        newest, run = entries[-1], 0
        for entry in reversed(entries):
            if not entry["ok"] or entry["cpu"] != newest["cpu"]:
                break
            run += 1
        said[boot] = {"streak": run, "newest": newest, "boots": len(entries)}
    return said


def main() -> int:
    said = streaks()
    if not said:
        print(f"no guest boot recorded yet in {LEDGER}")
        return 0
    print(f"{'boot':<16} {'in a row':>8} {'boots':>5}  newest")
    for boot, s in sorted(said.items()):
        n = s["newest"]
        why = ", ".join(n["failed"]) or f"exit {n['code']}"
        state = "passed" if n["ok"] else f"FAILED {why}"
        print(
            f"{boot:<16} {s['streak']:>8} {s['boots']:>5}  {n['at']} {n['commit']} "
            f"{n['seconds']:.0f} s {state}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
