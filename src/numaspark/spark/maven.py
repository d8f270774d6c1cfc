"""Building numaspark's Java parts (the affinity plugin in jvm/, the mini YARN's launcher in
jvm/yarn-mini/) with Maven, only when what they are built from changed: a digest of the
sources, kept in a stamp file beside what was built."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from numaspark.errors import NumasparkError, ToolMissingError
from numaspark.supervise.processes import refuse_jvm


def sources_digest(source: Path, pattern: str, salt: str = "") -> str:
    """A short hash of ``source``'s pom.xml and the files under ``source/src`` matching
    ``pattern`` (their paths and contents), and of ``salt`` (what else the build depends on)."""
    digest = hashlib.sha256(salt.encode())
    files = (p for p in (source / "src").rglob(pattern) if p.is_file())
    for path in sorted([source / "pom.xml", *files]):
        digest.update(str(path.relative_to(source)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def up_to_date(built: Path, stamp: Path, digest: str) -> bool:
    """Whether ``built`` exists and was made from sources of ``digest``."""
    return built.exists() and stamp.exists() and stamp.read_text() == digest


def mvn_package(pom: Path, options: list[str], what: str) -> None:
    """``mvn package`` of ``pom`` with ``options``; ``what`` names it in the errors: a missing
    Maven or JDK, and a failed build (its first ERROR or FAIL line; the log's tail on stderr)."""
    mvn = shutil.which("mvn")
    if mvn is None or shutil.which("javac") is None:
        raise ToolMissingError(
            f"building {what} needs Maven and a JDK: apt-get install maven "
            "openjdk-17-jdk-headless (scripts/setup.sh does)"
        )
    argv = [mvn, "-q", "-B", "-f", str(pom), "package", *options]
    refuse_jvm(argv)
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        lines = [
            line
            for line in (proc.stdout + proc.stderr).splitlines()
            if "ERROR" in line or "FAIL" in line
        ]
        raise NumasparkError(
            f"building {what} ({pom.parent.name}/) failed: "
            + (lines[0] if lines else f"mvn exited {proc.returncode}")
        )
