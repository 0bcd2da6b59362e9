"""Cases for FusedBatchNorm (training and inference, NHWC and NCHW, every output differentiated),
FusedBatchNormGrad (its second derivatives), FusedBatchNormStats and FusedBatchNormGradReluMask.
The references are direct numpy formulas."""

import numpy as np

from graphflow.ops import nn_norm_ops, shape_ops
from tests.op_cases import OpCase, positive, rand

EPS = 0.001


def _bn_ref(x, scale, offset, mean=None, var=None, fmt="NHWC"):
    axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    shape = (1, 1, 1, -1) if fmt == "NHWC" else (1, -1, 1, 1)
    training = mean is None
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPS) * scale.reshape(shape) \
        + offset.reshape(shape)
    n = x.size / mean.size
    return y, mean, var * n / (n - 1) if training else var


def _bn_grad_ref(dy, x, scale, mean, var, training, fmt="NHWC"):
    axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    shape = (1, 1, 1, -1) if fmt == "NHWC" else (1, -1, 1, 1)
    x_hat = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPS)
    d_scale, d_offset = (dy * x_hat).sum(axis=axes), dy.sum(axis=axes)
    gain = (scale / np.sqrt(var + EPS)).reshape(shape)
    if not training:
        return dy * gain, d_scale, d_offset
    n = x.size / mean.size
    dx = gain * (dy - d_offset.reshape(shape) / n - x_hat * d_scale.reshape(shape) / n)
    return dx, d_scale, d_offset


def _train_grad_of_batch(dy, x, scale, fmt):
    """FusedBatchNormGrad fed the batch statistics of x (as the forward op saves them)."""
    y, _, _ = nn_norm_ops.fused_batch_norm(x, scale, scale * 0.0, data_format=fmt)
    forward = y.op
    return nn_norm_ops.fused_batch_norm_grad(dy, x, scale, forward.outputs[3], forward.outputs[4],
                                             EPS, fmt, True)


def _stats_ref(x, fmt):
    axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    n = x.size / x.shape[3 if fmt == "NHWC" else 1]
    return x.mean(axis=axes), x.var(axis=axes), x.var(axis=axes) * n / (n - 1)


def _train_grad_ref(dy, x, scale, fmt):
    axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    return _bn_grad_ref(dy, x, scale, x.mean(axis=axes), x.var(axis=axes), True, fmt)


def _masked_grad(dy, x, scale, m, a, o, fmt, training):
    """FusedBatchNormGradReluMask fed the batch statistics of x and the vectors of a forward
    y = (x - m) * a + o ([C], or [C, 1, 1] for NCHW as the split forward builds them)."""
    mean, variance, _ = nn_norm_ops.fused_batch_norm_stats(x, fmt)
    if fmt == "NCHW":
        m, a, o = (shape_ops.reshape(v, [-1, 1, 1]) for v in (m, a, o))
    return nn_norm_ops.fused_batch_norm_grad_relu_mask(dy, x, scale, mean, variance, m, a, o, EPS,
                                                       fmt, training)


def _masked_grad_ref(dy, x, scale, m, a, o, fmt, training):
    axes = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    shape = (1, 1, 1, -1) if fmt == "NHWC" else (1, -1, 1, 1)
    y = (x - m.reshape(shape)) * a.reshape(shape) + o.reshape(shape)
    return _bn_grad_ref(np.where(y > 0, dy, 0.0), x, scale, x.mean(axis=axes), x.var(axis=axes),
                        training, fmt)


def _masked_case(shape, fmt, training, dtype=np.float64, seed=20):
    c = shape[3] if fmt == "NHWC" else shape[1]
    return OpCase("FusedBatchNormGradReluMask",
                  lambda dy, x, s, m, a, o: _masked_grad(dy, x, s, m, a, o, fmt, training),
                  [rand(*shape, seed=seed, dtype=dtype), rand(*shape, seed=seed + 1, dtype=dtype),
                   positive(c, dtype=dtype), rand(c, seed=seed + 2, dtype=dtype),
                   positive(c, dtype=dtype), rand(c, seed=seed + 3, dtype=dtype)],
                  lambda dy, x, s, m, a, o: _masked_grad_ref(dy, x, s, m, a, o, fmt, training),
                  rtol=1e-4 if dtype == np.float32 else 1e-7,
                  atol=1e-4 if dtype == np.float32 else 1e-9, grad=False,
                  name=f"FusedBatchNormGradReluMask[{'training' if training else 'inference'} "
                       f"{fmt} {list(shape)} {np.dtype(dtype).name}]")


CASES = [
    OpCase("FusedBatchNorm", lambda x, s, o: nn_norm_ops.fused_batch_norm(x, s, o)[0],
           [rand(2, 3, 3, 4), positive(4), rand(4)], lambda x, s, o: _bn_ref(x, s, o)[0],
           name="FusedBatchNorm[training NHWC, y]"),
    OpCase("FusedBatchNorm", lambda x, s, o: nn_norm_ops.fused_batch_norm(x, s, o,
                                                                          data_format="NCHW"),
           [rand(2, 3, 2, 3, seed=1), positive(3), rand(3)],
           lambda x, s, o: _bn_ref(x, s, o, fmt="NCHW"), grad_rtol=1e-3,
           name="FusedBatchNorm[training NCHW, y mean variance]"),
    OpCase("FusedBatchNorm", lambda x, s, o, m, v: nn_norm_ops.fused_batch_norm(
        x, s, o, m, v, is_training=False),
        [rand(2, 2, 3, 3), positive(3), rand(3), rand(3), positive(3)],
        lambda x, s, o, m, v: _bn_ref(x, s, o, m, v), name="FusedBatchNorm[inference NHWC]"),
    OpCase("FusedBatchNorm", lambda x, s, o: nn_norm_ops.fused_batch_norm(x, s, o)[0],
           [rand(4, 2, 2, 3, dtype=np.float32), positive(3, dtype=np.float32),
            rand(3, dtype=np.float32)], lambda x, s, o: _bn_ref(x, s, o)[0], rtol=1e-4,
           atol=1e-5, grad=False, name="FusedBatchNorm[float32]"),
    OpCase("FusedBatchNormGrad", lambda dy, x, s: _train_grad_of_batch(dy, x, s, "NHWC"),
           [rand(2, 2, 3, 3, seed=2), rand(2, 2, 3, 3, seed=3), positive(3)],
           lambda dy, x, s: _train_grad_ref(dy, x, s, "NHWC"), grad_rtol=1e-3,
           name="FusedBatchNormGrad[training NHWC]"),
    OpCase("FusedBatchNormGrad", lambda dy, x, s: _train_grad_of_batch(dy, x, s, "NCHW"),
           [rand(2, 3, 2, 2, seed=4), rand(2, 3, 2, 2, seed=5), positive(3)],
           lambda dy, x, s: _train_grad_ref(dy, x, s, "NCHW"), grad_rtol=1e-3,
           name="FusedBatchNormGrad[training NCHW]"),
    OpCase("FusedBatchNormGrad", lambda dy, x, s, m, v: nn_norm_ops.fused_batch_norm_grad(
        dy, x, s, m, v, EPS, "NHWC", False),
        [rand(2, 2, 2, 3, seed=6), rand(2, 2, 2, 3, seed=7), positive(3), rand(3), positive(3)],
        lambda dy, x, s, m, v: _bn_grad_ref(dy, x, s, m, v, False),
        name="FusedBatchNormGrad[inference NHWC]"),
    # FusedBatchNormStats: a training FusedBatchNorm's statistics (built by fusion on plan copies:
    # no gradient); small inputs run the numpy forms, 64 images the compiled loops
    OpCase("FusedBatchNormStats", lambda x: nn_norm_ops.fused_batch_norm_stats(x),
           [rand(2, 3, 3, 4, seed=8)], lambda x: _stats_ref(x, "NHWC"), grad=False,
           name="FusedBatchNormStats[NHWC]"),
    OpCase("FusedBatchNormStats", lambda x: nn_norm_ops.fused_batch_norm_stats(x, "NCHW"),
           [rand(64, 3, 5, 6, seed=9)], lambda x: _stats_ref(x, "NCHW"), grad=False,
           name="FusedBatchNormStats[NCHW, compiled]"),
    # FusedBatchNormGradReluMask: built by fusion on plan copies (no gradient); small inputs run
    # the numpy forms, 64 images the compiled loops (rows; NCHW 40x40 planes)
    _masked_case((2, 3, 3, 4), "NHWC", True),
    _masked_case((2, 3, 2, 2), "NCHW", False, seed=30),
    _masked_case((64, 4, 4, 8), "NHWC", True, np.float32, seed=40),
    _masked_case((64, 3, 40, 40), "NCHW", True, np.float32, seed=50),
]
