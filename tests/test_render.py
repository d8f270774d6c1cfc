"""Renderers on fixed inputs: the exact numactl argv, Spark conf, YARN and k8s settings."""

import pytest
from conftest import run_cli, topology_file

from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    Mode,
    Platform,
    k8s_settings,
    numactl_argv,
    placement_to_dict,
    plan,
    spark_conf,
    spark_defaults_text,
    yarn_settings,
)
from numaspark.placement.plugin import DEFAULT_LOCK_DIR, LEVEL_KEY, MEM_POLICY_KEY
from numaspark.topology import load_xml
from numaspark.units import GIB


@pytest.fixture(scope="module")
def xeon24():
    return load_xml(topology_file("24em64t-2n6c2t-pci.xml"))


def test_spark_conf_standalone(xeon24):
    placement = plan(
        xeon24, Layout(executors_per_node=1, memory_per_executor=8 * GIB), Binding.NODE
    )
    assert spark_conf(placement) == {
        "spark.executor.instances": "2",
        "spark.executor.cores": "12",
        "spark.executor.memory": "8g",
        "spark.cores.max": "24",
        "spark.driver.cores": "1",
        "spark.driver.memory": "1g",
    }
    text = spark_defaults_text(spark_conf(placement))
    assert text.splitlines()[0] == "spark.executor.instances  2"


def test_spark_conf_local_and_use_numa(xeon24):
    placement = plan(xeon24, Layout(mode=Mode.LOCAL, memory_per_executor=4 * GIB))
    assert spark_conf(placement) == {
        "spark.master": "local[24]",
        "spark.driver.memory": "4g",
        "spark.driver.extraJavaOptions": "-XX:+UseNUMA",  # one JVM over two nodes
    }


def test_numactl_argv_per_level(xeon24):
    layout = Layout(executors=2, cores_per_executor=2, memory_per_executor=4 * GIB)
    assert numactl_argv(plan(xeon24, layout, Binding.NODE).executors[1]) == [
        "numactl",
        "--cpunodebind=1",
        "--membind=1",
    ]
    assert numactl_argv(plan(xeon24, layout, Binding.CORE).executors[0]) == [
        "numactl",
        "--physcpubind=0,2,12,14",
        "--membind=0",
    ]
    assert numactl_argv(plan(xeon24, layout, Binding.PU).executors[0]) == [
        "numactl",
        "--physcpubind=0,2",
        "--membind=0",
    ]
    assert numactl_argv(plan(xeon24, layout, Binding.NONE).executors[0]) == []


def test_yarn_settings(xeon24):
    """YARN-5764's keys as NumaResourceAllocator.init reads them with read-topology false:
    node-ids a comma list, <N>.memory a long in MB (Configuration.getLong: no unit suffix),
    <N>.cpus an int; each node holds its executors' containers, rounded up as YARN's scheduler
    rounds them (minimum allocation 1024 MB), plus the application master's; and no
    LinuxContainerExecutor (YARN-11196: the default container executor suffices)."""
    placement = plan(
        xeon24, Layout(executors_per_node=1, memory_per_executor=8 * GIB), Binding.NODE
    )
    settings = yarn_settings(placement, xeon24)
    assert settings["yarn-site"] == {
        "yarn.nodemanager.numa-awareness.enabled": "true",
        "yarn.nodemanager.numa-awareness.read-topology": "false",
        "yarn.nodemanager.numa-awareness.node-ids": "0,1",
        "yarn.nodemanager.numa-awareness.numactl.cmd": "/usr/bin/numactl",
        "yarn.nodemanager.numa-awareness.0.memory": "10240",  # 8192 + 819 -> 9216, + AM 1024
        "yarn.nodemanager.numa-awareness.0.cpus": "13",  # 12 + the AM's vcore
        "yarn.nodemanager.numa-awareness.1.memory": "10240",
        "yarn.nodemanager.numa-awareness.1.cpus": "13",
        "yarn.nodemanager.resource.memory-mb": "19456",  # 2 x 9216 + 1024
        "yarn.nodemanager.resource.cpu-vcores": "25",
    }
    assert not any("container-executor" in key for key in settings["yarn-site"])
    assert "YARN-11196" in settings["why"]["container executor"]
    assert settings["spark"]["spark.executor.memoryOverhead"] == "819m"
    unbound = yarn_settings(plan(xeon24, Layout(executors=2, memory_per_executor=GIB)), xeon24)
    assert unbound["yarn-site"]["yarn.nodemanager.numa-awareness.enabled"] == "false"
    assert "why" not in unbound


def test_yarn_node_figures_parse_as_numa_resource_allocator_reads_them(xeon24):
    """Every node id listed has its memory and cpus as plain integers, on every level and
    the four-node server too (a value Java's Long.parseLong refuses stops the NodeManager)."""
    four = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))
    for topo in (xeon24, four):
        for binding in (Binding.NODE, Binding.CORE, Binding.PU):
            yarn = yarn_settings(
                plan(topo, Layout(executors=4, cores_per_executor=2), binding), topo
            )["yarn-site"]
            ids = yarn["yarn.nodemanager.numa-awareness.node-ids"].split(",")
            for node in ids:
                assert int(yarn[f"yarn.nodemanager.numa-awareness.{node}.memory"]) > 0
                assert int(yarn[f"yarn.nodemanager.numa-awareness.{node}.cpus"]) > 0
            per_node = sum(int(yarn[f"yarn.nodemanager.numa-awareness.{n}.memory"]) for n in ids)
            assert per_node >= int(yarn["yarn.nodemanager.resource.memory-mb"])


def test_k8s_settings(xeon24):
    layout = Layout(executors=4, cores_per_executor=2, memory_per_executor=4 * GIB)
    settings = k8s_settings(plan(xeon24, layout, Binding.CORE), xeon24)
    kubelet = settings["kubelet"]
    assert kubelet["cpuManagerPolicy"] == "static"
    assert kubelet["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}
    assert kubelet["topologyManagerPolicy"] == "single-numa-node"
    assert kubelet["memoryManagerPolicy"] == "Static"
    assert kubelet["reservedSystemCPUs"] == "8-11,20-23"
    assert (
        settings["spark"]["spark.kubernetes.executor.request.cores"] == "4"
    )  # 2 cores x 2 threads
    assert settings["spark"]["spark.kubernetes.executor.limit.cores"] == "4"
    assert settings["spark"]["spark.executor.cores"] == "2"
    straddling = plan(
        xeon24,
        Layout(executors=1, cores_per_executor=16, memory_per_executor=4 * GIB),
        Binding.NODE,
    )
    assert k8s_settings(straddling, xeon24)["kubelet"]["topologyManagerPolicy"] == "restricted"
    assert k8s_settings(plan(xeon24, layout), xeon24)["kubelet"] == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "none",
    }


def test_placement_json(xeon24):
    data = placement_to_dict(plan(xeon24, Layout(executors=2), Binding.NODE))
    assert data["schema"] == "numaspark.placement/1"
    assert data["topology"]["fingerprint"] == xeon24.fingerprint
    assert [j["role"] for j in data["jvms"]] == ["driver", "executor", "executor"]
    assert data["jvms"][1]["prefix"] == ["numactl", "--cpunodebind=0", "--membind=0"]
    assert data["jvms"][1]["heap"] == data["jvms"][2]["heap"]  # one spark.executor.memory


def test_node_binding_on_yarn_and_k8s_offers_the_plugin_from_inside_never_both(xeon24):
    """The cluster manager's own binding (admin rights) or the plugin's from inside (none):
    the manager's Spark conf leaves the plugin at level none; the plugin's alternative is
    level node, starts unbound (no -XX:+UseNUMA) with -XX:ActiveProcessorCount of a node's
    CPUs, and preferred memory unless another policy was asked. On a saved 2-node server."""
    placement = plan(xeon24, Layout(executors=2, cores_per_executor=6), Binding.NODE)
    yarn = yarn_settings(placement, xeon24)
    assert yarn["spark"][LEVEL_KEY] == "none" and MEM_POLICY_KEY not in yarn["spark"]
    inside = yarn["spark-plugin"]
    assert inside[LEVEL_KEY] == "node" and MEM_POLICY_KEY not in inside  # preferred: default
    assert inside["spark.executor.extraJavaOptions"] == "-XX:ActiveProcessorCount=12"
    assert set(yarn["which"]) == {"yarn-site + spark", "spark-plugin"}
    assert "admin rights" in yarn["which"]["yarn-site + spark"]
    k8s = k8s_settings(placement, xeon24, MemPolicy.INTERLEAVE)
    assert k8s["spark-plugin"][MEM_POLICY_KEY] == "interleave"
    assert (
        k8s["spark-plugin"]["spark.kubernetes.executor.volumes.hostPath.numaspark-locks.mount.path"]
        == DEFAULT_LOCK_DIR
    )
    cores = plan(xeon24, Layout(executors=2, cores_per_executor=6), Binding.CORE)
    assert "spark-plugin" not in yarn_settings(cores, xeon24)  # core: the plugin pins tasks
    assert yarn_settings(cores, xeon24)["spark"][LEVEL_KEY] == "core"


def test_a_standalone_fragment_to_paste(tmp_path, xeon24):
    placement = plan(xeon24, Layout(executors=2, cores_per_executor=6), Binding.NODE)
    conf = Platform.STANDALONE.settings(placement, xeon24)["spark-defaults.conf"]
    assert conf[LEVEL_KEY] == "node" and "spark.jars" not in conf
    assert conf["spark.executor.extraClassPath"] == conf["spark.driver.extraClassPath"]
    shown = run_cli(
        "plan",
        "--xml",
        topology_file("24em64t-2n6c2t-pci.xml"),
        "--executors",
        "2",
        "--cores-per-executor",
        "6",
        "--bind",
        "node",
        "--target",
        "standalone",
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert any(line.split() == [LEVEL_KEY, "node"] for line in lines)
    assert any(
        line.split()[:1] == ["spark.executor.extraClassPath"] and line.split()[1:] for line in lines
    )  # the path on the same line: pasted whole


def test_yarn_and_k8s_count_the_python_workers_memory_in_the_container(xeon24):
    """spark.executor.pyspark.memory is added by Spark to each executor's container or pod:
    the NodeManager's node sizes and the pod's memory count it, and Spark's side sets it."""
    placement = plan(
        xeon24, Layout(executors_per_node=1, memory_per_executor=8 * GIB), Binding.NODE
    )
    yarn = yarn_settings(placement, xeon24, python_memory=2 * GIB)
    assert (
        yarn["yarn-site"]["yarn.nodemanager.numa-awareness.0.memory"] == "12288"
    )  # 8192 + 819 + 2048 -> 11264, + AM
    assert yarn["yarn-site"]["yarn.nodemanager.resource.memory-mb"] == "23552"  # 2 x 11264 + 1024
    assert yarn["spark"]["spark.executor.pyspark.memory"] == "2g"
    assert "spark.executor.pyspark.memory" not in yarn_settings(placement, xeon24)["spark"]
    layout = Layout(executors=4, cores_per_executor=2, memory_per_executor=4 * GIB)
    pods = k8s_settings(plan(xeon24, layout, Binding.CORE), xeon24, python_memory=GIB)
    without = k8s_settings(plan(xeon24, layout, Binding.CORE), xeon24)

    def memory(settings: dict) -> str:
        container = settings["executor-pod-template"]["spec"]["containers"][0]
        return container["resources"]["limits"]["memory"]

    assert memory(without) == "4505Mi" and memory(pods) == "5529Mi"  # 4096 + 409 (+ 1024)
    assert pods["spark"]["spark.executor.pyspark.memory"] == "1g"


def test_python_memory_is_for_yarn_and_k8s_only(xeon24):
    proc = run_cli(
        "plan", "--xml", topology_file("24em64t-2n6c2t-pci.xml"), "--python-memory", "2g"
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "--target yarn or k8s" in proc.stderr
    ok = run_cli(
        "plan",
        "--xml",
        topology_file("24em64t-2n6c2t-pci.xml"),
        "--target",
        "yarn",
        "--executors-per-node",
        "1",
        "--python-memory",
        "2g",
        "--json",
    )
    assert ok.returncode == 0, ok.stderr
    assert '"spark.executor.pyspark.memory": "2g"' in ok.stdout


def test_a_plan_for_yarn_or_kubernetes_is_headed_by_its_manager_not_standalone_mode():
    for target, heading in (
        ("yarn", "Placement by YARN's NodeManager (yarn-site.xml, spark-defaults.conf): "),
        ("k8s", "Placement by the kubelet's managers (kubelet-config.yaml, "),
        ("spark", "Placement: "),
    ):
        proc = run_cli(
            "plan",
            "--xml",
            topology_file("24em64t-2n6c2t-pci.xml"),
            "--target",
            target,
            "--executors-per-node",
            "1",
            "--bind",
            "node",
            check=True,
        )
        title = proc.stdout.splitlines()[0]
        assert title.startswith(heading) and "2 executor(s)" in title, title
        assert "standalone mode" not in title or target == "spark", title
        assert "bind node" in title, title
