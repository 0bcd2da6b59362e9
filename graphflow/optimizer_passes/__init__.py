"""Graph optimization: the passes that rewrite a plan's private copy of the user's graph before it
runs. This is why a static graph exists: it is known before it runs, so it can be made smaller and
faster first.

`PIPELINE` is the explicit, ordered list of passes. Each pass is a module with a `NAME` and
`run(graph, preserve) -> PassStats`; it must keep every tensor and op in `preserve` (fetched and fed)
and every stateful op's effects. The session runs them on each compiled plan (`Session(optimize=
False)` turns them off, `Session(passes=[...])` picks some); `optimize(fetches)` shows what they do:

    graph, report = graphflow.optimize(train_op, feeds=[x, y])
    print(report)        # ops before/after, rewrites and time per pass
"""

import gc

from graphflow.framework.graph import Operation, Tensor
from graphflow.optimizer_passes import (
    arithmetic,
    constant_folding,
    control_edges,
    cse,
    fusion,
    prune,
)
from graphflow.optimizer_passes.stats import OptimizationReport, PassStats
from graphflow.optimizer_passes.subgraph import PlanGraph, copy_for_plan

PIPELINE = (
    prune,             # drop what no fetch, fed tensor or stateful op needs
    control_edges,     # a pure op's control inputs pass to its readers (frees it for the rules)
    constant_folding,  # evaluate all-constant subgraphs once (exposes neutral constants to ...)
    arithmetic,        # ... simplification rules: x*1, --x, transpose(transpose(x)), log(softmax(x))
    cse,               # merge duplicates (the simplified graph has more of them)
    fusion,            # matmul+bias+activation, then elementwise groups, into single ops
)
# Buffer reuse is not a pass: every plan compile plans memory after placement (engine/memory_plan.py).
PASSES = {p.NAME: p for p in PIPELINE}


def resolve_passes(names=None):
    """The pass modules to run, in pipeline order: all of them for None, else the named ones."""
    if names is None:
        return PIPELINE
    if isinstance(names, str):
        names = [names]
    names = list(names)
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise ValueError(f"Unknown optimization pass(es) {unknown}; the passes are "
                         f"{list(PASSES)} (they always run in that order)")
    if len(set(names)) != len(names):
        raise ValueError(f"Optimization passes listed twice: {names}")
    return tuple(p for p in PIPELINE if p.NAME in names)


def run_pipeline(graph, preserve, passes=None):
    """Run the passes (names, pass modules, or None for all) on `graph`, a plan's copy that they
    modify in place; returns an OptimizationReport."""
    if passes is not None and not isinstance(passes, str) and all(
            hasattr(p, "run") and hasattr(p, "NAME") for p in passes):
        modules = tuple(passes)
    else:
        modules = resolve_passes(passes)
    return OptimizationReport(p.run(graph, preserve) for p in modules)


def optimize_for_plan(fetch_elements, feed_tensors, passes=None, known=None, shapes=None):
    """Copy what a plan needs from the user's graph and optimize the copy; the session's hook.
    `known`: {fed tensor: the value this plan is made for}, `shapes`: {fed tensor: the shape it is
    made for} (`subgraph.copy_for_plan`). Returns a
    PlanGraph with its `report`."""
    # The passes allocate many small objects and free none until the end: the cyclic garbage
    # collector would scan the whole (large) graph again and again for nothing.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        plan_graph = copy_for_plan(list(fetch_elements), list(feed_tensors), known, shapes)
        plan_graph.report = run_pipeline(plan_graph.graph, plan_graph.preserve, passes)
    finally:
        if gc_was_enabled:
            gc.enable()
    return plan_graph


def optimize(fetches, feeds=None, passes=None):
    """`graphflow.optimize(fetches, feeds=None, passes=None) -> (optimized_graph, report)`.

    `fetches`: a Tensor, Operation, tensor/op name, Variable, or a list/tuple of them. `feeds`: the
    tensors that will be fed (a list, or a feed_dict whose keys are used). The user's graph is not
    modified; the optimized graph is a new Graph holding what a plan for these fetches would run.
    `report` has per-pass ops before/after, rewrites and time, and `report.kernels` the CPU
    implementation a plan would choose for each op; `print(report)` shows both as tables."""
    single = not isinstance(fetches, (list, tuple))
    leaves = [fetches] if single else list(fetches)
    if not leaves:
        raise ValueError("optimize needs at least one fetch")
    graph = _graph_of(leaves)
    elements = [graph.as_graph_element(f) for f in leaves]
    feed_keys = list(feeds.keys()) if isinstance(feeds, dict) else list(feeds or [])
    feed_tensors = []
    for k in feed_keys:
        t = graph.as_graph_element(k)
        if not isinstance(t, Tensor):
            raise TypeError(f"Cannot feed the Operation '{t.name}': feeds must be Tensors")
        feed_tensors.append(t)
    plan_graph = optimize_for_plan(elements, feed_tensors, resolve_passes(passes))
    report = plan_graph.report
    report.fetches = plan_graph.fetches
    report.feeds = plan_graph.feeds
    report.kernels = kernel_choices(plan_graph.graph)
    return plan_graph.graph, report


def kernel_choices(graph):
    """[(op name, op type, implementation)]: the CPU implementation a plan would choose for each
    op of `graph` that runs a kernel (`graphflow/kernels/registry.py`), in graph order."""
    from graphflow.kernels import KernelNode, SessionState
    from graphflow.kernels import cpu as cpu_kernels
    from graphflow.ops import registry
    state = SessionState()
    choices = []
    for op in graph.get_operations():
        if registry.lookup(op.type).runs_kernel:
            impl = cpu_kernels.choose(KernelNode.describing(op, state))
            choices.append((op.name, op.type, impl.name))
    return choices


def _graph_of(leaves):
    from graphflow.framework.graph import get_default_graph
    for x in leaves:
        x = x._as_graph_element() if hasattr(x, "_as_graph_element") else x
        if isinstance(x, (Tensor, Operation)):
            return x.graph
    return get_default_graph()


__all__ = ["PIPELINE", "PASSES", "PassStats", "OptimizationReport", "PlanGraph", "optimize",
           "optimize_for_plan", "resolve_passes", "run_pipeline", "kernel_choices"]
