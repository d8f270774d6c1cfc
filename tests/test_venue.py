"""One venue for every command that runs Spark (issues 48 and 59): the options that say where
runs go parse into one `Venue` (this machine is a value, `HERE`); a study planned as a cluster
keeps the parts its realiser can realise and says why the others cannot run; a sweep spec
names its cluster in a [cluster] table. No JVM: real clusters at other addresses are tests/test_cluster_decide.py's.
Multi-node studies are planned on shared/topologies, as this machine has one node."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import run_cli, topology_file
from statuspage import recorded_status, serving

from numaspark.cli.options import ClusterOptions
from numaspark.decide.tune_runs import live_space
from numaspark.errors import UsageError
from numaspark.experiment import studies
from numaspark.experiment.characterize import experiment as characterize_experiment
from numaspark.experiment.characterize import one_node
from numaspark.experiment.placing import planned_topology
from numaspark.experiment.request import RunRequest
from numaspark.experiment.spec import at_venue, build, cluster_table
from numaspark.experiment.studies import StudyRequest
from numaspark.experiment.venue import HERE, NUMACTL_ON_HOSTS, PLUGIN, ClusterAt, SshHosts
from numaspark.placement import Layout, Mode
from numaspark.topology import load, load_synthetic, load_xml

FOUR_NODES = "96em64t-4n4d3ca2co-pci.xml"


def _hosts(names: str):
    return ClusterOptions(hosts=names).venue().hosts


def test_the_options_become_one_venue_here_a_value():
    assert ClusterOptions().venue() is HERE and HERE.here and HERE.name == "this machine"
    ref = ClusterOptions(master="spark://10.0.0.2:7077", executor_wait="20s", python="py3").venue()
    assert isinstance(ref, ClusterAt) and not ref.here
    assert (ref.master, ref.executor_wait_s, ref.python) == ("spark://10.0.0.2:7077", 20.0, "py3")
    assert ref.name == "spark://10.0.0.2:7077" and ref.realiser is PLUGIN
    hosts = ClusterOptions(hosts="a,b", driver_host="10.0.0.1").venue()
    assert isinstance(hosts, SshHosts)
    assert hosts.name == "hosts a,b" and hosts.realiser is NUMACTL_ON_HOSTS
    # a spark-submit line's --master, where the options name none
    assert ClusterOptions().venue("yarn").master == "yarn"


@pytest.mark.parametrize(
    "options, says",
    [
        (dict(driver_host="10.0.0.1"), "--driver-host is for a cluster on other hosts"),
        (dict(python="python3"), "--python is for a cluster on other hosts"),
        (dict(master="yarn", hosts="a"), "give one of --master and --hosts"),
        (dict(master="yarn", master_ui="http://x:8080"), "--master-ui is a standalone"),
        (dict(hosts="a", python="python3"), "on --hosts give each host's python"),
        (dict(master="yarn", executor_wait="0s"), "--executor-wait must be positive"),
        (dict(synthetic="pack:2 numa:2 core:4 pu:2"), "--synthetic describes the hosts of a"),
        (dict(hosts="a", synthetic="pack:1 core:2"), "--hosts are read with hwloc over SSH"),
    ],
)
def test_a_cluster_named_wrong_is_one_line(options, says):
    with pytest.raises(UsageError, match=says):
        ClusterOptions(**options).venue()


def test_xml_is_the_hosts_topology_of_any_master_one_meaning():
    """--xml/--synthetic name the topology of the machine the runs are on where numaspark
    cannot read it: for every --master (standalone, YARN, Kubernetes) the cluster's hosts,
    carried to every run it sends there. Planned here on a shared/ server's XML: this
    machine has one node."""
    xml = topology_file(FOUR_NODES)
    for master in ("spark://10.0.0.2:7077", "yarn", "k8s://https://10.0.0.9:6443"):
        ref = ClusterOptions(master=master, xml=xml).venue()
        assert len(ref.node_topology.cpu_nodes) == 4, master
        sent = RunRequest("wordcount").at(ref)
        assert sent.venue.node_topology is ref.node_topology
    assert ClusterOptions(master="yarn").venue().node_topology is None
    assert ClusterOptions(xml=xml).machine() is not None  # tune --replay: the table's machine


def test_planned_topology_says_the_hosts_topology_it_was_given():
    """A standalone master's workers are still the plan's nodes (its room), the given
    topology is the hosts' NUMA nodes (known, so --bind node sizes ActiveProcessorCount):
    the line that says where a study is planned says both."""
    ref = ClusterOptions(master="spark://127.0.0.1:7077", xml=topology_file(FOUR_NODES))
    with serving(recorded_status()) as ui:
        ref = dataclasses.replace(ref, master_ui=ui).venue()
        topology, said = planned_topology(ref)
        bare = planned_topology(dataclasses.replace(ref, node_topology=None))[1]
    assert said.startswith(bare)
    assert said.endswith("its hosts' NUMA topology as given (4 node(s), 96 CPUs)"), said


def test_a_request_sent_to_a_cluster_runs_there_in_standalone_mode():
    ref = ClusterOptions(
        master="spark://h:7077", python="python3.11", driver_host="10.0.0.1"
    ).venue()
    local = RunRequest("wordcount", layout=Layout(mode=Mode.LOCAL), spark_conf={"a": "1"})
    assert local.venue is HERE  # a request runs here unless sent elsewhere
    sent = local.at(ref)
    assert sent.layout.mode is Mode.STANDALONE and sent.venue.master == "spark://h:7077"
    assert sent.venue.driver_host == "10.0.0.1" and sent.venue.executor_wait_s == 300.0
    assert sent.spark_conf == {"spark.pyspark.python": "python3.11", "a": "1"}
    own = RunRequest("wordcount", spark_conf={"spark.pyspark.python": "mine"}).at(ref)
    assert own.spark_conf["spark.pyspark.python"] == "mine"  # the request's own key wins
    on_hosts = local.at(ClusterOptions(hosts="a,b", driver_host="10.0.0.1").venue())
    assert on_hosts.venue.inventory.driver_address == "10.0.0.1"
    assert on_hosts.venue.master_url is None and on_hosts.layout.mode is Mode.STANDALONE
    assert local.at(HERE).layout.mode is Mode.LOCAL  # here, local mode stays local
    with pytest.raises(dataclasses.FrozenInstanceError):
        sent.venue = HERE  # a request is a value: changed only by making another


def test_the_binding_study_through_the_plugin_keeps_unbound_and_node_bound_on_every_node():
    """Planned on a real four-node server's XML: from inside, the plugin cannot keep executors
    to some nodes nor put memory on another node, and balancing is switched here only: each
    part is a line naming its configurations; 4U and 4B stay."""
    topology = load_xml(topology_file(FOUR_NODES))
    study = studies.binding(StudyRequest(topology, "wordcount"), autonuma=PLUGIN.balancing)
    there = studies.study_at(study, ClusterAt(master="yarn"), topology)
    assert [c.note for c in there.experiment.configs] == ["4U", "4B"]
    assert there.baseline is None or there.baseline.startswith("4U")
    cannot = "\n".join(there.cannot)
    assert "autonuma (unbound, the kernel's NUMA balancing on): the kernel's NUMA" in cannot
    assert "1U standalone" in cannot and "executors cannot be kept to some of a host's" in cannot
    assert "local cpu0-mem0" in cannot and "remote memory needs JVMs numaspark starts" in cannot


def test_the_binding_study_with_numactl_on_hosts_keeps_every_node_count_and_remote_memory():
    """On hosts numaspark starts JVMs on (numactl there), the binding study on a four-node
    server keeps what it states: 1 to 4 nodes unbound and node-bound (1U .. 4B), then one
    executor per (CPU node, memory node) pair, its memory local on the diagonal and remote
    elsewhere; only the kernel's balancing is left to the hosts. The labels and nodes are
    written out here, not read from the study planned here, so the test fails if
    studies.py's node-count loop stops one short (`range(1, len(nodes))`: no 4U/4B), or if
    `_memory_pairs` puts each executor's memory on its CPUs' node (`mem_nodes` from
    `cpu_node`: every "remote" pair local)."""
    topology = load_xml(topology_file(FOUR_NODES))
    study = studies.binding(
        StudyRequest(topology, "wordcount"), autonuma=NUMACTL_ON_HOSTS.balancing
    )
    there = studies.study_at(study, SshHosts(hosts=_hosts("a")), topology)
    counts = ["1U", "1B", "2U", "2B", "3U", "3B", "4U", "4B"]
    pairs = [(cpu, mem) for cpu in range(4) for mem in range(4)]
    labels = [f"{'local' if c == m else 'remote'} cpu{c}-mem{m}" for c, m in pairs]
    configs = there.experiment.configs
    assert [c.note for c in configs] == counts + labels
    assert [(str(c.only_nodes), str(c.mem_nodes)) for c in configs[len(counts) :]] == [
        (str(c), str(m)) for c, m in pairs
    ]
    assert all(c.mem_nodes is None for c in configs[: len(counts)])
    # the one part left out: balancing is the hosts' own
    assert [line.split(":")[0] for line in there.cannot] == [
        "autonuma (unbound, the kernel's NUMA balancing on)"
    ]


def test_a_cluster_as_planned_says_so_not_this_machine():
    """A one-worker cluster is planned as one node: the study's one-node line names it."""
    topology = load_synthetic("package:1 numa:1 core:2 pu:1")
    study = studies.binding(StudyRequest(topology, "wordcount"), autonuma=PLUGIN.balancing)
    there = studies.study_at(study, ClusterAt(master="yarn"), topology)
    assert [c.note for c in there.experiment.configs] == ["1U", "1B"]
    assert any("the cluster as planned has 1" in line for line in there.cannot)
    assert not any("this machine" in line for line in there.cannot)


def test_on_one_node_characterize_runs_local_mode_unbound_only():
    """On a machine of one NUMA node (as this one), local mode bound to the node would be
    local mode unbound: not run twice. Two nodes run both."""
    one = characterize_experiment(load_synthetic("package:1 numa:1 core:2 pu:1"), ("wordcount",))
    assert [c.title for c in one.configs] == ["local, unbound", "standalone 2x1, core-bound"]
    assert one_node(load())  # this machine, as CI's
    two = characterize_experiment(load_synthetic("package:1 numa:2 core:2 pu:1"), ("wordcount",))
    assert [c.binding.value for c in two.configs] == ["none", "node", "core"]
    assert not one_node(load_synthetic("package:1 numa:2 core:2 pu:1"))


def test_local_mode_stays_here():
    """Characterize's local-mode configurations would run here: said, not sent."""
    topology = load_synthetic("package:1 numa:2 core:1 pu:1")
    planned = characterize_experiment(topology, ("wordcount",))
    experiment, cannot = at_venue(planned, ClusterAt(master="yarn"), topology)
    assert [c.title for c in experiment.configs] == ["standalone 2x1, core-bound"]
    assert cannot == [
        "local, unbound, local, node-bound: local mode runs its one JVM on this machine, not on "
        "the cluster"
    ]
    on_cluster = characterize_experiment(topology, ("wordcount",), cluster=True)
    kept, cannot = at_venue(on_cluster, ClusterAt(master="yarn"), topology)
    assert len(kept.configs) == 3 and not cannot
    # here, every configuration runs
    assert at_venue(planned, HERE, topology) == (dataclasses.replace(planned, venue=HERE), [])


def test_the_tuner_on_a_cluster_proposes_no_local_layout():
    topology = load_synthetic("package:2 numa:1 core:2 pu:1")
    space, configs = live_space(topology, "wordcount", "tiny", local=False)
    assert "local" not in space.values["mode"]
    assert all(c.layout.mode is Mode.STANDALONE for c in configs.values())
    here, _ = live_space(topology, "wordcount", "tiny")
    assert "local" in here.values["mode"]


def test_a_sweep_spec_names_its_cluster_in_a_table(tmp_path):
    data = {
        "workloads": [{"name": "wordcount"}],
        "cluster": {"master": "spark://10.0.0.2:7077", "executor_wait": "30s"},
    }
    table = cluster_table(data, "spec.toml")
    assert table == {"master": "spark://10.0.0.2:7077", "executor_wait": "30s"}
    ref = ClusterOptions(executor_wait="45s").over(ClusterOptions.from_table(table, "x")).venue()
    assert ref.master == "spark://10.0.0.2:7077" and ref.executor_wait_s == 45.0  # the option wins
    experiment = build(data, load_synthetic("package:1 numa:1 core:2 pu:1"))
    experiment.venue = ref
    request = experiment.request(experiment.configs[0], tmp_path)
    assert request.venue == ref and request.venue.executor_wait_s == 45.0
    with pytest.raises(UsageError, match=r"\[cluster\]: unknown key\(s\) mastr"):
        cluster_table({"cluster": {"mastr": "yarn"}}, "spec.toml")
    files = ClusterOptions.from_table({"hosts_file": "hosts.toml"}, str(tmp_path / "s.toml"))
    assert files.hosts_file == tmp_path / "hosts.toml"  # beside the spec, as its apps are
    # the hosts' topology, by a file beside the spec
    table = cluster_table({"cluster": {"master": "yarn", "xml": "hosts.xml"}}, "s.toml")
    given = ClusterOptions.from_table(table, str(tmp_path / "s.toml"))
    assert given.xml == tmp_path / "hosts.xml"


@pytest.mark.slow
def test_every_command_that_runs_spark_takes_the_same_cluster_options():
    for command in (
        ["run"],
        ["sweep"],
        ["characterize"],
        ["tune"],
        *(["study", kind] for kind in studies.STUDIES),
    ):
        said = run_cli(*command, "--help", check=True).stdout
        for option in (
            "--master",
            "--master-ui",
            "--executor-wait",
            "--driver-host",
            "--python",
            "--hosts",
            "--hosts-file",
            "--xml",
            "--synthetic",
        ):
            assert option in said, (command, option)


def test_a_cluster_that_does_not_answer_is_one_line_before_any_run(tmp_path):
    for command in (
        ["study", "binding", "wordcount"],
        ["tune", "wordcount", "--budget", "1"],
        ["characterize"],
    ):
        proc = run_cli(
            *command,
            "--master",
            "spark://127.0.0.1:1",
            "--master-ui",
            "http://127.0.0.1:1",
            "--out",
            str(tmp_path / "out"),
        )
        [line] = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and "does not answer at http://127.0.0.1:1" in line, line
    replayed = run_cli("tune", "--replay", str(tmp_path / "t.csv"), "--master", "yarn")
    assert replayed.returncode == 2 and "a --replay table runs nothing" in replayed.stderr


def test_a_spec_with_a_cluster_table_of_a_wrong_key_is_one_line(tmp_path):
    spec = Path(tmp_path / "s.toml")
    spec.write_text('[[workloads]]\nname = "wordcount"\n[cluster]\nmastr = "yarn"\n')
    proc = run_cli("sweep", str(spec), "--out", str(tmp_path / "out"))
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "[cluster]: unknown key(s) mastr" in line


def test_plan_for_a_cluster_at_another_address_is_sized_for_its_workers(tmp_path):
    """``plan --master``: the same venue as ``run --master``, planned on what the master says
    its workers have (a recorded Spark 4.3.0 master: one worker of 2 cores and 2048 MB), never
    on the machine plan runs on; a layout the workers cannot hold is one line. Here the master
    is a served status page: the address and its answers are real, a worker's speed is not."""
    with serving(recorded_status()) as ui:
        master = ["--master", "spark://127.0.0.1:7077", "--master-ui", ui]
        planned = run_cli(
            "plan", *master, "--executors", "2", "--cores-per-executor", "1", "--json", check=True
        )
        wide = run_cli("plan", *master, "--cores-per-executor", "4")
        yarn_ui = run_cli("plan", "--master", "yarn", "--master-ui", ui)
    executors = [j for j in json.loads(planned.stdout)["jvms"] if j["role"] == "executor"]
    assert [e["cores"] for e in executors] == [1, 1]  # the worker's 2 cores, one each
    assert all(e["heap_bytes"] < 2048 * 2**20 for e in executors)  # its 2048 MB, not 24 GiB
    [line] = wide.stderr.strip().splitlines()
    assert wide.returncode == 2 and "4" in line, line
    assert yarn_ui.returncode == 2 and "--master-ui is a standalone" in yarn_ui.stderr
