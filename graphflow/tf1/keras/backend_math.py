"""`tf.keras.backend`'s tensor functions (reductions, elementwise math, comparisons, shapes and
layout) as Keras 2 defines them over TF1 ops, composed from graphflow's ops.

Keras's conventions that differ from the plain TF names: reductions take `axis`/`keepdims` and
cast boolean inputs to floatx first (`mean`, `std`, `var`); `any`/`all` cast to bool first;
`sqrt` clips its input at 0; `clip` with `max_value < min_value` clips to `min_value`;
`concatenate` with a negative axis counts from the first tensor's rank; `dot` of N-D tensors
contracts the last axis of `x` with the second-to-last of `y` (numpy's `dot`), and `batch_dot`
contracts per sample, a 2-D by 2-D result kept as [batch, 1].
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.core_ops import stack as _stack
from graphflow.ops.einsum_ops import einsum
from graphflow.tf1.keras import backend

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _tensor(x):
    return convert_to_tensor(x)


def _float_if_bool(x):
    x = _tensor(x)
    return math_ops.cast(x, backend.floatx()) if x.dtype == dtypes.bool_ else x


def _bool(x):
    x = _tensor(x)
    return x if x.dtype == dtypes.bool_ else math_ops.cast(x, dtypes.bool_)


def ndim(x):
    """The rank of `x` as a Python int (None when unknown)."""
    return _tensor(x).shape.ndims


def dtype(x):
    return _tensor(x).dtype.base_dtype.name


def shape(x):
    """The dynamic shape of `x` (an int32 tensor)."""
    return shape_ops.shape(x)


def count_params(x):
    return int(np.prod(backend.int_shape(x)))


# ------------------------------------------------------------------ reductions
def mean(x, axis=None, keepdims=False):
    return math_ops.reduce_mean(_float_if_bool(x), axis, keepdims)


def sum(x, axis=None, keepdims=False):  # noqa: A001 - Keras's name
    return math_ops.reduce_sum(x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return math_ops.reduce_prod(x, axis, keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001 - Keras's name
    return math_ops.reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001 - Keras's name
    return math_ops.reduce_min(x, axis, keepdims)


def var(x, axis=None, keepdims=False):
    """The population variance: the mean of the squared deviation from the mean."""
    x = _float_if_bool(x)
    centered = x - math_ops.reduce_mean(x, axis, True)
    return math_ops.reduce_mean(math_ops.square(centered), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return math_ops.sqrt(var(x, axis, keepdims))


def any(x, axis=None, keepdims=False):  # noqa: A001 - Keras's name
    return math_ops.reduce_any(_bool(x), axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001 - Keras's name
    return math_ops.reduce_all(_bool(x), axis, keepdims)


def argmax(x, axis=-1):
    return math_ops.argmax(x, axis)


def argmin(x, axis=-1):
    return math_ops.argmin(x, axis)


def cumsum(x, axis=0):
    from graphflow.ops.cumulative_ops import cumsum as _cumsum
    return _cumsum(x, axis=axis)


def cumprod(x, axis=0):
    from graphflow.ops.cumulative_ops import cumprod as _cumprod
    return _cumprod(x, axis=axis)


# ------------------------------------------------------------------ elementwise
def square(x):
    return math_ops.square(x)


def sqrt(x):
    """sqrt of `x` clipped at 0 (Keras's guard against tiny negative round-off)."""
    x = _tensor(x)
    return math_ops.sqrt(math_ops.clip_by_value(
        x, convert_to_tensor(0.0, dtype=x.dtype), convert_to_tensor(np.inf, dtype=x.dtype)))


def exp(x):
    return math_ops.exp(x)


def log(x):
    return math_ops.log(x)


def abs(x):  # noqa: A001 - Keras's name
    return math_ops.abs(x)


def sign(x):
    return math_ops.sign(x)


def round(x):  # noqa: A001 - Keras's name
    """Rounds half to even, as TF's Round."""
    return math_ops.round(x)


def pow(x, a):  # noqa: A001 - Keras's name
    return math_ops.pow(x, a)


def sin(x):
    return math_ops.sin(x)


def cos(x):
    return math_ops.cos(x)


def maximum(x, y):
    return math_ops.maximum(x, y)


def minimum(x, y):
    return math_ops.minimum(x, y)


def clip(x, min_value, max_value):
    """Clips to [min_value, max_value]; None means unbounded, and max < min clips to min."""
    x = _tensor(x)
    if max_value is not None and min_value is not None and max_value < min_value:
        max_value = min_value
    low = -np.inf if min_value is None else min_value
    high = np.inf if max_value is None else max_value
    return math_ops.clip_by_value(x, convert_to_tensor(low, dtype=x.dtype),
                                  convert_to_tensor(high, dtype=x.dtype))


def equal(x, y):
    return math_ops.equal(x, y)


def not_equal(x, y):
    return math_ops.not_equal(x, y)


def greater(x, y):
    return math_ops.greater(x, y)


def greater_equal(x, y):
    return math_ops.greater_equal(x, y)


def less(x, y):
    return math_ops.less(x, y)


def less_equal(x, y):
    return math_ops.less_equal(x, y)


def cast(x, dtype):  # noqa: A002 - Keras's argument name
    return math_ops.cast(x, dtype)


# ------------------------------------------------------------------ products
def dot(x, y):
    """numpy's dot: 2-D is a matmul; otherwise the last axis of x meets the second-to-last of y
    (of rank >= 2), the result shaped x.shape[:-1] + y.shape[:-2] + y.shape[-1:]."""
    x, y = _tensor(x), _tensor(y)
    xn, yn = x.shape.ndims, y.shape.ndims
    if xn is None or yn is None:
        raise ValueError("tf.keras.backend.dot needs inputs of known rank")
    if xn <= 2 and yn <= 2:
        return math_ops.matmul(x, y)
    if yn < 2:
        raise ValueError(f"tf.keras.backend.dot: y must have rank >= 2, got shape {y.shape}")
    xs, ys = _LETTERS[:xn - 1], _LETTERS[xn - 1:xn + yn - 2]
    contracted = "z"
    y_sub = ys[:-1] + contracted + ys[-1]
    return einsum(f"{xs}{contracted},{y_sub}->{xs}{ys}", x, y)


def batch_dot(x, y, axes=None):
    """Per-sample dot product over `axes` (default: x's last axis with y's second-to-last, or
    y's last when y is 2-D); axis 0 is the batch. Two 2-D inputs give [batch, 1]."""
    x, y = _tensor(x), _tensor(y)
    xn, yn = x.shape.ndims, y.shape.ndims
    if xn is None or yn is None or xn < 2 or yn < 2:
        raise ValueError(f"tf.keras.backend.batch_dot needs inputs of rank >= 2, got shapes "
                         f"{x.shape} and {y.shape}")
    if axes is None:
        axes = [xn - 1, yn - 2 if yn > 2 else yn - 1]
    elif isinstance(axes, int):
        axes = [axes, axes]
    ax, ay = [a % n for a, n in zip(axes, (xn, yn))]
    if 0 in (ax, ay):
        raise ValueError(f"tf.keras.backend.batch_dot cannot contract the batch axis (axes "
                         f"{axes})")
    xl, yl = _LETTERS[1:xn], _LETTERS[xn:xn + yn - 1]
    x_sub, y_sub = "a" + xl, "a" + yl
    y_sub = y_sub[:ay] + x_sub[ax] + y_sub[ay + 1:]
    out = "a" + "".join(c for c in x_sub[1:] if c != x_sub[ax]) + \
        "".join(c for c in y_sub[1:] if c != x_sub[ax])
    result = einsum(f"{x_sub},{y_sub}->{out}", x, y)
    if xn == 2 and yn == 2:
        result = shape_ops.expand_dims(result, 1)
    return result


# ------------------------------------------------------------------ shapes and layout
def transpose(x):
    return array_ops.transpose(x)


def permute_dimensions(x, pattern):
    return array_ops.transpose(x, perm=list(pattern))


def reshape(x, shape):  # noqa: A002 - Keras's argument name
    return shape_ops.reshape(x, shape)


def concatenate(tensors, axis=-1):
    tensors = [_tensor(t) for t in tensors]
    if axis < 0:
        rank = tensors[0].shape.ndims
        axis = axis % rank if rank else 0
    return shape_ops.concat(tensors, axis)


def stack(x, axis=0):
    return _stack(list(x), axis=axis)


def expand_dims(x, axis=-1):
    return shape_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return shape_ops.squeeze(x, [axis])


def flatten(x):
    return shape_ops.reshape(x, [-1])


def batch_flatten(x):
    """[batch, d1, d2, ...] -> [batch, d1 * d2 * ...]."""
    rest = math_ops.reduce_prod(shape_ops.shape(x)[1:])
    return shape_ops.reshape(x, _stack([-1, rest]))


def tile(x, n):
    if isinstance(n, int):
        n = [n]
    return array_ops.tile(x, n)


def repeat(x, n):
    """[samples, dim] -> [samples, n, dim]."""
    x = _tensor(x)
    if x.shape.ndims != 2:
        raise ValueError(f"tf.keras.backend.repeat expects a 2-D input, got shape {x.shape}")
    return array_ops.tile(shape_ops.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x, rep, axis):
    """Repeats each element `rep` times along `axis`, as np.repeat."""
    x = _tensor(x)
    rank = x.shape.ndims
    axis = axis % rank
    multiples = [1] * (rank + 1)
    multiples[axis + 1] = rep
    tiled = array_ops.tile(shape_ops.expand_dims(x, axis + 1), multiples)
    scale = [1] * rank
    scale[axis] = rep
    new_shape = shape_ops.shape(x) * convert_to_tensor(np.array(scale, np.int32))
    out = shape_ops.reshape(tiled, new_shape)
    static = x.shape.as_list()
    if static[axis] is not None:
        static[axis] *= rep
    out.set_shape(static)
    return out


def reverse(x, axes):
    if isinstance(axes, int):
        axes = [axes]
    return array_ops.reverse(x, axes)


def gather(reference, indices):
    return array_ops.gather(reference, indices)


def one_hot(indices, num_classes):
    return array_ops.one_hot(indices, depth=num_classes, axis=-1)


def arange(start, stop=None, step=1, dtype="int32"):  # noqa: A002
    if stop is None:
        start, stop = 0, start
    return math_ops.cast(array_ops.range(start, stop, step), dtype)


def _channels_last(data_format, what):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"tf.keras.backend.{what}: unknown data_format {data_format!r}")
    return data_format == "channels_last"


def temporal_padding(x, padding=(1, 1)):
    """Pads the middle axis of a 3-D tensor with zeros."""
    return array_ops.pad(x, [[0, 0], list(padding), [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Pads the two spatial axes of a 4-D tensor with zeros."""
    pads = [list(p) for p in padding]
    if _channels_last(data_format, "spatial_2d_padding"):
        return array_ops.pad(x, [[0, 0]] + pads + [[0, 0]])
    return array_ops.pad(x, [[0, 0], [0, 0]] + pads)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Pads the three spatial axes of a 5-D tensor with zeros."""
    pads = [list(p) for p in padding]
    if _channels_last(data_format, "spatial_3d_padding"):
        return array_ops.pad(x, [[0, 0]] + pads + [[0, 0]])
    return array_ops.pad(x, [[0, 0], [0, 0]] + pads)


__all__ = ["ndim", "dtype", "shape", "count_params", "mean", "sum", "prod", "max", "min", "var",
           "std", "any", "all", "argmax", "argmin", "cumsum", "cumprod", "square",
           "sqrt", "exp", "log", "abs", "sign", "round", "pow", "sin", "cos", "maximum",
           "minimum", "clip", "equal", "not_equal", "greater", "greater_equal", "less",
           "less_equal", "cast", "dot", "batch_dot", "transpose", "permute_dimensions", "reshape",
           "concatenate", "stack", "expand_dims", "squeeze", "flatten", "batch_flatten", "tile",
           "repeat", "repeat_elements", "reverse", "gather", "one_hot", "arange",
           "temporal_padding", "spatial_2d_padding", "spatial_3d_padding"]
