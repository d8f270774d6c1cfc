"""What numaspark reads of a run's executor pods (spark/kube.py), on the API's own objects
(the kubernetes package's models) as a kubelet and a scheduler fill them: each way a pod
cannot run is one line naming the pod and the cause; the pods that ran are kept with their
node and QoS class. No cluster here: tests/test_k8s_local.py meets each on a real one."""

from __future__ import annotations

import json

import pytest

k8s = pytest.importorskip("kubernetes.client", reason="the k8s extra")

from numaspark.placement.kubelet import IMAGE_JAR  # noqa: E402
from numaspark.spark.kube import (  # noqa: E402 (after the skip)
    DRIVER_LOG,
    PODS_FILE,
    RUN_LABEL,
    UNSCHEDULABLE_GRACE_S,
    UPLOAD_KEY,
    PodRun,
    PodWatch,
    dead_driver,
    driver_pod_conf,
    run_labels,
    why_stuck,
)


def pod(
    name="app-exec-1",
    phase="Pending",
    reason=None,
    message=None,
    conditions=(),
    containers=(),
    role="executor",
):
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name=name, labels={"spark-role": role}),
        spec=k8s.V1PodSpec(
            node_name="node-a",
            containers=[
                k8s.V1Container(
                    name="spark-kubernetes-executor",
                    resources=k8s.V1ResourceRequirements(
                        requests={"cpu": "1", "memory": "1408Mi"},
                        limits={"cpu": "1", "memory": "1408Mi"},
                    ),
                )
            ],
        ),
        status=k8s.V1PodStatus(
            phase=phase,
            reason=reason,
            message=message,
            qos_class="Guaranteed",
            conditions=list(conditions),
            container_statuses=list(containers),
        ),
    )


def container(waiting=None, terminated=None):
    return k8s.V1ContainerStatus(
        name="spark-kubernetes-executor",
        image="numaspark/spark:local",
        image_id="",
        ready=False,
        restart_count=0,
        state=k8s.V1ContainerState(waiting=waiting, terminated=terminated),
    )


def no_log(name: str) -> str:
    return ""


def test_a_pod_the_kubelet_refused_is_one_line_with_its_reason():
    refused = pod(
        phase="Failed",
        reason="TopologyAffinityError",
        message="Pod was rejected: Resources cannot be allocated with Topology locality",
    )
    line = why_stuck(refused, 0.0, {}, no_log)
    assert line.startswith("executor pod app-exec-1 was refused by node node-a's kubelet: ")
    assert "TopologyAffinityError: Pod was rejected: Resources cannot be allocated" in line
    assert "\n" not in line


def test_an_unschedulable_pod_is_said_after_its_grace_with_the_schedulers_words():
    stuck = pod(
        conditions=[
            k8s.V1PodCondition(
                type="PodScheduled",
                status="False",
                reason="Unschedulable",
                message="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes "
                "are available: 1 No preemption victims found for incoming pod.",
            )
        ]
    )
    seen: dict[str, float] = {}
    assert why_stuck(stuck, 100.0, seen, no_log) is None  # just found: the scheduler may retry
    assert why_stuck(stuck, 100.0 + UNSCHEDULABLE_GRACE_S - 0.1, seen, no_log) is None
    line = why_stuck(stuck, 100.0 + UNSCHEDULABLE_GRACE_S, seen, no_log)
    assert line.startswith("executor pod app-exec-1 cannot be scheduled: 0/1 nodes are available")
    assert "Insufficient cpu" in line and "--cores-per-executor" in line


def test_an_image_the_node_cannot_start_names_the_image():
    waiting = k8s.V1ContainerStateWaiting(
        reason="ErrImageNeverPull",
        message='Container image "numaspark/spark:local" is not present with pull policy of Never',
    )
    line = why_stuck(pod(containers=[container(waiting=waiting)]), 0.0, {}, no_log)
    assert "cannot start image numaspark/spark:local: ErrImageNeverPull" in line
    assert "spark.kubernetes.container.image" in line


def test_an_image_without_the_plugin_jar_is_told_from_the_executors_own_log():
    dead = pod(
        phase="Failed",
        containers=[container(terminated=k8s.V1ContainerStateTerminated(exit_code=1))],
    )
    log = (
        "Exception in thread main java.lang.ClassNotFoundException: "
        "io.numaspark.affinity.spark.AffinityPlugin\n\tat java.base/..."
    )
    line = why_stuck(dead, 0.0, {}, lambda name: log)
    assert line.startswith("executor pod app-exec-1 exited 1: image numaspark/spark:local lacks")
    assert IMAGE_JAR in line and "ClassNotFoundException" in line
    # another death is Spark's to tell (the driver asks for another executor)
    assert why_stuck(dead, 0.0, {}, lambda name: "java.lang.OutOfMemoryError") is None


def test_a_running_pod_is_kept_once_with_its_node_and_qos_class(tmp_path):
    class Api:
        errors = (OSError,)

        def __init__(self):
            self.asked = 0

        def pods(self, token):
            self.asked += 1
            return [pod(phase="Running"), pod(name="app-exec-2")]

        def log_tail(self, name):
            return ""

    now = [0.0]
    api = Api()
    watch = PodWatch(api, "abc", tmp_path / PODS_FILE, clock=lambda: now[0])
    assert watch() is None
    assert watch() is None and api.asked == 1  # the API at most every WATCH_EVERY_S
    now[0] = 10.0
    assert watch() is None and api.asked == 2
    kept = [json.loads(line) for line in (tmp_path / PODS_FILE).read_text().splitlines()]
    assert kept == [
        {
            "name": "app-exec-1",
            "node": "node-a",
            "phase": "Running",
            "qos_class": "Guaranteed",
            "cpu_request": "1",
            "cpu_limit": "1",
            "reason": None,
            "role": "executor",
        }
    ]  # once; the Pending one not yet


def test_the_runs_label_goes_on_its_driver_and_executor_pods():
    assert run_labels("0123456789ab") == {
        f"spark.kubernetes.executor.label.{RUN_LABEL}": "0123456789ab",
        f"spark.kubernetes.driver.label.{RUN_LABEL}": "0123456789ab",
    }


# --- cluster deploy mode: the driver's pod ---------------------------------------------------

FORBIDDEN_LOG = (
    "26/12/06 18:40:01 ERROR SparkContext: Error initializing SparkContext.\n"
    "io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: GET at: "
    "https://kubernetes.default.svc/api/v1/namespaces/default/pods/app-driver. Message: "
    'pods "app-driver" is forbidden: User "system:serviceaccount:default:default" cannot get '
    'resource "pods" in API group "" in the namespace "default".\n'
)


def test_a_driver_whose_service_account_may_not_read_pods_gets_the_command_that_grants_it():
    line = dead_driver("app-driver", 1, FORBIDDEN_LOG)
    assert line.startswith("driver pod app-driver: its service account default/default may not ")
    assert "get pods" in line
    assert "kubectl create rolebinding default-spark --clusterrole=edit" in line
    assert "--serviceaccount=default:default -n default" in line
    assert "spark.kubernetes.authenticate.driver.serviceAccountName" in line
    assert "\n" not in line


def test_a_driver_that_failed_otherwise_is_its_logs_last_error():
    log = (
        "INFO starting\nTraceback (most recent call last):\nValueError: bad input\n"
        "\tat org.apache.spark.Foo(Foo.java:1)\n\t... 1 more\nINFO end\n"
    )
    line = dead_driver("app-driver", 1, log)
    assert line.startswith("driver pod app-driver exited 1: ValueError: bad input")
    assert DRIVER_LOG in line


def test_a_driver_pod_nothing_fits_is_said_as_a_drivers():
    stuck = pod(
        name="app-driver",
        role="driver",
        conditions=[
            k8s.V1PodCondition(
                type="PodScheduled",
                status="False",
                reason="Unschedulable",
                message="0/1 nodes are available: 1 Insufficient cpu.",
            )
        ],
    )
    seen: dict = {}
    assert why_stuck(stuck, 0.0, seen, no_log) is None
    line = why_stuck(stuck, UNSCHEDULABLE_GRACE_S, seen, no_log)
    assert line.startswith("driver pod app-driver cannot be scheduled: 0/1 nodes are available")
    assert "spark.kubernetes.driver.request.cores" in line


def test_the_driver_pod_mounts_the_run_and_uploads_a_local_application_there(tmp_path):
    conf = driver_pod_conf(tmp_path, "app.py", {})
    volume = "spark.kubernetes.driver.volumes.hostPath.numaspark-run"
    assert conf[f"{volume}.mount.path"] == conf[f"{volume}.options.path"] == str(tmp_path)
    assert conf[UPLOAD_KEY] == (tmp_path / "upload").as_uri()
    # an application already in the image, or the user's own upload path: nothing uploaded
    assert UPLOAD_KEY not in driver_pod_conf(tmp_path, "local:///opt/app.py", {})
    assert UPLOAD_KEY not in driver_pod_conf(tmp_path, "app.py", {UPLOAD_KEY: "s3a://b/up"})
    # the executors' pods as the plan sized them, unless the user sized them
    assert conf["spark.executor.memoryOverheadFactor"] == "0.1"
    theirs = {"spark.executor.memoryOverhead": "2g"}
    assert "spark.executor.memoryOverheadFactor" not in driver_pod_conf(tmp_path, "a.py", theirs)


class Ended:
    """The API of a run whose driver pod ended ``phase``; deletion empties it."""

    errors = (OSError,)
    namespace = "default"

    def __init__(self, phase, code, log):
        terminated = k8s.V1ContainerStateTerminated(exit_code=code)
        self.listed = [
            pod(
                name="app-driver",
                role="driver",
                phase=phase,
                containers=[container(terminated=terminated)],
            )
        ]
        self.log = log

    def pods(self, token):
        return self.listed

    def log_tail(self, name, lines=40):
        return self.log

    def delete_run(self, token):
        self.listed = []
        return []


def test_the_watch_reads_a_failed_drivers_whole_log(tmp_path):
    """The cause comes first in a driver's log, a stack trace of more than 40 lines after."""
    api = Ended("Failed", 1, FORBIDDEN_LOG + "\tat io.fabric8.Foo(Foo.java:1)\n" * 60)
    asked = []
    log_tail = api.log_tail
    api.log_tail = lambda name, lines=40: asked.append(lines) or log_tail(name, lines)
    line = PodWatch(api, "abc", tmp_path / PODS_FILE)()
    assert asked == [None] and "may not get pods" in line, line


def test_a_failed_driver_pod_is_the_runs_failure_and_its_log_is_kept(tmp_path):
    api = Ended("Failed", 1, FORBIDDEN_LOG)
    run = PodRun(api, "abc", PodWatch(api, "abc", tmp_path / PODS_FILE))
    said = []
    run.end(said.append)
    assert "its service account default/default may not get pods" in run.driver_failure
    assert (tmp_path / DRIVER_LOG).read_text() == FORBIDDEN_LOG
    kept = [json.loads(line) for line in (tmp_path / PODS_FILE).read_text().splitlines()]
    assert [(p["role"], p["phase"]) for p in kept] == [("driver", "Failed")]
    assert api.listed == [] and said == []


def test_a_driver_pod_that_succeeded_fails_nothing(tmp_path):
    api = Ended("Succeeded", 0, "INFO done\n")
    run = PodRun(api, "abc", PodWatch(api, "abc", tmp_path / PODS_FILE))
    run.end(lambda line: None)
    assert run.driver_failure is None
    assert (tmp_path / DRIVER_LOG).read_text() == "INFO done\n"
