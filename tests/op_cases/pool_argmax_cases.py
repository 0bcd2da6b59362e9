"""Cases for MaxPoolWithArgmax: values and flattened NHWC argmax indices against a loop over
windows written here (padding skipped, the first maximum in row-major window order), gradients
of the pooled values by finite differences (inputs at least 0.1 apart: no ties)."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase


def _distinct(*shape, seed=0):
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(n).reshape(shape) * 0.1 - n * 0.05


def _reference(k, s, padding, with_batch):
    def reference(x):
        n, h, w, c = x.shape
        if padding == "VALID":
            oh, ow, top, left = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1, 0, 0
        else:
            oh, ow = -(-h // s[0]), -(-w // s[1])
            top = max(0, (oh - 1) * s[0] + k[0] - h) // 2
            left = max(0, (ow - 1) * s[1] + k[1] - w) // 2
        y = np.zeros((n, oh, ow, c), x.dtype)
        arg = np.zeros((n, oh, ow, c), np.int64)
        for b, i, j, ch in np.ndindex(n, oh, ow, c):
            best, where = None, None
            for di in range(k[0]):
                for dj in range(k[1]):
                    r, q = i * s[0] - top + di, j * s[1] - left + dj
                    if 0 <= r < h and 0 <= q < w and (best is None or x[b, r, q, ch] > best):
                        best, where = x[b, r, q, ch], (r * w + q) * c + ch
            y[b, i, j, ch] = best
            arg[b, i, j, ch] = where + (b * h * w * c if with_batch else 0)
        return y, arg
    return reference


def _case(shape, k, s, padding, with_batch=False, dtype=np.float64):
    def build(x):
        return tf.nn.max_pool_with_argmax(x, [1, *k, 1], [1, *s, 1], padding,
                                          include_batch_in_index=with_batch)
    return OpCase("MaxPoolWithArgmax", build, [_distinct(*shape).astype(dtype)],
                  _reference(k, s, padding, with_batch),
                  name=f"MaxPoolWithArgmax[{shape} k={k} s={s} {padding} batch={with_batch}]")


CASES = [
    _case((2, 5, 7, 3), (3, 3), (2, 2), "SAME"),
    _case((2, 4, 5, 2), (2, 3), (1, 2), "VALID", with_batch=True),
    _case((1, 4, 4, 2), (3, 3), (1, 1), "SAME", with_batch=True),   # windows overlap
    _case((2, 4, 4, 1), (2, 2), (2, 2), "VALID", dtype=np.float32),
]
