"""TF1's math functions that are Python composites of other ops (TF1 has no kernel of their own
either): `tf.reduce_logsumexp`, `tf.tensordot` (one Einsum), `tf.linspace` / `tf.lin_space`,
`tf.meshgrid` and `tf.norm`. They add no op types; their gradients are those of the ops they
build."""

import string

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor, name_scope
from graphflow.ops import array_ops, math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.ops.einsum_ops import einsum
from graphflow.ops.gradient_ops import stop_gradient


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """`tf.reduce_logsumexp`: log(sum(exp(x))) over `axis`, computed as
    max + log(sum(exp(x - max))) so that large inputs do not overflow; an infinite maximum is
    replaced by 0 in the shift (all -inf gives -inf, as TF1)."""
    x = convert_to_tensor(input_tensor)
    if axis is None:
        axis = reduction_indices
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    raw_max = math_ops.reduce_max(x, axis=axis, keepdims=True)
    shift = stop_gradient(math_ops.where(math_ops.is_finite(raw_max), raw_max,
                                         shape_ops.zeros_like(raw_max)))
    summed = math_ops.reduce_sum(math_ops.exp(x - shift), axis=axis, keepdims=True)
    result = math_ops.log(summed) + shift
    # summing the kept size-1 dimensions drops them, whatever form `axis` had
    return math_ops.reduce_sum(result, axis=axis, keepdims=keep, name=name or "reduce_logsumexp")


def _tensordot_axes(axes, rank_a, rank_b):
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(rank_a, rank_b):
            raise ValueError(f"tensordot: axes={n} must be in [0, {min(rank_a, rank_b)}] for "
                             f"operands of ranks {rank_a} and {rank_b}")
        return list(range(rank_a - n, rank_a)), list(range(n))
    if len(axes) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}")
    a_axes, b_axes = axes
    a_axes = [int(a_axes)] if isinstance(a_axes, (int, np.integer)) else [int(v) for v in a_axes]
    b_axes = [int(b_axes)] if isinstance(b_axes, (int, np.integer)) else [int(v) for v in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: {len(a_axes)} axes of a against {len(b_axes)} of b")
    for ax, rank in [(v, rank_a) for v in a_axes] + [(v, rank_b) for v in b_axes]:
        if not -rank <= ax < rank:
            raise ValueError(f"tensordot: axis {ax} is out of range for rank {rank}")
    return [v % rank_a for v in a_axes], [v % rank_b for v in b_axes]


def tensordot(a, b, axes, name=None):
    """`tf.tensordot`: sums the products of `a`'s and `b`'s elements over the given axes
    (`axes=N`: a's last N against b's first N; or `[a_axes, b_axes]`); the result has a's free
    axes, then b's. Built as one Einsum, so its gradient is Einsum's."""
    a = convert_to_tensor(a)
    b = convert_to_tensor(b, dtype=a.dtype)
    if a.shape.ndims is None or b.shape.ndims is None:
        raise ValueError("tensordot needs operands of known rank")
    rank_a, rank_b = a.shape.ndims, b.shape.ndims
    a_axes, b_axes = _tensordot_axes(axes, rank_a, rank_b)
    if rank_a + rank_b - len(a_axes) > len(string.ascii_letters):
        raise ValueError("tensordot: too many dimensions")
    letters = iter(string.ascii_letters)
    sub_a = [next(letters) for _ in range(rank_a)]
    sub_b = [next(letters) for _ in range(rank_b)]
    for i, j in zip(a_axes, b_axes):
        sub_b[j] = sub_a[i]
    free_a = [c for i, c in enumerate(sub_a) if i not in a_axes]
    free_b = [c for j, c in enumerate(sub_b) if j not in b_axes]
    equation = f"{''.join(sub_a)},{''.join(sub_b)}->{''.join(free_a + free_b)}"
    return einsum(equation, a, b, name=name or "Tensordot")


def lin_space(start, stop, num, name=None):
    """`tf.lin_space` / `tf.linspace`: `num` evenly spaced values from `start` to `stop`
    (start + i * (stop - start) / (num - 1); num = 1 gives [start])."""
    start = convert_to_tensor(start)
    if start.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"linspace: start must be float32 or float64, got {start.dtype.name}")
    stop = convert_to_tensor(stop, dtype=start.dtype)
    num = convert_to_tensor(num, dtype=None if isinstance(num, Tensor) else dtypes.int32)
    if not num.dtype.is_integer:
        raise TypeError(f"linspace: num must be an integer, got {num.dtype.name}")
    intervals = math_ops.maximum(math_ops.cast(num, start.dtype) - 1, 1)
    step = (stop - start) / intervals
    index = math_ops.cast(array_ops.range(num), start.dtype)
    return math_ops.add(start, index * step, name=name or "LinSpace")


linspace = lin_space


def meshgrid(*args, **kwargs):
    """`tf.meshgrid`: N coordinate vectors -> N arrays of their outer grid; indexing='xy'
    (default, Cartesian: the first two output axes are swapped) or 'ij' (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid got unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not args:
        return []
    tensors = [convert_to_tensor(x) for x in args]
    ndim = len(tensors)
    dims = [[1] * ndim for _ in tensors]
    for i, d in enumerate(dims):
        d[i] = -1
    sizes = [x.shape.num_elements() if x.shape.is_fully_defined() else shape_ops.size(x)
             for x in tensors]
    if indexing == "xy" and ndim > 1:
        dims[0][0], dims[0][1] = 1, -1
        dims[1][0], dims[1][1] = -1, 1
        sizes[0], sizes[1] = sizes[1], sizes[0]
    with name_scope(name):
        static = all(isinstance(n, int) for n in sizes)
        ones = shape_ops.ones(sizes if static else shape_ops.stack(sizes), dtype=tensors[0].dtype)
        return [math_ops.multiply(shape_ops.reshape(x, d), ones) for x, d in zip(tensors, dims)]


_VECTOR_ORDS = ("euclidean", "fro", 1, 2, np.inf)


def _vector_norm(x, ord, axis):
    absolute = math_ops.abs(x)
    if ord in ("euclidean", "fro", 2):
        return math_ops.sqrt(math_ops.reduce_sum(x * x, axis=axis, keepdims=True))
    if ord == 1:
        return math_ops.reduce_sum(absolute, axis=axis, keepdims=True)
    if ord == np.inf:
        return math_ops.reduce_max(absolute, axis=axis, keepdims=True)
    p = float(ord)
    summed = math_ops.reduce_sum(math_ops.pow(absolute, p), axis=axis, keepdims=True)
    return math_ops.pow(summed, 1.0 / p)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    """`tf.norm`: vector norms (axis None: of the whole tensor; an int axis) of order
    'euclidean' / 'fro' / 2, 1, inf or any p > 0, and matrix norms (axis a pair) of order
    'fro' / 'euclidean', 1 (largest column sum) or inf (largest row sum)."""
    x = convert_to_tensor(tensor)
    keep = bool(keepdims if keepdims is not None else (keep_dims or False))
    matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and not matrix:
        if len(axis) != 1:
            raise ValueError(f"norm: axis must be None, an int or a pair of ints, got {axis!r}")
        axis = axis[0]
    if matrix:
        rank = x.shape.ndims
        rows, cols = (int(a) for a in axis)
        if rank is not None:
            rows, cols = rows % rank, cols % rank
        if rows == cols:
            raise ValueError(f"norm: the two axes of a matrix norm must differ, got {axis!r}")
        if ord in ("euclidean", "fro"):
            result = math_ops.sqrt(math_ops.reduce_sum(x * x, axis=[rows, cols], keepdims=True))
        elif ord in (1, np.inf):
            summed_over, maxed_over = (rows, cols) if ord == 1 else (cols, rows)
            sums = math_ops.reduce_sum(math_ops.abs(x), axis=summed_over, keepdims=True)
            result = math_ops.reduce_max(sums, axis=maxed_over, keepdims=True)
        else:
            raise ValueError(f"norm: matrix norm order {ord!r} is not supported (use 'fro', "
                             "'euclidean', 1 or np.inf)")
        reduced = [rows, cols]
    else:
        if ord not in _VECTOR_ORDS and (isinstance(ord, str) or not float(ord) > 0):
            raise ValueError(f"norm: vector norm order {ord!r} is not supported ('euclidean', "
                             "'fro', 1, 2, np.inf or a positive real)")
        if axis is not None and not isinstance(axis, (int, np.integer)):
            raise ValueError(f"norm: axis must be None, an int or a pair of ints, got {axis!r}")
        result = _vector_norm(x, ord, None if axis is None else int(axis))
        reduced = None if axis is None else int(axis)
    if keep:
        return identity(result, name=name or "norm")
    return math_ops.reduce_sum(result, axis=reduced, name=name or "norm")  # drops the size-1 dims


__all__ = ["reduce_logsumexp", "tensordot", "lin_space", "linspace", "meshgrid", "norm"]
