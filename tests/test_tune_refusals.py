"""The tuner on a cluster that refuses or kills a configuration (issue 48, item 4): the
search space is bounded by what the cluster holds, a trial the cluster refuses or kills is
failed with its cause in one line, and every configuration that asks the cluster as much is
left out of the search, never proposed.

No cluster runs here: the clusters are a recorded standalone master's status page, changed to
say what another application took, served by the test (tests/statuspage.py), and the causes
are the runner's own lines and Spark's and YARN's words as their sources write them. The real
refusal on a cluster at another address is tests/test_cluster_decide.py's (long lane)."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest
from statuspage import recorded_status, serving

from numaspark import records
from numaspark.decide.steer import Observation, refusal
from numaspark.decide.tune import Space, asks_as_much, tune
from numaspark.decide.tune_runs import PARAMETERS, live_objective, live_space, refusals_on
from numaspark.experiment.venue import ClusterAt
from numaspark.placement.cluster_capacity import ClusterCapacity, HostHas
from numaspark.spark.managers import read_cluster
from numaspark.spark.standalone_master import FITTING

MASTER = "spark://10.216.9.11:7077"  # an address of another host: nothing is sent there
# Spark's words (YarnAllocator; TaskSetManager's ExecutorLostFailure) and the runner's
KILLED_BY_YARN = (
    "Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 times: ExecutorLostFailure "
    "(executor 2 exited caused by one of the running tasks) Reason: Container killed by YARN "
    "for exceeding physical memory limits. 1.6 GB of 1.5 GB physical memory used. Consider "
    "boosting spark.executor.memoryOverhead."
)
NOT_GRANTED = (
    "no executor started within 300 s: the cluster at spark://10.216.9.11:7077 (it has 2 alive "
    "worker(s), 2 cores and 2048 MB free) cannot hold the plan now (room for 1 of 2 "
    "executor(s) of 1 core(s) and 1024 MB heap; its alive workers: ...)"
)


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (NOT_GRANTED, "resources"),
        (KILLED_BY_YARN, "memory"),
        # Kubernetes, as spark/kube.py says it (the scheduler's and the kubelet's words)
        (
            "executor pod a-exec-1 cannot be scheduled: 0/1 nodes are available: 1 "
            "Insufficient cpu. (nothing fits its requests: give fewer --executors, ...)",
            "resources",
        ),
        (
            "executor pod a-exec-2 was refused by node n1's kubelet: TopologyAffinityError: "
            "Resources cannot be allocated with Topology locality; ...",
            "resources",
        ),
        ("java.lang.OutOfMemoryError: Java heap space", "memory"),
        ("exited with 1: Traceback ... ZeroDivisionError: division by zero", None),
        ("wrong answer: 3 rows, expected 4", None),
        (None, None),
    ],
)
def test_a_failure_says_whether_the_cluster_refused_or_killed_it(failure, kind):
    assert refusal(failure) == kind


def _two_workers(cores_b: int = 1) -> dict:
    """The recorded master's status as two workers of one core and 1024 MB each, on two
    hosts; worker b's cores used by another application where ``cores_b`` is 0."""
    status = recorded_status()
    first = status["workers"][0]
    status["workers"] = []
    for name, free in (("10.216.9.11", 1), ("10.216.9.12", cores_b)):
        worker = copy.deepcopy(first)
        worker.update(
            id=f"worker-{name}",
            host=name,
            cores=1,
            coresused=1 - free,
            coresfree=free,
            memory=1024,
            memoryused=0,
            memoryfree=1024,
        )
        status["workers"].append(worker)
    return status


def _cluster(ui: str) -> ClusterAt:
    return ClusterAt(master=MASTER, ui=ui)


def test_the_space_holds_only_what_the_cluster_can_hold_now():
    """Two workers of one core: one executor of two cores is never granted by a standalone
    master (an executor lives on one worker), so it is left out, each with the cluster's
    own line; the executors each worker holds are kept."""
    with serving(_two_workers()) as ui:
        has = read_cluster(MASTER, ui=ui)
        refused: list[str] = []
        space, configs = live_space(
            has.topology(),
            "wordcount",
            "tiny",
            local=False,
            refuses=refusals_on(has, _cluster(ui)),
            refused=refused,
        )
    layouts = {(k[1], k[2]) for k in space.candidates}
    assert layouts == {(1, 1), (2, 1)}, layouts
    assert len(refused) == 9  # 1 executor x 2 cores: 3 bindings x 3 partitions per slot
    assert all("cannot hold 1 executor(s) of 2 core(s)" in line for line in refused), refused
    assert all("\n" not in line for line in refused)


def test_no_configuration_the_cluster_can_hold_is_one_line():
    with serving(_two_workers(cores_b=0)) as ui:
        has = ClusterCapacity("standalone", MASTER, (HostHas("10.216.9.11", 0, 1024),), FITTING)
        with pytest.raises(Exception, match="the cluster can hold no configuration") as caught:
            live_space(
                read_cluster(MASTER, ui=ui).topology(),
                "wordcount",
                "tiny",
                local=False,
                refuses=refusals_on(has, _cluster(ui)),
            )
    assert "\n" not in str(caught.value)


def test_a_trial_the_cluster_refuses_as_it_starts_is_failed_with_the_clusters_line(tmp_path):
    """Planned while both workers were free; by the trial, another application holds worker
    b's core: the runner's check before the run refuses two executors (no JVM is started),
    and the live objective returns that as the trial's failure instead of ending the search."""
    with serving(_two_workers()) as ui:
        has = read_cluster(MASTER, ui=ui)
        space, configs = live_space(has.topology(), "wordcount", "tiny", local=False)
    with serving(_two_workers(cores_b=0)) as ui:
        objective = live_objective(
            configs, has.topology(), tmp_path / "out", repeat=1, warmup=0, venue=_cluster(ui)
        )
        two = next(k for k in space.candidates if k[1] == 2)
        found = objective(dict(zip(PARAMETERS, two, strict=True)))
    assert found.value is None and found.refused == "resources"
    assert found.failure.startswith(
        f"planned on the workers of the cluster at {MASTER} (2 alive worker(s), 1 cores"
    ), found.failure
    assert "2 executor(s) x 1 cores = 2 task slots" in found.failure


def _search_on_a_busy_cluster(failure: str, budget: int = 8):
    """A search on the two one-core workers whose objective is the cluster after another
    application took worker b: every configuration of two executors fails with ``failure``;
    one executor runs, faster with more partitions per slot."""
    with serving(_two_workers()) as ui:
        has = read_cluster(MASTER, ui=ui)
        space, _ = live_space(
            has.topology(), "wordcount", "tiny", local=False, refuses=refusals_on(has, _cluster(ui))
        )
    asked = []

    def objective(params):
        asked.append(params)
        if params["executors"] >= 2:
            return Observation(None, failure=failure, refused=refusal(failure))
        return Observation(10.0 / params["partitions_per_slot"] + 0.1 * len(params["binding"]))

    return space, tune(space, objective, budget, seed=1, early_stop=False), asked


def test_a_refused_configuration_is_learned_from_and_never_proposed_again():
    space, found, asked = _search_on_a_busy_cluster(NOT_GRANTED)
    failed = [t for t in found.trials if t.value is None]
    # the rules start at two executors (the cluster's two nodes): that trial fails, once
    assert len(failed) == 1, [(t.params, t.value) for t in found.trials]
    assert failed[0].failure == NOT_GRANTED
    assert sum(1 for p in asked if p["executors"] == 2) == 1
    (line,) = found.learned
    assert line.startswith(f"trial {failed[0].number}: the cluster refused its executors; left")
    assert "left out 8 configuration(s)" in line  # the other 2 x 1 ones: 3 bindings x 3 - 1
    assert found.best.params["executors"] == 1
    stored = records.dump(found)
    assert stored["learned"] == [line]
    assert stored["trials"][failed[0].number - 1]["failure"] == NOT_GRANTED
    assert all("failure" not in t for t in stored["trials"] if t["value"] is not None)


def test_a_kill_for_memory_leaves_out_only_what_gives_each_task_no_more_memory():
    """A memory kill at some partitions per slot: the same layout with more partitions per
    slot (smaller tasks) may run, so it stays in the search; fewer or as many are left out."""
    space, found, asked = _search_on_a_busy_cluster(KILLED_BY_YARN, budget=12)
    failed = [t for t in found.trials if t.value is None]
    first = failed[0]
    assert found.learned[0].startswith(f"trial {first.number}: the cluster killed or lost")
    per_slot = first.params["partitions_per_slot"]
    later = [p for p in asked[first.number :] if p["executors"] == 2]
    assert all(p["partitions_per_slot"] > per_slot for p in later), (per_slot, later)


def test_an_applications_own_failure_leaves_out_nothing_else():
    _, found, _ = _search_on_a_busy_cluster("exited with 1: ZeroDivisionError", budget=10)
    assert not found.learned
    assert sum(1 for t in found.trials if t.value is None) >= 2


def test_a_tables_own_columns_are_read_by_their_roles_and_text_only_by_equality():
    """A replayed table's columns (workers, memory as text), read by their roles: a refusal
    at 4 workers of "4g" implies more workers of "4g", never fewer; "8g" is not read as more
    than "4g" (text has no order), so it is not implied; a kill for memory implies less
    memory, which text cannot say either."""
    space = Space({"workers": [2, 4, 8], "memory": ["4g", "8g"]}, [])
    search = SimpleNamespace(space=space, roles={"workers": "executors", "memory": "memory"})
    failed = (4, "4g")
    implied = {
        other: asks_as_much(search, other, failed, "resources")
        for other in [(w, m) for w in (2, 4, 8) for m in ("4g", "8g")]
    }
    assert {k for k, v in implied.items() if v} == {(4, "4g"), (8, "4g")}
    assert not asks_as_much(search, (8, "8g"), failed, "memory")
    assert asks_as_much(search, (8, "4g"), failed, "memory")
