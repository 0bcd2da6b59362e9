"""`tf.keras.initializers` and `tf.keras.regularizers`: Keras's names and defaults over graphflow's
initializers (`graphflow.tf1.init_ops`), resolved from strings by `get`.

Keras's defaults differ from TF1's in places: `RandomNormal` and `RandomUniform` draw with scale
0.05, `he_*`/`lecun_*` are variance scaling with scale 2 or 1 over fan_in, and `Orthogonal` (the
LSTM's recurrent kernel) is drawn once with numpy (a QR decomposition) and stored as the initial
value.
"""

import numpy as np

from graphflow.ops import math_ops
from graphflow.ops.core_ops import constant
from graphflow.tf1 import init_ops

Zeros = init_ops.zeros_initializer
Ones = init_ops.ones_initializer
Constant = init_ops.constant_initializer
VarianceScaling = init_ops.variance_scaling_initializer
GlorotUniform = init_ops.glorot_uniform_initializer
GlorotNormal = init_ops.glorot_normal_initializer


class RandomNormal(init_ops.random_normal_initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=None):
        super().__init__(mean, stddev, seed=seed)


class RandomUniform(init_ops.random_uniform_initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None, dtype=None):
        super().__init__(minval, maxval, seed=seed)


class TruncatedNormal(init_ops.truncated_normal_initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None, dtype=None):
        super().__init__(mean, stddev, seed=seed)


class Orthogonal(init_ops.Initializer):
    """An orthogonal matrix (times `gain`), from the QR decomposition of a normal draw."""

    def __init__(self, gain=1.0, seed=None, dtype=None):
        super().__init__()
        self.gain, self.seed = gain, seed

    def _build(self, shape, dtype):
        rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        cols = shape[-1]
        draw = np.random.RandomState(self.seed).normal(size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(draw)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return constant((self.gain * q).reshape(shape).astype(dtype.as_numpy_dtype))


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "glorot_uniform": GlorotUniform,
            "glorot_normal": GlorotNormal, "random_normal": RandomNormal,
            "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
            "orthogonal": Orthogonal, "he_normal": he_normal, "he_uniform": he_uniform,
            "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform,
            "variance_scaling": VarianceScaling}


def get(identifier):
    """An initializer from a Keras name ('glorot_uniform', 'zeros', ...), an instance or None."""
    if identifier is None or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type):
        return identifier()
    key = str(identifier).lower()
    aliases = {"zero": "zeros", "one": "ones", "uniform": "random_uniform",
               "normal": "random_normal"}
    key = aliases.get(key, key)
    if key not in _BY_NAME:
        raise ValueError(f"Unknown initializer: {identifier!r} (known: {sorted(_BY_NAME)})")
    return _BY_NAME[key]()


# ------------------------------------------------------------------ regularizers
class L1L2:
    """`l1 * sum(|w|) + l2 * sum(w ** 2)`."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        total = None
        if self.l1:
            total = self.l1 * math_ops.reduce_sum(math_ops.abs(x))
        if self.l2:
            term = self.l2 * math_ops.reduce_sum(math_ops.square(x))
            total = term if total is None else total + term
        return total if total is not None else constant(0.0, dtype=x.dtype)


def l1(l=0.01):  # noqa: E741 - Keras's argument name
    return L1L2(l1=l)


def l2(l=0.01):  # noqa: E741 - Keras's argument name
    return L1L2(l2=l)


def l1_l2(l1=0.01, l2=0.01):  # noqa: F811 - Keras's argument names
    return L1L2(l1=l1, l2=l2)


def get_regularizer(identifier):
    if identifier is None or callable(identifier):
        return identifier
    known = {"l1": l1, "l2": l2, "l1_l2": l1_l2}
    if identifier not in known:
        raise ValueError(f"Unknown regularizer: {identifier!r} (known: {sorted(known)})")
    return known[identifier]()


__all__ = ["Zeros", "Ones", "Constant", "VarianceScaling", "GlorotUniform", "GlorotNormal",
           "RandomNormal", "RandomUniform", "TruncatedNormal", "Orthogonal", "he_normal",
           "he_uniform", "lecun_normal", "lecun_uniform", "get"]
REGULARIZERS_ALL = ["L1L2", "l1", "l2", "l1_l2"]
