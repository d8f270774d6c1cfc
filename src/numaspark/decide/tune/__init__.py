"""The tuner: find a good configuration in few real runs, on a machine it has never seen.

The search space is a table of parameters with a few discrete values each (layout, binding,
parallelism, or any column of a recorded table); not every combination can run. The method
(docs/experiments.md, "How the tuner chooses", has the studies' numbers):

1. **An informed start.** The studies' rules (rules.py), in the machine's terms
   (threads per core, executors per node, cores per executor against the node), cost every
   candidate in log-time; the cheapest is run first (told a machine, candidates it costs
   alike go in the order told nothing would take). Columns the rules do not know are said.
2. **Local moves.** From the best so far, and from every run within the noise of it: twice
   or half the executors or the cores per executor, or the same threads shaped otherwise;
   other columns one value either way (on a sparse table, the nearest configuration with
   that value) or twice or half a numeric one; then single steps of every column. The next run is
   the neighbour with the largest expected improvement under the rules *updated by every
   run* (`RuleModel`: Bayesian linear regression, the rules' weights as its prior), so
   directions that paid are followed; a neighbour the updated rules put above the best even
   2 sd optimistically is not run. Where the budget could run the whole table, every
   configuration left competes, not only the neighbours.
3. **From a local optimum,** every configuration left (up to 500) is scored by its expected
   improvement under the updated rules; on a larger space TPE (optuna) proposes over the
   whole space and an additive model of the results (`AdditiveModel`) picks the proposal
   with the lowest optimistic prediction. The tuner stops early when that model says nothing
   left can beat the best even 2 sd optimistic, and only once every value left has been run
   at least twice.
4. **Noise.** No configuration is run twice while searching; when the search stops with runs
   left and the runner-up is within the noise of the best, both are run once more and judged
   on medians.

A table's columns that describe the job or its input (the workload, the dataset, its size:
``columns.context_columns``) are context, not knobs: ``context.split`` makes one search per
context, and `tune` runs in each, never moving a context column.

`tune` takes any objective: `replay_objective` (replay.py) looks values up in a recorded table
(to compare strategies offline: bench/tune_replay.py); `live_objective` in decide/tune_runs.py
runs Spark and stores every trial as a normal run.

The package, each module importing only those above it:

- ``space``: the search space, the objective, trials and the result;
- ``machine``: the machine and a candidate's layout and shape in its terms;
- ``columns``: what a table's columns mean (names, synonyms, roles, context, ``--column``);
- ``context``: a table's context columns (the job, its input) held fixed: a search per context;
- ``rules``: the studies' rules as features and penalties in log-time;
- ``models``: `Prior`, `RuleModel` and `AdditiveModel`;
- ``moves``: the local moves and their words;
- ``measured``: what a search measured, its global steps, what a refusal implies;
- ``search``: `tune` and its phases;
- ``replay``: a recorded table as the objective.
"""

from numaspark.decide.tune.columns import (
    CONTEXT,
    NO_ROLE,
    SYNONYMS,
    canonical,
    check_columns,
    context_columns,
    guessed_roles,
    parse_columns,
    roles,
)
from numaspark.decide.tune.context import Context, Contexts, split
from numaspark.decide.tune.machine import (
    BOUND,
    CoreFootprint,
    ExecutorLayout,
    Machine,
    layout_of,
    shape,
    table_machine,
)
from numaspark.decide.tune.measured import MIN_RUNS_TO_MODEL, asks_as_much
from numaspark.decide.tune.models import TREND_SD, AdditiveModel, Prior, RuleModel
from numaspark.decide.tune.moves import LAYOUT_NAMES, Move, neighbours, scaled
from numaspark.decide.tune.replay import read_table, replay_objective
from numaspark.decide.tune.rules import (
    BINDING_ONE,
    BINDING_SEVERAL,
    CATEGORY_SD,
    MEMORY,
    MEMORY_PRESSURE,
    ONE_NODE_SD,
    OVERSUBSCRIBED,
    PARTITION_BYTES,
    POLICY,
    POLICY_WIDE,
    UNKNOWN_SD,
    WEIGHTS,
    features,
    moderate_cores,
    penalties,
    start_threads_per_core,
    tasks_per_slot,
)
from numaspark.decide.tune.search import (
    ENUMERATE,
    MIN_RUNS_TO_STOP,
    _cannot_improve,
    check_search,
    tune,
)
from numaspark.decide.tune.space import Objective, Params, Space, Trial, TuneResult

__all__ = [
    "BINDING_ONE",
    "BINDING_SEVERAL",
    "BOUND",
    "CATEGORY_SD",
    "CONTEXT",
    "ENUMERATE",
    "LAYOUT_NAMES",
    "MEMORY",
    "MEMORY_PRESSURE",
    "MIN_RUNS_TO_MODEL",
    "MIN_RUNS_TO_STOP",
    "NO_ROLE",
    "ONE_NODE_SD",
    "OVERSUBSCRIBED",
    "PARTITION_BYTES",
    "POLICY",
    "POLICY_WIDE",
    "SYNONYMS",
    "TREND_SD",
    "UNKNOWN_SD",
    "WEIGHTS",
    "AdditiveModel",
    "Context",
    "Contexts",
    "CoreFootprint",
    "ExecutorLayout",
    "Machine",
    "Move",
    "Objective",
    "Params",
    "Prior",
    "RuleModel",
    "Space",
    "Trial",
    "TuneResult",
    "_cannot_improve",
    "asks_as_much",
    "canonical",
    "check_columns",
    "check_search",
    "context_columns",
    "features",
    "guessed_roles",
    "layout_of",
    "moderate_cores",
    "neighbours",
    "parse_columns",
    "penalties",
    "read_table",
    "replay_objective",
    "roles",
    "scaled",
    "shape",
    "split",
    "start_threads_per_core",
    "table_machine",
    "tasks_per_slot",
    "tune",
]
