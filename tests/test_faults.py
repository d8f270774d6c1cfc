"""numaspark killed with SIGKILL mid-run and mid-sweep, on real standalone runs: the next
command stops what it left, stores the iterations that finished, and a resumed sweep counts
each configuration's repetitions once. The other trials (SIGINT, SIGTERM, cluster down, an
executor killed, two runs at once, a study interrupted) are in tests/faults.py, run alone by
bash scripts/faults.sh; SIGINT and SIGTERM mid-run are also tests/test_spark_runs.py's."""

import pytest
from faults import leftovers, run_trial


@pytest.fixture(autouse=True)
def _nothing_running_before():
    assert not leftovers(), f"Spark JVMs or perf stat already running: {leftovers()}"


@pytest.mark.integration
@pytest.mark.parametrize("name", ["sigkill-run", "sigkill-sweep"])
def test_fault_trial(tmp_path, name):
    trial = run_trial(name, tmp_path / name, tmp_path / "data")
    assert not trial.problems, "\n".join(trial.problems)
    assert trial.orphans == 0 and trial.lost == 0
