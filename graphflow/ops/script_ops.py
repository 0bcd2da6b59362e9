"""`tf.py_func` / `tf.numpy_function` / `tf.py_function`: an op whose kernel calls a Python
function on numpy arrays (`py_function`'s function gets them as eager-style values).

The function itself stays in this process: the op's `token` attr names it in `FUNCTIONS`, an
entry that lives as long as the graph. A token is `pyfunc_<n>_<tag>`, `tag` random per process,
so a graph read back in this process (`tf.train.import_meta_graph`, `tf.import_graph_def`) finds
the function it named, and a graph from another process or from TensorFlow (`pyfunc_0`) never
finds, and so never calls, a function of this one.

As in TensorFlow, a checkpoint's `.meta`, a SavedModel and a GraphDef hold the op (TensorFlow's
`PyFunc` node: `token`, `Tin`, `Tout`) and a graph holding one is read without its function: the
op runs only when this process registered its token, and otherwise fails naming the op, its line
and the token (TensorFlow: "Could not find callback with key=pyfunc_0"). graphflow's own file
refuses it (`graphflow.save`, OpDef flag `cannot_save`): a `.gfz` promises a graph that runs in a
fresh process without the code that built it. Loaders refuse the op unless `allow_io=True`
(`touches="python"`). It has no gradient (TF1: NotDifferentiable) and unknown output shapes.
"""

import itertools
import secrets
import threading
import weakref

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, no_gradient

FUNCTIONS = {}  # token -> Python callable, removed when the graph holding the op is collected
_TOKENS = itertools.count()
_PROCESS_TAG = secrets.token_hex(8)  # tokens of another process never name this one's functions
_LOCK = threading.Lock()

CANNOT_SAVE = ("it calls a Python function, which cannot travel in a graph file; save the graph "
               "without it (build the part to save separately) or replace it by graphflow ops")


def _py_func_infer(inputs, attrs):
    # a graph read from a file may name a function this process lacks: its run says so
    return [(dtypes.as_dtype(t), TensorShape(None)) for t in attrs["Tout"]]


define("PyFunc", _py_func_infer, stateful=True, attrs="token:string Tout:list(dtype)",
       touches="python", cannot_save=CANNOT_SAVE, value_dependent_shape=True,
       onnx=no_onnx.none("calls Python code"))
no_gradient("PyFunc")


def _register(func, graph):
    with _LOCK:
        token = f"pyfunc_{next(_TOKENS)}_{_PROCESS_TAG}"
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


class EagerValue(np.ndarray):
    """An input of a `tf.py_function` function: a numpy array that also answers TF's eager
    tensor methods (`.numpy()`)."""

    def numpy(self):
        return np.asarray(self)


def _eager_style(func):
    def call(*arrays):
        values = [np.asarray(a).view(EagerValue) for a in arrays]
        out = func(*values)
        if isinstance(out, (list, tuple)):
            return [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in out]
        return None if out is None else np.asarray(out.numpy() if hasattr(out, "numpy") else out)
    call.__name__ = getattr(func, "__name__", "py_function")
    return call


def py_function(func, inp, Tout, name=None):
    """`tf.py_function(func, inp, Tout)`: in graph mode TF's `py_func` whose function gets its
    inputs as eager-style values; here numpy arrays that also answer `.numpy()` (graphflow has
    no eager mode: graphflow ops called inside `func` build graph ops, they do not run). `func`
    may return arrays or objects with `.numpy()`. `Tout` as in `py_func`; no gradient flows
    through (TF differentiates it with its eager tape)."""
    return py_func(_eager_style(func), inp, Tout, name=name or "EagerPyFunc")


def numpy_function(func, inp, Tout, name=None):
    """`tf.numpy_function`: `py_func` (arrays in, arrays out)."""
    return py_func(func, inp, Tout, name=name)


__all__ = ["py_func", "py_function", "numpy_function"]
