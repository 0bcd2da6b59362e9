"""`tf.keras.backend`'s graph-building functions as TF1 Keras defined them: variables (tracked, so
the backend session initializes them), constants and placeholders of floatx, updates, gradients,
learning-phase switches, and `function`, the callable that feeds a list of arrays to `inputs`,
runs `outputs` with `updates` in the backend session and returns their values.

As in TF1 Keras, `zeros`/`ones`/`eye` of a fully known shape return variables (initialized by
`get_session`), `moving_average_update` zero-debiases (TF1's assign_moving_average), and the
updates of a `function` run after its first output is computed (a control dependency), so the
outputs show the values from before the update.
"""

import builtins

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph
from graphflow.ops import control_flow_ops, linalg_ops, math_ops, shape_ops, state_ops
from graphflow.ops.core_ops import constant as _constant
from graphflow.ops.core_ops import convert_to_tensor, group
from graphflow.ops.core_ops import identity as _identity
from graphflow.ops.core_ops import placeholder as _placeholder
from graphflow.ops.gradient_ops import stop_gradient as _stop_gradient
from graphflow.ops.gradients import gradients as _gradients
from graphflow.tf1.keras import backend as _backend


def _floatx_dtype(dtype):
    return dtypes.as_dtype(dtype or _backend.floatx())


# ------------------------------------------------------------------ variables and constants
def variable(value, dtype=None, name=None, constraint=None):
    """A `tf.Variable` of `value` (floatx unless `dtype`), initialized by the backend session."""
    if constraint is not None:
        raise NotImplementedError("tf.keras.backend.variable: constraints are not supported")
    dtype = _floatx_dtype(dtype)
    if not hasattr(value, "op"):
        value = np.asarray(value, dtype=dtype.as_numpy_dtype)
    v = state_ops.Variable(value, dtype=dtype, name=name)
    _backend.track_variable(v)
    return v


def is_variable(x):
    return isinstance(x, state_ops.Variable)


def constant(value, dtype=None, shape=None, name=None):
    return _constant(value, dtype=_floatx_dtype(dtype), shape=shape, name=name or "Const")


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """A placeholder of floatx (or `dtype`); `ndim` alone gives `ndim` unknown dimensions."""
    if sparse:
        raise NotImplementedError("tf.keras.backend.placeholder(sparse=True) is not supported")
    if not shape and ndim:
        shape = (None,) * ndim
    return _placeholder(_floatx_dtype(dtype), shape=shape, name=name)


def is_placeholder(x):
    return getattr(getattr(x, "op", None), "type", None) in ("Placeholder",
                                                             "PlaceholderWithDefault")


def _variable_if_known(tensor, dtype, name):
    if builtins.all(tensor.shape.as_list()):
        return variable(tensor, dtype=dtype, name=name)
    return tensor


def zeros(shape, dtype=None, name=None):
    """Zeros: a variable when the shape is fully known (Keras 2), else a tensor."""
    dtype = _floatx_dtype(dtype)
    return _variable_if_known(shape_ops.zeros(shape, dtype), dtype, name)


def ones(shape, dtype=None, name=None):
    """Ones: a variable when the shape is fully known (Keras 2), else a tensor."""
    dtype = _floatx_dtype(dtype)
    return _variable_if_known(shape_ops.ones(shape, dtype), dtype, name)


def eye(size, dtype=None, name=None):
    """An identity-matrix variable; `size` is n or (n, m)."""
    dtype = _floatx_dtype(dtype)
    n, m = size if isinstance(size, (list, tuple)) else (size, size)
    return variable(linalg_ops.eye(n, m, dtype=dtype), dtype=dtype, name=name)


def zeros_like(x, dtype=None, name=None):
    return shape_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return shape_ops.ones_like(x, dtype=dtype, name=name)


def identity(x, name=None):
    return _identity(x, name=name)


def eval(x):  # noqa: A001 - Keras's name
    return _backend.get_value(x)


# ------------------------------------------------------------------ updates and gradients
def update(x, new_x):
    return state_ops.assign(x, new_x)


def update_add(x, increment):
    return state_ops.assign_add(x, increment)


def update_sub(x, decrement):
    return state_ops.assign_sub(x, decrement)


def moving_average_update(x, value, momentum):
    """x <- the zero-debiased moving average of `value` (TF1 Keras: assign_moving_average with
    zero_debias): a 'x/biased' accumulator b <- b - (b - value) * (1 - momentum) and a step
    count t, then x <- b / (1 - momentum ** t)."""
    x = x if isinstance(x, state_ops.Variable) else None
    if x is None:
        raise TypeError("tf.keras.backend.moving_average_update updates a variable")
    graph = get_default_graph()
    base = x.op.name
    with graph.name_scope(None):
        biased = state_ops.Variable(shape_ops.zeros(x.shape.as_list(), x.dtype), trainable=False,
                                    name=base + "/biased")
        step = state_ops.Variable(convert_to_tensor(0.0, dtype=x.dtype), trainable=False,
                                  name=base + "/local_step")
    _backend.track_variable(biased)
    _backend.track_variable(step)
    with graph.name_scope("AssignMovingAvg"):
        decay = 1.0 - math_ops.cast(convert_to_tensor(momentum), x.dtype)
        value = math_ops.cast(convert_to_tensor(value), x.dtype)
        new_biased = biased.assign_sub((biased.read_value() - value) * decay)
        new_step = step.assign_add(convert_to_tensor(1.0, dtype=x.dtype))
        factor = 1.0 - math_ops.pow(1.0 - decay, new_step)
        return x.assign_sub(x.read_value() - new_biased / factor)


def gradients(loss, variables):
    return _gradients(loss, variables, colocate_gradients_with_ops=True)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [_stop_gradient(v) for v in variables]
    return _stop_gradient(variables)


# ------------------------------------------------------------------ learning-phase switches
def _branch(value):
    return value() if callable(value) else value


def switch(condition, then_expression, else_expression):
    """`then_expression` where `condition` holds, else `else_expression`: a scalar condition picks
    a branch (tf.cond; callables are called in their branch), a tensor condition picks elements
    (broadcast over the trailing axes of the expressions)."""
    condition = convert_to_tensor(condition)
    if condition.dtype != dtypes.bool_:
        condition = math_ops.cast(condition, dtypes.bool_)
    cond_ndim = condition.shape.ndims
    if cond_ndim is None:
        raise ValueError("tf.keras.backend.switch: the condition must have a known rank")
    if not cond_ndim:
        return control_flow_ops.cond(condition, lambda: convert_to_tensor(
            _branch(then_expression)), lambda: convert_to_tensor(_branch(else_expression)))
    then_expression = convert_to_tensor(_branch(then_expression))
    else_expression = convert_to_tensor(_branch(else_expression))
    expr_ndim = then_expression.shape.ndims
    if cond_ndim > expr_ndim:
        raise ValueError(f"Rank of `condition` should be less than or equal to rank of "
                         f"`then_expression` and `else_expression`. ndim(condition)={cond_ndim},"
                         f" ndim(then_expression)={expr_ndim}")
    if cond_ndim < expr_ndim:
        expr_shape = shape_ops.shape(then_expression)
        ones = convert_to_tensor(np.ones(expr_ndim - cond_ndim, np.int32))
        condition = shape_ops.reshape(condition, shape_ops.concat(
            [shape_ops.shape(condition, out_type=dtypes.int32), ones], 0))
        condition = math_ops.logical_and(condition, math_ops.cast(
            shape_ops.ones(expr_shape, dtypes.int32), dtypes.bool_))
    return math_ops.where(condition, then_expression, else_expression)


def in_train_phase(x, alt, training=None):
    """`x` in the training phase, else `alt` (callables are called only in their branch)."""
    if training is None:
        training = _backend.learning_phase()
    if training is True or (isinstance(training, int) and training == 1):
        return _branch(x)
    if training is False or (isinstance(training, int) and training == 0):
        return _branch(alt)
    return switch(training, x, alt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


# ------------------------------------------------------------------ small helpers
def backend():
    return "tensorflow"


def cast_to_floatx(x):
    return np.asarray(x, dtype=_backend.floatx())


def is_sparse(tensor):
    from graphflow.ops.sparse_tensor import SparseTensor
    return isinstance(tensor, SparseTensor)


def is_keras_tensor(x):
    """True for a tensor a Keras layer (or `Input`) made."""
    from graphflow.tf1.keras.base_layer import history
    if not hasattr(x, "op") and not isinstance(x, state_ops.Variable):
        raise ValueError(f"Unexpectedly found an instance of type `{type(x)}`. Expected a "
                         "symbolic tensor instance.")
    return history(x) is not None


def name_scope(name):
    return get_default_graph().name_scope(name)


def print_tensor(x, message=""):
    """`x`, printing its value (prefixed by `message`) when it is computed."""
    from graphflow.ops.logging_ops import Print
    return Print(x, [x], message)


def map_fn(fn, elems, name=None, dtype=None):
    from graphflow.ops.functional_ops import map_fn as _map_fn
    return _map_fn(fn, elems, name=name, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    from graphflow.ops.functional_ops import foldl as _foldl
    return _foldl(fn, elems, initializer=initializer, name=name)


def foldr(fn, elems, initializer=None, name=None):
    from graphflow.ops.functional_ops import foldr as _foldr
    return _foldr(fn, elems, initializer=initializer, name=name)


def in_top_k(predictions, targets, k):
    from graphflow.ops.index_ops import in_top_k as _in_top_k
    return _in_top_k(predictions, targets, k)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):  # noqa: A002
    """A variable drawn from N(mean, scale) (numpy's generator, seeded by `seed`)."""
    if seed is None:
        seed = np.random.randint(10e8)
    value = np.random.RandomState(seed).normal(mean, scale, size=shape)
    return variable(value, dtype=dtype, name=name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):  # noqa: A002
    """A variable drawn from U(low, high) (numpy's generator, seeded by `seed`)."""
    if seed is None:
        seed = np.random.randint(10e8)
    value = np.random.RandomState(seed).uniform(low, high, size=shape)
    return variable(value, dtype=dtype, name=name)


# ------------------------------------------------------------------ function
_SESSION_KWARGS = ("fetches", "feed_dict", "options", "run_metadata")


class GraphExecutionFunction:
    """The callable `function` returns: `f([array, ...])` -> the outputs' values."""

    def __init__(self, inputs, outputs, updates=None, name=None, **session_kwargs):
        if not isinstance(inputs, (list, tuple)):
            raise TypeError("`inputs` to a Keras backend function should be a list or tuple.")
        unknown = sorted(set(session_kwargs) - set(_SESSION_KWARGS))
        if unknown:
            raise ValueError(f"Invalid argument {unknown[0]!r} passed to K.function with "
                             f"TensorFlow backend (it takes inputs, outputs, updates, name and "
                             f"{list(_SESSION_KWARGS)})")
        self.inputs = list(inputs)
        self._structure = outputs
        flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        self.outputs = [convert_to_tensor(o) for o in flat]
        self.name = name
        update_ops = []
        with get_default_graph().control_dependencies(self.outputs[:1]):
            for item in updates or ():
                if isinstance(item, tuple):
                    variable_, new_value = item
                    update_ops.append(state_ops.assign(variable_, new_value))
                else:
                    update_ops.append(item)
            self.updates_op = group(*update_ops)
        fetches = session_kwargs.pop("fetches", [])
        self.fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
        self.feed_dict = dict(session_kwargs.pop("feed_dict", None) or {})
        self.run_options = session_kwargs

    def __call__(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        if len(inputs) != len(self.inputs):
            raise ValueError(f"A Keras backend function of {len(self.inputs)} inputs was called "
                             f"with {len(inputs)} values")
        feed = dict(self.feed_dict)
        for tensor, value in zip(self.inputs, inputs):
            if value is None:
                continue
            tensor = convert_to_tensor(tensor)
            feed[tensor] = np.asarray(value, dtype=tensor.dtype.base_dtype.as_numpy_dtype)
        session = _backend.get_session()
        fetched = session.run(self.outputs + [self.updates_op] + self.fetches, feed_dict=feed,
                              **self.run_options)
        values = fetched[:len(self.outputs)]
        if isinstance(self._structure, (list, tuple)):
            return type(self._structure)(values)
        return values[0]


def function(inputs, outputs, updates=None, name=None, **kwargs):
    """`K.function(inputs, outputs, updates=None)`: see `GraphExecutionFunction`."""
    return GraphExecutionFunction(inputs, outputs, updates=updates, name=name, **kwargs)


__all__ = ["variable", "constant", "placeholder", "zeros", "ones",
           "eye", "zeros_like", "ones_like", "eval", "update", "update_add",
           "update_sub", "moving_average_update", "gradients", "stop_gradient", "switch",
           "in_train_phase", "in_test_phase", "function", "backend", "cast_to_floatx",
           "is_sparse", "is_keras_tensor", "name_scope", "print_tensor", "map_fn", "foldl",
           "foldr", "in_top_k", "random_normal_variable", "random_uniform_variable"]
