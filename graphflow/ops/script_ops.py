"""`tf.py_func` / `tf.numpy_function`: an op whose kernel calls a Python function on numpy arrays.

The function itself stays in this process: the op's `token` attr names it in `FUNCTIONS`, an
entry that lives as long as the graph. So a graph holding one cannot be saved (the function cannot
travel in a file): `graphflow.save` refuses it with a message naming the op (OpDef flag
`cannot_save`). It has no gradient (TF1: NotDifferentiable) and unknown output shapes.
"""

import itertools
import threading
import weakref

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, no_gradient

FUNCTIONS = {}  # token -> Python callable, removed when the graph holding the op is collected
_TOKENS = itertools.count()
_LOCK = threading.Lock()

CANNOT_SAVE = ("it calls a Python function, which cannot travel in a graph file; save the graph "
               "without it (build the part to save separately) or replace it by graphflow ops")


def _py_func_infer(inputs, attrs):
    if attrs["token"] not in FUNCTIONS:
        raise ValueError(f"no Python function is registered under token {attrs['token']!r} "
                         "(functions are not stored in graph files)")
    return [(dtypes.as_dtype(t), TensorShape(None)) for t in attrs["Tout"]]


define("PyFunc", _py_func_infer, stateful=True, attrs="token:string Tout:list(dtype)",
       touches="python", cannot_save=CANNOT_SAVE, value_dependent_shape=True,
       onnx=no_onnx.none("calls Python code"))
no_gradient("PyFunc")


def _register(func, graph):
    with _LOCK:
        token = f"pyfunc_{next(_TOKENS)}"
        FUNCTIONS[token] = func
    weakref.finalize(graph, FUNCTIONS.pop, token, None)
    return token


def py_func(func, inp, Tout, stateful=True, name=None):
    """`tf.py_func(func, inp, Tout)`: call `func(*arrays)` when the op runs. `Tout` is a dtype
    (one output, returned as a Tensor) or a list of dtypes (a list of Tensors). The op is always
    treated as stateful (it runs every time, is never folded or merged); `stateful` is accepted
    for TF1 compatibility."""
    single = not isinstance(Tout, (list, tuple))
    out_types = [dtypes.as_dtype(t).name for t in ([Tout] if single else Tout)]
    inputs = [convert_to_tensor(x) for x in (inp or [])]
    graph = inputs[0].graph if inputs else get_default_graph()
    token = _register(func, graph)
    op = make_op("PyFunc", inputs, {"token": token, "Tout": tuple(out_types)}, name=name or "PyFunc",
                 graph=graph)
    if single:
        return op.outputs[0]
    return list(op.outputs) if out_types else op


def numpy_function(func, inp, Tout, name=None):
    """`tf.numpy_function`: `py_func` (arrays in, arrays out)."""
    return py_func(func, inp, Tout, name=name)


__all__ = ["py_func", "numpy_function"]
