"""Layout tables made from simple models of the studies' findings, for machines we do not
have: they exercise the tuner's prior on large topologies (tests, bench/tune_replay.py).
They are models, not measurements: nothing here is reported as a result.

A workload has ``work`` core-seconds; on a layout of ``executors`` x ``cores_per_executor``
task threads under a binding, its time is

    compute + memory (bandwidth-capped, remote-penalised) x GC factor + executor overhead

- **Bandwidth saturation**: a node serves memory to ``bandwidth`` x its cores of threads
  at full speed; memory-bound work stops scaling there (the studies' knee, well under every
  hardware thread).
- **SMT**: a core with two busy threads does ``smt_gain`` of one (less than 1 for work that
  SMT hurts); with k threads, 1 + 2 (smt_gain - 1)(1 - 1/k).
- **Remote memory**: unbound threads on N nodes find (1 - 1/N) x 60% of their pages remote
  (first touch keeps some local); node binding keeps them local unless an executor is wider
  than a node; a remote access costs ``remote`` more (~10% on average in the studies).
- **GC of large heaps**: a JVM's GC time grows with its heap, which grows with its cores:
  ``gc`` per doubling above 4 cores (several small executors beat one large one by up to
  36%).
- **Executors cost**: each executor adds ``per_executor`` seconds (start, shuffle
  connections, a heap of its own).
- **Thread affinity**: core binding gives ``affinity`` of the compute (up to 17%).

Each run's time carries lognormal noise of ``noise`` (seeded by the table name and the
draw), and a table keeps the median of ``repeat`` runs per configuration, as
bench/record_table.py does with a spec's repetitions (tune-kmeans: 3).
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from numaspark.decide.prior import Machine


@dataclass(frozen=True)
class Profile:
    name: str
    memory: float  # share of the work that is memory-bound
    bandwidth: float  # share of a node's cores whose memory traffic saturates the node
    smt_gain: float  # throughput of a core with two threads, relative to one
    gc: float  # log-time per doubling of cores per JVM above 4
    per_executor: float  # seconds per executor
    remote: float = 0.10  # extra cost of a remote memory access
    affinity: float = 0.05  # compute gained by core binding
    work: float = 20000.0  # core-seconds: a job of a few minutes on a large server


PROFILES = (
    Profile("compute-bound", memory=0.15, bandwidth=0.9, smt_gain=1.25, gc=0.02, per_executor=0.3),
    Profile(
        "memory-bound",
        memory=0.7,
        bandwidth=0.4,
        smt_gain=0.92,
        gc=0.03,
        per_executor=0.3,
        remote=0.25,
    ),
    Profile("gc-heavy", memory=0.35, bandwidth=0.6, smt_gain=1.1, gc=0.10, per_executor=0.3),
    Profile("shuffle-heavy", memory=0.4, bandwidth=0.6, smt_gain=1.05, gc=0.04, per_executor=0.6),
)


def model_time(
    profile: Profile, machine: Machine, executors: int, cores: int, binding: str = "none"
) -> float:
    """Seconds for ``executors`` x ``cores`` task threads on ``machine`` (no noise)."""
    threads = executors * cores
    node_threads = machine.cores_per_node * machine.threads_per_core
    if binding == "none":  # the scheduler spreads threads over every node's idle cores
        nodes_used = machine.nodes
        remote_share = (1 - 1 / machine.nodes) * 0.6
    else:  # bound executors go round the nodes; one wider than a node spans several
        span = math.ceil(cores / node_threads)
        nodes_used = min(machine.nodes, executors * span)
        remote_share = (1 - 1 / span) if span > 1 else 0.0
    physical = nodes_used * min(threads / nodes_used, machine.cores_per_node)
    per_core = threads / physical  # hardware threads busy on each busy core
    compute = physical * (1 + (profile.smt_gain - 1) * 2 * (1 - 1 / per_core))
    if binding in ("core", "pu"):
        compute *= 1 + profile.affinity
    cap = nodes_used * machine.cores_per_node * profile.bandwidth
    memory_rate = min(compute, cap)
    seconds = profile.work * (
        (1 - profile.memory) / compute
        + profile.memory * (1 + profile.remote * remote_share) / memory_rate
    )
    seconds *= math.exp(profile.gc * max(0.0, math.log2(cores / 4)))
    return seconds + profile.per_executor * executors


def layout_grid(machine: Machine) -> list[tuple[int, int]]:
    """Executors x cores per executor as the published grids do: powers of two and multiples
    of the node count, no layout beyond the hardware threads or under an eighth of them."""
    threads = machine.threads
    counts = {1, 2, 3} | {2**k for k in range(12)} | {machine.nodes * k for k in (1, 2, 3, 4, 6, 8)}
    widths = {2**k for k in range(12)} | {3 * 2**k for k in range(11)}
    return sorted(
        (e, c) for e in counts for c in widths if threads / 8 <= e * c <= threads and e <= threads
    )


def model_table(
    profile: Profile,
    machine: Machine,
    name: str,
    bindings: tuple[str, ...] = (),
    noise: float = 0.02,
    columns: tuple[str, str] = ("executors", "cores_per_executor"),
    value: str = "time_s",
    repeat: int = 3,
    draw: int = 0,
):
    """A pandas frame: one row per layout (and binding), the median of ``repeat`` noisy runs
    of its modelled time. ``draw`` picks another sample of the noise (0: the table's own)."""
    import pandas as pd

    rng = random.Random(name if draw == 0 else f"{name}#{draw}")
    rows = []
    for executors, cores in layout_grid(machine):
        for binding in bindings or ("none",):
            seconds = model_time(profile, machine, executors, cores, binding)
            row = {columns[0]: executors, columns[1]: cores}
            if bindings:
                row["binding"] = binding
            runs = [math.exp(rng.gauss(0.0, noise)) for _ in range(repeat)]
            row[value] = round(seconds * statistics.median(runs), 3)
            rows.append(row)
    return pd.DataFrame(rows)


# The large machines of the tuner benchmark (bench/tune_replay.py) and tests: real servers'
# hwloc XML (shared/topologies) and synthetic descriptions of common shapes.
MACHINES = (
    ("96em64t-4n", "xml", "96em64t-4n4d3ca2co-pci.xml"),  # 4 nodes x 24 cores, no SMT
    ("24em64t-2n", "xml", "24em64t-2n6c2t-pci.xml"),  # 2 nodes x 6 cores x 2 threads
    ("32em64t-2n", "xml", "32em64t-2n8c2t-pci-noio.xml"),  # 2 nodes x 8 cores x 2 threads
    ("knl-snc4", "xml", "64intel64-fakeKNL-SNC4-hybrid.xml"),  # 4 nodes x 4 cores x 4 threads
    ("4x24x2", "synthetic", "pack:4 numa:1 core:24 pu:2"),  # 192 threads, the server
    ("2x4x8x2", "synthetic", "pack:2 numa:4 core:8 pu:2"),  # 8 nodes (chiplets), 128 threads
    ("smt8", "synthetic", "pack:2 numa:2 core:6 pu:8"),  # POWER-like: 4 nodes, 24 cores x SMT-8
)


def machine_tables(
    name: str, machine: Machine, noise: float = 0.02, draw: int = 0
) -> list[tuple[str, object, str]]:
    """The four profiles' tables on one machine, as (table name, frame, value column). Two are
    laid out as published grids are (``workers,cores_per_worker,time_s``, unbound), two as
    numaspark writes them (``executors,cores_per_executor,binding,time_s``). ``noise=0``: the
    model's own times (the truth the noisy table samples)."""
    tables = []
    for index, profile in enumerate(PROFILES):
        table = f"{name}-{profile.name}"
        if index % 2 == 0:
            frame = model_table(
                profile,
                machine,
                table,
                noise=noise,
                draw=draw,
                columns=("workers", "cores_per_worker"),
            )
        else:
            frame = model_table(
                profile, machine, table, noise=noise, draw=draw, bindings=("none", "node", "core")
            )
        tables.append((table, frame, "time_s"))
    return tables


# -- how a search is judged (the benchmark's, not the tuner's) ---------------------------------


def random_search(lookup: dict[tuple, float], seed: int) -> list[float]:
    """Random search over the runnable rows, without repeats: the values in the order tried."""
    order = sorted(lookup, key=str)
    random.Random(seed).shuffle(order)
    return [lookup[c] for c in order]


def random_search_median(rows: int, hits: int) -> int:
    """The exact median number of evaluations random search without repeats needs to first
    draw one of ``hits`` rows out of ``rows``: the smallest k with P(first hit <= k) >= 1/2,
    where P(no hit in k draws) = prod_{i<k} (rows - hits - i) / (rows - i). (A sample of 20
    seeds misses it by several evaluations when the hits are few.)"""
    if not 0 < hits <= rows:
        raise ValueError("hits must be between 1 and rows")
    miss = 1.0
    for k in range(1, rows - hits + 2):
        miss *= (rows - hits - (k - 1)) / (rows - (k - 1))
        if miss <= 0.5:
            return k
    return rows - hits + 1


def random_search_expected(rows: int, hits: int) -> float:
    """The exact expected number of evaluations random search without repeats needs to first
    draw one of ``hits`` rows out of ``rows``: (rows + 1) / (hits + 1) (the expected position
    of the first of ``hits`` marked items in a random order of ``rows``)."""
    if not 0 < hits <= rows:
        raise ValueError("hits must be between 1 and rows")
    return (rows + 1) / (hits + 1)


def evaluations_to(values: list[float | None], target: float) -> int | None:
    """1-based number of the first evaluation at or below ``target`` (None if never)."""
    for number, value in enumerate(values, 1):
        if value is not None and value <= target:
            return number
    return None
