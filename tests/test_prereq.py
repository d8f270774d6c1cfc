"""A missing prerequisite fails the test that needs it, in one line that names it (prereq.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_a_missing_tool_fails_in_one_line_never_skips(tmp_path):
    (tmp_path / "test_needs.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nfrom prereq import require\n\n"
        "def test_needs_qemu():\n    require('qemu-system-x86_64', 'numactl')\n"
    )
    # no tool can be found on an empty PATH
    env = {**os.environ, "PATH": str(tmp_path / "empty"), "COLUMNS": "400"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-ra",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            str(tmp_path / "test_needs.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stdout  # failed, not skipped (0) nor an error
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1, done.stdout
    assert "qemu-system-x86_64 missing: " in failed[0] and "numactl missing: " in failed[0]
    assert "scripts/setup.sh" in failed[0]
    assert "Traceback" not in done.stdout and "def test_needs_qemu" not in done.stdout
