"""The studies' rules, as a penalty in log-time (0 = what the studies would start from).

Every rule is relative to the machine (nodes, physical cores, hardware threads per core), so
one prior serves a 2-core laptop and a 4-socket, 192-thread server. The numbers behind each
rule are the studies' (docs/experiments.md, "How the tuner chooses"); the weights say how
sure the studies are, in log-time per doubling away from the rule:

1. ``threads``: use every physical core. Threads per core (SMT) by the machine's SMT width:
   on two-way SMT (x86) no way is favoured, because there the second thread gave
   -10%..+25%: it helped compute-bound work and hurt work whose memory bandwidth saturates
   first, and which a workload is the rules do not know; the start then is what the tuner
   would take told nothing (every hardware thread as a core, `models.Prior.untold`), and the
   first runs say which way. On wider SMT (POWER's 4 and 8, Xeon Phi's 4) in the middle of
   the axis (2 of 4, 4 of 8), because such cores are built to be filled by several threads
   (one thread leaves most of the core's issue slots idle) and how many pay differs per
   workload. Executors own whole cores where the machine has SMT: one that shares a core
   with another pays. Bound executors use only their own nodes' cores: fewer of them than
   nodes leave nodes idle.
2. ``executors-per-node``: one or two executors per NUMA node (two on nodes of 8 or more
   cores). An executor's width counts what the table gives: physical cores where it says
   how many an executor owns (a threads-per-core column), else task slots, the unit the
   studies varied (never cores inferred from how all executors' threads spread: fractions of
   a core on wide SMT). Node-bound executors avoid remote memory (~10% dearer on average),
   and several small executors beat one large one by up to 36% through less GC.
3. ``executor-span``: an executor wider than a node pays remote memory (~10%) however it
   is bound.
4. ``gc``: more than 8 cores in one JVM means a large heap that collects longer.
5. ``binding``: with more than one node, bound beats unbound (1.07-1.25x for single
   jobs); core first (thread-level affinity inside the JVM gained up to 17%), then node.
   With one node there is no remote memory: nothing to gain, so none first.
6. ``mem-policy``: bind or local on several nodes; interleave only for wide executors.
7. ``mode``: local mode is one JVM: the best single executor on a one-node machine (no
   executor start, no RPC); on several nodes it spans them all.
8. ``partitions``: one wave of tasks (one per slot) unless the input fills several waves
   of 128 MB partitions, then 2-3 per slot (Spark's tuning guide).
9. ``memory``: memory per task slot (an executor's memory over its task threads) matters
   only where a task's data does not fit: then it spills, collects garbage more often or
   recomputes evicted cached blocks, and a halving can cost 2x; where it fits, more memory
   buys nothing. Which holds depends on the input, which the rules do not know, so no way is
   favoured (mean 0) but the axis is wide (a real axis, learned from the runs). It turns to
   "less memory costs" once a run's readings show pressure (spill, GC), or once the runs are
   likelier with it (when more cores stop paying, memory is the next suspect).

Columns the rules do not know are searched without a prior (their middle value first).
"""

from __future__ import annotations

import math

from numaspark.decide.tune.machine import CoreFootprint, Machine, _number, _word, shape

MEMORY = "memory per task short"
# Each rule as features of a candidate and the log-time one unit of a feature costs: the
# studies' guess (mean) and how far a workload may stray from it (sd). The tuner starts from
# the means and updates them with every run (Bayesian linear regression, models.RuleModel), so
# a workload that SMT helps, or that wants small executors, turns the rule round after a run
# or two. Where a rule is split in two (over / under its target), each side learns alone.
WEIGHTS: dict[str, tuple[float, float]] = {
    # per doubling of threads per core above one (SMT-2): the second thread gave -25%..+10%
    # in time, faster for compute-bound work, slower where memory bandwidth saturates first.
    # No way favoured (the sd lets a run or two say which): a mean of +0.05 left the siblings
    # unused at the start, a run behind told-nothing wherever they paid (issue 48)
    "threads per core over": (0.0, 0.15),
    # wide SMT (4 or 8 threads per core) starts in the middle of its axis: either way a
    # doubling may pay or cost, by workload (the runs decide)
    "threads per core over (wide SMT)": (0.1, 0.2),
    "threads per core under (wide SMT)": (0.1, 0.2),
    # per halving of the physical cores busy: 2x for compute-bound work, ~0 past the
    # bandwidth knee
    "cores idle": (0.4, 0.25),
    # an executor that shares a core with another (SMT): their threads compete for one
    # core's caches and issue slots, and neither can be bound to whole cores
    "executor shares a core": (0.05, 0.1),
    "cores per executor over": (0.1, 0.15),  # per doubling above the moderate width
    "cores per executor under": (0.1, 0.15),  # per halving below it
    "executors per node under": (0.15, 0.15),  # per halving below one: spanning nodes
    "executor wider than a node": (0.1, 0.1),  # remote memory, ~10%
    # per doubling of task threads per JVM above 8 (36%): the heap grows with the tasks
    # that run at once, whatever cores they run on
    "gc of large executors": (0.08, 0.08),
    "tasks per slot over": (0.15, 0.3),  # per doubling above the target
    "tasks per slot under": (0.15, 0.3),
    # per halving of memory per task slot (signed: more memory is the negative side): no
    # way favoured until the runs or their readings show pressure (MEMORY_PRESSURE)
    MEMORY: (0.0, 0.25),
}
# without SMT, the same feature counts task threads over cores: no sibling to run them, so they
# time-slice a core (a little dearer per doubling; its sd is WEIGHTS')
OVERSUBSCRIBED = 0.05
# the memory rule's mean once a run shows pressure: a halving of memory per task costs ~10%
# (a spilling sort or an iterative job whose cache no longer fits loses far more, 2x and over
# on the public autoscaling tables' sorts; the sd lets the runs say how much)
MEMORY_PRESSURE = 0.1
BINDING_SEVERAL = {"core": 0.0, "node": 0.02, "pu": 0.05, "none": 0.12, "autonuma": 0.08}
BINDING_ONE = {"none": 0.0, "node": 0.02, "core": 0.04, "pu": 0.06, "autonuma": 0.01}
# autonuma (unbound, the kernel's NUMA balancing on): no seed measured it against binding.
# Between unbound and node-bound on several nodes (it migrates pages and tasks toward each
# other, late and partly); on one node only its scanning cost, nothing to move.
POLICY = {
    "bind": 0.0,
    "local": 0.0,
    "preferred": 0.02,
    "interleave": 0.06,
    "none": 0.08,
    "default": 0.08,
}
POLICY_WIDE = {**POLICY, "interleave": 0.0, "bind": 0.04}
# sd of a category's level (each level is its own feature, so two levels differ by sqrt(2) x
# this): binding's spread in the studies is about +-0.08 in log-time between two bindings
# (1.07-1.25x for node over none; thread affinity 0-17% on top), so 0.06 per level
CATEGORY_SD = {"binding": 0.06, "mem_policy": 0.08, "mode": 0.15}
ONE_NODE_SD = {"binding": 0.03, "mem_policy": 0.02}  # nothing remote to avoid on one node
UNKNOWN_SD = 0.2  # a column no rule knows: each value may cost this much either way


def moderate_cores(machine: Machine) -> float:
    """Rule 2's executor width: half a node's cores, kept within 4-8 (several executors per
    node, none so small that its fixed costs dominate); compared with the width the table
    gives (physical cores with a threads-per-core column, else task slots)."""
    return min(8.0, max(4.0, machine.cores_per_node / 2), machine.cores_per_node)


def start_threads_per_core(machine: Machine) -> float:
    """Rule 1's threads per core that cost nothing, the SMT features' zero: one on two-way
    SMT (where a second thread is priced neither way) and without SMT; the middle of the axis
    (log scale, the upper of two) on wider SMT: 2 of 4, 4 of 8."""
    if machine.smt <= 2:
        return 1.0
    return float(2 ** math.ceil(math.log2(machine.smt) / 2))


def _side(value: float, target: float) -> tuple[float, float]:
    """log2(value / target) split into (over, under), both >= 0."""
    step = math.log2(value / target)
    return max(0.0, step), max(0.0, -step)


def features(
    params: dict[str, object], machine: Machine, input_bytes: float | None = None
) -> dict[str, tuple[float, float, float]]:
    """The rules' features of a candidate: name -> (value, prior mean weight, prior sd).
    ``params`` are keyed by numaspark names (`roles`); absent columns give no feature."""
    found = shape(params, machine)
    out: dict[str, tuple[float, float, float]] = {}
    # the studies' rules 1 to 9 in order (the order of the tuner's model columns); rule 6
    # reads rule 3's feature
    _thread_rules(out, found, machine)
    _executor_rules(out, params, found, machine)
    _placement_rules(out, params, found, machine)
    _task_rules(out, params, found, input_bytes)
    return out


def _put(
    out: dict[str, tuple[float, float, float]],
    name: str,
    value: float,
    mean: float | None = None,
    sd: float | None = None,
) -> None:
    """A feature's value, with its weight's prior mean and sd (WEIGHTS', unless given)."""
    weight, spread = WEIGHTS.get(name, (0.0, UNKNOWN_SD))
    out[name] = (value, weight if mean is None else mean, spread if sd is None else sd)


def _thread_rules(out: dict, found: CoreFootprint, machine: Machine) -> None:
    """1. Every physical core (of those the layout can use); threads per core against the
    SMT width's zero (`start_threads_per_core`): either way on wide SMT, neither way on
    two-way SMT, time-sliced without SMT."""
    if found.busy_cores is None or found.threads_per_core is None:
        return
    _put(out, "cores idle", _side(found.busy_cores, machine.cores)[1])
    over, under = _side(max(found.threads_per_core, 1.0), start_threads_per_core(machine))
    if machine.smt > 2:
        _put(out, "threads per core over (wide SMT)", over)
        _put(out, "threads per core under (wide SMT)", under)
    else:
        _put(out, "threads per core over", over, OVERSUBSCRIBED if machine.smt == 1 else None)


def _executor_rules(
    out: dict, params: dict[str, object], found: CoreFootprint, machine: Machine
) -> None:
    """2. At least one executor per node, and moderate executors (in the table's width unit);
    3. none wider than a node (remote memory, in physical cores); 4. no large heaps (GC)."""
    layout = found.layout
    per_node = _number(params.get("executors_per_node"))
    if per_node is None and found.executors is not None:
        per_node = found.executors / machine.nodes
    if per_node is not None and not layout.local:
        _put(out, "executors per node under", _side(per_node, 1.0)[1])
    threads = layout.threads_per_executor
    if threads is None or found.cores_per_executor is None:
        return
    cores = found.cores_per_executor
    # the width in the table's own unit: physical cores where a threads-per-core column says
    # how many an executor owns, else task threads (Spark's executor cores, what the studies
    # varied). Cores inferred from a shared spread are fractions on wide SMT (a 4-thread
    # executor among 128 threads on 24 cores is "0.75 cores"): priced as too narrow, they
    # kept the told tuner from the small executors GC favours (issue 48)
    over, under = _side(layout.cores_per_executor, moderate_cores(machine))
    _put(out, "cores per executor over", over)
    _put(out, "cores per executor under", under)
    if found.shares_a_core is not None:
        _put(out, "executor shares a core", 1.0 if found.shares_a_core else 0.0)
    span = machine.nodes if layout.local else math.ceil(cores / machine.cores_per_node - 1e-9)
    _put(out, "executor wider than a node", 1.0 if span > 1 else 0.0)
    _put(out, "gc of large executors", max(0.0, math.log2(threads / 8)))


def _placement_rules(
    out: dict, params: dict[str, object], found: CoreFootprint, machine: Machine
) -> None:
    """5. Bound beats unbound on several nodes, on one there is nothing to gain; 6. local
    memory, interleave for executors wider than a node; 7. local mode: one JVM, no executor
    to start, but on several nodes it spans them."""
    several = machine.nodes > 1
    binding = _word(params.get("binding", ""))
    if binding:
        table = BINDING_SEVERAL if several else BINDING_ONE
        sd = CATEGORY_SD["binding"] if several else ONE_NODE_SD["binding"]
        _put(out, f"binding {binding}", 1.0, table.get(binding, 0.08), sd)
    policy = _word(params.get("mem_policy", ""))
    if policy:
        wide = out.get("executor wider than a node", (0.0,))[0] > 0
        table = (POLICY_WIDE if wide else POLICY) if several else {}
        sd = CATEGORY_SD["mem_policy"] if several else ONE_NODE_SD["mem_policy"]
        _put(
            out, f"memory policy {policy}", 1.0, table.get(policy, 0.0 if not several else 0.08), sd
        )
    mode = _word(params.get("mode", ""))
    if mode:
        if mode == "local":
            cost = 0.1 if several else 0.0
        else:
            cost = 0.1 if not several and (found.executors or 1) <= 1 else 0.0
        _put(out, f"mode {mode}", 1.0, cost, CATEGORY_SD["mode"])


def _task_rules(
    out: dict, params: dict[str, object], found: CoreFootprint, input_bytes: float | None
) -> None:
    """8. One wave of tasks, unless the input fills several; 9. memory per task slot (per
    executor where its width is unknown)."""
    slots = found.slots
    per_slot = _number(params.get("partitions_per_slot"))
    partitions = _number(params.get("partitions"))
    if per_slot is None and partitions is not None and slots:
        per_slot = partitions / slots
    if per_slot is not None:
        over, under = _side(per_slot, tasks_per_slot(input_bytes, slots))
        _put(out, "tasks per slot over", over)
        _put(out, "tasks per slot under", under)
    memory = _number(params.get("memory"))
    if memory is not None:
        # signed halvings: a linear term, so the unit (GB, MB) only moves the model's bias
        threads = found.layout.threads_per_executor
        _put(out, MEMORY, -math.log2(memory / threads if threads else memory))


def penalties(
    params: dict[str, object], machine: Machine, input_bytes: float | None = None
) -> dict[str, float]:
    """Each rule's penalty (log-time, the prior means) for a candidate; 0 = as the rules say."""
    return {
        name: value * mean
        for name, (value, mean, _) in features(params, machine, input_bytes).items()
    }


PARTITION_BYTES = 128 * 1024**2  # spark.sql.files.maxPartitionBytes: Spark's own task size


def tasks_per_slot(input_bytes: float | None, slots: float | None) -> float:
    """Rule 8's target. Spark's tuning guide says 2-3 tasks per core; that is for inputs that
    make several waves of 128 MB partitions anyway. An input that fills one wave is fastest in
    one (every task more costs its scheduling and start; skew and spill are what more tasks
    buy, and the search measures those). Unknown size: one per slot, and the search moves up."""
    if input_bytes is None or not slots:
        return 1.0
    return min(3.0, max(1.0, input_bytes / PARTITION_BYTES / slots))
