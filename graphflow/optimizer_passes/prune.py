"""Pruning / dead-code elimination: drop every op that no fetched or fed tensor, fetched op or
stateful op needs (over data and control edges).

Stateful ops in the plan's graph are kept even when nothing reads their outputs: they were needed by
the fetches before optimization, and their effects (variable writes) must still happen. Ops that a
kept op depends on only through a control edge are kept too.
"""

from graphflow.optimizer_passes.rewrite import Editor
from graphflow.optimizer_passes.stats import PassStats, Timer

NAME = "prune"


def run(graph, preserve):
    stats = PassStats(NAME)
    with Timer(stats, graph):
        stats.rewrites = Editor(graph, preserve).commit()
    return stats
