"""Reverse-mode symbolic differentiation: `tf.gradients` adds the backward pass to the same graph.

The whole algorithm is in this file; what each op's derivative is lives with the op records
(`graphflow/ops/*_grad.py`, `@register_gradient`). A gradient rule `grad(op, *output_grads)` returns
one entry per input (None = no gradient) and builds ordinary graph ops, so gradients of gradients
work (Hessian-vector products are `tf.gradients` of an expression holding `tf.gradients`).

1. Which ops matter. Walk forward from `xs` through consumers, only along floating-point tensors
   and never through an op that stops gradients (StopGradient, ops declared `no_gradient`, the ops
   of `stop_gradients`): that gives the tensors that depend differentiably on `xs`. Walk backward
   from `ys` through inputs inside that set: that gives `between`, the ops a gradient must flow
   through. Both walks are iterative (no recursion) and linear in the size of the subgraph.
2. Seed. Each y starts with `grad_ys[i]`, by default ones shaped like y.
3. Backward sweep. A graph's ops are created in topological order (`op._id`), so visiting
   `between` by decreasing id reaches every op after all of its consumers: each of its outputs
   has received all its gradient contributions. Contributions from several paths are summed with
   one `add_n`; the op's rule runs under the name scope `gradients/<op name>_grad/` (TF1's naming:
   `gradients/Mul_grad/Mul`); the engine checks what the rule returns (one entry per input, dtypes,
   static shapes) and hands each input its share.
4. Read off. The gradient of each x is the sum of what it received: `None` when nothing reached it
   (unconnected, integer, or cut by a stop), or zeros with `unconnected_gradients="zero"`.

Sparse gradients: a rule may return an `IndexedSlices` (`ops/indexed_slices.py`) for an input,
as Gather's does for its params. Contributions that are all IndexedSlices sum to one
IndexedSlices (values and indices concatenated), any dense one makes the sum dense
(`indexed_slices.aggregate`, TF1's aggregation). A rule receives its outputs' gradients dense,
except the rules of `_SPARSE_PASS_THROUGH` (Identity), which hand them on as they are; so an x
read only through gathers gets an IndexedSlices, as in TF1.

Conventions:
* Only floating-point tensors carry gradients. Integer and boolean tensors never do; a rule's
  entries for such inputs are ignored.
* Multi-output ops: if some outputs received a gradient and others did not, the rule gets
  `zeros_like(output)` for each floating output without one (as TF1 does, so rules such as
  Split's or Unstack's never test for None) and None for non-floating outputs. An op declared
  `gradient_takes_none=True` (If, While) gets None instead: its rule skips work for
  outputs no gradient reached.
* An op declared not differentiable (`registry.no_gradient`, TF's NotDifferentiable: comparisons,
  argmax, shape queries, StopGradient) silently passes nothing to its inputs. An op without any
  gradient rule that a gradient must flow through is an error (LookupError naming the op, its
  type and the user's line), as in TF: "No gradient defined for operation ...".
"""


import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.func_graph import FuncGraph
from graphflow.framework.gc_pause import gc_paused
from graphflow.framework.graph import Tensor, _user_location, describe_op, get_default_graph
from graphflow.ops import indexed_slices, math_ops, registry, shape_ops, tensor_array_grad
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.indexed_slices import IndexedSlices

# op types whose gradient rules take an IndexedSlices gradient as it is (they pass it on)
_SPARSE_PASS_THROUGH = frozenset(["Identity"])


class UnconnectedGradients:
    """What `tf.gradients` returns for an x that no y depends on: None or zeros."""

    NONE = "none"
    ZERO = "zero"


class EagerGradientsError(RuntimeError):
    """`tf.gradients` called in eager mode (TF's RuntimeError). A tape that gets it from a
    gradient rule runs the rule again while recording (`engine/tape.py`)."""


def _as_tensors(values, what):
    """A list of Tensors from one Tensor/Variable or a list of them."""
    items = list(values) if isinstance(values, (list, tuple)) else [values]
    out = []
    for v in items:
        as_element = getattr(v, "_as_graph_element", None)
        if as_element is not None:
            v = as_element()
        if not isinstance(v, Tensor):
            raise TypeError(f"tf.gradients: {what} must be Tensors or Variables, got {v!r}")
        out.append(v)
    return out


def _variable_reads(xs, graph):
    """{x: [tensors]} for xs that are variables: the outputs of `v.read_value()` ops are values of
    the same variable (as TF1's identity reads are), so d/dv also collects what they receive."""
    by_name = {x.op.attrs["shared_name"]: x for x in xs if registry.lookup(x.op.type).variable}
    reads = {}
    if by_name:
        for op in graph.get_operations():
            if op.attrs.get("shared_name") in by_name and registry.lookup(op.type).reads_variable:
                reads.setdefault(by_name[op.attrs["shared_name"]], []).append(op.outputs[0])
    return reads


def _differentiable(t):
    """Floating tensors carry gradients, and TensorArray flows (gradient arrays)."""
    return t.dtype.is_floating or t.dtype == dtypes.variant


def _stops_gradient(op):
    """Declared not differentiable (TF's NotDifferentiable): nothing flows to its inputs."""
    return registry.lookup(op.type).no_gradient and registry.gradient_override(op) is None


def _reachable_from(xs, stop_ops):
    """Tensors that depend differentiably on `xs` (xs included) and the ops consuming them."""
    reached = {x for x in xs if _differentiable(x)}
    reached_ops = set()
    stack = list(reached)
    while stack:
        t = stack.pop()
        for op in t._consumers:
            if op in reached_ops:
                continue
            reached_ops.add(op)
            if op in stop_ops or _stops_gradient(op):
                continue
            for out in op.outputs:
                if out not in reached and _differentiable(out):
                    reached.add(out)
                    stack.append(out)
    return reached, reached_ops


def _between(ys, reached, reached_ops):
    """Ops on a differentiable path from some x to some y."""
    between = set()
    stack = [y.op for y in ys if y in reached and y.op in reached_ops]
    while stack:
        op = stack.pop()
        if op in between:
            continue
        between.add(op)
        for t in op.inputs:
            if t in reached and t.op in reached_ops and t.op not in between:
                stack.append(t.op)
    return between


def _sum(grads):
    """One gradient from the contributions of several paths (None when there are none)."""
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if grads[0].dtype == dtypes.variant:
        return tensor_array_grad.add_gradients(grads)
    return indexed_slices.aggregate(grads)


def _seed(y, grad_y, index):
    """The starting gradient of `y`: `grad_y` checked against y, or ones shaped like y."""
    if grad_y is None:
        if y.shape.is_fully_defined():
            return shape_ops.ones(y.shape.dims, dtype=y.dtype, name=f"grad_ys_{index}")
        return shape_ops.ones_like(y, name=f"grad_ys_{index}")
    if isinstance(grad_y, Tensor) or hasattr(grad_y, "_as_graph_element"):
        grad_y = convert_to_tensor(grad_y)
        if grad_y.dtype != y.dtype:
            raise TypeError(f"tf.gradients: grad_ys[{index}] has dtype {grad_y.dtype.name} but "
                            f"ys[{index}] ({y.name}) has dtype {y.dtype.name}")
    else:
        grad_y = constant(np.asarray(grad_y), dtype=y.dtype, name=f"grad_ys_{index}")
    if not grad_y.shape.is_compatible_with(y.shape):
        raise ValueError(f"tf.gradients: grad_ys[{index}] has shape {grad_y.shape}, incompatible "
                         f"with the shape {y.shape} of ys[{index}] ({y.name})")
    return grad_y


def _missing_rule_error(op):
    where = _user_location()
    called = f" (tf.gradients called at {where})" if where is not None else ""
    return LookupError(
        f"No gradient defined for operation {describe_op(op)}: op type '{op.type}' has no "
        f"gradient rule, and a gradient must flow through it{called}. Register one with "
        f"@register_gradient('{op.type}'), declare the op not differentiable with "
        "registry.no_gradient, or cut the path with tf.stop_gradient.")


def _output_grads(op, pending):
    """The summed gradient of each output of `op` (None where none arrived); zeros for floating
    outputs of a multi-output op that got nothing while others did."""
    grads = [_sum(pending.pop(t, None)) for t in op.outputs]
    if op.type not in _SPARSE_PASS_THROUGH:
        grads = [indexed_slices.to_dense(g) if isinstance(g, IndexedSlices) else g
                 for g in grads]
    if registry.lookup(op.type).gradient_takes_none:
        return grads  # the rule tells "no gradient" from a zero one (If, While)
    if len(grads) > 1 and any(g is not None for g in grads):
        for i, t in enumerate(op.outputs):
            if grads[i] is None and _differentiable(t):
                grads[i] = (tensor_array_grad.zero_gradient() if t.dtype == dtypes.variant
                            else shape_ops.zeros_like(t))
    return grads


def _apply_rule(rule, op, out_grads):
    """Run `op`'s gradient rule and check its result: one Tensor-or-None per input."""
    in_grads = rule(op, *out_grads)
    if not isinstance(in_grads, (list, tuple)):
        in_grads = (in_grads,)
    if len(in_grads) != len(op.inputs):
        raise ValueError(f"The gradient rule of {op.type} returned {len(in_grads)} gradients for "
                         f"{describe_op(op)}, which has {len(op.inputs)} inputs")
    for t, g in zip(op.inputs, in_grads):
        if g is None or not _differentiable(t):
            continue
        if not isinstance(g, (Tensor, IndexedSlices)):
            raise TypeError(f"The gradient rule of {op.type} returned {g!r} for input {t.name} of "
                            f"{describe_op(op)}; expected a Tensor, IndexedSlices or None")
        if g.dtype != t.dtype:
            raise TypeError(f"The gradient rule of {op.type} returned a {g.dtype.name} gradient "
                            f"for the {t.dtype.name} input {t.name} of {describe_op(op)}")
        if not g.shape.is_compatible_with(t.shape):
            raise ValueError(f"The gradient rule of {op.type} returned a gradient of shape "
                             f"{g.shape} for input {t.name} of shape {t.shape} of "
                             f"{describe_op(op)}")
    return in_grads


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """`tf.gradients`: symbolic d(sum of ys)/d(x) for each x in `xs`, as new ops in the graph.

    ys, xs: a Tensor (or Variable) or a list of them. grad_ys: one starting gradient per y (None
    entries = ones). stop_gradients: tensors treated as constants. unconnected_gradients: "none"
    (return None for an x no y depends on) or "zero". Returns a list with one entry per x.
    `colocate_gradients_with_ops`, `gate_gradients` and `aggregation_method` are accepted for TF1
    compatibility and do not change the result.
    """
    ys = _as_tensors(ys, "ys")
    xs = _as_tensors(xs, "xs")
    stop_tensors = _as_tensors(stop_gradients, "stop_gradients") if stop_gradients else []
    mode = getattr(unconnected_gradients, "value", unconnected_gradients)
    if mode not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        raise ValueError(f"unconnected_gradients must be 'none' or 'zero', got "
                         f"{unconnected_gradients!r}")
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    elif not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    if len(grad_ys) != len(ys):
        raise ValueError(f"tf.gradients: got {len(grad_ys)} grad_ys for {len(ys)} ys")
    if not xs:
        return []
    graph = (ys + xs)[0].graph
    if graph.eager and get_default_graph().eager:
        if graph.rule_gradients is not None:  # a gradient rule differentiating its own ops
            return graph.rule_gradients(ys, xs, grad_ys, mode)
        raise EagerGradientsError("tf.gradients is not supported when eager execution is "
                                  "enabled. Use tf.GradientTape instead.")
    for t in ys + xs + stop_tensors:
        if t.graph is not graph:
            raise ValueError(f"tf.gradients: {t.name} is from a different graph than {ys[0].name}")

    stop_ops = {t.op for t in stop_tensors}
    reads = _variable_reads(xs, graph)
    sources = xs + [r for rs in reads.values() for r in rs]
    reached, reached_ops = _reachable_from(sources, stop_ops)
    between = _between(ys, reached, reached_ops)

    default = get_default_graph()
    if isinstance(default, FuncGraph) and default.is_nested_in(graph):
        graph = default  # differentiating a loop body or branch: build inside the function graph
    with gc_paused(), graph.as_default(), graph.name_scope(name):
        pending = {}  # tensor -> gradient contributions received so far
        for i, (y, grad_y) in enumerate(zip(ys, grad_ys)):
            if y in reached:
                pending.setdefault(y, []).append(_seed(y, grad_y, i))
        x_set = set(sources)
        x_grads = {}
        for op in sorted(between, key=lambda o: o._id, reverse=True):
            for t in op.outputs:  # an x produced by an op on the path: keep its total
                if t in x_set and t in pending:
                    pending[t] = [_sum(pending[t])]
                    x_grads[t] = pending[t][0]
            if op in stop_ops:
                continue
            if not any(t in pending for t in op.outputs):
                continue
            rule = registry.gradient_rule(op)
            if rule is None:
                raise _missing_rule_error(op)
            with graph.name_scope(op.name + "_grad"):
                out_grads = _output_grads(op, pending)
                in_grads = _apply_rule(rule, op, out_grads)
            for t, g in zip(op.inputs, in_grads):
                if g is not None and t in reached:
                    pending.setdefault(t, []).append(g)
        for t in sources:  # xs no op on the path produces: sum what they received
            if t not in x_grads:
                x_grads[t] = _sum(pending.pop(t, None))
        results = {}
        for x in xs:
            if x not in results:
                parts = [x_grads[t] for t in [x] + reads.get(x, []) if x_grads[t] is not None]
                g = _sum(parts)
                if g is None and mode == UnconnectedGradients.ZERO:
                    g = shape_ops.zeros_like(x)
                results[x] = g
    return [results[x] for x in xs]


def dense_gradients(ys, xs, **kwargs):
    """`gradients` with every IndexedSlices densified: for the callers inside graphflow whose
    results must be Tensors (a function graph's outputs, Hessians, gradient checks)."""
    return [indexed_slices.to_dense(g, warn=False) if isinstance(g, IndexedSlices) else g
            for g in gradients(ys, xs, **kwargs)]


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """`tf.hessians`: for each x, the matrix of second derivatives of sum(ys), shaped
    `x.shape + x.shape`. Each x needs a fully defined static shape (one gradient pass per
    element of x is added to the graph, so this is meant for small x)."""
    xs = _as_tensors(xs, "xs")
    graph = xs[0].graph
    results = []
    with graph.as_default(), graph.name_scope(name):
        for x in xs:
            if not x.shape.is_fully_defined():
                raise ValueError(f"tf.hessians needs a fully defined static shape for {x.name}, "
                                 f"got {x.shape}")
            n = x.shape.num_elements()
            (g,) = dense_gradients(ys, x)
            if g is None:
                results.append(None)
                continue
            g_flat = shape_ops.reshape(g, [n])
            rows = []
            for i in range(n):
                pick = np.zeros(n, dtype=x.dtype.as_numpy_dtype)
                pick[i] = 1
                g_i = math_ops.reduce_sum(g_flat * constant(pick))
                (row,) = dense_gradients(g_i, x,
                                         unconnected_gradients=UnconnectedGradients.ZERO)
                rows.append(shape_ops.reshape(row, [n]))
            hessian = shape_ops.stack(rows) if rows else shape_ops.zeros([0, 0], dtype=x.dtype)
            results.append(shape_ops.reshape(hessian, list(x.shape.dims) * 2))
    return results


__all__ = ["gradients", "hessians", "UnconnectedGradients"]
