"""Issue 50's proof on a real kernel: executors bound by the devices Spark gave them.

The guest booted with ``--gpus-per-node 1`` (build.py ``Shape.qemu_devices``) has on each NUMA
node a PCI expander bridge whose ``numa_node`` the kernel reports for what sits behind it, and
behind it a ``bochs-display``: PCI class 0380, "other display controller", which numaspark's
topology and the plugin's ``PciDevices`` count as a ``gpu`` (QEMU has no 3D controller, 0302,
and its VGA, 0300 from vendor 1234, is a console ``display`` by numaspark's rule, as a server's
ASPEED is). Spark never touches a GPU itself: it schedules addresses, and the plugin maps them
to PCI functions in sysfs, so a display controller stands in for a GPU without loss.

``topology_gpus``: what the kernel says (sysfs, read here) and what ``numaspark topology
--json`` lists agree, one GPU on each node. ``device_binding``: ``numaspark plan
--gpus-per-executor 1 --target standalone --out DIR`` for this guest; a plain standalone
master and worker (Spark's own classes, unbound), the worker offering the GPUs through the
shipped discovery script (``spark.worker.resource.gpu.discoveryScript``, the script plan's
spark-defaults.conf names, told the host's planned addresses in ``NUMASPARK_RESOURCE_GPU``);
a plain ``spark-submit --properties-file DIR/spark-defaults.conf`` of ``holdjob.py`` (the plugin
at level node, one GPU per executor, one executor per GPU). Node 1's first node slots are held
by the check (``hold_slots``), so an executor placed without its GPU would go to node 0
whatever its order of start. After the first job, for each executor JVM found in /proc: the
GPU Spark's worker handed it (the ``--resourcesFile`` its command line names, which the worker
wrote), that GPU's bus id and ``numa_node`` (sysfs), every thread's Cpus_allowed_list
(/proc/PID/task/TID/status), its Mems_allowed_list and its resident anonymous pages per node
(/proc/PID/numa_maps): all its threads on exactly its GPU's node CPUs, at least 90% of those
pages on that node, one executor for each GPU.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from checks import (
    HERE,
    NODES,
    PlainCluster,
    executor_pids,
    mib,
    node_cpus,
    numaspark,
    placed,
)

GPU_CLASSES = ("0x0302", "0x0380")  # 3D and other display controllers: a gpu by any rule
GPUS_PER_NODE = int(os.environ.get("NUMASPARK_GUEST_GPUS_PER_NODE", "0"))
# NUMASPARK_GUEST_DEVICE_RESOURCE=none: the plugin told to bind by no resource, to see the
# check fail (set by hand: scripts/numa-guest.sh -- env NAME=none python checks.py devices)
BREAK = os.environ.get("NUMASPARK_GUEST_DEVICE_RESOURCE", "")


def pci_gpus() -> list[tuple[str, int]]:
    """(bus id, numa_node) of each GPU, read from sysfs here, in bus id order: Spark's
    address i (nvidia-smi's numbering, the plan's) names the i-th."""
    found = []
    for device in sorted(Path("/sys/bus/pci/devices").iterdir()):
        if (device / "class").read_text().strip()[:6] in GPU_CLASSES:
            found.append((device.name, int((device / "numa_node").read_text())))
    return found


def topology_gpus() -> str:
    """One GPU on each node, by the kernel, and ``numaspark topology --json`` says the same."""
    gpus = pci_gpus()
    listed = json.loads(numaspark("topology", "--json")).get("devices") or []
    theirs = sorted((d["pci_busid"], d["node"]) for d in listed if d["kind"] == "gpu")
    found = (
        f"sysfs: {', '.join(f'{b} numa_node {n}' for b, n in gpus)}; numaspark topology: "
        f"{', '.join(f'{b} node {n}' for b, n in theirs)}"
    )
    nodes = sorted(n for _, n in gpus)
    assert nodes == sorted(list(range(NODES)) * GPUS_PER_NODE), f"GPUs not on every node: {found}"
    assert theirs == gpus, f"numaspark's topology differs from sysfs: {found}"
    return found


def executor_gpus(pid: int) -> tuple[str, list[str]]:
    """Executor ``pid``'s id and the GPU addresses Spark's worker handed it: the worker writes
    them to the file it names on the executor's command line (``--resourcesFile``)."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    assert "--resourcesFile" in argv, f"executor {pid} was handed no resources: {argv[-12:]}"
    allocations = json.loads(Path(argv[argv.index("--resourcesFile") + 1]).read_text())
    gpus = [a for r in allocations if r["id"]["resourceName"] == "gpu" for a in r["addresses"]]
    return argv[argv.index("--executor-id") + 1], gpus


def mems_allowed(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text()
    return re.search(r"^Mems_allowed_list:\s*(\S+)", status, re.M).group(1)


def plan_files(out: Path) -> tuple[Path, list[str], str]:
    """``plan --gpus-per-executor 1 --target standalone --out`` for this guest: its
    spark-defaults.conf, the host's planned addresses (worker-resources.json) and the discovery
    script spark-defaults.conf names (the one in numaspark's wheel)."""
    shutil.rmtree(out, ignore_errors=True)
    numaspark(
        "plan",
        "--gpus-per-executor",
        "1",
        "--bind",
        "node",
        "--memory-per-executor",
        "512m",
        "--target",
        "standalone",
        "--out",
        str(out),
    )
    defaults = out / "spark-defaults.conf"
    conf = dict(
        line.split(None, 1) for line in defaults.read_text().splitlines() if line[:1] not in "#"
    )
    (resources,) = json.loads((out / "worker-resources.json").read_text())
    return defaults, resources["addresses"], conf["spark.executor.resource.gpu.discoveryScript"]


def submit(master: str, defaults: Path, work: Path, env: dict) -> subprocess.Popen:
    """A plain spark-submit of holdjob.py with plan's spark-defaults.conf: returned once its
    first job is done (its executors then hold until ``work/go`` exists)."""
    from numaspark.spark.home import spark_home

    extra_java = "-XX:TieredStopAtLevel=1"  # C1 only: under emulation C2 costs minutes
    plan_java = next(
        line.split(None, 1)[1]
        for line in defaults.read_text().splitlines()
        if line.startswith("spark.executor.extraJavaOptions")
    )
    argv = [
        str(spark_home() / "bin" / "spark-submit"),
        "--master",
        master,
        "--properties-file",
        str(defaults),
        "--conf",
        f"spark.executor.extraJavaOptions={plan_java} {extra_java}",
        "--conf",
        f"spark.driver.extraJavaOptions={extra_java}",
        "--conf",
        "spark.driver.memory=512m",
        "--conf",
        f"spark.cores.max={NODES * GPUS_PER_NODE}",
        "--conf",
        f"spark.numaspark.affinity.lockDir={work}/locks",
        "--conf",
        f"spark.numaspark.affinity.placementFile={work}/placement.jsonl",
        "--conf",
        "spark.scheduler.minRegisteredResourcesRatio=1.0",
        "--conf",
        "spark.scheduler.maxRegisteredResourcesWaitingTime=1200s",
        # the check's own break (docs/tests.md): "none" binds by no resource
        *(["--conf", f"spark.numaspark.affinity.deviceResource={BREAK}"] if BREAK else []),
        str(HERE / "holdjob.py"),
        str(work),
        str(NODES * GPUS_PER_NODE),
        "900",
    ]
    print("$ " + " ".join(argv), flush=True)
    app = subprocess.Popen(
        argv, stdout=(work / "submit.log").open("w"), stderr=subprocess.STDOUT, env=env
    )
    started = shown = time.monotonic()
    while not (work / "first-job-done").exists():
        if time.monotonic() > shown + 120:  # progress, for a boot cut short by its timeout
            shown = time.monotonic()
            print(f"waiting {shown - started:.0f} s: executors {executor_pids()}", flush=True)
        if app.poll() is not None or time.monotonic() > started + 2000:
            if app.poll() is None:
                app.kill()
                app.wait()
            raise AssertionError(
                f"no first job (spark-submit exited {app.poll()}): {logs_of(work)}"
            )
        time.sleep(2)
    print(f"first job done {time.monotonic() - started:.0f} s after submission", flush=True)
    return app


def logs_of(work: Path) -> str:
    """The tails of spark-submit's, the daemons' and each executor's logs, on one line."""
    logs = [work / "submit.log", work / "master.log", work / "worker.log"]
    logs += sorted(work.glob("work/app-*/*/stderr"))
    tails = (f"{log}: {log.read_text(errors='replace')[-1200:]}" for log in logs if log.is_file())
    return " | ".join(tails).replace("\n", " | ")


def reported_devices(work: Path) -> dict[int, str]:
    """The plugin's own word, for the figures only: each pid's ``devices`` in its last report."""
    found = {}
    path = work / "placement.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        report = json.loads(line)
        found[report.get("pid")] = f"choice {report.get('choice')!r}; devices " + ", ".join(
            f"{d.get('resource')} {d.get('address')} "
            + (f"{d['pci_busid']} node {d.get('node')}" if "pci_busid" in d else d.get("unknown"))
            for d in report.get("devices") or []
        )
    return found


def hold_slots(lock_dir: Path, executors: int) -> list:
    """Every node but 0 made busy: its first ``executors`` node slots locked by this check as
    the plugin's NodeChooser locks them (``node-N.slot-K.lock``, an fcntl lock), as if another
    application's executors ran there. An executor placed without its devices then takes node
    0 whatever its order of start (slot K of node 0 comes before slot K of node 1); only its
    GPU's node puts it on another."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    held = []
    for node in range(1, NODES):
        for slot in range(executors):
            handle = (lock_dir / f"node-{node}.slot-{slot}.lock").open("a+")
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(handle)
    return held


def device_binding() -> str:
    """Each executor of a plain standalone cluster bound to its GPU's node, judged from /proc."""
    from numaspark.spark.home import spark_env
    from numaspark.supervise.stop import stop_processes

    work = Path("/tmp/device-binding")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    defaults, addresses, script = plan_files(work / "plan")
    gpus = pci_gpus()
    # the order nvidia-smi and NVIDIA's getGpusResources.sh give: GPU 0 (on the last node) first
    offered = ",".join(sorted(addresses, key=int))
    cluster = PlainCluster(
        work,
        worker_env={
            "SPARK_WORKER_OPTS": f"-Dspark.worker.resource.gpu.amount={len(addresses)} "
            f"-Dspark.worker.resource.gpu.discoveryScript={script}",
            "NUMASPARK_RESOURCE_GPU": offered,
        },
    )
    app = None
    held = hold_slots(work / "locks", len(gpus))
    try:
        master = cluster.up()[1]
        began = time.monotonic()
        app = submit(master, defaults, work, spark_env())
        first_job_s = time.monotonic() - began
        cpus_of = node_cpus()
        seen = {}
        for pid in executor_pids():
            executor, handed = executor_gpus(pid)
            seen[pid] = {
                **placed(pid, cpus_of),
                "executor": executor,
                "gpus": handed,
                "mems": mems_allowed(pid),
            }
        (work / "go").write_text("")
        app.wait(timeout=900)
        assert app.returncode == 0, f"spark-submit exited {app.returncode}"
    finally:
        if app is not None and app.poll() is None:
            stop_processes([app.pid])
        cluster.down()
        for handle in held:
            handle.close()
    reported = reported_devices(work)
    worker_said = re.findall(
        r"gpu -> \[name: gpu, addresses: [^\]]*\]", (work / "worker.log").read_text()
    )
    found = [
        f"worker offered gpu {offered} (discovery script {Path(script).name}: "
        f"{worker_said[:1]}); held by the check: slots 0-{len(gpus) - 1} of node(s) "
        f"{','.join(map(str, range(1, NODES)))}; "
        f"cluster up {cluster.up_s:.0f} s, first job {first_job_s:.0f} s"
    ]
    problems = []
    for pid, s in sorted(seen.items(), key=lambda kv: kv[1]["executor"]):
        (address,) = s["gpus"] or ["?"]
        known = address.isdigit() and int(address) < len(gpus)
        busid, node = gpus[int(address)] if known else ("?", None)
        anon = sum(s["anon"].values())
        local = s["anon"].get(node, 0) / anon if anon else 0.0
        found.append(
            f"executor {s['executor']} pid {pid}: gpu {address} = {busid} on node "
            f"{node}; {s['threads']} threads, CPUs {','.join(map(str, sorted(s['allowed'])))} "
            f"(node {node}'s: {','.join(map(str, sorted(cpus_of.get(node, ()))))}); "
            f"Mems_allowed_list {s['mems']}; anon {local:.1%} on N{node} of "
            f"{anon / (1 << 20):.0f} MiB ({mib(s['anon'])}); plugin reported: "
            f"{reported.get(pid, 'nothing')}"
        )
        if node is None:
            problems.append(f"executor {pid}: gpu {s['gpus']} names no GPU of {gpus}")
        elif s["allowed"] != cpus_of[node]:
            problems.append(
                f"executor {pid}: threads on CPUs {sorted(s['allowed'])}, not node {node}'s "
                f"{sorted(cpus_of[node])} where its GPU {busid} is"
            )
        elif local < 0.9:
            problems.append(f"executor {pid}: {local:.1%} of its anonymous pages on node {node}")
    handed = sorted(a for s in seen.values() for a in s["gpus"])
    if len(seen) != len(gpus) or handed != sorted(str(i) for i in range(len(gpus))):
        problems.append(f"{len(seen)} executors with GPUs {handed}, want one each of {len(gpus)}")
    summary = " | ".join(found)
    assert not problems, "; ".join(problems) + " | " + summary
    return summary


def device_checks() -> list[tuple[str, object]]:
    """The checks of a guest with GPUs, in order, for checks.py's ``check``."""
    return [("topology-gpus-per-node", topology_gpus), ("device-node-binding", device_binding)]
