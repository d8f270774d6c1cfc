"""numaspark killed with SIGKILL mid-sweep, inside a real standalone cluster's run: the
resumed sweep stops what it left and says so, stores the iterations that finished, and
counts each configuration's repetitions once. The other trials (SIGKILL mid-run then the
next run, or cluster down; SIGINT, SIGTERM, an executor killed, two runs at once, a study
interrupted) are in tests/faults.py, run alone by bash scripts/faults.sh (about 8 minutes);
SIGINT and SIGTERM mid-run are also tests/test_spark_runs.py's, and the ledger that finds
what a killed numaspark left is tests/test_processes.py's."""

import pytest
from faults import leftovers, run_trial


@pytest.fixture(autouse=True)
def _nothing_running_before():
    assert not leftovers(), f"Spark JVMs or perf stat already running: {leftovers()}"


# a scenario of a minute, run by the long lane to keep CI short:
# SIGINT and SIGTERM mid-run stay in the default lane (test_spark_runs.py)
@pytest.mark.long(script="bash scripts/test.sh --long")
@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.parametrize("name", ["sigkill-sweep"])
def test_fault_trial(tmp_path, name):
    trial = run_trial(name, tmp_path / name, tmp_path / "data")
    assert not trial.problems, "\n".join(trial.problems)
    assert trial.orphans == 0 and trial.lost == 0
