"""Gradient clipping by norm (TF1's `tf.clip_by_norm`, `tf.global_norm`, `tf.clip_by_global_norm`),
built as compositions of ordinary ops, so they run on any device and have gradients.
(`tf.clip_by_value` is a math op of its own.)

Each takes IndexedSlices (sparse gradients) as TF1 does: the norms are of their values, and the
clipped result is an IndexedSlices of the scaled values at the same indices."""

import numbers

from graphflow.framework.graph import Tensor, name_scope
from graphflow.ops import math_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.ops.indexed_slices import IndexedSlices


def _check_sequence(t_list):
    if isinstance(t_list, (str, bytes, Tensor)) or not hasattr(t_list, "__iter__"):
        raise TypeError(f"t_list should be a sequence of tensors, got {t_list!r}")


def _values(t):
    """The values of an IndexedSlices (what its norm is of), else `t` itself."""
    return t.values if isinstance(t, IndexedSlices) else t


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`t * clip_norm / max(l2norm(t), clip_norm)`: rescale `t` so its L2 norm (over `axes`, all
    by default) is at most `clip_norm`. Zero tensors stay zero (no NaN from 0/0)."""
    with name_scope(name, "clip_by_norm", [t]) as scope:
        sparse = t if isinstance(t, IndexedSlices) else None
        t = convert_to_tensor(sparse.values if sparse is not None else t, name="t")
        clip_norm = convert_to_tensor(clip_norm, dtype=t.dtype, name="clip_norm")
        l2sum = math_ops.reduce_sum(t * t, axes, keepdims=True)
        positive = l2sum > 0
        l2sum_safe = math_ops.where(positive, l2sum, 1.0)
        l2norm = math_ops.where(positive, math_ops.sqrt(l2sum_safe), l2sum)
        clipped = t * clip_norm / math_ops.maximum(l2norm, clip_norm)
        if sparse is not None:
            return IndexedSlices(identity(clipped, name=scope), sparse.indices, sparse.dense_shape)
        return identity(clipped, name=scope)


def global_norm(t_list, name=None):
    """sqrt(sum of squares of every element of every tensor in `t_list`); None entries are ignored."""
    _check_sequence(t_list)
    tensors = [convert_to_tensor(_values(t)) for t in t_list if t is not None]
    with name_scope(name, "global_norm", tensors) as scope:
        if not tensors:
            raise ValueError("global_norm needs at least one tensor that is not None")
        dtype = tensors[0].dtype
        squares = []
        for t in tensors:
            s = math_ops.reduce_sum(math_ops.square(t))
            squares.append(s if s.dtype == dtype else math_ops.cast(s, dtype))
        return math_ops.sqrt(math_ops.add_n(squares), name=scope)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scale every tensor by clip_norm / max(global_norm, clip_norm); returns
    (list_clipped, global_norm). None entries stay None. If the norm is inf or NaN, every
    result is NaN, as in TF1."""
    _check_sequence(t_list)
    t_list = list(t_list)
    present = [convert_to_tensor(_values(t)) for t in t_list if t is not None]
    with name_scope(name, "clip_by_global_norm", present):
        if use_norm is None:
            use_norm = global_norm(present, name="global_norm")
        use_norm = convert_to_tensor(use_norm)
        dtype = use_norm.dtype
        if isinstance(clip_norm, numbers.Number) and clip_norm < 0:
            raise ValueError(f"clip_norm must be non-negative, got {clip_norm}")
        clip = convert_to_tensor(clip_norm, dtype=dtype, name="clip_norm")
        # clip_norm / max(norm, clip_norm), plus (norm - norm): 0 for a finite norm, NaN for an
        # inf/NaN norm (TF1's result), without dividing by a zero norm.
        scale = clip / math_ops.maximum(use_norm, clip) + (use_norm - use_norm)
        out = []
        for t in t_list:
            if t is None:
                out.append(None)
                continue
            sparse = t if isinstance(t, IndexedSlices) else None
            t = convert_to_tensor(_values(t))
            s = scale if t.dtype == dtype else math_ops.cast(scale, t.dtype)
            clipped = identity(t * s, name="clip_by_global_norm")
            out.append(clipped if sparse is None
                       else IndexedSlices(clipped, sparse.indices, sparse.dense_shape))
        return out, use_norm


__all__ = ["clip_by_norm", "global_norm", "clip_by_global_norm"]
