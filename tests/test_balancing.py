"""The kernel's automatic NUMA balancing as a compared option (issue 32): kernel.numa_balancing
switched for a run and always put back, held by one numaspark at a time, restored by the next
command after a SIGKILL; the binding study's and the tuner's ``autonuma``.

Most tests point the setting at a file of their own (NUMASPARK_NUMA_BALANCING_FILE), so they
run anywhere; one switches this machine's real setting (root here: it is put back at once),
and the binding study replays recorded runs (tests/recorded.py) while the real setting is
switched for each configuration.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from prereq import require
from recorded import RecordedTarget, targets

from numaspark.decide.tune_runs import PARAMETERS, live_space
from numaspark.errors import UsageError
from numaspark.experiment import studies
from numaspark.experiment.request import RunRequest, request_of, run_argv
from numaspark.experiment.result import RunSpec
from numaspark.experiment.studies import StudyRequest
from numaspark.experiment.sweep import run_sweep
from numaspark.kernel import NUMA_BALANCING, read_setting
from numaspark.supervise import balancing as switch
from numaspark.supervise import ledger
from numaspark.supervise.processes import supervised
from numaspark.topology import load_machine


@pytest.fixture
def setting(tmp_path, monkeypatch) -> Path:
    """A stand-in for /proc/sys/kernel/numa_balancing (off), and a state directory of its own."""
    path = tmp_path / "numa_balancing"
    path.write_text("0\n")
    monkeypatch.setenv("NUMASPARK_NUMA_BALANCING_FILE", str(path))
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    return path


def test_switched_inside_and_put_back_on_success_and_failure(setting):
    said = []
    with switch.balancing(True, say=said.append) as value:
        assert value == "1" and setting.read_text() == "1"
        assert (switch.held_dir() / "numa-balancing.json").exists()  # for the next command
    assert setting.read_text() == "0"
    assert not (switch.held_dir() / "numa-balancing.json").exists()
    assert said == ["kernel.numa_balancing 0 -> 1 for this run"]
    with pytest.raises(RuntimeError), switch.balancing(True):
        raise RuntimeError("the run failed")
    assert setting.read_text() == "0"
    with pytest.raises(KeyboardInterrupt), switch.balancing(True):
        raise KeyboardInterrupt  # Ctrl-C
    assert setting.read_text() == "0"


@pytest.mark.parametrize("found", ["1", "2", "3"])
def test_already_on_is_left_alone(setting, found):
    """Memory tiering (2, 3) counts as on: asking for on changes nothing, off puts it back."""
    setting.write_text(found)
    with switch.balancing(True) as value:
        assert value == found and setting.read_text() == found
    with switch.balancing(False):
        assert setting.read_text() == "0"
    assert setting.read_text() == found


def test_someone_elses_change_during_the_run_is_kept(setting):
    with switch.balancing(True):
        setting.write_text("2")  # an administrator, meanwhile
    assert setting.read_text() == "2"


_HOLDER = """
import sys, time
from numaspark.supervise.balancing import balancing
with balancing(True):
    print("holding", flush=True)
    time.sleep(300)
"""


def _holder() -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_a_second_numaspark_waits_then_refuses_in_one_line(setting):
    holder = _holder()
    try:
        with pytest.raises(switch.BalancingBusy) as refused, switch.balancing(False, wait_s=1):
            pass
        assert str(refused.value) == (
            f"kernel.numa_balancing is held changed by numaspark {holder.pid}: wait until it "
            "ends, or run this without the autonuma comparison"
        )
        assert setting.read_text() == "1"  # the holder's, untouched
        assert switch.restore_left() is None  # its owner runs: nothing to put back
    finally:
        holder.terminate()  # SIGTERM: Python's default kills it at once, like SIGKILL here
        holder.wait()


def test_after_a_sigkill_the_next_command_puts_it_back(setting):
    holder = _holder()
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert setting.read_text() == "1"  # left changed: SIGKILL cannot be caught
    said = []
    old = ledger.notify
    ledger.notify = said.append
    try:
        with supervised():  # what every command that starts processes enters first
            pass
    finally:
        ledger.notify = old
    assert setting.read_text() == "0"
    assert said == [
        f"kernel.numa_balancing put back to 0: numaspark {holder.pid} changed it "
        "and was killed before it could"
    ]
    assert switch.restore_left() is None  # once


def test_where_it_cannot_be_switched_it_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMASPARK_NUMA_BALANCING_FILE", str(tmp_path / "absent"))
    assert "not present" in switch.why_not()
    needs = "not present.*autonuma comparison needs it"
    with pytest.raises(UsageError, match=needs), switch.balancing(True):
        pass
    present = tmp_path / "present"
    present.write_text("0")
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as a user who is not root
    assert switch.why_not(str(present)) == "kernel.numa_balancing can be switched only as root"


@pytest.mark.skipif(
    read_setting(NUMA_BALANCING) is None,
    reason="a kernel without NUMA balancing has no setting to switch",
)
def test_this_machines_real_setting_is_switched_and_put_back(tmp_path, monkeypatch):
    require("root")  # the lanes run as root (docs/tests.md): switching it is what this test proves
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("NUMASPARK_NUMA_BALANCING_FILE", raising=False)
    found = read_setting(NUMA_BALANCING)
    wanted = found == "0"
    with switch.balancing(wanted):
        assert (read_setting(NUMA_BALANCING) != "0") == wanted
    assert read_setting(NUMA_BALANCING) == found


def test_the_binding_study_compares_autonuma_where_it_can(setting):
    topo = load_machine()
    plain = studies.binding(StudyRequest(topo, "wordcount", "tiny", 1, 0))
    assert [c.note for c in plain.experiment.configs][:2] == ["1U", "1B"]
    assert all(c.numa_balancing is None for c in plain.experiment.configs)
    cannot = studies.binding(
        StudyRequest(topo, "wordcount", "tiny", 1, 0), autonuma="it cannot, because"
    )
    assert "autonuma (unbound, the kernel's NUMA balancing on): it cannot, because" in cannot.cannot
    compared = studies.binding(StudyRequest(topo, "wordcount", "tiny", 1, 0), autonuma=True)
    first = {c.note: c for c in compared.experiment.configs if c.note.startswith("1")}
    assert [first["1U"].numa_balancing, first["1A"].numa_balancing] == [False, True]
    assert first["1B"].numa_balancing is None and first["1B"].binding.value == "node"
    assert first["1A"].binding.value == "none" and first["1A"].key != first["1U"].key


class Observing(RecordedTarget):
    """A recorded target that notes the kernel setting as each application is submitted."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seen: list[str] = []

    def submit(self, placement, job, job_args, run_dir, **options):
        self.seen.append(read_setting(switch.setting_path()))
        return super().submit(placement, job, job_args, run_dir, **options)


def test_each_configuration_runs_with_its_setting_and_it_is_put_back(setting, tmp_path):
    """Replayed on recorded runs: 1U with balancing off, 1A on, 1B as found; the records say
    what was asked (spec) and what the kernel had (environment)."""
    setting.write_text("0")
    topo = load_machine()
    study = studies.binding(StudyRequest(topo, "wordcount", "tiny", 1, 0), autonuma=True)
    study.experiment.configs = [c for c in study.experiment.configs if c.note in ("1U", "1A", "1B")]
    standalone = Observing(standalone=True)
    report = run_sweep(
        study.experiment, topo, tmp_path / "out", targets=targets(RecordedTarget(), standalone)
    )
    assert standalone.seen == ["0", "1", "0"]
    assert setting.read_text() == "0"
    by_note = {r.spec.label.split()[0]: r for r in report.results}
    assert by_note["1A"].spec.numa_balancing == "on"
    assert by_note["1A"].environment.numa_balancing == "1"
    assert by_note["1U"].spec.numa_balancing == "off" and by_note["1B"].spec.numa_balancing is None


def test_a_request_with_balancing_is_said_and_read_back():
    """`run --numa-balancing on|off` asks for it; a record's spec gives the request again."""
    argv = run_argv(RunRequest(workload="wordcount", numa_balancing=True))
    assert argv[argv.index("--numa-balancing") + 1] == "on"
    assert "--numa-balancing" not in run_argv(RunRequest(workload="wordcount"))
    for said, asked in (("on", True), ("off", False), (None, None)):
        assert (
            request_of(RunSpec(workload="wordcount", numa_balancing=said)).numa_balancing is asked
        )


def test_the_tuner_has_autonuma_only_when_asked():
    topo = load_machine()
    space, configs = live_space(topo, "wordcount", "tiny")
    assert "autonuma" not in space.values["binding"]
    space, configs = live_space(topo, "wordcount", "tiny", autonuma=True)
    assert {"none", "autonuma", "node", "core"} <= set(space.values["binding"])
    chosen = {k[PARAMETERS.index("binding")]: c for k, c in configs.items()}
    assert chosen["autonuma"].numa_balancing is True and chosen["none"].numa_balancing is False
    assert chosen["node"].numa_balancing is None
