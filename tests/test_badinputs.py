"""Every command given bad input, as a new user would: one clear line and exit 2 (or, for a
partly usable input, a warning that says what was skipped), never a traceback or a hang.
The corpus is tests/badinputs.py (runnable alone: bash scripts/badinputs.sh)."""

import os

import badinputs
import pytest
from badinputs import CorpusShrank, corpus, run_corpus

CHUNKS = 6  # the corpus in parts, so parallel test workers share it
FAST_CHUNKS = 2  # scripts/test.sh --fast: a third of the corpus (every command among them)
# the corpus as it is (372 cases): a floor, so that it never shrinks unnoticed; raise it
# when cases are added. The generated mutations have floors of their own: each is made from
# files found on disk (recorded logs, runs, the servers' XML), where a glob may come back empty
CORPUS_CASES = 382
GENERATED = {"_mutated_runs": 25, "_event_log_mutations": 22, "_topology_mutations": 17}


def test_the_corpus_covers_every_command(tmp_path):
    cases = corpus(tmp_path)
    assert len(cases) >= CORPUS_CASES
    commands = {c.args[0] for c in cases}
    assert {
        "topology",
        "plan",
        "run",
        "launch",
        "sweep",
        "analyze",
        "whatif",
        "probe",
        "results",
        "classify",
        "advise",
        "tune",
        "fit",
        "report",
        "datagen",
        "cluster",
        "study",
    } <= commands


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_bad_inputs_get_one_clear_line_never_a_traceback(tmp_path, chunk):
    if os.environ.get("NUMASPARK_FAST_LANE") == "1" and chunk >= FAST_CHUNKS:
        pytest.skip(
            f"the fast lane runs {FAST_CHUNKS} of the corpus's {CHUNKS} parts "
            "(every command among them); bash scripts/test.sh runs them all"
        )
    # the fast lane forks every case; the full lane starts each command's first case from a
    # fresh interpreter too (what a user's first command is: imports and all)
    fast = bool(os.environ.get("NUMASPARK_NO_JVM"))
    outcomes = run_corpus(tmp_path, part=(chunk, CHUNKS), fresh_firsts=not fast)
    assert len(outcomes) >= CORPUS_CASES // CHUNKS
    failures = [
        f"{o.case.name}: {'; '.join(o.problems)}\n    "
        + "\n    ".join(o.stderr.strip().splitlines()[-4:])
        for o in outcomes
        if o.problems
    ]
    assert not failures, f"{len(failures)} of {len(outcomes)} cases:\n" + "\n".join(failures)


def test_the_fast_lanes_parts_hold_a_case_of_every_command(tmp_path):
    cases = corpus(tmp_path)
    fast = {c.args[0] for chunk in range(FAST_CHUNKS) for c in cases[chunk::CHUNKS]}
    assert fast == {c.args[0] for c in cases}


def test_no_generated_part_of_the_corpus_comes_back_empty(tmp_path):
    for name, floor in GENERATED.items():
        made = getattr(badinputs, name)(tmp_path / name)
        assert len(made) >= floor, f"{name} made {len(made)} cases, not {floor}"


def test_an_empty_glob_stops_the_corpus_loudly(tmp_path, monkeypatch):
    """No servers' XML where the corpus looks (shared/ not cloned): an error that says where,
    not a corpus without its topology cases."""
    monkeypatch.setattr(badinputs, "TOPOLOGIES", tmp_path / "none")
    with pytest.raises(CorpusShrank, match="NUMASPARK_TOPOLOGIES"):
        corpus(tmp_path / "inputs")
