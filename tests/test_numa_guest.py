"""Binding proved on a real two-node kernel, and the plugin's node binding on two and four.

This machine has one NUMA node, so tests/guest/ boots it again under QEMU's software emulation
with two nodes (CPU 0 and 2 GiB on node 0, CPU 1 and 2 GiB on node 1): Debian's kernel, this
machine's own root file system read-only over virtio-9p, the same venv (numaspark from the
booted repository's src/). Inside, numaspark's own commands see the nodes, plan one executor per
node and launch bound JVMs; what they read from the guest's /proc (effective CPUs, numa_maps
policy, pages per node) decides each check, printed on the serial console as
``NUMASPARK-CHECK PASS|FAIL name: details``, which these tests read.

``plugin-node-binding`` (issue 32) starts a standalone master and worker with Spark's own
classes, unbound, and runs ``numaspark run tests/guest/holdjob.py --master spark://...
--bind node`` with one one-core executor per node: the affinity plugin binds each executor
from inside. After the application's first job, while the executors run, the check reads
their /proc: every thread's Cpus_allowed_list within one node's CPUs, the executors on
different nodes, at least 90% of each one's anonymous resident pages (numa_maps, file-backed
mappings apart) on its node, and the plugin's report in the run record naming the same pids,
nodes and CPUs. The four-node guest (4 CPUs, four nodes of 2 GiB: ``guest_four``) repeats it
with four executors.

``python-workers-node`` and ``python-workers-core`` (issue 40) boot a guest of their own, two
nodes of two CPUs each (``guest_python``): on a plain cluster, ``tests/guest/pythonhold.py``,
whose numpy tasks write 96 MiB each and hold, runs at ``--bind node`` (one-core executors) and
then at ``--bind core`` (executors of two cores, each started on a node of its own). While the
tasks hold, the check reads every Python process under each executor JVM (``pyspark.daemon``
and the workers it forked, found by their parents in /proc/PID/stat): all its threads within
the executor's node CPUs, at least 90% of its anonymous pages on that node, every task's worker
among them; at level core an executor's workers not all on one core.

``topology-gpus-per-node`` and ``device-node-binding`` (issue 50) boot a guest of their own,
two nodes with a stand-in GPU on each (``guest_devices``: ``--gpus-per-node 1``, a display
controller of PCI class 0380 behind a PCI expander bridge of its node): the kernel's sysfs and
``numaspark topology`` place them alike; then a plain standalone worker offers them through
the shipped discovery script, a plain spark-submit of ``plan --gpus-per-executor 1 --target
standalone``'s spark-defaults.conf runs ``holdjob.py`` with the plugin at level node, and the
check reads each executor's /proc: every thread on the CPUs of the node its GPU (the one the
worker handed it, named in its ``--resourcesFile``) hangs off, at least 90% of its anonymous
pages there (tests/guest/gpus.py).

The two-node boot takes 5 to 11 minutes (the plugin check 4 to 8 of them: the plain cluster up
in 42 to 110 s, the first job done 190 to 400 s after submission), the four-node one about 8 (the kernel is
fetched once, in seconds); it needs qemu-system-x86_64, which scripts/setup.sh installs for the tests.
``bash scripts/test-guest.sh`` runs these tests alone; the timings are kept in
test-artifacts/numa-guest/timing.json.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time

import pytest
from conftest import ROOT
from guest import build, ledger
from prereq import require

CHECKS = (
    "topology-two-nodes",
    "plan-one-executor-per-node",
    "launch-bound-per-node",
    "launch-interleave-split",
    "launch-remote-memory",
    "plugin-node-binding",
    # the plugin's bind (per task thread; a JVM alone in a cgroup) and interleave
    "plugin-bind-thread-policy",
    "plugin-bind-cgroup",
    "plugin-interleave-thread-policy",
)
# The four-node guest (4 CPUs, 4 nodes of 2 GiB) proves the plugin's node binding with four
# executors: its topology and plan, then the same plugin check.
CHECKS_FOUR = ("topology-four-nodes", "plan-one-executor-per-node", "plugin-node-binding")
# A Spark standalone worker per node, bound, read back with `cluster status`: about 3 minutes
# more under emulation (the master alone takes a minute), so only when asked for.
SPARK = os.environ.get("NUMASPARK_GUEST_SPARK") == "1"

# jvm: the guest starts JVMs (Spark, the toucher), so these run in the lane that may, one test
# (one guest) at a time; long: minutes each. A missing QEMU fails, never skips (prereq.py).
pytestmark = [
    pytest.mark.integration,
    pytest.mark.jvm,
    pytest.mark.long(script="bash scripts/test-guest.sh"),
]


@pytest.fixture(autouse=True)
def _guest_tools():
    require("qemu-system-x86_64", "apt-get")


def _timings(console: str) -> dict:
    """The figures the plugin check printed after ``timings:`` (seconds: cluster up, first
    job, whole run), for timing.json."""
    for line in console.splitlines():
        if line.startswith("NUMASPARK-CHECK ") and " plugin-node-binding:" in line:
            _, _, tail = line.partition("| timings: ")
            return {k: float(v) for k, v in (p.rsplit(" ", 1) for p in tail.split(", ") if p)}
    return {}


def _passed() -> list[str]:
    """The caller's choices the checks read (the guest gets none of its environment else)."""
    names = (
        "NUMASPARK_GUEST_PLUGIN",
        "NUMASPARK_GUEST_SPARK",
        "NUMASPARK_GUEST_INTERLEAVE",
        "NUMASPARK_GUEST_JAVA_OPTIONS",  # JDK_JAVA_OPTIONS for every JVM in the guest
    )
    return [f"{n}={os.environ[n]}" for n in names if n in os.environ]


def _boot(
    tmp_path_factory,
    nodes: int,
    memory: str = "2048M",
    checks: tuple[str, ...] = (),
    log_name: str | None = None,
    cpus_per_node: int = 1,
    gpus_per_node: int = 0,
    timeout_s: float | None = None,
    env: tuple[str, ...] = (),
) -> dict:
    """The checks, run in the guest through scripts/numa-guest.sh (the tool anyone uses to run
    a command on a multi-node kernel): its output is the checks' console lines, its exit status
    theirs."""
    artifacts = ROOT / "test-artifacts" / "numa-guest"
    artifacts.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    booted = ledger.commit_now()  # what this boot runs, whatever is merged while it runs
    kernel = build.kernel()
    kernel_s = time.monotonic() - began
    classes = build.toucher(tmp_path_factory.mktemp("guest"))
    if "jvm-stress" in checks:
        build.stress_programs(classes)
    log = artifacts / (log_name or ("console.log" if nodes == 2 else f"console-{nodes}-nodes.log"))
    argv = [
        "bash",
        str(ROOT / "scripts/numa-guest.sh"),
        "--nodes",
        str(nodes),
        "--cpus-per-node",
        str(cpus_per_node),
        "--memory-per-node",
        memory,
        "--gpus-per-node",
        str(gpus_per_node),
        "--timeout",
        str(timeout_s or build.timeout_s()),
        "--log",
        str(log),
        "--",
        "env",
        f"NUMASPARK_TOUCHER={classes}",
        *_passed(),
        *env,
        sys.executable,
        "tests/guest/checks.py",
        *checks,
    ]
    lines = []
    with subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            print(line, end="", flush=True)
            lines.append(line.rstrip("\n"))
    console = "\n".join(lines)
    timing = {
        "kernel_s": round(kernel_s, 1),
        "kernel": (kernel / "ready").read_text().strip(),
        "boot_and_checks_s": round(time.monotonic() - began - kernel_s, 1),
        "plugin_node_binding_s": _timings(console),
    }
    saved = artifacts / "timing.json"
    # boots at once (NUMASPARK_GUEST_PARALLEL) each add theirs: one at a time
    with open(artifacts / "timing.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        every = json.loads(saved.read_text()) if saved.exists() else {}
        if checks:  # a boot of its own for these checks: its timing beside the others
            every["_".join(c.replace("-", "_") for c in checks)] = timing
        elif nodes == 2:  # the two-node guest's keys at the top, the other boots' beside
            every.update(timing)
        else:
            every["four_nodes"] = timing
        saved.write_text(json.dumps(every, indent=2) + "\n")
    print(f"guest timing ({nodes} nodes): {timing}")
    boot = log.stem.replace("console-", "") if log.stem != "console" else "two-nodes"
    # what the boot ran on (CPU model, QEMU's accelerator), and with
    cpu = " ".join([build.guest_cpu(), f"accel={build.guest_accel()}", *_passed()])
    ledger.record(boot, cpu, timing["boot_and_checks_s"], proc.returncode, lines, commit=booted)
    return {"code": proc.returncode, "lines": lines}


@pytest.fixture(scope="module")
def guest(tmp_path_factory) -> dict:
    return _boot(tmp_path_factory, 2)


@pytest.fixture(scope="module")
def guest_four(tmp_path_factory) -> dict:
    return _boot(tmp_path_factory, 4)


@pytest.fixture(scope="module")
def guest_yarn(tmp_path_factory) -> dict:
    """Two nodes of 3 GiB: the mini YARN (ResourceManager and NodeManager in one JVM), the
    application master, two executors and the driver all fit. The mini YARN is built here
    first (Maven; hadoop-client-minicluster fetched once) for the booted checkout: its src/
    first, as in the guest, so a worktree builds its own."""
    subprocess.run(
        [sys.executable, "-c", "from numaspark.spark.yarnmini import build_launcher as b; b()"],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=True,
    )
    return _boot(
        tmp_path_factory, 2, memory="3G", checks=("yarn-node-binding",), log_name="console-yarn.log"
    )


@pytest.fixture(scope="module")
def guest_python(tmp_path_factory) -> dict:
    """Two nodes of two CPUs each (four vCPUs on one host thread): PySpark's Python
    workers at --bind node, then at --bind core with executors of two cores (issue 40)."""
    return _boot(
        tmp_path_factory,
        2,
        checks=("python-workers",),
        log_name="console-python.log",
        cpus_per_node=2,
    )


@pytest.fixture(scope="module")
def guest_devices(tmp_path_factory) -> dict:
    """Two nodes with a stand-in GPU on each (``--gpus-per-node 1``: a display controller,
    PCI class 0380, behind a PCI expander bridge of its node; issue 50)."""
    return _boot(
        tmp_path_factory,
        2,
        checks=("devices",),
        log_name="console-devices.log",
        gpus_per_node=1,
    )


@pytest.fixture(scope="module")
def guest_churn(tmp_path_factory) -> dict:
    """Two nodes of two CPUs and 3 GiB each: a plain cluster, two PySpark applications at once
    under dynamic allocation, each executor of one core (issue 57, tests/guest/churn.py). Its
    check may take 7200 s under emulation; the boot gets 1200 s more."""
    return _boot(
        tmp_path_factory,
        2,
        memory="3G",
        checks=("churn",),
        log_name="console-churn.log",
        cpus_per_node=2,
        timeout_s=8400,
    )


@pytest.fixture(scope="module")
def guest_jvm_stress(tmp_path_factory) -> dict:
    """Two nodes of two CPUs (four vCPUs on one host thread): JVMs loading classes at
    once, and the YMM registers' state where the CPU model has AVX (issue 57; jvmstress.py)."""
    require("cc")
    return _boot(
        tmp_path_factory,
        2,
        checks=("jvm-stress",),
        log_name="console-jvm-stress.log",
        cpus_per_node=2,
    )


@pytest.fixture(scope="module")
def guest_k8s(tmp_path_factory) -> dict:
    """Two nodes of two CPUs and 4 GiB each: the local Kubernetes inside the guest (issue 60,
    item 5; tests/guest/kube.py), its state on the guest's /run. Its binaries and images are
    built here first (the guest has no Go, and would take hours)."""
    sys.path.insert(0, str(ROOT / "tests" / "k8s"))
    import parts  # noqa: PLC0415 (tests/k8s/, beside its script)
    from images import build_images  # noqa: PLC0415

    parts.debian_packages()
    bins = parts.build()
    build_images()
    return _boot(
        tmp_path_factory,
        2,
        memory="4G",
        checks=("kubernetes",),
        log_name="console-k8s.log",
        cpus_per_node=2,
        timeout_s=14400,
        env=(f"NUMASPARK_K8S_BINS={bins}",),
    )


def _ran_the_checks_and_powered_off(guest: dict) -> None:
    """The guest finished its checks and its command exited 0 (shared by every boot)."""
    assert any(line.startswith("NUMASPARK-CHECKS END") for line in guest["lines"]), (
        "the guest never finished its checks: see test-artifacts/numa-guest/console.log"
    )
    assert guest["code"] == 0, f"the checks exited {guest['code']} (125: the guest ended first)"


def _check_passed(guest: dict, name: str) -> None:
    """The guest's last report of check ``name`` is a pass; skipped where the environment
    leaves that proof out."""
    if name.startswith("plugin-") and os.environ.get("NUMASPARK_GUEST_PLUGIN", "1") != "1":
        pytest.skip("NUMASPARK_GUEST_PLUGIN=0 leaves the plugin's proof out")
    if (
        name == "plugin-interleave-thread-policy"
        and os.environ.get("NUMASPARK_GUEST_INTERLEAVE", "1") != "1"
    ):
        pytest.skip("NUMASPARK_GUEST_INTERLEAVE=0 leaves the plugin's interleave proof out")
    reported = [
        line
        for line in guest["lines"]
        if line.startswith("NUMASPARK-CHECK ") and f" {name}:" in line
    ]
    assert reported, f"{name} was never reported: see test-artifacts/numa-guest/console.log"
    if reported[-1].startswith(f"NUMASPARK-CHECK SKIP {name}:"):  # the guest cannot say it
        pytest.skip(reported[-1].partition(": ")[2])
    assert reported[-1].startswith(f"NUMASPARK-CHECK PASS {name}:"), reported[-1]


def test_guest_ran_the_checks_and_powered_off(guest):
    _ran_the_checks_and_powered_off(guest)


@pytest.mark.parametrize("name", CHECKS)
def test_check_passed_in_the_guest(guest, name):
    _check_passed(guest, name)


@pytest.mark.skipif(not SPARK, reason="NUMASPARK_GUEST_SPARK=1 asks for it (3 minutes more)")
def test_spark_worker_per_node_in_the_guest(guest):
    _check_passed(guest, "spark-worker-per-node")


def test_four_node_guest_ran_the_checks_and_powered_off(guest_four):
    _ran_the_checks_and_powered_off(guest_four)


@pytest.mark.parametrize("name", CHECKS_FOUR)
def test_check_passed_in_the_four_node_guest(guest_four, name):
    _check_passed(guest_four, name)


def test_any_command_on_three_nodes_of_two_cpus(tmp_path):
    """scripts/numa-guest.sh for any command: a three-node guest of two vCPUs per node (six
    vCPUs on this two-core machine), the command's output on stdout, its exit status passed
    through. About 20 s."""
    done = subprocess.run(
        [
            "bash",
            str(ROOT / "scripts/numa-guest.sh"),
            "--nodes",
            "3",
            "--cpus-per-node",
            "2",
            "--memory-per-node",
            "1G",
            "--log",
            str(tmp_path / "console.log"),
            "--",
            "sh",
            "-c",
            "numactl --hardware; exit 7",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 7, done.stderr
    assert "available: 3 nodes (0-2)" in done.stdout
    assert "node 2 cpus: 4 5" in done.stdout
    assert "NUMASPARK-GUEST" not in done.stdout  # the markers stay in the console log


@pytest.mark.skipif(
    os.environ.get("NUMASPARK_GUEST_YARN", "1") != "1",
    reason="NUMASPARK_GUEST_YARN=0 leaves YARN's own binding out",
)
def test_yarns_own_node_binding_in_the_guest(guest_yarn):
    """Issue 33: a NodeManager with the settings `plan --target yarn` renders binds each
    container it launches to a node (tests/guest/yarncheck.py)."""
    _check_passed(guest_yarn, "yarn-node-binding")


@pytest.mark.skipif(
    os.environ.get("NUMASPARK_GUEST_PLUGIN", "1") != "1",
    reason="NUMASPARK_GUEST_PLUGIN=0 leaves the plugin's proofs out",
)
@pytest.mark.parametrize("name", ("python-workers-node", "python-workers-core"))
def test_python_workers_stay_with_their_executor_in_the_guest(guest_python, name):
    """Issue 40: every Python worker of an executor (pyspark.daemon and the workers it forks)
    on its executor's node CPUs with at least 90% of its anonymous pages there, at --bind node;
    at --bind core with two-core executors, not all on one core (tests/guest/pyworkers.py)."""
    _check_passed(guest_python, name)


@pytest.mark.skipif(
    os.environ.get("NUMASPARK_GUEST_PLUGIN", "1") != "1",
    reason="NUMASPARK_GUEST_PLUGIN=0 leaves the plugin's proofs out",
)
@pytest.mark.parametrize("name", ("topology-gpus-per-node", "device-node-binding"))
def test_executors_bound_by_their_devices_in_the_guest(guest_devices, name):
    """Issue 50: a stand-in GPU on each node, which the kernel (sysfs ``numa_node``) and
    ``numaspark topology`` place alike; a plain standalone worker offering them through the
    shipped discovery script, a plain spark-submit of plan's spark-defaults.conf (the plugin at
    level node, one GPU per executor): each executor, with the GPU the worker handed it, has
    every thread on that GPU's node CPUs and at least 90% of its anonymous pages there, read
    from the guest's /proc by the check (tests/guest/gpus.py)."""
    _check_passed(guest_devices, name)


@pytest.mark.skipif(
    os.environ.get("NUMASPARK_GUEST_PLUGIN", "1") != "1",
    reason="NUMASPARK_GUEST_PLUGIN=0 leaves the plugin's proofs out",
)
def test_executors_that_come_and_go_stay_placed_in_the_guest(guest_churn):
    """Issue 57, item 5: two applications of three bursts each under dynamic allocation on a
    plain cluster, one executor killed with SIGKILL and one decommissioned by Spark. The check
    samples the guest's /proc each second (60 samples at least): every bound executor on one
    node's CPUs with at least 90% of its anonymous pages there, the nodes never more than one
    executor apart, the killed executor's slot taken again (tests/guest/churn.py). What the
    guest cannot say is how fast: its JVMs run under emulation."""
    _check_passed(guest_churn, "executor-churn")


@pytest.mark.parametrize(
    "name", ("k8s-kubelet-managers", "k8s-topology-refusal", "k8s-plugin-from-inside")
)
def test_executor_pods_placed_both_ways_on_two_nodes(guest_k8s, name):
    """Issue 60, item 5: the local Kubernetes (tests/k8s/) inside the two-node guest. Way (a):
    the kubelet with numaspark's kubelet-config.yaml gives each of two executor pods the CPUs
    and memory of one node, a different node each (their containers' cgroup cpusets, their
    threads' CPUs and their pages, read from the guest's /proc by the check); a pod of 3 CPUs,
    which no node holds, is refused by the Topology Manager in one line, no pod left. Way (b):
    the kubelet as it comes, the plugin binding each executor from inside its pod, a node each
    (tests/guest/kube.py)."""
    _check_passed(guest_k8s, name)


@pytest.mark.parametrize(
    "name", ("code-patched-whole", "jvm-class-loading-stress", "avx-state-kept")
)
def test_jvms_survive_stress_on_the_guests_cpu(guest_jvm_stress, name):
    """Issue 57, item 0: the guest's JVMs died of SIGSEGV and SIGILL in C1-compiled code in
    some boots. The cause: QEMU's multi-threaded TCG tore instructions that one vCPU patched
    while another ran them, as HotSpot patches its compiled code (tests/guest/xmodcheck.c);
    the guest now runs its vCPUs on one thread (build.py, GUEST_ACCEL), and no patch may tear.
    Nine JVMs, three at a time on four vCPUs, each loading Spark's classes on four threads with
    the plain cluster daemons' JIT settings: none may crash. With ``NUMASPARK_GUEST_CPU=max``
    the same boot also checks that the YMM registers survive context switches and signals under
    QEMU's emulation (tests/guest/jvmstress.py); this is the boot to try a CPU model, an
    accelerator (NUMASPARK_GUEST_ACCEL=tcg tears code) or a JIT setting
    (NUMASPARK_GUEST_JAVA_OPTIONS) with."""
    _check_passed(guest_jvm_stress, name)
