"""numpy-side kernels of the control-flow ops: `While`, `WhileGrad`, `If`.

They run the sub-graphs the ops hold through sub-plans compiled by the engine
(`node.compile_function`), so the loop and branch bookkeeping stays here on the host while the
sub-plans' own steps may be placed on a device.
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.tensor_array_kernels import TensorArrayValue, add_gradient_arrays


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
        limit = int(args[-1]) if has_limit else -1
        if has_limit and limit < 0:
            raise ValueError(f"maximum_iterations must be >= 0, got {limit}")
        history = []
        iteration = 0
        while iteration != limit:
            (pred,) = run_cond(values + cond_caps)
            if pred.__class__ is not np.bool_:  # a comparison's usual result skips the check
                pred = _predicate(pred, where)
            if not pred:
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


@cpu_kernel("WhileGrad")
def _while_grad(node):
    attrs = node.attrs
    grad_graph = attrs["grad"]
    run_grad = node.compile_function(grad_graph)
    num_grads = attrs["num_grads"]
    sources = attrs["grad_sources"]
    grad_captures = attrs["grad_captures"]

    def run_while_grad(*args):
        grads = list(args[:num_grads])
        history = args[num_grads]
        captures = args[num_grads + 1:]
        totals = [_zero_gradient(captures[j]) for j in grad_captures]
        for saved in reversed(history):
            feeds = grads + [saved[k] if k >= 0 else captures[-1 - k] for k in sources]
            out = run_grad(feeds)
            grads = list(out[:num_grads])
            for i, g in enumerate(out[num_grads:]):
                totals[i] = _accumulate(totals[i], g)
        return _outputs(grads + totals)
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
