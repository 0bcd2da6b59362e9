"""Gradients a program defines itself: `tf.RegisterGradient(name)` with
`graph.gradient_override_map({op_type: name})` (the straight-through estimator of quantized and
binarized networks: `{"Round": "Identity"}`, `{"Sign": "MySign"}`), and the `tf.custom_gradient`
decorator.

`custom_gradient(f)`: `f(*xs)` returns `(ys, grad_fn)`; the result is ys passed through one
IdentityN op over `ys + xs` whose gradient, registered under a fresh name, calls `grad_fn(*dys)`
and hands its results to the xs — nothing flows back through the ops inside `f`. As in TF1 graph
mode, `f` takes tensors positionally (no keyword arguments); a `grad_fn` that also takes
`variables=` receives the variables `f` read and returns `(grads for xs, grads for variables)`.

Overrides are properties of the graph that built the ops: `gradients()` on that graph uses them; a
graph saved to a file keeps its ops but not the overrides.
"""

import inspect
import itertools

from graphflow.framework.graph import get_default_graph
from graphflow.ops import registry
from graphflow.ops.core_ops import convert_to_tensor, identity_n

_CUSTOM_IDS = itertools.count()


class RegisterGradient:
    """`@tf.RegisterGradient("MySquare")` above `def grad(op, grad): ...` registers it under that
    name for `gradient_override_map`."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        registry.register_named_gradient(self._op_type, fn)
        return fn


def _variables_read_between(graph, first_op_id):
    """The variables whose value ops were created since `first_op_id` (read inside `f`)."""
    found = []
    for op in graph.get_operations()[first_op_id:]:
        for t in op.inputs:
            src = t.op
            if registry.lookup(src.type).variable and src.outputs[0] not in found:
                found.append(src.outputs[0])
    return found


def custom_gradient(f):
    """Decorator: `f(*xs) -> (ys, grad_fn)` where `grad_fn(*dys)` gives the gradients of the xs."""
    def decorated(*args, **kwargs):
        if kwargs:
            raise ValueError("The custom_gradient decorator takes tensors as positional arguments "
                             "only (keyword arguments need eager execution in TF1 too)")
        graph = get_default_graph()
        xs = [convert_to_tensor(a) for a in args]
        first = graph.num_ops()
        result, grad_fn = f(*xs)
        single = not isinstance(result, (list, tuple))
        ys = [convert_to_tensor(result)] if single else [convert_to_tensor(y) for y in result]
        wants_variables = "variables" in inspect.signature(grad_fn).parameters
        variables = _variables_read_between(graph, first) if wants_variables else []
        inputs = ys + xs + variables
        n_y, n_x = len(ys), len(xs)

        def rule(op, *grads):
            dys = grads[:n_y]
            if wants_variables:
                dxs, dvars = grad_fn(*dys, variables=variables)
                dvars = list(dvars)
            else:
                dxs, dvars = grad_fn(*dys), []
            dxs = [dxs] if not isinstance(dxs, (list, tuple)) else list(dxs)
            if len(dxs) != n_x:
                raise ValueError(f"custom_gradient: grad_fn returned {len(dxs)} gradients for "
                                 f"{n_x} inputs of {f.__name__}")
            if len(dvars) != len(variables):
                raise ValueError(f"custom_gradient: grad_fn returned {len(dvars)} variable "
                                 f"gradients for {len(variables)} variables read by {f.__name__}")
            as_tensors = [None if g is None else convert_to_tensor(g) for g in dxs + dvars]
            return [None] * n_y + as_tensors

        name = f"CustomGradient-{next(_CUSTOM_IDS)}"
        registry.register_named_gradient(name, rule)
        with graph.gradient_override_map({"IdentityN": name}):
            outs = identity_n(inputs, name=f"{f.__name__}_custom_gradient")
        return outs[0] if single else outs[:n_y]
    decorated.__name__ = getattr(f, "__name__", "custom_gradient")
    decorated.__doc__ = f.__doc__
    return decorated


__all__ = ["RegisterGradient", "custom_gradient"]
