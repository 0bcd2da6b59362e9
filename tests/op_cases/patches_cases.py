"""Cases for ExtractImagePatches: the reference reads each output entry from its definition
(window position times stride, minus the SAME padding before, plus tap times rate; outside the
image: 0); TensorFlow's numbers are compared in tests/ops/test_patches_ops.py."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand


def _patches_ref(x, k, s, r, padding):
    b, h, w, d = x.shape
    sizes = []
    for n, kk, ss, rr in ((h, k[1], s[1], r[1]), (w, k[2], s[2], r[2])):
        eff = kk + (kk - 1) * (rr - 1)
        out = -(-(n - eff + 1) // ss) if padding == "VALID" else -(-n // ss)
        before = 0 if padding == "VALID" else max((out - 1) * ss + eff - n, 0) // 2
        sizes.append((out, before))
    (oh, top), (ow, left) = sizes
    out = np.zeros((b, oh, ow, k[1], k[2], d), x.dtype)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[1]):
                for c in range(k[2]):
                    y, z = i * s[1] - top + a * r[1], j * s[2] - left + c * r[2]
                    if 0 <= y < h and 0 <= z < w:
                        out[:, i, j, a, c] = x[:, y, z]
    return out.reshape(b, oh, ow, -1)


_SETTINGS = [([1, 2, 3, 1], [1, 1, 2, 1], [1, 1, 1, 1], "VALID"),
             ([1, 3, 2, 1], [1, 2, 1, 1], [1, 2, 2, 1], "SAME")]

CASES = [
    OpCase("ExtractImagePatches", lambda x, a=a: tf.extract_image_patches(x, *a), [rand(2, 5, 6, 2)],
           lambda x, a=a: _patches_ref(x, *a), name=f"ExtractImagePatches[{a[3]}]")
    for a in _SETTINGS
] + [OpCase("ExtractImagePatches", lambda x: tf.image.extract_patches(
    x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"), [np.arange(30, dtype=np.int32).reshape(
        1, 5, 6, 1)], lambda x: _patches_ref(x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
    name="ExtractImagePatches[int32]")]
