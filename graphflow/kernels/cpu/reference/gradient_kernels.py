"""numpy kernels for the gradient helper ops: SumToShape, ReducedShape, BroadcastGradientArgs
(StopGradient is the identity kernel in core_kernels.py)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.ops.gradient_ops import broadcast_gradient_axes


def sum_to_shape(x, shape):
    """Sum `x` over the axes numpy broadcasting added or stretched, giving exactly `shape`."""
    target = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    x = np.asarray(x)
    if x.shape == target:
        return x
    lead = x.ndim - len(target)
    if lead < 0:
        raise ValueError(f"cannot sum a tensor of shape {x.shape} to shape {target}")
    axes = list(range(lead))
    for i, t in enumerate(target):
        d = x.shape[lead + i]
        if d == t:
            continue
        if t != 1:
            raise ValueError(f"cannot sum a tensor of shape {x.shape} to shape {target}")
        axes.append(lead + i)
    acc = np.float32 if x.dtype == np.float16 else x.dtype  # float16: accumulated in float32
    out = np.sum(x, axis=tuple(axes), dtype=acc, keepdims=True).astype(x.dtype, copy=False)
    return out.reshape(target)


@cpu_kernel("SumToShape")
def _sum_to_shape(node):
    return sum_to_shape


@cpu_kernel("ReducedShape")
def _reduced_shape(node):
    axis = node.attrs["axis"]
    dtype = node.out_dtypes[0]

    def reduced_shape(shape, axes=None):
        out = np.array(shape, dtype=dtype).reshape(-1)
        n = out.shape[0]
        chosen = axis if axes is None else np.asarray(axes).ravel().tolist()
        if chosen is None:
            out[:] = 1
            return out
        for a in [chosen] if isinstance(chosen, int) else chosen:
            if not -n <= a < n:
                raise ValueError(f"axis {a} is out of range for a tensor of rank {n}")
            out[a % n] = 1
        return out
    return reduced_shape


@cpu_kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(node):
    return broadcast_gradient_axes
