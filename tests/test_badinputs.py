"""Every command given bad input, as a new user would: one clear line and exit 2 (or, for a
partly usable input, a warning that says what was skipped), never a traceback or a hang.
The corpus is tests/badinputs.py (runnable alone: bash scripts/badinputs.sh)."""

import os

import pytest
from badinputs import corpus, run_corpus

CHUNKS = 6  # the corpus in parts, so parallel test workers share it


def test_the_corpus_covers_every_command(tmp_path):
    cases = corpus(tmp_path)
    assert len(cases) >= 200
    commands = {c.args[0] for c in cases}
    assert {"topology", "plan", "run", "launch", "sweep", "analyze", "whatif", "probe",
            "results", "classify", "advise", "tune", "fit", "report", "datagen", "cluster",
            "study"} <= commands  # fmt: skip


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_bad_inputs_get_one_clear_line_never_a_traceback(tmp_path, chunk):
    # the fast lane forks every case; the full lane starts each command's first case from a
    # fresh interpreter too (what a user's first command is: imports and all)
    fast = bool(os.environ.get("NUMASPARK_NO_JVM"))
    outcomes = run_corpus(tmp_path, part=(chunk, CHUNKS), fresh_firsts=not fast)
    assert len(outcomes) >= 200 // CHUNKS
    failures = [f"{o.case.name}: {'; '.join(o.problems)}\n    "
                + "\n    ".join(o.stderr.strip().splitlines()[-4:])
                for o in outcomes if o.problems]  # fmt: skip
    assert not failures, f"{len(failures)} of {len(outcomes)} cases:\n" + "\n".join(failures)
