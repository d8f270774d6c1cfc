"""The guest's JVMs under stress, for issue 57's crash: a boot of its own (``checks.py
jvm-stress``, two nodes of two CPUs: four vCPUs on one host thread).

``code-patched-whole``: the crash's cause. xmodcheck.c patches code the way HotSpot patches its
compiled code (a jump to itself first, in one aligned store) while threads on the other vCPUs
run it; none may run a torn instruction. QEMU's multi-threaded TCG tore them (build.py,
GUEST_ACCEL); first a run that tears them on purpose must be seen.

``jvm-class-loading-stress``: rounds of three JVMs at once, C1 only and the serial collector
(as the plain cluster's daemons run), each loading every class of Spark's jars on four threads
(ClassStress.java): the zip reading and class defining of a Spark daemon's start, where the
guest's JVMs once died of SIGSEGV in C1-compiled code (``ZipUtils.SH``). Passes when no JVM
crashed and each loaded classes; a crash is printed with its error file's signal, registers and
code bytes at pc (jvmcrash.py).

``avx-state-kept``: where the guest's CPU has AVX2 (``NUMASPARK_GUEST_CPU=max``), the YMM
registers' upper halves across context switches, preemptions and signals (ymmcheck.c), two
processes sharing CPU 0 and one on every other CPU; first a run that changes ymm7 on purpose
must be seen. Without AVX2 (the default model) it is reported as SKIP.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from jvmcrash import say_crash

# Toucher, ClassStress, ymmcheck, xmodcheck
BINS = Path(os.environ.get("NUMASPARK_TOUCHER", "."))
WORK = Path("/tmp/jvm-stress")
ROUNDS, JVMS, SECONDS, THREADS = 3, 3, 60, 4
JAVA_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"]


def _jars() -> Path:
    from numaspark.spark.home import spark_home

    return spark_home() / "jars"


def class_loading() -> str:
    """ROUNDS rounds of JVMS JVMs loading classes at once; the first crash fails the check."""
    WORK.mkdir(parents=True, exist_ok=True)
    loaded = []
    for round_ in range(1, ROUNDS + 1):
        outs = [WORK / f"round-{round_}-jvm-{k}.log" for k in range(JVMS)]
        jvms = [
            subprocess.Popen(
                ["java", *JAVA_OPTIONS, f"-XX:ErrorFile={WORK}/hs_err_pid%p.log", "-cp", BINS]
                + ["ClassStress", _jars(), str(SECONDS), str(THREADS)],
                stdout=out.open("w"),
                stderr=subprocess.STDOUT,
                cwd=WORK,
            )
            for out in outs
        ]
        codes = [jvm.wait() for jvm in jvms]  # every JVM of the round ended before any verdict
        for jvm, code, out in zip(jvms, codes, outs, strict=True):
            said = out.read_text(errors="replace")
            crash = say_crash(said)
            if crash or code != 0 or not said.startswith("loaded "):
                raise AssertionError(
                    f"round {round_}, JVM {jvm.pid}: "
                    + (f"the JVM crashed: {crash}" if crash else f"exited {code}: {said[-400:]}")
                )
            loaded.append(int(said.split()[1]))
        print(f"round {round_} of {ROUNDS}: {loaded[-JVMS:]} classes loaded", flush=True)
    return (
        f"{len(loaded)} JVMs ({ROUNDS} rounds of {JVMS} at once, {THREADS} threads each, "
        f"{SECONDS} s, {' '.join(JAVA_OPTIONS)}) on a CPU {_vector()}: none crashed, "
        f"{sum(loaded)} classes loaded ({min(loaded)} to {max(loaded)} each)"
    )


def _vector() -> str:
    flags = Path("/proc/cpuinfo").read_text().split()
    return "with AVX2" if "avx2" in flags else "without AVX"


def avx_state() -> str:
    """ymmcheck's modes for 15 s each on every vCPU, CPU 0 shared by two."""
    ymm = str(BINS / "ymmcheck")
    broken = subprocess.run([ymm, "broken", "0.5", "1"], capture_output=True, text=True)
    if broken.returncode != 1:
        raise AssertionError(f"ymmcheck did not see ymm7 changed on purpose: {broken.stdout}")
    said = []  # per mode: processes and rounds, every one of which kept its registers
    for mode in ("switch", "spin", "signal"):
        cpus = [0, *range(os.cpu_count() or 1)]
        runs = [
            subprocess.Popen(
                ["taskset", "-c", str(cpu), ymm, mode, "15", str(seed)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for seed, cpu in enumerate(cpus, 1)
        ]
        rounds = 0
        for run in runs:
            out = run.communicate()[0].strip()
            if run.returncode != 0:
                raise AssertionError(f"{out} (pinned with the others to CPUs {cpus})")
            rounds += int(out.split(": ", 1)[1].split()[0])
        said.append(f"{mode}: {len(runs)} processes on CPUs {cpus}, {rounds} rounds")
    return "; ".join(said) + ": no register changed (a change on purpose was seen)"


def code_patching() -> str:
    """xmodcheck for 30 s, an executor on every vCPU but the patcher's."""
    xmod = str(BINS / "xmodcheck")
    executors = str(max(1, (os.cpu_count() or 1) - 1))
    broken = subprocess.run([xmod, "broken", "2", executors], capture_output=True, text=True)
    if broken.returncode != 1:
        raise AssertionError(f"xmodcheck did not see a patch torn on purpose: {broken.stdout}")
    run = subprocess.run([xmod, "patch", "30", executors], capture_output=True, text=True)
    said = (run.stdout or run.stderr).strip()
    if run.returncode == 1:
        raise AssertionError(
            f"{said}: QEMU's accelerator tears code that HotSpot patches, and JVMs die of it "
            "(NUMASPARK_GUEST_ACCEL: tests/guest/build.py)"
        )
    if run.returncode != 0:
        raise AssertionError(f"xmodcheck exited {run.returncode}: {said}")
    return f"{said.split(': ', 1)[1]} (a patch torn on purpose was seen)"


def stress_checks(check) -> None:
    began = time.monotonic()
    check("code-patched-whole", code_patching)
    check("jvm-class-loading-stress", class_loading)
    if _vector() == "with AVX2":
        check("avx-state-kept", avx_state)
    else:
        print(
            "NUMASPARK-CHECK SKIP avx-state-kept: the guest's CPU has no AVX2 (its default "
            "model; NUMASPARK_GUEST_CPU=max gives it)",
            flush=True,
        )
    print(f"jvm-stress took {time.monotonic() - began:.0f} s", flush=True)
