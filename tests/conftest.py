"""Shared fixtures. The real servers' hwloc XML lives in ../shared/topologies (not copied here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGIES = Path(os.environ.get("NUMASPARK_TOPOLOGIES", ROOT.parent / "shared" / "topologies"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def topology_file(name: str) -> Path:
    path = TOPOLOGIES / name
    if not path.exists():
        pytest.skip(f"{path} missing: set NUMASPARK_TOPOLOGIES to shared/topologies")
    return path


def run_cli(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the real command line in a subprocess (real exit codes, real stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "numaspark", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"numaspark {' '.join(args)} failed:\n{proc.stderr}")
    return proc
