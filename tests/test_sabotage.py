"""The deliberate breaks (tests/sabotage/) stay usable: each still applies to the code it breaks
and names a test that exists. Running them is a developer's tool (minutes); keeping them from
going stale as the code moves is this fast test's job."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SABOTAGE = Path(__file__).resolve().parent / "sabotage"
ROOT = SABOTAGE.parents[1]
# tests/sabotage/run.py is a script, not a package: loaded under a name of its own
_spec = importlib.util.spec_from_file_location("sabotage_run", SABOTAGE / "run.py")
_runner = sys.modules["sabotage_run"] = importlib.util.module_from_spec(_spec)  # dataclasses ask
_spec.loader.exec_module(_runner)
Break = _runner.Break

BREAKS = sorted((SABOTAGE / "breaks").glob("*.diff"))


@pytest.mark.parametrize("path", BREAKS, ids=[p.stem for p in BREAKS])
def test_each_break_still_applies_and_names_its_test(path):
    item = Break.read(path)
    check = subprocess.run(
        ["git", "apply", "--check", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, (
        f"{path.name} no longer applies: make it again against the "
        f"code as it is now ({check.stderr.strip()[:200]})"
    )
    if item.caught_by.startswith("junit "):
        test_class = item.caught_by.split()[1].split("#")[0]
        assert list((ROOT / "jvm" / "src" / "test").rglob(f"{test_class}.java")), item.caught_by
    else:
        file, _, name = item.caught_by.partition("::")
        assert name and f"def {name.split('[')[0]}(" in (ROOT / file).read_text(), item.caught_by
