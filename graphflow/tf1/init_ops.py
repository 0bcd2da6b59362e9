"""Variable initializers under TF1's names (`tf.zeros_initializer`, `tf.glorot_uniform_initializer`,
`tf.variance_scaling_initializer`, ...).

An initializer is a callable `init(shape, dtype=None, partition_info=None)` returning a Tensor
built from graph ops: random initializers draw when the variable's initializer runs, so nothing
large is stored as a constant. The exception is `orthogonal_initializer`, whose QR decomposition
graphflow has no op for: it draws with numpy when the graph is built and stores the matrix as a
constant (so each session starts from the same matrix). `tf.get_variable` and the layers call them
with the variable's shape and dtype.
"""

import math
import numbers

import numpy as np

from graphflow.framework import dtypes
from graphflow.ops import random_ops, shape_ops
from graphflow.ops.core_ops import constant, convert_to_tensor

# 1 / stddev of a unit normal truncated to [-2, 2]: truncated draws are rescaled by it so the
# result has the requested variance (TF1 uses the same constant)
_TRUNCATED_STDDEV_CORRECTION = 0.87962566103423978


class Initializer:
    """An initializer: `init(shape, dtype)` returns a Tensor (graph ops) with the initial value."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype) if dtype is not None else self.dtype
        return self._build([int(d) for d in shape], dtype)

    def _build(self, shape, dtype):
        raise NotImplementedError(f"{type(self).__name__} must define _build(shape, dtype)")


class zeros_initializer(Initializer):  # noqa: N801 - TF1 name
    def _build(self, shape, dtype):
        return shape_ops.zeros(shape, dtype=dtype)


class ones_initializer(Initializer):  # noqa: N801 - TF1 name
    def _build(self, shape, dtype):
        return shape_ops.ones(shape, dtype=dtype)


class constant_initializer(Initializer):  # noqa: N801 - TF1 name
    """A scalar fills the shape; an array must have exactly the shape's number of elements."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value
        self.verify_shape = verify_shape

    def _build(self, shape, dtype):
        if isinstance(self.value, numbers.Number):
            return shape_ops.fill(shape, convert_to_tensor(self.value, dtype=dtype))
        value = np.asarray(self.value)
        if self.verify_shape and list(value.shape) != list(shape):
            raise TypeError(f"constant_initializer: expected a value of shape {shape}, got "
                            f"{list(value.shape)} (verify_shape=True)")
        return constant(value, dtype=dtype, shape=shape)


class random_uniform_initializer(Initializer):  # noqa: N801 - TF1 name
    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def _build(self, shape, dtype):
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtype=dtype,
                                         seed=self.seed)


class random_normal_initializer(Initializer):  # noqa: N801 - TF1 name
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def _build(self, shape, dtype):
        return random_ops.random_normal(shape, self.mean, self.stddev, dtype=dtype, seed=self.seed)


class truncated_normal_initializer(random_normal_initializer):  # noqa: N801 - TF1 name
    def _build(self, shape, dtype):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype=dtype,
                                           seed=self.seed)


def compute_fans(shape):
    """(fan_in, fan_out) as TF1 computes them: conv kernels count the receptive field."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class variance_scaling_initializer(Initializer):  # noqa: N801 - TF1 name
    """Samples with variance `scale / n`, n = fan_in, fan_out or their average (`mode`).

    distribution: "truncated_normal" (default; "normal" is the same), "untruncated_normal"
    (a plain normal) or "uniform" (in [-limit, limit], limit = sqrt(3 * scale / n)).
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("normal", "truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        super().__init__(dtype)
        if scale <= 0.0:
            raise ValueError(f"`scale` must be a positive float, got {scale}")
        if mode not in self._MODES:
            raise ValueError(f"Invalid `mode` argument: {mode!r} (one of {self._MODES})")
        distribution = distribution.lower()
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"Invalid `distribution` argument: {distribution!r} (one of "
                             f"{self._DISTRIBUTIONS})")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def _build(self, shape, dtype):
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return random_ops.random_uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(variance), dtype=dtype,
                                            seed=self.seed)
        stddev = math.sqrt(variance) / _TRUNCATED_STDDEV_CORRECTION
        return random_ops.truncated_normal(shape, 0.0, stddev, dtype=dtype, seed=self.seed)


class glorot_uniform_initializer(variance_scaling_initializer):  # noqa: N801 - TF1 name
    """Uniform in [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out)) (Xavier/Glorot)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class glorot_normal_initializer(variance_scaling_initializer):  # noqa: N801 - TF1 name
    """Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (corrected for the truncation)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class orthogonal_initializer(Initializer):  # noqa: N801 - TF1 name
    """A (semi-)orthogonal matrix times `gain`, TF1's construction: the Q of the QR decomposition
    of a [rows, cols] normal draw (rows = the product of all but the last dimension), columns
    signed by R's diagonal, transposed when rows < cols. Drawn with numpy when the graph is built
    (seeded by the graph and op seeds like the random ops) and stored as a constant."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        super().__init__(dtype)
        self.gain, self.seed = gain, seed

    def _build(self, shape, dtype):
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        if not dtype.is_floating:
            raise ValueError(f"Expected float dtype, got {dtype.name}")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        seeds = random_ops.get_seed(self.seed)
        rng = np.random.default_rng(None if seeds[0] is None else list(seeds))
        draw = rng.standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(draw)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return constant((self.gain * q).reshape(shape), dtype=dtype)


__all__ = ["Initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
           "random_uniform_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "variance_scaling_initializer",
           "glorot_uniform_initializer", "glorot_normal_initializer", "compute_fans",
           "orthogonal_initializer"]
