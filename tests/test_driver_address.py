"""Where the driver listens for a cluster on other hosts, and which of the user's settings
it keeps (issue 39): the route to the cluster (a UDP connect: no packet is sent), the
user's own keys from any source, the executors' Python, the UI of a user's application,
the Spark configuration a run really had (recorded fixtures), and Kubernetes nodes never
planned on this machine's topology. No JVM: the fast lane.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli, run_request
from netns import OtherHost
from recorded import APP_OK, RecordedTarget, targets

from numaspark import records
from numaspark.decide.advise import Subject
from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult
from numaspark.experiment.runner import Runner, RunRequest, run_workload
from numaspark.experiment.store import ResultStore
from numaspark.experiment.target import ExternalTarget
from numaspark.experiment.venue import ClusterAt
from numaspark.hosts import Host, Inventory, driver_address
from numaspark.hosts.route import NoRouteError, is_loopback, route_source
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement import Binding, Layout, Mode, plan
from numaspark.report.export import config_frame
from numaspark.spark.address import DriverAddress, address_for, cluster_hosts, local_ip
from numaspark.spark.app import AppRun, run_settings
from numaspark.spark.conf import merged
from numaspark.spark.home import free_port
from numaspark.spark.logs import LogFollower, UiWatch, ui_url
from numaspark.spark.pyfiles import PYFILES_KEY, package_zip
from numaspark.supervise.processes import ProcessTracker
from numaspark.topology import load, load_synthetic
from numaspark.workloads import application as apps
from numaspark.workloads.catalog import register_application

SQUARES = Path(__file__).resolve().parent / "apps" / "squares.py"
K8S = "k8s://https://127.0.0.1:6443"


def this_machines_addresses() -> list[str]:
    """The global IPv4 addresses this machine has (``ip -4 addr``)."""
    out = subprocess.run(
        ["ip", "-o", "-4", "addr", "show", "scope", "global"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return [line.split()[3].split("/")[0] for line in out.splitlines()]


# --- the route ------------------------------------------------------------------------------


def test_the_route_to_loopback_and_to_this_machines_own_addresses_leaves_from_them():
    assert route_source("127.0.0.1") == "127.0.0.1"
    assert route_source("localhost") in ("127.0.0.1", "::1")  # a name is resolved first
    own = this_machines_addresses()
    assert own, "this machine has a global address (ip -4 addr)"
    for address in own:
        assert route_source(address) == address and not is_loopback(address)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("0.0.0.0")


def test_no_route_or_no_name_is_one_line_that_names_driver_host():
    with pytest.raises(NoRouteError, match="does not resolve"):
        route_source("no-such-host.invalid")
    with pytest.raises(UsageError, match=r"spark://no-such-host.invalid:7077: .*--driver-host"):
        address_for("spark://no-such-host.invalid:7077")


def test_a_cluster_at_another_address_gets_the_address_the_route_to_it_leaves_from(
    tmp_path, monkeypatch
):
    """A namespace with its own address: the route to it leaves from this machine's end of
    the link, for a standalone master (each of an HA URL), YARN's ResourceManager (named in
    HADOOP_CONF_DIR) and a Kubernetes API server; the hosts' driver_address is the same."""
    with OtherHost() as host:
        assert route_source(host.address) == host.here
        for master in (
            f"spark://{host.address}:7077",
            f"spark://{host.address}:7077,{host.address}:7078",
            f"k8s://https://{host.address}:6443",
        ):
            chosen = address_for(master)
            assert chosen == DriverAddress(host.here, f"the route to {host.address} leaves from it")
        (tmp_path / "yarn-site.xml").write_text(
            "<configuration><property><name>yarn.resourcemanager.address</name>"
            f"<value>{host.address}:8032</value></property></configuration>"
        )
        monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
        assert cluster_hosts("yarn") == [host.address]
        assert address_for("yarn").address == host.here
        inventory = Inventory((Host(name="other", address=host.address),))
        assert driver_address(inventory) == host.here  # one route lookup for both


def test_a_cluster_on_this_machine_keeps_loopback_and_driver_host_overrides():
    for master in ("spark://127.0.0.1:7077", "spark://localhost:7077", K8S):
        assert address_for(master).address == "127.0.0.1"
    chosen = address_for("spark://127.0.0.1:7077", "10.0.0.5")
    assert chosen == DriverAddress("10.0.0.5", "--driver-host")
    assert chosen.line({}) == "the driver listens on 10.0.0.5: --driver-host"
    assert cluster_hosts("spark://[::1]:7077,h2:7077") == ["::1", "h2"]


# --- the user's settings, kept ----------------------------------------------------------------


def test_the_users_driver_address_and_ports_are_kept_from_any_source(tmp_path):
    """A properties file, a line's --conf and numaspark's --conf: each of the user's driver
    keys reaches spark-submit as they gave it, with no line saying it was replaced."""
    props = tmp_path / "app.properties"
    props.write_text("spark.driver.port 40100\nspark.blockManager.port 40200\n")
    app = apps.from_line(
        [
            "spark-submit",
            "--properties-file",
            str(props),
            "--conf",
            "spark.driver.bindAddress=0.0.0.0",
            str(SQUARES),
        ]
    )
    placement = plan(load_synthetic("pack:1 numa:1 core:2 pu:1"), Layout(executors=1), Binding.NONE)
    address = DriverAddress("10.1.2.3", "the route to m leaves from it")
    ours = {"spark.driver.host": "edge.example"}  # numaspark's --conf
    conf, notes = merged(app.conf(), run_settings(placement, tmp_path, address, app.conf(), ours))
    assert conf["spark.driver.port"] == "40100" and conf["spark.blockManager.port"] == "40200"
    assert (
        conf["spark.driver.bindAddress"] == "0.0.0.0"
        and conf["spark.driver.host"] == "edge.example"
    )
    assert notes == []
    assert local_ip(conf) == "0.0.0.0"  # asked for: the only way 0.0.0.0 is bound
    # nothing of the user's: numaspark's address for both; a host alone is also the binding
    assert address.conf({}) == {
        "spark.driver.host": "10.1.2.3",
        "spark.driver.bindAddress": "10.1.2.3",
    }
    assert address.conf({"spark.driver.host": "h"}) == {}
    assert address.conf({"spark.driver.bindAddress": "0.0.0.0"}) == {
        "spark.driver.host": "10.1.2.3"
    }
    assert address.line({}) == "the driver listens on 10.1.2.3: the route to m leaves from it"
    assert (
        address.line({"spark.driver.host": "h"})
        == "the driver listens on h: your spark.driver.host"
    )


def test_only_a_users_application_has_a_ui_on_a_free_port_of_the_drivers_address(tmp_path):
    placement = plan(load_synthetic("pack:1 numa:1 core:2 pu:1"), Layout(executors=1), Binding.NONE)
    address = DriverAddress("127.0.0.1", "loopback")
    suite = run_settings(placement, tmp_path, address, None, {})
    assert suite["spark.ui.enabled"] == "false"
    own = run_settings(placement, tmp_path, address, {}, {})
    assert "spark.ui.enabled" not in own and int(own["spark.ui.port"]) > 0
    for users in ({"spark.ui.enabled": "false"}, {"spark.ui.port": "4050"}):
        kept = run_settings(placement, tmp_path, address, users, {})
        assert "spark.ui.port" not in kept and "spark.ui.enabled" not in kept


def test_the_ui_url_is_read_from_the_drivers_log_as_it_grows(tmp_path):
    """Spark 4.3's lines (recorded from a real driver here), at the driver's address; a line
    still being written is read next time; an earlier Spark's line names the URL itself."""
    log = tmp_path / "spark-submit.log"
    follower = LogFollower(log)
    assert follower.new_text() == ""  # no log yet
    line = "26/11/26 16:25:45 INFO Utils: Successfully started service 'SparkUI' on port 4041."
    log.write_text(
        "26/11/26 16:25:45 INFO JettyUtils: Start Jetty 0.0.0.0:4041 for SparkUI\n" + line[:40]
    )
    assert ui_url(follower.new_text(), "10.214.7.1") is None
    with log.open("a") as more:
        more.write(line[40:] + "\n")
    assert ui_url(follower.new_text(), "10.214.7.1") == "http://10.214.7.1:4041"
    older = "INFO SparkUI: Bound SparkUI to 0.0.0.0, and started at http://edge:4040"
    assert ui_url(older) == "http://edge:4040"


def test_the_ui_is_said_once_its_port_answers_when_the_log_does_not_say(tmp_path):
    """A driver whose log is not at INFO: the port numaspark gave the UI answering is the
    sign (a real listening socket on loopback; a UI bound to 0.0.0.0 answers there too)."""
    port = free_port()
    watch = UiWatch(tmp_path / "quiet.log", "127.0.0.1", "0.0.0.0", str(port))
    assert watch.poll() is None  # nothing listens yet
    with socket.create_server(("127.0.0.1", port)):
        assert watch.poll() == f"http://127.0.0.1:{port}"
    assert UiWatch(tmp_path / "quiet.log", "h", "127.0.0.1", None).poll() is None


# --- the executors' Python on a cluster numaspark did not start -------------------------------


class _Captured:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, placement, job, job_args, run_dir, tracker, driver, options) -> AppRun:
        self.calls.append((driver, vars(options)))  # run_app's SubmitOptions, as a dict
        return AppRun(run_dir=run_dir, returncode=0)


@pytest.mark.usefixtures("plugin_jar")  # prepare() names the plugin's jar
def test_executors_run_plain_python3_or_the_users_never_this_venv(tmp_path, monkeypatch):
    captured = _Captured()
    monkeypatch.setattr("numaspark.experiment.target.run_app", captured)
    said: list[str] = []
    # no API server: the run's pods are neither watched nor deleted (tests/test_k8s_local.py)
    monkeypatch.setattr("numaspark.experiment.target.PodRun.start", lambda *args: None)
    target = ExternalTarget(ProcessTracker(), K8S, driver_host="10.9.9.9")
    placement = plan(load_synthetic("pack:1 numa:1 core:2 pu:1"), Layout(executors=1), Binding.NONE)
    target.prepare(placement, said.append)
    target.submit(placement, "job.py", [], tmp_path / "a", extra_conf={})
    target.submit(
        placement,
        "job.py",
        [],
        tmp_path / "b",
        extra_conf={"spark.pyspark.python": "/opt/py/bin/python3"},
    )
    (plain, _), (theirs, options) = captured.calls
    assert dict(plain.env) == {"PYSPARK_PYTHON": "python3"}
    assert plain.address == DriverAddress("10.9.9.9", "--driver-host")
    # their key wins over the environment in spark-submit; the driver, here, keeps this Python
    assert options["extra_conf"]["spark.pyspark.python"] == "/opt/py/bin/python3"
    assert options["extra_conf"]["spark.pyspark.driver.python"] == sys.executable
    assert said == ["the driver listens on 10.9.9.9: --driver-host"]  # said once


@pytest.mark.usefixtures("plugin_jar")  # prepare() names the plugin's jar
def test_a_built_in_ships_numaspark_to_executors_that_do_not_have_it(tmp_path, monkeypatch):
    """A built-in's tasks import numaspark's job modules, which the hosts' python3 lacks: the
    suite's runs on a cluster numaspark did not start ship its code as a zip (a user's
    application does not get it), and a Python without numaspark imports the jobs from it."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    captured = _Captured()
    monkeypatch.setattr("numaspark.experiment.target.run_app", captured)
    # no API server: the run's pods are neither watched nor deleted (tests/test_k8s_local.py)
    monkeypatch.setattr("numaspark.experiment.target.PodRun.start", lambda *args: None)
    target = ExternalTarget(ProcessTracker(), K8S, driver_host="10.9.9.9")
    placement = plan(load_synthetic("pack:1 numa:1 core:2 pu:1"), Layout(executors=1), Binding.NONE)
    target.prepare(placement, lambda message: None)
    target.submit(placement, "job.py", [], tmp_path / "a", extra_conf={})
    target.submit(placement, "app.py", [], tmp_path / "b", extra_conf={}, app_conf={})
    (_, suite), (_, users) = captured.calls
    shipped = Path(suite["extra_conf"][PYFILES_KEY])
    assert shipped == package_zip() and PYFILES_KEY not in users["extra_conf"]
    # -S: no site-packages, so this venv's numaspark is not importable; only the zip's is
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import numaspark.workloads.jobs.sort"
        " as job; print(job.__file__)"
    )
    ran = subprocess.run(
        [sys.executable, "-S", "-c", probe, str(shipped)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(shipped / "numaspark" / "workloads" / "jobs" / "sort.py")
    without = subprocess.run(
        [sys.executable, "-S", "-c", "import numaspark"], capture_output=True, check=False
    )
    assert without.returncode != 0  # the zip, not this venv, gave it
    assert package_zip() == shipped  # made once for the same sources


def test_python_and_driver_host_options_reach_the_request(monkeypatch):
    request = run_request(
        "numaspark run wordcount --master spark://10.0.0.1:7077 --python "
        "/opt/py/bin/python3 --driver-host 10.0.0.2",
        monkeypatch,
    )
    assert request.spark_conf == {"spark.pyspark.python": "/opt/py/bin/python3"}
    assert request.venue.driver_host == "10.0.0.2"


@pytest.mark.parametrize("option", [("--driver-host", "10.0.0.2"), ("--python", "python3")])
def test_python_and_driver_host_here_are_refused_in_one_line(option):
    ran = run_cli("run", "wordcount", *option)
    assert ran.returncode == 2 and "is for a cluster on other hosts" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1


# --- the Spark configuration a run really had ------------------------------------------------


def test_the_record_keeps_the_configuration_spark_ran_with_key_by_key(tmp_path):
    """A spark-submit line's --conf, replayed from the recorded squares run: the record has
    the environment event's properties, and the line's key as a setting results tabulate."""
    line = ["spark-submit", "--conf", "spark.sql.shuffle.partitions=7", str(SQUARES)]
    for partitions, args in (("7", ["o.json", "1000"]), ("9", ["p.json", "1000"])):
        line[2] = f"spark.sql.shuffle.partitions={partitions}"
        workload = register_application(
            apps.from_line([*line, *args], name=f"squares-{partitions}")
        )
        request = RunRequest(
            workload=workload.name,
            out=tmp_path / "out",
            collect=False,
            layout=Layout(mode=Mode.LOCAL),
        )
        (result,) = run_workload(
            request, load(), targets=targets(RecordedTarget(), RecordedTarget())
        )
        properties = parse_event_log(next((APP_OK / "eventlog").iterdir())).spark_properties
        assert result.app.spark_conf == properties and properties["spark.app.name"] == "squares"
        assert result.spec.spark_conf == {}  # numaspark's --conf: none
        assert result.settings == {"spark.sql.shuffle.partitions": partitions}
    stored = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert stored[0]["app"]["spark_conf"]["spark.app.name"] == "squares"
    results = ResultStore(tmp_path / "out").load()
    # advice reads the run's settings as keys: more partitions than the 7 it had
    assert (
        Subject(log=None, result=results[0]).more_partitions(4)["spark.sql.shuffle.partitions"]
        == "14"
    )
    # two configurations of one application (as a sweep names them) told apart by the key
    same = [
        replace(r, spec=replace(r.spec, workload="squares", config=r.spec.workload))
        for r in results
    ]
    assert sorted(config_frame(same)["partitions"]) == [7, 9]


def test_records_without_the_configuration_load_and_write_as_before():
    line = (APP_OK / "results.jsonl").read_text().splitlines()[0]
    data = json.loads(line)
    again = records.load(RunResult, data)
    assert again.app.spark_conf is None and again.app.ui_url is None
    assert records.dump(again)["app"] == data["app"]  # no new keys in an old record


# --- Kubernetes: the nodes' topology, never this machine's ---------------------------------------


def test_kubernetes_with_nothing_known_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))  # nothing learned
    ran = run_cli(
        "run", "wordcount", "--master", K8S, "--bind", "node", "--out", str(tmp_path / "o")
    )
    assert ran.returncode == 2
    (said,) = ran.stderr.strip().splitlines()
    assert "does not know the topology of the cluster's nodes" in said
    assert "--xml" in said and "--bind none --executors N --cores-per-executor C" in said
    # a first run at --bind none with its layout is planned from the layout alone
    request = RunRequest(
        workload="wordcount",
        venue=ClusterAt(master=K8S),
        out=tmp_path / "o",
        layout=Layout(executors=2, cores_per_executor=3),
    )
    lines: list[str] = []
    with Runner(load(), tmp_path / "o", progress=lines.append) as runner:
        _, placement = runner.place(request)
        with pytest.raises(UsageError, match="does not know the topology"):
            runner.place(
                RunRequest(workload="wordcount", venue=ClusterAt(master=K8S), out=tmp_path / "o")
            )
    assert [e.cores for e in placement.executors] == [3, 3]
    assert lines[0].startswith("planned from your layout alone (2 executor(s) of 3 cores)")
