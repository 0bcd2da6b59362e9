"""`tf.debugging` (and the `tf.assert_*` aliases): assertions built from comparison ops and
`tf.Assert`, plus `check_numerics` and `Assert` re-exported. As in TF1, an assertion whose inputs
are constants is also checked when it is built, and `assert_rank`/`assert_type` are checked
statically when the rank/dtype is known (returning a no-op).
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.errors import InvalidArgumentError
from graphflow.framework.graph import get_default_graph
from graphflow.ops import math_ops
from graphflow.ops.core_ops import constant, convert_pair, convert_to_tensor, no_op
from graphflow.ops.logging_ops import Assert, check_numerics
from graphflow.ops.shape_ops import rank as rank_of
from graphflow.ops.static_value import constant_value

_COMPARISONS = {  # name: (op constructor, numpy test, symbol in the message)
    "assert_equal": (math_ops.equal, np.equal, "=="),
    "assert_none_equal": (math_ops.not_equal, np.not_equal, "!="),
    "assert_less": (math_ops.less, np.less, "<"),
    "assert_less_equal": (math_ops.less_equal, np.less_equal, "<="),
    "assert_greater": (math_ops.greater, np.greater, ">"),
    "assert_greater_equal": (math_ops.greater_equal, np.greater_equal, ">="),
}


def _static_check(test, values, data):
    if any(v is None for v in values):
        return
    if not np.all(test(*values)):
        text = " ".join(str(d) if not hasattr(d, "dtype") or not hasattr(d, "op")
                        else str(constant_value(d)) for d in data)
        raise InvalidArgumentError(None, None, f"assertion failed: {text}")


def _binary_assert(kind, x, y, data, summarize, message, name):
    op_fn, test, symbol = _COMPARISONS[kind]
    graph = get_default_graph()
    with graph.name_scope(name or kind):
        x, y = convert_pair(x, y)
        if data is None:
            data = [message or "", f"Condition x {symbol} y did not hold element-wise:",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        _static_check(test, (constant_value(x), constant_value(y)), data)
        condition = math_ops.reduce_all(op_fn(x, y))
        return Assert(condition, data, summarize=summarize)


def _make_binary(kind):
    def check(x, y, data=None, summarize=None, message=None, name=None):
        return _binary_assert(kind, x, y, data, summarize, message, name)
    op_symbol = _COMPARISONS[kind][2]
    check.__name__ = kind
    check.__doc__ = (f"`tf.debugging.{kind}(x, y)`: an Assert op failing the run unless "
                     f"x {op_symbol} y holds for every element (broadcasting).")
    return check


assert_equal = _make_binary("assert_equal")
assert_none_equal = _make_binary("assert_none_equal")
assert_less = _make_binary("assert_less")
assert_less_equal = _make_binary("assert_less_equal")
assert_greater = _make_binary("assert_greater")
assert_greater_equal = _make_binary("assert_greater_equal")


def _sign_assert(kind, compare, symbol, x, data, summarize, message, name):
    graph = get_default_graph()
    with graph.name_scope(name or kind):
        x = convert_to_tensor(x)
        if data is None:
            data = [message or "", f"Condition x {symbol} 0 did not hold element-wise:",
                    f"x ({x.name}) = ", x]
        zero = constant(0, dtype=x.dtype)
        return _binary_assert(compare, x, zero, data, summarize, None, None)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """An Assert op failing the run unless every element of x is > 0."""
    return _sign_assert("assert_positive", "assert_greater", ">", x, data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """An Assert op failing the run unless every element of x is >= 0."""
    return _sign_assert("assert_non_negative", "assert_greater_equal", ">=", x, data, summarize,
                        message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """An Assert op failing the run unless every element of x is < 0."""
    return _sign_assert("assert_negative", "assert_less", "<", x, data, summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """An Assert op failing the run unless every element of x is <= 0."""
    return _sign_assert("assert_non_positive", "assert_less_equal", "<=", x, data, summarize,
                        message, name)


def assert_rank(x, rank, message=None, data=None, summarize=None, name=None):
    """Checks that x has rank `rank`: a ValueError now when x's rank is known (returning a no-op),
    else an Assert op on tf.rank(x)."""
    x = convert_to_tensor(x)
    prefix = f"{message} " if message else ""
    if x.shape.dims is not None:
        if len(x.shape.dims) != int(rank):
            raise ValueError(f"{prefix}Tensor {x.name} must have rank {int(rank)}. Received rank "
                             f"{len(x.shape.dims)}, shape {x.shape}")
        return no_op(name=name or "assert_rank")
    with get_default_graph().name_scope(name or "assert_rank"):
        if data is None:
            data = [message or "", f"Tensor {x.name} must have rank", int(rank), "Received rank:",
                    math_ops.cast(rank_of(x), dtypes.int32)]
        data = [constant(d) if isinstance(d, int) else d for d in data]
        condition = math_ops.equal(rank_of(x), constant(int(rank), dtype=dtypes.int32))
        return Assert(condition, data, summarize=summarize)


def assert_type(tensor, tf_type, message=None, name=None):
    """A TypeError now unless `tensor` has dtype `tf_type`; returns a no-op."""
    tensor = convert_to_tensor(tensor)
    wanted = dtypes.as_dtype(tf_type)
    if tensor.dtype != wanted:
        prefix = f"{message} " if message else ""
        raise TypeError(f"{prefix}{tensor.name} must be of type {wanted!r}; got {tensor.dtype!r}")
    return no_op(name=name or "statically_determined_correct_type")


def assert_all_finite(t, msg, name=None):
    """`tf.debugging.assert_all_finite`: `check_numerics`."""
    return check_numerics(t, msg, name=name)


__all__ = ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal",
           "assert_greater", "assert_greater_equal", "assert_positive", "assert_non_negative",
           "assert_negative", "assert_non_positive", "assert_rank", "assert_type",
           "assert_all_finite", "check_numerics", "Assert"]
