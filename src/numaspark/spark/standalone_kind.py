"""A standalone cluster's own way (spark/standalone.py's `Cluster` of kind ``standalone``):
the master on the first host and one worker per planned executor on each host, under that
executor's numactl prefix (a worker's binding passes on to the executors it forks), every
daemon bound to its host's address on ports free on that host (spark/daemons.py starts
them); stopped through their hosts' shells; asked through the master's status page; and
``cluster status``: per worker, where it really runs (readback/executors.py)."""

from __future__ import annotations

from pathlib import Path

from numaspark import records
from numaspark.hosts import Host, HostError
from numaspark.placement import JvmPlacement, Placement
from numaspark.placement.plugin import slots_env
from numaspark.readback.executors import worker_reading
from numaspark.spark.daemons import (
    SECRET_FILE,
    ClusterError,
    master_argv,
    offer_devices,
    progress,
    share_secret,
    start_timeout,
    worker_argv,
)
from numaspark.spark.standalone_master import master_json
from numaspark.supervise.processes import ProcessTracker, wait_for
from numaspark.units import MIB


class Standalone:
    """A cluster of kind ``standalone`` (spark/standalone.py's `Cluster` holds one of these):
    its master and workers, started, stopped and asked through their hosts' shells (a mini
    YARN's way: yarnmini.MiniYarn). ``cluster`` below is that `Cluster`."""

    def conf_dir(self, cluster) -> Path | None:
        return None

    def start(
        self,
        cluster,
        parts: list[tuple[Host, Placement]],
        tracker: ProcessTracker,
        on_progress=None,
    ) -> None:
        """The master on the first host, then a bound worker per planned executor on each host
        (``parts``); returns once every worker has registered with the master."""
        timeout_s = start_timeout()
        if not cluster.local:
            share_secret(
                cluster.directory, (cluster.shell(h) for h in cluster.hosts), cluster.encrypt
            )
        first = parts[0][0]
        port, webui = cluster.shell(first).free_ports(first.address, 2)
        cluster.master_url, cluster.master_webui = f"spark://{first.address}:{port}", webui
        progress(on_progress, "master starting" + ("" if cluster.local else f" on {first.name}"))
        cluster._start(
            tracker,
            first,
            "master",
            master_argv(first, port, webui, self._properties(cluster)),
            port=port,
            webui=webui,
        )
        if not wait_for(lambda: cluster.master_state() is not None or cluster.lost(), timeout_s):
            raise ClusterError(
                f"the Spark master did not start in {timeout_s:.0f} s: see "
                f"{cluster.processes[0]['log']} (on a slow machine, set "
                "NUMASPARK_START_TIMEOUT to more seconds)"
            )
        if cluster.lost():
            raise ClusterError(cluster.lost())
        index = 0
        for host, plan in parts:
            ports = cluster.shell(host).free_ports(host.address, 2 * len(plan.executors))
            for k, executor in enumerate(plan.executors):
                self.start_worker(cluster, tracker, host, index, executor, ports[2 * k : 2 * k + 2])
                index += 1
        where = "" if cluster.local else f" on {len(parts)} host(s)"
        progress(on_progress, f"{index} worker(s) starting{where}")
        if not wait_for(lambda: cluster.alive_workers() >= index or cluster.lost(), timeout_s):
            raise ClusterError(
                f"only {cluster.alive_workers()} of {index} workers registered in "
                f"{timeout_s:.0f} s: see the logs in {cluster.directory} (on a slow "
                "machine, set NUMASPARK_START_TIMEOUT to more seconds)"
            )
        if cluster.lost():
            raise ClusterError(cluster.lost())

    def start_worker(
        self,
        cluster,
        tracker: ProcessTracker,
        host: Host,
        index: int,
        executor: JvmPlacement,
        ports: list[int],
    ) -> None:
        work = cluster.directory / f"worker-{index}"
        if cluster.local:
            work.mkdir(exist_ok=True)
        argv = worker_argv(
            executor,
            cluster.binder(host),
            host,
            cluster.master_url,
            ports,
            work,
            self._properties(cluster),
        )
        # its executors inherit the worker's environment: the affinity plugin's slots, and
        # the addresses of the devices it offers (the discovery script's)
        devices = offer_devices(cluster.shell(host), cluster.directory, index, executor)
        cluster._start(
            tracker,
            host,
            f"worker {index}",
            argv,
            env={**slots_env(executor.slots), **devices},
            index=index,
            port=ports[0],
            webui=ports[1],
            cores=executor.cores,
            memory_mb=executor.heap // MIB,
            work_dir=str(work),
        )

    def _properties(self, cluster) -> list[str]:
        return [] if cluster.local else ["--properties-file", str(cluster.directory / SECRET_FILE)]

    def stop_daemons(self, cluster, problems: list[str]) -> list[int]:
        """Every daemon on every host, through its shell; a host it cannot reach, a problem."""
        stopped: list[int] = []
        for name, pids in cluster.pids_by_host().items():
            try:
                cluster.shell(cluster.host(name)).stop(pids)
                stopped += pids
            except HostError as exc:  # a watched daemon ends with its ssh client anyway
                problems.append(str(exc))
        return stopped

    def stop_rest(self, cluster) -> list[int]:
        return []

    def master_state(self, cluster) -> dict | None:
        return master_json(cluster.host(cluster.master_host).address, cluster.master_webui)

    def status(self, cluster) -> dict:
        state = cluster.master_state() or {}
        alive = {(w.get("host"), w.get("port")): w for w in state.get("workers", [])}
        planned = {j.index: j for j in records.load(Placement, cluster.placement).executors}
        workers = []
        for w in cluster.workers:
            argv = w["argv"]
            pid = int(w["pid"]) if w.get("pid") else None
            text = cluster.shell(cluster.host(w["host"])).read_proc(pid) if pid else None
            effective, pages = worker_reading(pid or 0, text, planned.get(w["index"]))
            workers.append(
                {
                    **({} if cluster.local else {"host": w["host"]}),
                    "index": w["index"],
                    "pid": w.get("pid"),
                    "cores": w["cores"],
                    "memory_mb": w["memory_mb"],
                    "state": alive.get((cluster.host(w["host"]).address, w["port"]), {}).get(
                        "state", "missing"
                    ),
                    "prefix": argv[
                        : next(i for i, a in enumerate(argv) if a.endswith("spark-class"))
                    ],
                    "effective": effective,
                    "bytes_per_node": pages,
                }
            )
        cluster.close_shells()
        return {"master_url": cluster.master_url, "status": state.get("status"), "workers": workers}


STANDALONE_KIND = Standalone()
