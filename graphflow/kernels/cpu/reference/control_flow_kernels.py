"""numpy-side kernels of the control-flow ops: `While`, `WhileGrad`, `If`.

They run the sub-graphs the ops hold through sub-plans compiled by the engine
(`node.compile_function`), so the loop and branch bookkeeping stays here on the host while the
sub-plans' own steps may be placed on a device.
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.tensor_array_kernels import TensorArrayValue, add_gradient_arrays
from graphflow.kernels.cpu.threads import blas
from graphflow.ops import fused_ops


def _predicate(value, where):
    pred = np.asarray(value)
    if pred.shape != () or pred.dtype != np.bool_:
        raise ValueError(f"{where} must be a scalar bool, got dtype {pred.dtype} and shape "
                         f"{pred.shape}")
    return bool(pred)


def _outputs(values):
    """What the executor expects of a kernel: the value itself for a one-output op."""
    return values[0] if len(values) == 1 else tuple(values)


def _saved(func_graph, names):
    return [func_graph.get_tensor_by_name(n) for n in names]


@cpu_kernel("While")
def _while(node):
    attrs = node.attrs
    cond, body = attrs["cond"], attrs["body"]
    n, n_cond, n_body = len(body.inputs), len(cond.captures), len(body.captures)
    # per-iteration values for the gradient: kept only when this plan runs the gradient loop
    has_history = attrs["grad"] is not None
    keep = has_history and (node.outputs_used is None or node.outputs_used[n])
    run_cond = node.compile_function(cond)
    run_body = node.compile_function(body, _saved(body, attrs["saved"]) if keep else ())
    has_limit = attrs["has_maximum_iterations"]
    where = f"the predicate of the loop '{node.name}'"

    def run_while(*args):
        values = list(args[:n])
        cond_caps = list(args[n:n + n_cond])
        body_caps = list(args[n + n_cond:n + n_cond + n_body])
        # maximum_iterations as TF1: the predicate becomes `iteration < limit and cond(...)`,
        # so the loop ends (no error) after `limit` iterations, runs none for a limit <= 0, and
        # cond runs once more than the body either way
        limit = int(args[-1]) if has_limit else None
        history = []
        iteration = 0
        while True:
            (pred,) = run_cond(values + cond_caps)
            if pred.__class__ is not np.bool_:  # a comparison's usual result skips the check
                pred = _predicate(pred, where)
            if not pred or iteration == limit or (limit is not None and limit < 0):
                break
            out = run_body(values + body_caps)
            values = list(out[:n])
            if keep:
                history.append(out[n:])
            iteration += 1
        if has_history:
            values.append(history if keep else None)
        return _outputs(values)
    return run_while


def _zero_gradient(value):
    if isinstance(value, (TensorArrayValue, dict)):
        return {}
    return np.zeros_like(value)


def _accumulate(total, grad):
    if isinstance(total, dict):
        return add_gradient_arrays(total, grad)
    np.add(total, grad, out=total)  # `total` is this kernel's own array
    return total


class _FunctionOutputs:
    """A function graph seen with other outputs: what `compile_function` reads of it."""

    def __init__(self, graph, outputs):
        self.outputs = outputs
        self.all_inputs = graph.all_inputs


def _unread_totals(grad_graph, num_grads, num_totals):
    """(i, op) for the summed gradients i whose per-iteration value is computed by `op` in G and
    read by nothing else there: what the kernel may compute from stacked rows after the loop."""
    read = {t for op in grad_graph.get_operations() for t in op.inputs}
    outputs = grad_graph.outputs
    for i in range(num_totals):
        t = outputs[num_grads + i]
        if t.op.graph is grad_graph and t not in read and outputs.count(t) == 1:
            yield i, t.op


def _deferred_products(grad_graph, num_grads, num_totals):
    """{i: (a, b)} for the summed gradients i that G computes as one `MatMul(a, b,
    transpose_a=True)` of 2-D per-iteration values read by nothing else in G: a layer's weight
    gradient, inputs^T x activation gradients. Summed over iterations that is ONE product of the
    iterations' stacked rows, [T*B, in]^T x [T*B, out], done after the loop instead of T small
    ones inside it."""
    deferred = {}
    for i, op in _unread_totals(grad_graph, num_grads, num_totals):
        if (not fused_ops.is_matmul(op) or not op.attrs.get("transpose_a", False)
                or op.attrs.get("transpose_b", False)):
            continue
        a, b = op.inputs
        if a.shape.ndims == 2 and b.shape.ndims == 2:
            deferred[i] = (a, b)
    return deferred


def _deferred_column_sums(grad_graph, num_grads, num_totals):
    """{i: x} for the summed gradients i that G computes as `BiasAddGrad(x)` of a 2-D
    per-iteration value x read by nothing else in G: a layer's bias gradient, the sum of its
    activation gradient's rows. Summed over iterations that is ONE column sum of the iterations'
    stacked rows after the loop (rows the weight gradient's product stacks anyway)."""
    return {i: op.inputs[0] for i, op in _unread_totals(grad_graph, num_grads, num_totals)
            if fused_ops.is_bias_add_grad(op) and op.inputs[0].shape.ndims == 2}


def _transposed_operands(grad_graph, sources):
    """Positions j (in G's captures) of loop-invariant values that G reads only as the
    transposed right operand of MatMuls (`x @ W^T`, the activation gradient of a layer). Fed in
    column-major order, W^T is a row-major array and the product runs BLAS's fastest case; the
    values are the same."""
    uses = {}
    for op in grad_graph.get_operations():
        for position, t in enumerate(op.inputs):
            uses.setdefault(t, []).append((op, position))
    outputs = set(grad_graph.outputs)
    chosen = []
    for j, (_, ph) in enumerate(grad_graph.captures):
        if sources[j] >= 0 or ph.shape.ndims != 2 or ph in outputs:
            continue
        consumers = uses.get(ph, [])
        if consumers and all(fused_ops.is_matmul(op) and position == 1
                             and op.attrs.get("transpose_b", False)
                             for op, position in consumers):
            chosen.append(j)
    return chosen


def _stacked_rows(blocks):
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)


@cpu_kernel("WhileGrad")
def _while_grad(node):
    attrs = node.attrs
    grad_graph = attrs["grad"]
    num_grads = attrs["num_grads"]
    sources = attrs["grad_sources"]
    grad_captures = attrs["grad_captures"]
    deferred = _deferred_products(grad_graph, num_grads, len(grad_captures))
    column_sums = _deferred_column_sums(grad_graph, num_grads, len(grad_captures))
    summed = [i for i in range(len(grad_captures)) if i not in deferred and i not in column_sums]
    operands = []  # the per-iteration tensors the deferred products and sums read, each once
    for t in [t for pair in deferred.values() for t in pair] + list(column_sums.values()):
        if t not in operands:
            operands.append(t)
    slot = {t: k for k, t in enumerate(operands)}
    products = [(i, slot[a], slot[b]) for i, (a, b) in deferred.items()]
    sums = [(i, slot[x]) for i, x in column_sums.items()]
    outputs = grad_graph.outputs
    fetched = outputs[:num_grads] + [outputs[num_grads + i] for i in summed] + operands
    run_grad = node.compile_function(_FunctionOutputs(grad_graph, fetched))
    column_major = [num_grads + j for j in _transposed_operands(grad_graph, sources)]
    threads = blas.session_threads(node)
    first_rows = num_grads + len(summed)

    def run_while_grad(*args):
        grads = list(args[:num_grads])
        history = args[num_grads]
        captures = args[num_grads + 1:]
        totals = [_zero_gradient(captures[grad_captures[i]]) for i in summed]
        rows = [[] for _ in operands]
        invariant = [None] * len(sources)
        for k, j in enumerate(sources):
            if j < 0:
                invariant[k] = captures[-1 - j]
        feeds = grads + invariant
        for position in column_major:
            value = feeds[position]
            if isinstance(value, np.ndarray) and value.ndim == 2:
                feeds[position] = np.asfortranarray(value)
        for saved in reversed(history):
            for k, j in enumerate(sources):
                if j >= 0:
                    feeds[num_grads + k] = saved[j]
            out = run_grad(feeds)
            feeds[:num_grads] = out[:num_grads]
            for i, g in enumerate(out[num_grads:first_rows]):
                totals[i] = _accumulate(totals[i], g)
            for k, value in enumerate(out[first_rows:]):
                rows[k].append(value)
        result = list(feeds[:num_grads]) + [None] * len(grad_captures)
        for i, total in zip(summed, totals):
            result[num_grads + i] = total
        stacked = [_stacked_rows(r) if history else None for r in rows]
        for i, a, b in products:
            if history:
                product = blas.matmul(stacked[a].T, stacked[b], threads)
            else:
                product = _zero_gradient(captures[grad_captures[i]])
            result[num_grads + i] = product
        for i, k in sums:
            result[num_grads + i] = (np.add.reduce(stacked[k], axis=0) if history
                                     else _zero_gradient(captures[grad_captures[i]]))
        return _outputs(result)
    return run_while_grad


@cpu_kernel("If")
def _if(node):
    attrs = node.attrs
    then_graph, else_graph = attrs["then_branch"], attrs["else_branch"]
    run_then = node.compile_function(then_graph, _saved(then_graph, attrs["then_saved"]))
    run_else = node.compile_function(else_graph, _saved(else_graph, attrs["else_saved"]))
    n_then = len(then_graph.captures)
    # the values the branch that did not run would have kept: zero scalars of their dtypes (its
    # gradient branch never runs; a gradient reaching them is zero and broadcasts)
    no_then = tuple(np.zeros((), t.dtype.as_numpy_dtype)
                    for t in _saved(then_graph, attrs["then_saved"]))
    no_else = tuple(np.zeros((), t.dtype.as_numpy_dtype)
                    for t in _saved(else_graph, attrs["else_saved"]))
    n_out = len(then_graph.outputs)
    where = f"the predicate of the cond '{node.name}'"

    def run_if(pred, *captures):
        if (bool(pred) if pred.__class__ is np.bool_ else _predicate(pred, where)):
            out = run_then(list(captures[:n_then]))
            return _outputs(out + no_else)
        out = run_else(list(captures[n_then:]))
        return _outputs(out[:n_out] + no_then + out[n_out:])
    return run_if
