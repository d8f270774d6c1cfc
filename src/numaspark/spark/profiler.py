"""On-CPU flame graphs of the JVMs that run tasks, with async-profiler.

async-profiler's native agent comes from its Maven Central artifact
(``tools.profiler:async-profiler:VERSION:jar:linux-x64``), which carries
``libasyncProfiler.so``; Maven fetches it once into its local repository and
numaspark extracts the library into its cache. The agent starts with the JVM
and writes collapsed stacks when the JVM exits; numaspark draws each as an SVG
flame graph (``flamegraph.py``).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import zipfile
from pathlib import Path

from numaspark.errors import ToolMissingError
from numaspark.spark.flamegraph import write_flame_graph

VERSION = "4.1"
ARTIFACT = "tools.profiler:async-profiler"
_ARCH = {"x86_64": "linux-x64", "amd64": "linux-x64", "aarch64": "linux-arm64"}


def _cache() -> Path:
    return Path(os.environ.get("NUMASPARK_CACHE", Path.home() / ".cache" / "numaspark"))


def agent_library() -> Path:
    """libasyncProfiler.so: NUMASPARK_ASYNC_PROFILER, the cache, or fetched with Maven."""
    given = os.environ.get("NUMASPARK_ASYNC_PROFILER")
    if given:
        if not Path(given).is_file():
            raise ToolMissingError(f"NUMASPARK_ASYNC_PROFILER={given} is not a file")
        return Path(given)
    classifier = _ARCH.get(platform.machine().lower())
    if classifier is None:
        raise ToolMissingError(f"async-profiler has no build for {platform.machine()}")
    target = _cache() / f"async-profiler-{VERSION}-{classifier}" / "libasyncProfiler.so"
    if target.exists():
        return target
    jar = _fetch_jar(classifier)
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(jar) as archive:
        member = f"{classifier}/libasyncProfiler.so"
        partial = target.with_suffix(".partial")
        partial.write_bytes(archive.read(member))
        partial.replace(target)
    return target


def _fetch_jar(classifier: str) -> Path:
    repository = Path(os.environ.get("MAVEN_REPOSITORY", Path.home() / ".m2" / "repository"))
    name = ARTIFACT.split(":")[1]
    jar = (
        repository
        / ARTIFACT.split(":")[0].replace(".", "/")
        / name
        / VERSION
        / f"{name}-{VERSION}-{classifier}.jar"
    )
    if jar.exists():
        return jar
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ToolMissingError(
            "--profile needs async-profiler: install Maven (apt-get install maven) so numaspark "
            "can fetch it, or set NUMASPARK_ASYNC_PROFILER to a libasyncProfiler.so"
        )
    proc = subprocess.run(
        [mvn, "-q", "-B", "dependency:get", f"-Dartifact={ARTIFACT}:{VERSION}:jar:{classifier}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not jar.exists():
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        raise ToolMissingError(
            f"Maven could not fetch {ARTIFACT}:{VERSION}: {lines[-1] if lines else '?'}"
        )
    return jar


def agent_option(library: Path, output_dir: Path, interval_ms: int = 10) -> str:
    """The JVM option: profile CPU from start to exit, collapsed stacks per pid."""
    # event=itimer: CPU time by setitimer, which works in VMs and containers without perf_events
    return (
        f"-agentpath:{library}=start,event=itimer,interval={interval_ms}ms,collapsed,"
        f"file={output_dir}/profile-%p.collapsed"
    )


def draw_flame_graphs(directory: Path, names: dict[int, str]) -> list[Path]:
    """An SVG beside each ``profile-PID.collapsed`` (``names``: pid -> JVM name); a graph that
    cannot be drawn leaves a ``.error`` file with why, and never loses the run."""

    drawn = []
    for collapsed in sorted(directory.glob("profile-*.collapsed")):
        pid = int(collapsed.stem.split("-")[1])
        name = names.get(pid, f"JVM {pid}")
        try:
            write_flame_graph(
                collapsed, collapsed.with_suffix(".svg"), f"{name} (pid {pid}), on-CPU"
            )
            drawn.append(collapsed.with_suffix(".svg"))
        except (OSError, ValueError, RecursionError) as exc:
            collapsed.with_suffix(".error").write_text(f"no flame graph: {exc}\n")
    return drawn
