"""Several hosts: the inventory, SSH, and each host's topology read over SSH.

The integration tests make their hosts on this machine (tests/testhosts.py:
network namespaces, each with its own sshd): real SSH, real remote commands,
this machine's one NUMA node on every host. They prove the deployment path,
never speed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from conftest import invoke_cli, run_cli, topology_file
from testhosts import NamespaceHosts

from numaspark import records
from numaspark.errors import UsageError
from numaspark.experiment.placing import balancing_as_found
from numaspark.experiment.venue import SshHosts
from numaspark.hosts import Host, HostError, Ssh, host_topology, load_inventory, parse_hosts
from numaspark.kernel import NUMA_BALANCING, read_setting
from numaspark.metrics.eventlog import parse_event_log
from numaspark.topology import load_machine


def test_an_inventory_file_with_defaults(tmp_path):
    path = tmp_path / "hosts.toml"
    path.write_text(
        'driver_address = "10.0.0.1"\n[defaults]\nuser = "spark"\nkey = "~/k"\n'
        '[[host]]\nname = "a"\naddress = "10.0.0.11"\n'
        '[[host]]\naddress = "b.example"\nport = 2222\nuser = "other"\n'
    )
    inventory = load_inventory(path)
    a, b = inventory.hosts
    assert (a.name, a.destination, a.port, a.key.name) == ("a", "spark@10.0.0.11", 22, "k")
    assert (b.name, b.destination, b.port) == ("b.example", "other@b.example", 2222)
    assert inventory.driver_address == "10.0.0.1" and inventory.get("b.example") is b


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[host]]\naddress = "0.0.0.0"\n', "give the host's address"),
        ('[[host]]\naddress = "a"\nport = 70000\n', "is not a TCP port"),
        ('[[host]]\naddress = "a"\npassword = "x"\n', "unknown key(s) password"),
        ('[[host]]\naddress = "a"\n[[host]]\naddress = "a"\n', "given twice"),
        ("host = 3\n", "[[host]] table"),
        ("[[host\n", "not a TOML hosts file"),
    ],
)
def test_a_bad_inventory_is_one_clear_line(tmp_path, text, message):
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as raised:
        load_inventory(path)
    assert message in str(raised.value)


def test_hosts_on_the_command_line():
    inventory = parse_hosts("node1, spark@node2:2222")
    assert [(h.name, h.destination, h.port) for h in inventory.hosts] == [
        ("node1", "node1", 22),
        ("node2", "spark@node2", 2222),
    ]
    with pytest.raises(UsageError, match="write hosts like"):
        parse_hosts("a b")


def test_remote_commands_are_argv_lists_quoted_for_the_remote_shell():
    ssh = Ssh(parse_hosts("spark@node1:2200").hosts[0])
    argv = ssh.argv(["echo", "a; rm -rf /", "$HOME"])
    assert argv[0] == "ssh" and "BatchMode=yes" in argv and "-p" in argv
    assert argv[-3:] == ["spark@node1", "--", "echo 'a; rm -rf /' '$HOME'"]
    assert any(a.startswith("ControlPath=") for a in argv)
    ssh.close()


def test_hosts_that_differ_get_plans_of_their_own_merged_into_one_record():
    """Two different servers (saved hwloc XML of real machines: this machine has one node
    and no other hosts), each planned from its own topology, one executor per node."""
    from numaspark.hosts import HostPlan, merge, plans_to_dict
    from numaspark.placement import Binding, Layout, Placement, plan
    from numaspark.topology import load_xml

    servers = {"big": "24em64t-2n6c2t-pci.xml", "wide": "96em64t-4n4d3ca2co-pci.xml"}
    plans = []
    for (name, xml), host in zip(
        servers.items(), parse_hosts("10.0.0.1,10.0.0.2").hosts, strict=True
    ):
        topology = load_xml(topology_file(xml))
        placement = plan(topology, Layout(executors_per_node=1), Binding.NODE)
        plans.append(HostPlan(Host(name, host.address), topology, placement))
    merged = merge(plans)
    per_host = [len(p.placement.executors) for p in plans]
    assert per_host == [2, 4]  # one per node of each: the hosts differ
    assert [j.index for j in merged.executors] == list(range(6))
    assert [j.host for j in merged.executors] == ["big"] * 2 + ["wide"] * 4
    assert [j.cpus for j in merged.executors] == [
        j.cpus for p in plans for j in p.placement.executors
    ]
    assert merged.hosts == ("big", "wide")
    assert merged.topology_fingerprint == ",".join(p.topology.fingerprint for p in plans)
    # the record keeps each executor's host, and reads back the same
    from numaspark.placement import placement_to_dict

    again = records.load(Placement, placement_to_dict(merged))
    assert again.hosts == merged.hosts and again.shape == merged.shape
    document = plans_to_dict(plans, "10.0.0.9")
    assert [h["host"] for h in document["hosts"]] == ["big", "wide"]
    assert document["driver"]["address"] == "10.0.0.9"


@pytest.mark.slow
@pytest.mark.integration
def test_two_hosts_over_ssh_each_with_its_topology(tmp_path):
    with NamespaceHosts(2, tmp_path) as hosts:
        here = load_machine()
        for host in hosts.inventory.hosts:
            ssh = Ssh(host)
            try:
                assert ssh.run(["hostname"]).strip() == host.name
                # what crosses is an argv: the remote shell sees each argument whole
                assert ssh.run(["echo", "a; echo b", "$HOME"]).strip() == "a; echo b $HOME"
                topology = host_topology(ssh)
            finally:
                ssh.close()
            # the same hardware under every namespace: the same fingerprint as here
            assert topology.source == f"host:{host.name}"
            assert topology.fingerprint == here.fingerprint
            assert topology.allowed_cpus == here.allowed_cpus
        # each host's NUMA balancing, read over SSH for a binding study there (one kernel
        # under every namespace: the setting here)
        state = {"0": "off", "1": "on"}.get(read_setting(NUMA_BALANCING) or "", "")
        said = balancing_as_found(SshHosts(hosts=hosts.inventory))
        assert said.startswith("the unbound configurations ran with the kernel's NUMA")
        assert said.endswith(", ".join(f"{h.name} {state}" for h in hosts.inventory.hosts))

        inventory = tmp_path / "hosts.toml"
        inventory.write_text(
            "".join(
                f'[[host]]\nname = "{h.name}"\naddress = "{h.address}"\nuser = "root"\n'
                f'key = "{h.key}"\nknown_hosts = "{h.known_hosts}"\n'
                for h in hosts.inventory.hosts
            )
        )
        # the commands in this process (what they read and print); the unreachable host's one
        # line and exit code, below, from a process of its own
        shown = invoke_cli("topology", "--host", "host2", "--hosts-file", str(inventory), "--json")
        assert shown.returncode == 0 and json.loads(shown.stdout)["source"] == "host:host2"
        planned = invoke_cli(
            "plan",
            "--hosts-file",
            str(inventory),
            "--executors-per-node",
            "1",
            "--bind",
            "node",
            "--json",
        )
        assert planned.returncode == 0, planned.stderr
        plans = json.loads(planned.stdout)
        assert [p["host"] for p in plans["hosts"]] == ["host1", "host2"]
        for entry in plans["hosts"]:
            assert entry["topology_fingerprint"] == here.fingerprint
            executors = [j for j in entry["plan"]["jvms"] if j["runs_tasks"]]
            assert [j["cpus"] for j in executors] == [str(here.allowed_cpus)]

        hosts.kill_sshd(hosts.inventory.hosts[0])
        gone_ssh = Ssh(hosts.inventory.hosts[0])
        try:
            with pytest.raises(HostError, match="cannot reach host1"):
                gone_ssh.run(["true"])
        finally:
            gone_ssh.close()
        gone = run_cli("topology", "--host", "host1", "--hosts-file", str(inventory))
        assert gone.returncode == 1 and "cannot reach host1" in gone.stderr
        assert "Traceback" not in gone.stderr


def _inventory_file(hosts: NamespaceHosts, path, encrypt: bool = False) -> str:
    path.write_text(
        f'driver_address = "{hosts.driver_address}"\n'
        f"encrypt = {str(encrypt).lower()}\n"
        + "".join(
            f'[[host]]\nname = "{h.name}"\naddress = "{h.address}"\nuser = "root"\n'
            f'key = "{h.key}"\nknown_hosts = "{h.known_hosts}"\n'
            for h in hosts.inventory.hosts
        )
    )
    return str(path)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _left_on(hosts: NamespaceHosts) -> dict[str, list[str]]:
    """What still runs in each host's namespace, its sshd aside."""
    found = {}
    for host in hosts.inventory.hosts:
        names = []
        for pid in hosts.pids(host):
            cmdline = _cmdline(pid)
            if cmdline and "sshd" not in cmdline.split(" ")[0]:
                names.append(f"{pid}: {cmdline[:120]}")
        found[host.name] = names
    return found


def _nothing_left(hosts: NamespaceHosts, within_s: float = 20.0) -> bool:
    import time

    deadline = time.monotonic() + within_s
    while any(_left_on(hosts).values()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any(_left_on(hosts).values()), _left_on(hosts)
    return True


@pytest.mark.integration
@pytest.mark.jvm  # Spark workers on the hosts: the lane that may start JVMs, one at a time
@pytest.mark.long(script="bash scripts/test-hosts.sh")
def test_a_run_on_three_hosts_puts_each_executor_where_its_host_planned(tmp_path, no_spark_left):
    import subprocess
    import time

    with NamespaceHosts(3, tmp_path) as hosts:
        inventory = _inventory_file(hosts, tmp_path / "hosts.toml")
        here = load_machine()
        out = tmp_path / "out"
        done = run_cli(
            "run",
            "wordcount",
            "--size",
            "tiny",
            "--hosts-file",
            inventory,
            "--executors-per-node",
            "1",
            "--bind",
            "node",
            "--memory-per-executor",
            "512m",
            "--repeat",
            "1",
            "--out",
            str(out),
        )
        assert done.returncode == 0, done.stderr[-3000:]
        record = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
        assert record["status"] == "ok"
        placement = record["spec"]["placement"]
        planned = {j["host"]: j for j in placement["jvms"] if j["runs_tasks"]}
        assert sorted(planned) == ["host1", "host2", "host3"]
        seen = record["effective_placement"]
        print(
            "\nhost   executor    planned CPUs  effective CPUs  planned memory  effective "
            "memory policy"
        )  # shown by scripts/test-hosts.sh
        for entry in seen:
            memory = f"bind:{planned[entry['host']]['mem_nodes']}"
            print(
                f"{entry['host']:<6} {entry['jvm']:<11} {entry['planned_cpus']:<13} "
                f"{entry['cpus']:<15} {memory:<15} {entry['policy']}"
            )
        assert sorted(e["host"] for e in seen) == ["host1", "host2", "host3"]
        for entry in seen:
            assert entry["cpus"] == planned[entry["host"]]["cpus"] == str(here.allowed_cpus)
            assert entry["policy"].startswith("bind:"), entry
            assert entry["differences"] == []
        # results and the report group by host; each host's topology is kept for the drawing
        shown = run_cli("results", str(out), check=True).stdout
        assert "host1,host2,host3" in shown
        assert all((out / f"topology-{h}.json").exists() for h in planned)
        run_cli("report", str(out), "-o", str(tmp_path / "report.html"), check=True)
        page = (tmp_path / "report.html").read_text()
        assert "Where the executors ran, by host" in page
        assert all(f"<td>{h}</td>" in page and f"· {h}" in page for h in planned)
        # authenticated, and the secret in no command line and no log
        cluster_dirs = list((out / "clusters").glob("hosts-*"))
        assert cluster_dirs and _nothing_left(hosts)
        properties = parse_event_log(Path(record["artifacts"]["event_log"])).spark_properties
        assert properties["spark.authenticate"] == "true"
        assert properties["spark.authenticate.secret"] == "*********(redacted)"
        print(
            "spark.authenticate: true (the secret: redacted in the event log, on no command "
            "line, in no log)"
        )
        secret_file = cluster_dirs[0] / "spark-auth.conf"
        secret = secret_file.read_text().split("spark.authenticate.secret ")[1].split()[0]
        assert oct(secret_file.stat().st_mode & 0o777) == "0o600"
        logs = [p for p in cluster_dirs[0].rglob("*") if p.is_file() and p != secret_file]
        assert logs and not [p for p in logs if secret in p.read_text(errors="replace")]

        # faults: one host's sshd and a worker killed mid-run; the run fails with a clear
        # message and leaves nothing behind on any host
        cli = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "numaspark",
                "run",
                "wordcount",
                "--size",
                "tiny",
                "--hosts-file",
                inventory,
                "--executors-per-node",
                "1",
                "--bind",
                "node",
                "--memory-per-executor",
                "512m",
                "--repeat",
                "30",
                "--out",
                str(tmp_path / "o2"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            victim = hosts.inventory.hosts[1]
            deadline = time.monotonic() + 120
            executor = None
            while executor is None and time.monotonic() < deadline and cli.poll() is None:
                for pid in hosts.pids(victim):
                    if "CoarseGrainedExecutorBackend" in _cmdline(pid):
                        executor = pid
                time.sleep(0.5)
            assert executor is not None, "no executor started on host2"
            # the secret of this cluster is on no command line, here or on any host
            conf = next((tmp_path / "o2" / "clusters").glob("hosts-*/spark-auth.conf"))
            secret = conf.read_text().split("spark.authenticate.secret ")[1].split()[0]
            assert not [p for p in os.listdir("/proc") if p.isdigit() and secret in _cmdline(p)]
            for pid in hosts.pids(victim):
                if "deploy.worker.Worker" in _cmdline(pid):
                    os.kill(pid, signal.SIGKILL)
            hosts.kill_sshd(victim)
            _, stderr = cli.communicate(timeout=120)
        finally:
            if cli.poll() is None:
                cli.kill()
        assert cli.returncode != 0
        assert "host2" in stderr and "Traceback" not in stderr, stderr[-2000:]
        failed = [line for line in stderr.splitlines() if "failed:" in line]
        assert failed and all("host2" in line for line in failed), stderr[-2000:]
        print(f"the run after host2's sshd and worker were killed: {failed[-1]}")
        assert _nothing_left(hosts)


@pytest.mark.integration
@pytest.mark.jvm  # Spark workers on the hosts: the lane that may start JVMs, one at a time
@pytest.mark.long(script="bash scripts/test-hosts.sh")
def test_a_cluster_kept_up_on_two_hosts_and_stopped_even_half_started(tmp_path, no_spark_left):
    import subprocess
    import time

    with NamespaceHosts(2, tmp_path) as hosts:
        inventory = _inventory_file(hosts, tmp_path / "hosts.toml", encrypt=True)
        cluster = tmp_path / "c2"
        options = [
            "--hosts-file",
            inventory,
            "--executors-per-node",
            "1",
            "--bind",
            "node",
            "--memory-per-executor",
            "512m",
        ]
        run_cli("cluster", "up", str(cluster), *options, check=True)
        try:
            status = json.loads(
                run_cli("cluster", "status", str(cluster), "--json", check=True).stdout
            )
            assert [(w["host"], w["state"]) for w in status["workers"]] == [
                ("host1", "ALIVE"),
                ("host2", "ALIVE"),
            ]
            for worker in status["workers"]:  # read over SSH from each host's /proc
                assert worker["effective"]["cpus"] == str(load_machine().allowed_cpus)
                assert worker["effective"]["policy"].startswith("bind:")
                assert worker["prefix"][0] == "numactl"
            table = run_cli("cluster", "status", str(cluster), check=True).stdout
            assert "host1" in table and "host2" in table
            out = tmp_path / "out"
            run_cli(
                "run",
                "wordcount",
                "--cluster",
                str(cluster),
                *options,
                "--out",
                str(out),
                check=True,
            )
            record = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
            assert sorted(e["host"] for e in record["effective_placement"]) == ["host1", "host2"]
            log = parse_event_log(Path(record["artifacts"]["event_log"]))
            assert log.spark_properties["spark.network.crypto.enabled"] == "true"  # encrypted
        finally:
            down = run_cli("cluster", "down", str(cluster))
        assert down.returncode == 0, down.stderr
        assert _nothing_left(hosts)

        # numaspark killed while the cluster starts: the state names what started, and
        # cluster down stops it on every host
        up = subprocess.Popen(
            [sys.executable, "-m", "numaspark", "cluster", "up", str(tmp_path / "c3"), *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        state = tmp_path / "c3" / "cluster.json"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            started = json.loads(state.read_text())["processes"] if state.exists() else []
            if any(p.get("pid") for p in started):
                break
            time.sleep(0.1)
        up.kill()
        up.wait()
        assert any(_left_on(hosts).values()), "nothing had started yet"
        down = run_cli("cluster", "down", str(tmp_path / "c3"))
        assert down.returncode == 0, down.stderr
        assert _nothing_left(hosts)


# a scenario of a minute, run by the long lane to keep CI short:
# SIGTERM mid-run on this machine stays in the default lane (test_spark_runs.py)
@pytest.mark.long(script="bash scripts/test-hosts.sh")
@pytest.mark.jvm
@pytest.mark.integration
def test_sigterm_during_a_run_on_hosts_stops_every_remote_process(tmp_path, no_spark_left):
    import subprocess
    import time

    with NamespaceHosts(2, tmp_path) as hosts:
        inventory = _inventory_file(hosts, tmp_path / "hosts.toml")
        cli = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "numaspark",
                "run",
                "wordcount",
                "--hosts-file",
                inventory,
                "--executors-per-node",
                "1",
                "--memory-per-executor",
                "512m",
                "--repeat",
                "30",
                "--out",
                str(tmp_path / "out"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and cli.poll() is None:
            if all(
                any("CoarseGrainedExecutorBackend" in _cmdline(p) for p in hosts.pids(h))
                for h in hosts.inventory.hosts
            ):
                break
            time.sleep(0.5)
        cli.send_signal(signal.SIGTERM)
        _, stderr = cli.communicate(timeout=60)
        assert cli.returncode in (130, 143), stderr[-2000:]
        assert "Traceback" not in stderr
        assert _nothing_left(hosts)


def _allowed(pid: int) -> str | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next(
        (line.split(":")[1].strip() for line in status.splitlines() if "Cpus_allowed_list" in line),
        None,
    )


@pytest.mark.integration
@pytest.mark.jvm  # Spark workers on the hosts: the lane that may start JVMs, one at a time
@pytest.mark.long(script="bash scripts/test-hosts.sh")
def test_cosched_on_two_hosts_gives_each_workload_its_share_of_every_host(tmp_path, no_spark_left):
    """study cosched --hosts-file (issue 48, item 5): each host (this machine's two CPUs, in
    its own network namespace) is split 1-1, each workload gets a cluster of its own with a
    worker on its CPU of every host; while the bound round runs, the executors of one
    workload are on CPU 0 of both hosts and the other's on CPU 1, and each completes
    iterations in the window; the unbound round's executors may use both. Namespaces prove
    addresses, routes and binding, not speed: the completions are counted, not compared."""
    import subprocess
    import time

    with NamespaceHosts(2, tmp_path) as hosts:
        inventory = _inventory_file(hosts, tmp_path / "hosts.toml")
        out = tmp_path / "out"
        cli = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "numaspark",
                "study",
                "cosched",
                "wordcount",
                "terasort",
                "--hosts-file",
                inventory,
                "--window",
                "60s",
                "--warmup-time",
                "45s",  # twelve JVMs on two CPUs: each application's first iteration is slow
                "--cooldown",
                "5s",
                "--out",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen: dict[str, set[str]] = {h.name: set() for h in hosts.inventory.hosts}
        try:
            deadline = time.monotonic() + 400
            while not (out / "cosched.jsonl").exists() and cli.poll() is None:
                assert time.monotonic() < deadline, "the bound round did not end in 400 s"
                for host in hosts.inventory.hosts:
                    for pid in hosts.pids(host):
                        if "CoarseGrainedExecutorBackend" in _cmdline(pid):
                            seen[host.name].add(_allowed(pid))
                time.sleep(0.5)
            stdout, stderr = cli.communicate(timeout=500)
        finally:
            if cli.poll() is None:
                cli.kill()
        assert cli.returncode == 0, stderr[-3000:]
        # the bound round: executors of the two workloads on CPU 0 and CPU 1 of each host
        assert all(cpus - {None} == {"0", "1"} for cpus in seen.values()), seen
        rows = [json.loads(line) for line in (out / "cosched.jsonl").read_text().splitlines()]
        assert [(r["split"], r["workload"]) for r in rows] == [
            ("1-1 CPUs bound", "wordcount"),
            ("1-1 CPUs bound", "terasort"),
            ("1-1 CPUs unbound", "wordcount"),
            ("1-1 CPUs unbound", "terasort"),
        ]
        assert [r["cpus"] for r in rows[:2]] == ["host1 0; host2 0", "host1 1; host2 1"]
        for row in rows:
            assert row["failure"] is None, row
            assert row["completions"] >= 1 and row["failed_checks"] == 0, row
            assert row["where"] == "hosts host1,host2"
            assert row["context_switches_per_s"] is None  # this machine's /proc: not there
        assert "co-scheduled on hosts host1,host2" in stderr + stdout
        print(f"\nstudy cosched on two hosts: {[(r['split'], r['completions']) for r in rows]}")
        assert _nothing_left(hosts)


@pytest.mark.integration
@pytest.mark.jvm
@pytest.mark.long(script="bash scripts/test-hosts.sh")
def test_dynamic_allocation_on_two_hosts_over_ssh(tmp_path, no_spark_left):
    """Issue 57, item 1: numaspark starts a node-bound worker on each of two hosts over SSH,
    and a PySpark application of two bursts 12 s apart runs there with dynamic allocation (0
    to 2 executors, shuffle tracking, a 4 s idle timeout): it ends ok, its executors were
    added, removed when idle and added again, and nothing is left on the hosts. Namespaces
    prove the deployment and the churn, not speed."""
    from test_dynamic_allocation import APPS, DA_OPTIONS, removed_then_added

    with NamespaceHosts(2, tmp_path) as hosts:
        inventory = _inventory_file(hosts, tmp_path / "hosts.toml")
        out, result = tmp_path / "out", tmp_path / "bursts.json"
        done = run_cli(
            "run",
            str(APPS / "two_bursts.py"),
            "--hosts-file",
            inventory,
            "--executors-per-node",
            "1",
            "--bind",
            "node",
            "--memory-per-executor",
            "512m",
            "--out",
            str(out),
            *DA_OPTIONS,
            "--",
            str(result),
            "12",
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(result.read_text())["sums"] == [sum(x * x for x in range(400))] * 2
        assert "dynamic allocation is on: executors come and go between 0 and 2" in done.stderr
        record = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
        assert record["status"] == "ok", record.get("failure")
        removed_then_added(out)
        assert _nothing_left(hosts)
