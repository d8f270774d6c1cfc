"""`tune --resume` (issue 48, item 7): an interrupted tune continues where it stopped. The
configurations an earlier tune measured in --out go back into the search first, read back
(not run again), and count against --budget; without --resume such an --out is refused in
one line, so two tunes' runs are never mixed unasked. No JVM: the search on a table, and the
stored runs written as numaspark writes them."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_decide import _run

from numaspark.decide.tune import Space, tune
from numaspark.decide.tune_runs import live_space, resumed_trials
from numaspark.errors import UsageError
from numaspark.experiment.store import ResultStore
from numaspark.topology import load_machine, load_synthetic

MACHINE = "pack:1 numa:1 core:2 pu:1"  # this machine's shape, described: no JVM, no lstopo


def _space() -> tuple[Space, dict]:
    return live_space(load_synthetic(MACHINE), "wordcount", "tiny")


def test_an_earlier_tunes_configurations_come_back_in_the_order_it_ran_them(tmp_path):
    space, configs = _space()
    first, second = list(configs)[3], list(configs)[0]
    store = ResultStore(tmp_path)
    for candidate, wall in ((first, 12.0), (second, 9.0), (first, 11.0)):
        store.append(_run(configs[candidate].key, wall))
    store.append(_run("another experiment's", 5.0))  # not in this space: ignored
    assert resumed_trials(configs, tmp_path, resume=True) == [first, second]
    with pytest.raises(UsageError, match=r"holds 2 configuration\(s\) an earlier tune measured"):
        resumed_trials(configs, tmp_path, resume=False)
    assert resumed_trials(configs, tmp_path / "empty", resume=False) == []


def test_resumed_candidates_are_asked_first_and_count_against_the_budget():
    """A table's search: the two resumed candidates are the first two trials (said as
    stored), the budget of 4 leaves two new ones, and the informed start is not run again
    when it was among them."""
    space = Space({"x": [1, 2, 3, 4, 5, 6]}, [(v,) for v in range(1, 7)])
    asked: list[tuple] = []

    def objective(params):
        asked.append((params["x"],))
        return float(abs(params["x"] - 4) + 1)

    found = tune(space, objective, budget=4, early_stop=False, resumed=[(6,), (1,)])
    assert asked[:2] == [(6,), (1,)] and len(asked) == 4 == len(found.trials)
    assert [t.source.startswith("stored") for t in found.trials] == [True, True, False, False]
    assert len(set(asked)) == 4  # nothing measured twice


def test_tune_without_resume_refuses_an_out_of_an_earlier_tune_in_one_line(tmp_path):
    """Real runs are tuned on this machine: its own space, before any JVM starts."""
    _, configs = live_space(load_machine(), "wordcount", "tiny")
    # node-bound: the same key whether the kernel's NUMA balancing can be switched here or not
    bound = next(c for key, c in configs.items() if key[4] == "node")
    ResultStore(tmp_path).append(_run(bound.key, 10.0))
    proc = run_cli("tune", "wordcount", "--out", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"Error: {tmp_path} holds 1 configuration(s) an earlier tune measured: --resume reads "
        "them back into the search (they count against --budget), or give another --out"
    ]
    replayed = run_cli("tune", "--replay", str(tmp_path / "t.csv"), "--resume")
    assert replayed.returncode == 2 and "not a --replay table" in replayed.stderr
