"""Local response normalization (TF1's LRN op: `tf.nn.local_response_normalization`, `tf.nn.lrn`).

LRN(input) on a 4-D input normalizes each entry by the squares of its neighbours along the last
(depth) axis: sqr_sum[..., d] = sum(input[..., d - depth_radius : d + depth_radius + 1] ** 2) and
output = input / (bias + alpha * sqr_sum) ** beta. `windowed_sum` builds that depth-window sum from
ordinary ops (the gradient uses it).
"""

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import array_ops, math_ops, shape_ops, slice_ops
from graphflow.ops.core_ops import consumer_scope, convert_to_tensor, stack
from graphflow.ops.registry import FLOATS, define, make_tensor, require_dtype


def _lrn_infer(inputs, attrs):
    (x,) = inputs
    require_dtype(x, FLOATS, "input")
    if x.shape.ndims not in (None, 4):
        raise ValueError(f"input must be 4-D, got shape {x.shape}")
    if attrs["depth_radius"] < 0:
        raise ValueError(f"depth_radius must be non-negative, got {attrs['depth_radius']}")
    return [(x.dtype, x.shape if x.shape.ndims is not None else TensorShape([None] * 4))]


define("LRN", _lrn_infer, attrs="depth_radius:int bias:float alpha:float beta:float",
       onnx={"converter": "lrn"})


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,  # noqa: A002
                                 name=None):
    """`tf.nn.local_response_normalization`: input / (bias + alpha * sqr_sum) ** beta with
    sqr_sum the sum of squares over the depth window of radius `depth_radius`."""
    x = convert_to_tensor(input)
    with consumer_scope(name, "LRN", (x,)) as op_name:
        return make_tensor("LRN", (x,), {"depth_radius": int(depth_radius), "bias": float(bias),
                                         "alpha": float(alpha), "beta": float(beta)},
                           name=op_name)


lrn = local_response_normalization


def windowed_sum(t, radius):
    """sum(t[..., d - radius : d + radius + 1]) for each d of the last axis of the 4-D `t`."""
    depth = shape_ops.shape(t)[3]
    padded = array_ops.pad(t, [[0, 0], [0, 0], [0, 0], [radius, radius]])
    parts = [slice_ops.slice(padded, [0, 0, 0, k], stack([-1, -1, -1, depth]))
             for k in range(2 * radius + 1)]
    return parts[0] if len(parts) == 1 else math_ops.add_n(parts)


__all__ = []
