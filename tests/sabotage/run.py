"""Deliberate breaks, each caught by the test that names the behaviour: the tests' own test.

    .venv/bin/python tests/sabotage/run.py            # every break in tests/sabotage/breaks/
    .venv/bin/python tests/sabotage/run.py NAME ...   # only these (file names without .diff)

A break is a small unified diff, ``breaks/NAME.diff``, that damages one behaviour the
suite claims to check. Its first lines say which test must catch it::

    # breaks: the thread-policy call's result is never checked
    # caught by: tests/test_x.py::test_y            (a pytest node id, run here)
    # caught by: junit MemoryMoverTest#threadPolicy (a JUnit method of jvm/, run by Maven)

For each break the runner copies the working tree (tracked and untracked files, not the
ignored ones apart from the built plugin jar) into a scratch directory, runs the test there
unbroken (it must pass: a test that already fails proves nothing), applies the diff, and runs
it again: it must now fail. "No test collected" or a diff that no longer applies is an error of
the break, never "caught". The table at the end says which break was caught by what; the exit
status is 0 only when every break was caught. Not a CI lane: a developer runs it after changing
a test or the code it checks (about 10 s a break, a minute for a JUnit one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BREAKS = Path(__file__).resolve().parent / "breaks"
PYTHON = ROOT / ".venv" / "bin" / "python"
# pytest's exit statuses that mean "the test ran and failed", not "nothing ran"
PYTEST_FAILED = {1}


@dataclass(frozen=True)
class Break:
    name: str
    breaks: str
    caught_by: str
    diff: Path

    @classmethod
    def read(cls, path: Path) -> Break:
        header = {}
        for line in path.read_text().splitlines():
            if not line.startswith("# "):
                break
            key, _, value = line[2:].partition(":")
            header[key.strip()] = value.strip()
        if "breaks" not in header or "caught by" not in header:
            sys.exit(f"{path}: the first lines must be '# breaks: ...' and '# caught by: ...'")
        return cls(path.stem, header["breaks"], header["caught by"], path)


def copy_tree(into: Path) -> None:
    """The working tree as it is now (uncommitted changes too), without venvs and outputs."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    jars = [str(p.relative_to(ROOT)) for p in (ROOT / "src/numaspark/jvm").glob("*.jar")]
    for name in [*filter(None, listed), *jars]:
        source, target = ROOT / name, into / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def command(caught_by: str) -> list[str]:
    if caught_by.startswith("junit "):
        test = caught_by.removeprefix("junit ").strip()
        return [
            # not offline (-o): on a fresh machine Maven has yet to fetch surefire's JUnit
            # provider, which setup's build (tests skipped) never asks for
            "mvn",
            "-q",
            "-f",
            "jvm/pom.xml",
            "test",
            f"-Dtest={test}",
            "-Dsurefire.failIfNoSpecifiedTests=true",
            *maven_properties(),
        ]
    return [
        str(PYTHON),
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--no-header",
        "-o",
        "addopts=",
        "--long",  # a break's test may be one of the long lane's, named by its node id
        caught_by,
    ]


def maven_properties() -> list[str]:
    """What the jar's own build passes (pyspark's jars and their versions): the pom's default
    spark.jars is the tree's .venv, which the scratch copy has not."""
    done = subprocess.run(
        [
            str(PYTHON),
            "-c",
            "from numaspark.spark.affinity import "
            "maven_properties; print('\\n'.join(maven_properties()))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def run(argv: list[str], cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")}
    # the scratch copy is not beside shared/, where the tests find the real servers' XML
    env.setdefault("NUMASPARK_TOPOLOGIES", str(ROOT.parent / "shared" / "topologies"))
    env.pop("NUMASPARK_NO_JVM", None)  # a break's test may be one that starts a JVM
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return done.returncode, (done.stdout + done.stderr)[-3000:]


def verdict(item: Break) -> tuple[str, str]:
    """("caught" | "MISSED" | "ERROR", one line of why)."""
    argv = command(item.caught_by)
    junit = item.caught_by.startswith("junit ")
    with tempfile.TemporaryDirectory(prefix=f"sabotage-{item.name}-") as scratch:
        tree = Path(scratch)
        copy_tree(tree)
        code, output = run(argv, tree)
        if code != 0:
            return "ERROR", f"the test fails unbroken (exit {code}): {output.strip()[-300:]}"
        applied = subprocess.run(
            ["git", "apply", str(item.diff)], cwd=tree, capture_output=True, text=True, check=False
        )
        if applied.returncode != 0:
            return "ERROR", f"the diff no longer applies: {applied.stderr.strip()[:300]}"
        code, output = run(argv, tree)
        if code == 0:
            return "MISSED", "the test passed with the break in place"
        if not junit and code not in PYTEST_FAILED:
            return "ERROR", f"pytest exit {code} (not a failing test): {output.strip()[-300:]}"
        return "caught", f"exit {code}"


def main(names: list[str]) -> int:
    if not PYTHON.exists():
        sys.exit(f"{PYTHON} missing: run bash scripts/setup.sh first")
    paths = sorted(BREAKS.glob("*.diff"))
    if names:
        wanted = set(names)
        paths = [p for p in paths if p.stem in wanted]
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            sys.exit(f"no such break: {', '.join(sorted(unknown))} (see {BREAKS})")
    if not paths:
        sys.exit(f"no breaks in {BREAKS}")
    results = []
    for path in paths:
        item = Break.read(path)
        began = time.monotonic()
        status, why = verdict(item)
        seconds = time.monotonic() - began
        results.append((item, status))
        print(
            f"{status:<7} {item.name:<40} {seconds:5.0f} s  {item.caught_by}  ({why})", flush=True
        )
    caught = sum(status == "caught" for _, status in results)
    print(f"\n{caught} of {len(results)} breaks caught")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
