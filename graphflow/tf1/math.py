"""`tf.math`: TF1's math namespace — the elementwise and reduction ops of `ops/math_ops.py` under
their `tf.math.*` names, plus top_k and in_top_k, the cumulative ops, reduce_logsumexp, the
segment reductions and bincount, softplus/softsign, log_sigmoid and the reduce_variance /
reduce_std composites, the special functions (`ops/special_math_ops.py`, and the elementwise
functions TF1 exports as `tf.math.*` only: xlogy, erfinv, bessel_i0e, ...) and divide_no_nan,
reciprocal_no_nan, erfcinv, polyval, scalar_mul."""

from graphflow.framework.graph import name_scope
from graphflow.ops import math_ops as _m
from graphflow.ops.array_ops import unsorted_segment_sum  # noqa: F401
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.cumulative_ops import cumprod, cumsum  # noqa: F401
from graphflow.ops.index_ops import in_top_k, top_k  # noqa: F401
from graphflow.ops.math_composites import reduce_logsumexp  # noqa: F401
from graphflow.ops.math_ops import *  # noqa: F401,F403
from graphflow.ops.math_ops import __all__ as _math_names
from graphflow.ops.math_ops import softplus, softsign  # noqa: F401
from graphflow.ops.segment_ops import *  # noqa: F401,F403
from graphflow.ops.segment_ops import __all__ as _segment_names
from graphflow.ops.special_math_ops import *  # noqa: F401,F403
from graphflow.ops.special_math_ops import __all__ as _special_names
from graphflow.ops.special_math_ops import erfcinv, polyval, reciprocal_no_nan, scalar_mul  # noqa: F401

# the elementwise functions TF1 exports under tf.math only (elementwise rows with public "math")
_math_only = {name: _m.ELEMENTWISE_FUNCTIONS[name] for name in _m.MATH_FUNCTIONS}
globals().update(_math_only)
divide_no_nan = _m.ELEMENTWISE_FUNCTIONS["div_no_nan"]


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), without overflow for large |x|."""
    with name_scope(name, "LogSigmoid"):
        return _m.negative(_m.softplus(_m.negative(convert_to_tensor(x))))


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The (population) variance over `axis`: mean((x - mean(x))**2)."""
    with name_scope(name, "reduce_variance"):
        x = convert_to_tensor(input_tensor)
        mean = _m.reduce_mean(x, axis=axis, keepdims=True)
        return _m.reduce_mean(_m.square(x - mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over `axis`: sqrt(reduce_variance)."""
    with name_scope(name, "reduce_std"):
        return _m.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


__all__ = list(_math_names) + ["top_k", "in_top_k", "cumsum", "cumprod", "reduce_logsumexp",
                               "unsorted_segment_sum", "softplus", "softsign", "log_sigmoid",
                               "reduce_variance", "reduce_std", "divide_no_nan",
                               "reciprocal_no_nan", "erfcinv", "polyval", "scalar_mul"] + \
    list(_segment_names) + list(_special_names) + sorted(_math_only)
