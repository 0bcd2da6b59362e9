"""Cases for LRN (local response normalization); the reference is the definition's loop."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand


def _lrn_ref(x, r, bias, alpha, beta):
    out = np.empty_like(x)
    depth = x.shape[3]
    for d in range(depth):
        window = x[..., max(0, d - r):min(depth, d + r + 1)]
        out[..., d] = x[..., d] / (bias + alpha * np.sum(window ** 2, axis=-1)) ** beta
    return out


CASES = [
    OpCase("LRN", lambda x: tf.nn.lrn(x, 2, 1.0, 0.5, 0.75), [rand(2, 3, 2, 6)],
           lambda x: _lrn_ref(x, 2, 1.0, 0.5, 0.75)),
    OpCase("LRN", tf.nn.local_response_normalization, [rand(1, 2, 2, 3)],
           lambda x: _lrn_ref(x, 5, 1.0, 1.0, 0.5), name="LRN[defaults, radius past the depth]"),
    OpCase("LRN", lambda x: tf.nn.lrn(x, 1, 2.0, 1e-2, 0.5), [rand(1, 2, 3, 4).astype(np.float32)],
           lambda x: _lrn_ref(x.astype(np.float64), 1, 2.0, 1e-2, 0.5), rtol=1e-5,
           name="LRN[float32]"),
]
