"""A Kubernetes cluster as numaspark sees it through its API: the nodes' addresses, a run's
executor pods (what Kubernetes says of each, why one cannot start), and their deletion.

Spark talks to the API itself (its fabric8 client, from the same kubeconfig). numaspark asks
it too, for what Spark's log does not say in time or at all:

- where the driver listens (spark/address.py): executor pods reach a driver on a node of the
  cluster at that node's address, never on loopback;
- what stops a run (``PodWatch``, asked while it runs): a pod the kubelet refused
  (``TopologyAffinityError``, ``UnexpectedAdmissionError``: ``status.reason``), a pod the
  scheduler cannot place (its ``PodScheduled`` condition, the same words as its
  ``FailedScheduling`` event), an image the node cannot start, an image without the
  affinity plugin's jar (the executor's own log), each one line with the pod's name;
- what each pod was: its node and ``status.qosClass``, kept in the run's ``pods.jsonl``;
- that none is left: every pod of the run (numaspark labels them) is deleted at its end,
  on failure and on Ctrl-C;
- in cluster deploy mode, the driver's pod: how it ended (the run's outcome: spark-submit's
  client only watches it), its log kept in the run directory, a driver whose service account
  may not make pods said in one line with the command that grants it.

The client is the ``kubernetes`` package (the extra ``k8s``), imported only when a
Kubernetes master is used: it costs about half a second, which no other command pays.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType

from numaspark.errors import ToolMissingError, UsageError
from numaspark.placement.kubelet import IMAGE_JAR, IMAGE_KEY

RUN_LABEL = "numaspark-run"  # numaspark's label on every pod of one run: what it deletes
NAMESPACE_KEY = "spark.kubernetes.namespace"
# the kubelet's admission refusals: the pod stays Failed and is never rescheduled
REFUSED = ("TopologyAffinityError", "UnexpectedAdmissionError", "OutOfcpu", "OutOfmemory")
NO_IMAGE = ("ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName")
WATCH_EVERY_S = 2.0  # the API is asked at most this often by one run
UNSCHEDULABLE_GRACE_S = 5.0  # a pod the scheduler could not place this long: the answer
PODS_FILE = "pods.jsonl"  # each pod as Kubernetes reported it, in the run directory
DRIVER_LOG = "driver-pod.log"  # cluster deploy mode: the driver pod's log, in the run directory
UPLOAD_KEY = "spark.kubernetes.file.upload.path"
SERVICE_ACCOUNT_KEY = "spark.kubernetes.authenticate.driver.serviceAccountName"
RUN_VOLUME = "spark.kubernetes.driver.volumes.hostPath.numaspark-run"
OVERHEAD_KEYS = (  # the user's own sizing of what an executor's pod holds beyond its heap
    "spark.executor.memoryOverhead",
    "spark.executor.memoryOverheadFactor",
    "spark.kubernetes.memoryOverheadFactor",
)


def _client() -> ModuleType:
    """The kubernetes package, imported here and only here: it takes about half a second to
    import, which every command not on Kubernetes would otherwise pay."""
    try:
        import kubernetes  # noqa: PLC0415 (see the docstring)
    except ImportError:
        raise ToolMissingError(
            "numaspark on Kubernetes needs the kubernetes client: pip install 'numaspark[k8s]'"
        ) from None
    return kubernetes


def run_label() -> str:
    """A new run's label value: 12 hex digits, a valid label on any cluster."""
    return secrets.token_hex(6)


def driver_pod_conf(run_dir: Path, job: str | Path, users: dict[str, str]) -> dict[str, str]:
    """A driver pod's settings in cluster deploy mode: the run's directory mounted from its
    node at the same path (a hostPath: the driver writes its event log there, where numaspark
    reads it, so on several nodes it must be a file system they all mount there), and for an
    application on this machine, an upload path in it (spark-submit copies the application
    and its files there; the driver reads them) unless the user named one; the executors'
    pods sized as in client mode."""
    path = str(run_dir.resolve())
    conf = {f"{RUN_VOLUME}.mount.path": path, f"{RUN_VOLUME}.options.path": path}
    if not any(key in users for key in OVERHEAD_KEYS):
        # Spark sizes a Python application's pods in cluster mode with 40% over the heap
        # (its non-JVM factor), not client mode's 10%: the executors' pods would outgrow the
        # room numaspark's plan sized their heap for (an 18 GiB heap asked 25 GiB here)
        conf["spark.executor.memoryOverheadFactor"] = "0.1"
    if UPLOAD_KEY not in users and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", str(job)):
        conf[UPLOAD_KEY] = (run_dir.resolve() / "upload").as_uri()
    return conf


def run_labels(token: str) -> dict[str, str]:
    """The Spark settings that put ``RUN_LABEL=token`` on the run's driver and executor pods."""
    return {
        f"spark.kubernetes.executor.label.{RUN_LABEL}": token,
        f"spark.kubernetes.driver.label.{RUN_LABEL}": token,
    }


class Kube:
    """One cluster's API, with the user's kubeconfig (``KUBECONFIG``, else ~/.kube/config)
    at the master's URL (``k8s://https://HOST:PORT``), as spark-submit reaches it."""

    def __init__(self, master: str, namespace: str = "default") -> None:
        kubernetes = _client()
        url = master.removeprefix("k8s://")
        self.url = url if "://" in url else f"https://{url}"
        self.namespace = namespace
        configuration = kubernetes.client.Configuration()
        try:
            kubernetes.config.load_kube_config(client_configuration=configuration)
        except (kubernetes.config.ConfigException, OSError) as exc:
            where = os.environ.get("KUBECONFIG") or "~/.kube/config"
            raise UsageError(
                f"--master {master}: no usable kubeconfig at {where} ({_first_line(exc)}): "
                "set KUBECONFIG to the cluster's (spark-submit reads the same)"
            ) from None
        configuration.host = self.url
        self.api = kubernetes.client.ApiClient(configuration)
        self.core = kubernetes.client.CoreV1Api(self.api)
        self.errors = (kubernetes.client.ApiException, OSError)
        self._kubernetes = kubernetes

    def node_addresses(self) -> dict[str, list[str]]:
        """Each node's InternalIP and ExternalIP addresses, by node name."""
        nodes = self.core.list_node(_request_timeout=10).items
        return {
            n.metadata.name: [
                a.address
                for a in (n.status.addresses or [])
                if a.type in ("InternalIP", "ExternalIP")
            ]
            for n in nodes
        }

    def may_create_pods(self) -> str | None:
        """None when this kubeconfig's user may create pods in the namespace; else one line
        saying who may not, with the kubectl command that grants it."""
        k = self._kubernetes.client
        review = k.V1SelfSubjectAccessReview(
            spec=k.V1SelfSubjectAccessReviewSpec(
                resource_attributes=k.V1ResourceAttributes(
                    verb="create", resource="pods", namespace=self.namespace
                )
            )
        )
        answer = k.AuthorizationV1Api(self.api).create_self_subject_access_review(
            review, _request_timeout=10
        )
        if answer.status.allowed:
            return None
        user = self._who()
        grant = (
            f"--serviceaccount={user.split(':')[2]}:{user.split(':')[3]}"
            if user.startswith("system:serviceaccount:") and user.count(":") == 3
            else f"--user={user}"
        )
        return (
            f"{user} may not create pods in namespace {self.namespace} on {self.url}, and "
            f"Spark's driver creates its executors so: kubectl create rolebinding "
            f"numaspark-spark --clusterrole=edit {grant} --namespace={self.namespace}"
        )

    def _who(self) -> str:
        k = self._kubernetes.client
        with contextlib.suppress(*self.errors, AttributeError):
            review = k.AuthenticationV1Api(self.api).create_self_subject_review(
                k.V1SelfSubjectReview(), _request_timeout=10
            )
            return review.status.user_info.username
        return "this kubeconfig's user"

    def pods(self, token: str) -> list:
        """The pods of run ``token`` (its label), as the API gives them."""
        return self.core.list_namespaced_pod(
            self.namespace, label_selector=f"{RUN_LABEL}={token}", _request_timeout=10
        ).items

    def log_tail(self, pod: str, lines: int | None = 40) -> str:
        """The last ``lines`` of a pod's log (None: all of it); empty when it cannot be
        read."""
        with contextlib.suppress(*self.errors):
            return self.core.read_namespaced_pod_log(
                pod, self.namespace, tail_lines=lines, _request_timeout=10
            )
        return ""

    def delete_run(self, token: str, wait_s: float = 20.0) -> list[str]:
        """Deletes every pod of run ``token`` at once (no grace: the run is over) and waits
        until none is listed; returns the names of those still listed after ``wait_s``."""
        with contextlib.suppress(*self.errors):
            self.core.delete_collection_namespaced_pod(
                self.namespace,
                label_selector=f"{RUN_LABEL}={token}",
                grace_period_seconds=0,
                _request_timeout=10,
            )
        deadline = time.monotonic() + wait_s
        left: list[str] = []
        while time.monotonic() < deadline:
            try:
                left = [p.metadata.name for p in self.pods(token)]
            except self.errors:
                return left
            if not left:
                return []
            time.sleep(0.5)
        return left


@dataclass
class PodFacts:
    """What Kubernetes reported of one executor pod, kept in the run's ``pods.jsonl``."""

    name: str
    node: str | None
    phase: str | None
    qos_class: str | None
    cpu_request: str | None = None
    cpu_limit: str | None = None
    reason: str | None = None
    role: str = "executor"  # or driver (cluster deploy mode): Spark's spark-role label


def facts_of(pod) -> PodFacts:
    """The facts of one pod object of the API (its first container's resources: Spark's)."""
    containers = pod.spec.containers or []
    resources = containers[0].resources if containers else None
    return PodFacts(
        role=(pod.metadata.labels or {}).get("spark-role", "executor"),
        name=pod.metadata.name,
        node=pod.spec.node_name,
        phase=pod.status.phase,
        qos_class=pod.status.qos_class,
        cpu_request=((resources.requests or {}).get("cpu") if resources else None),
        cpu_limit=((resources.limits or {}).get("cpu") if resources else None),
        reason=pod.status.reason,
    )


def why_stuck(
    pod, now: float, seen: dict[str, float], log_tail: Callable[[str], str]
) -> str | None:
    """One line when ``pod`` cannot run: refused by its kubelet, unschedulable for
    ``UNSCHEDULABLE_GRACE_S`` (``seen``: when each pod was first found so), its image not
    startable, an executor dead of a missing plugin jar, a driver (cluster deploy mode) dead.
    None while it may still run."""
    name, status = pod.metadata.name, pod.status
    role = (pod.metadata.labels or {}).get("spark-role", "executor")
    smaller = (
        "give fewer --executors, --cores-per-executor or --memory-per-executor"
        if role == "executor"
        else "give the driver fewer cores or less memory (spark.driver.cores, "
        "spark.kubernetes.driver.request.cores, spark.driver.memory)"
    )
    if status.phase == "Failed" and status.reason in REFUSED:
        return (
            f"{role} pod {name} was refused by node {pod.spec.node_name}'s kubelet: "
            f"{status.reason}: {_first_line(status.message or '')}; Kubernetes never "
            f"reschedules such a pod: {smaller}, or another --bind"
        )
    for condition in status.conditions or []:
        if condition.type == "PodScheduled" and condition.reason == "Unschedulable":
            first = seen.setdefault(name, now)
            if now - first >= UNSCHEDULABLE_GRACE_S:
                return (
                    f"{role} pod {name} cannot be scheduled: "
                    f"{_first_line(condition.message or '')} (nothing fits its requests: "
                    f"{smaller})"
                )
    for container in status.container_statuses or []:
        waiting = container.state.waiting if container.state else None
        if waiting is not None and waiting.reason in NO_IMAGE:
            return (
                f"{role} pod {name} cannot start image {container.image}: {waiting.reason}: "
                f"{_first_line(waiting.message or '')}; import it on every node, or name "
                f"another with --conf {IMAGE_KEY}=IMAGE"
            )
        ended = container.state.terminated if container.state else None
        if ended is not None and ended.exit_code:
            if role == "driver":
                return dead_driver(name, ended.exit_code, log_tail(name))
            return _dead_executor(name, container.image, ended.exit_code, log_tail(name))
    return None


def _dead_executor(name: str, image: str, code: int, tail: str) -> str | None:
    """Why an executor pod's JVM exited at once: the plugin's class missing from the image;
    None for any other cause (Spark's own log says it, and the driver asks for another)."""
    missing = ("ClassNotFoundException", "NoClassDefFoundError")
    if "io.numaspark.affinity" in tail and any(word in tail for word in missing):
        return (
            f"executor pod {name} exited {code}: image {image} lacks numaspark's plugin jar at "
            f"{IMAGE_JAR} (its log: "
            f"{_first_line(next(line for line in tail.splitlines() if 'numaspark' in line))}); "
            "build the image with it (docs/kubernetes-local.md)"
        )
    return None


FORBIDDEN = re.compile(
    r'User "system:serviceaccount:(?P<namespace>[^:"]+):(?P<account>[^"]+)" cannot '
    r'(?P<verb>\w+) resource "(?P<resource>[\w.]+)"'
)


def dead_driver(name: str, code: int, tail: str) -> str:
    """Why a driver pod (cluster deploy mode) ended ``code``: a service account that may not
    do what a driver does (its pod, its executors' pods), with the command that grants it;
    else its log's last error."""
    forbidden = FORBIDDEN.search(tail)
    if forbidden is not None:
        namespace, account = forbidden["namespace"], forbidden["account"]
        return (
            f"driver pod {name}: its service account {namespace}/{account} may not "
            f"{forbidden['verb']} {forbidden['resource']}: grant it with `kubectl create "
            f"rolebinding {account}-spark --clusterrole=edit "
            f"--serviceaccount={namespace}:{account} -n {namespace}`, or name one that may: "
            f"--conf {SERVICE_ACCOUNT_KEY}=NAME"
        )
    lines = [  # not a stack trace's frames
        line.strip()
        for line in tail.splitlines()
        if line.strip() and not re.match(r"\s*(at |\.\.\. \d+ more)", line)
    ]
    errors = [line for line in lines if re.search(r"Error|Exception", line)]
    last = (errors or lines or ["(no log)"])[-1]
    return f"driver pod {name} exited {code}: {last[:300]} (its log: {DRIVER_LOG} in the run)"


def _first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0].strip() if lines else ""


@dataclass
class PodWatch:
    """Asked while a run on Kubernetes runs (twice a second; the API at most every
    ``WATCH_EVERY_S``): why it must stop, in one line, or None. Each pod it saw (executors;
    in cluster deploy mode the driver too) is appended to ``pods_file`` once it ran (its node
    and QoS class), and again when it ended."""

    kube: Kube
    token: str
    pods_file: Path
    clock: Callable[[], float] = time.monotonic
    asked: float = -1e9
    unschedulable: dict[str, float] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)  # pod name -> the phase last kept

    def __call__(self) -> str | None:
        now = self.clock()
        if now - self.asked < WATCH_EVERY_S:
            return None
        self.asked = now
        try:
            pods = self.kube.pods(self.token)
        except self.kube.errors:
            return None  # the API missed one ask: the next may answer
        for pod in pods:
            labels = pod.metadata.labels or {}
            if labels.get("spark-role") not in ("executor", "driver"):
                continue
            self.keep(pod)
            # a driver's whole log: its cause comes first, a long stack trace after it
            lines = None if labels.get("spark-role") == "driver" else 40
            why = why_stuck(
                pod,
                now,
                self.unschedulable,
                lambda name, lines=lines: self.kube.log_tail(name, lines),
            )
            if why is not None:
                return why
        return None

    def keep(self, pod) -> None:
        facts = facts_of(pod)
        if self.kept.get(facts.name) == facts.phase or facts.phase not in (
            "Running",
            "Succeeded",
            "Failed",
        ):
            return
        self.kept[facts.name] = facts.phase
        with self.pods_file.open("a") as out:
            out.write(json.dumps(asdict(facts)) + "\n")


@dataclass
class PodRun:
    """One run's pods on a cluster: labelled, watched while it runs, deleted at its end."""

    kube: Kube
    token: str
    watch: PodWatch
    driver_failure: str | None = None  # cluster deploy mode: how its driver pod failed

    @classmethod
    def start(cls, master: str, conf: dict[str, str], run_dir: Path) -> PodRun:
        """The pods of a run about to be submitted with ``conf`` (the user's settings and
        numaspark's): refused in one line when this kubeconfig's user may not create pods."""
        kube = Kube(master, conf.get(NAMESPACE_KEY, "default"))
        try:
            refused = kube.may_create_pods()
        except kube.errors:
            refused = None  # no answer: spark-submit says what it meets
        if refused is not None:
            raise UsageError(refused)
        token = run_label()
        return cls(kube, token, PodWatch(kube, token, run_dir / PODS_FILE))

    def conf(self) -> dict[str, str]:
        """numaspark's label on the run's pods."""
        return run_labels(self.token)

    def check(self, then: Callable[[], str | None] | None) -> Callable[[], str | None]:
        """The run's check: a pod that cannot run first, then ``then`` (the first executor's
        wait)."""
        return lambda: self.watch() or (then() if then is not None else None)

    def end(self, say: Callable[[str], None]) -> None:
        """Keeps how each pod of the run ended (a driver pod's failure in ``driver_failure``,
        its log in the run directory), then deletes them all; says which are still listed
        after 20 s."""
        with contextlib.suppress(*self.kube.errors):
            for pod in self.kube.pods(self.token):
                self.watch.keep(pod)
                if (pod.metadata.labels or {}).get("spark-role") == "driver":
                    self._driver_ended(pod)
        left = self.kube.delete_run(self.token)
        if left:
            say(
                f"pods of this run still listed in namespace {self.kube.namespace} after 20 s: "
                f"{', '.join(left)} (kubectl delete pod -l {RUN_LABEL}={self.token})"
            )

    def _driver_ended(self, pod) -> None:
        """A driver pod's log kept in the run directory, and its failure, if it failed."""
        name = pod.metadata.name
        log = self.kube.log_tail(name, lines=None)
        (self.watch.pods_file.parent / DRIVER_LOG).write_text(log)
        if pod.status.phase == "Failed":
            code = next(
                (
                    c.state.terminated.exit_code
                    for c in pod.status.container_statuses or []
                    if c.state and c.state.terminated
                ),
                None,
            )
            self.driver_failure = why_stuck(
                pod, self.watch.clock(), {}, lambda _: log
            ) or dead_driver(name, code or 1, log)
