"""Cases for the convolutions composed from conv2d (depthwise_conv2d, separable_conv2d):
naive-loop numpy references and the generic finite-difference gradient checks. They are listed
under the Conv2D op they build; they need static shapes."""

import numpy as np

from graphflow.ops.conv_composite_ops import depthwise_conv2d, separable_conv2d
from tests.op_cases import OpCase, rand


def _pad_same(x, axis, k, s):
    size = x.shape[axis]
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    widths = [(0, 0)] * x.ndim
    widths[axis] = (total // 2, total - total // 2)
    return np.pad(x, widths)


def _depthwise_ref(x, f, strides, padding):
    if padding == "SAME":
        for axis, k, s in zip((1, 2), f.shape[:2], strides):
            x = _pad_same(x, axis, k, s)
    n, h, w, c = x.shape
    kh, kw, _, m = f.shape
    sh, sw = strides
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = np.zeros((n, oh, ow, c * m))
    for j in range(oh):
        for k in range(ow):
            window = x[:, j * sh:j * sh + kh, k * sw:k * sw + kw]  # n, kh, kw, c
            out[:, j, k] = np.einsum("nabc,abcm->ncm", window, f).reshape(n, c * m)
    return out


def _depthwise_case(x_shape, f_shape, strides, padding):
    return OpCase("Conv2D", lambda x, f: depthwise_conv2d(x, f, [1, *strides, 1], padding),
                  [rand(*x_shape), rand(*f_shape, seed=4)],
                  reference=lambda x, f: _depthwise_ref(x, f, strides, padding),
                  unknown_shapes=False,
                  name=f"depthwise_conv2d[{x_shape}x{f_shape} s={strides} {padding}]")


def _separable_ref(x, dw, pw):
    return np.tensordot(_depthwise_ref(x, dw, (1, 1), "VALID"), pw[0, 0], axes=([3], [0]))


CASES = [
    _depthwise_case((2, 5, 5, 3), (3, 3, 3, 2), (1, 1), "VALID"),
    _depthwise_case((1, 6, 5, 2), (2, 3, 2, 1), (2, 2), "SAME"),
    OpCase("Conv2D", lambda x, dw, pw: separable_conv2d(x, dw, pw, [1, 1, 1, 1], "VALID"),
           [rand(1, 4, 4, 2), rand(2, 2, 2, 2, seed=5), rand(1, 1, 4, 3, seed=6)],
           reference=_separable_ref, unknown_shapes=False, name="separable_conv2d[VALID]"),
]
