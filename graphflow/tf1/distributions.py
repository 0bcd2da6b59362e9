"""`tf.distributions` / `tf.contrib.distributions`: the probability distributions TF1 programs
used most (variational autoencoders, policy gradients, Bayesian layers), built from ordinary ops so
that every method is differentiable and runs in a Session.

Normal, MultivariateNormalDiag, Uniform, Bernoulli and Categorical, with TF1's constructor
arguments (`loc`/`scale`, `logits`/`probs`, `validate_args`, `allow_nan_stats`, `name`) and
methods (`sample`, `log_prob`, `prob`, `cdf`, `entropy`, `mean`, `mode`, `stddev`, `variance`,
`kl_divergence`), plus the module function `kl_divergence(a, b)` for pairs of the same family.
Samples are reparameterized where TF1's are (Normal, Uniform: loc + scale * noise, so gradients
flow into the parameters); Bernoulli and Categorical samples are integers and have no gradient.
Categorical samples by the Gumbel-max trick (argmax of logits plus Gumbel noise): the same
distribution as TF1's multinomial sampling, not the same draws.
"""

import math

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, math_ops, nn_ops, random_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor

_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def _sample_shape(sample_shape):
    """`sample_shape` (int, list or 1-D int tensor) as a 1-D int32 tensor."""
    if isinstance(sample_shape, (int, np.integer)):
        sample_shape = [int(sample_shape)]
    return math_ops.cast(convert_to_tensor(sample_shape), dtypes.int32)


def _batch_sample_shape(sample_shape, params):
    """sample_shape + the broadcast shape of the distribution's parameters."""
    broadcast = params[0]
    for p in params[1:]:
        broadcast = broadcast + 0.0 * p
    return shape_ops.concat([_sample_shape(sample_shape), shape_ops.shape(broadcast)], 0)


class Distribution:
    """What every distribution here shares: its name scope and the derived methods."""

    reparameterization_type = None

    def __init__(self, name, validate_args=False, allow_nan_stats=True):
        self.name = name
        self.validate_args = validate_args
        self.allow_nan_stats = allow_nan_stats

    def _scope(self, method):
        return name_scope(f"{self.name}/{method}")

    def prob(self, value, name="prob"):
        with self._scope(name):
            return math_ops.exp(self.log_prob(value))

    def stddev(self, name="stddev"):
        with self._scope(name):
            return math_ops.sqrt(self.variance())

    def kl_divergence(self, other, name="kl_divergence"):
        return kl_divergence(self, other, name=name)

    def cross_entropy(self, other, name="cross_entropy"):
        with self._scope(name):
            return self.entropy() + kl_divergence(self, other)


class Normal(Distribution):
    """N(loc, scale**2), elementwise over the broadcast shape of `loc` and `scale`."""

    reparameterization_type = "FULLY_REPARAMETERIZED"

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        super().__init__(name, validate_args, allow_nan_stats)
        self.loc = convert_to_tensor(loc)
        self.scale = convert_to_tensor(scale, dtype=self.loc.dtype)
        self.dtype = self.loc.dtype

    def sample(self, sample_shape=(), seed=None, name="sample"):
        with self._scope(name):
            shape = _batch_sample_shape(sample_shape, [self.loc, self.scale])
            noise = random_ops.random_normal(shape, dtype=self.dtype, seed=seed)
            return self.loc + self.scale * noise

    def log_prob(self, value, name="log_prob"):
        with self._scope(name):
            z = (convert_to_tensor(value, dtype=self.dtype) - self.loc) / self.scale
            return -0.5 * z * z - _HALF_LOG_TWO_PI - math_ops.log(self.scale)

    def cdf(self, value, name="cdf"):
        with self._scope(name):
            z = (convert_to_tensor(value, dtype=self.dtype) - self.loc) / self.scale
            return 0.5 * (1.0 + math_ops.erf(z / math.sqrt(2.0)))

    def entropy(self, name="entropy"):
        with self._scope(name):
            return 0.5 + _HALF_LOG_TWO_PI + math_ops.log(self.scale) + 0.0 * self.loc

    def mean(self, name="mean"):
        with self._scope(name):
            return self.loc + 0.0 * self.scale

    def mode(self, name="mode"):
        return self.mean(name)

    def variance(self, name="variance"):
        with self._scope(name):
            return math_ops.square(self.scale) + 0.0 * self.loc


class MultivariateNormalDiag(Normal):
    """A Gaussian over the last axis with a diagonal covariance `scale_diag**2` (the VAE
    posterior); `log_prob` and `entropy` sum over that axis, `kl_divergence` too."""

    def __init__(self, loc=None, scale_diag=None, validate_args=False, allow_nan_stats=True,
                 name="MultivariateNormalDiag"):
        if loc is None and scale_diag is None:
            raise ValueError("MultivariateNormalDiag needs loc or scale_diag")
        loc = loc if loc is not None else 0.0 * convert_to_tensor(scale_diag)
        scale_diag = scale_diag if scale_diag is not None else 1.0 + 0.0 * convert_to_tensor(loc)
        super().__init__(loc, scale_diag, validate_args, allow_nan_stats, name)

    def log_prob(self, value, name="log_prob"):
        with self._scope(name):
            return math_ops.reduce_sum(super().log_prob(value), axis=-1)

    def entropy(self, name="entropy"):
        with self._scope(name):
            return math_ops.reduce_sum(super().entropy(), axis=-1)

    def cdf(self, value, name="cdf"):
        raise NotImplementedError("MultivariateNormalDiag has no cdf in TF1 either")

    def stddev(self, name="stddev"):
        with self._scope(name):
            return self.scale + 0.0 * self.loc


class Uniform(Distribution):
    """Uniform on [low, high)."""

    reparameterization_type = "FULLY_REPARAMETERIZED"

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        super().__init__(name, validate_args, allow_nan_stats)
        self.low = convert_to_tensor(low)
        self.high = convert_to_tensor(high, dtype=self.low.dtype)
        self.dtype = self.low.dtype

    def range(self, name="range"):
        with self._scope(name):
            return self.high - self.low

    def sample(self, sample_shape=(), seed=None, name="sample"):
        with self._scope(name):
            shape = _batch_sample_shape(sample_shape, [self.low, self.high])
            u = random_ops.random_uniform(shape, dtype=self.dtype, seed=seed)
            return self.low + (self.high - self.low) * u

    def log_prob(self, value, name="log_prob"):
        with self._scope(name):
            value = convert_to_tensor(value, dtype=self.dtype)
            inside = math_ops.logical_and(value >= self.low, value < self.high)
            width = self.high - self.low
            return math_ops.where(inside, -math_ops.log(width) + 0.0 * value,
                                  math_ops.log(0.0 * value))

    def cdf(self, value, name="cdf"):
        with self._scope(name):
            value = convert_to_tensor(value, dtype=self.dtype)
            return math_ops.clip_by_value((value - self.low) / (self.high - self.low), 0.0, 1.0)

    def entropy(self, name="entropy"):
        with self._scope(name):
            return math_ops.log(self.high - self.low)

    def mean(self, name="mean"):
        with self._scope(name):
            return (self.low + self.high) / 2.0

    def variance(self, name="variance"):
        with self._scope(name):
            return math_ops.square(self.high - self.low) / 12.0


class _FromLogitsOrProbs(Distribution):
    """Bernoulli and Categorical: parameterized by exactly one of `logits` and `probs`."""

    def __init__(self, logits, probs, dtype, name, validate_args, allow_nan_stats):
        super().__init__(name, validate_args, allow_nan_stats)
        if (logits is None) == (probs is None):
            raise ValueError(f"{type(self).__name__}: give exactly one of logits and probs")
        self._logits = None if logits is None else convert_to_tensor(logits)
        self._probs = None if probs is None else convert_to_tensor(probs)
        self.dtype = dtypes.as_dtype(dtype)


class Bernoulli(_FromLogitsOrProbs):
    """1 with probability p = sigmoid(logits), else 0; samples of `dtype` (int32 by default)."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        super().__init__(logits, probs, dtype, name, validate_args, allow_nan_stats)

    @property
    def logits(self):
        if self._logits is None:
            self._logits = math_ops.log(self._probs) - math_ops.log1p(-self._probs)
        return self._logits

    @property
    def probs(self):
        if self._probs is None:
            self._probs = math_ops.sigmoid(self._logits)
        return self._probs

    def sample(self, sample_shape=(), seed=None, name="sample"):
        with self._scope(name):
            p = self.probs
            shape = _batch_sample_shape(sample_shape, [p])
            u = random_ops.random_uniform(shape, dtype=p.dtype, seed=seed)
            return math_ops.cast(u < p, self.dtype)

    def log_prob(self, value, name="log_prob"):
        with self._scope(name):
            logits = self.logits
            labels = math_ops.cast(value, logits.dtype) + 0.0 * logits
            return -nn_ops.sigmoid_cross_entropy_with_logits(labels=labels,
                                                             logits=logits + 0.0 * labels)

    def entropy(self, name="entropy"):
        with self._scope(name):
            p = self.probs
            return nn_ops.sigmoid_cross_entropy_with_logits(labels=p, logits=self.logits)

    def mean(self, name="mean"):
        with self._scope(name):
            return self.probs + 0.0

    def mode(self, name="mode"):
        with self._scope(name):
            return math_ops.cast(self.probs > 0.5, self.dtype)

    def variance(self, name="variance"):
        with self._scope(name):
            return self.probs * (1.0 - self.probs)


class Categorical(_FromLogitsOrProbs):
    """One of `event_size` classes (the last axis of `logits`/`probs`); int32 samples."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        super().__init__(logits, probs, dtype, name, validate_args, allow_nan_stats)

    @property
    def logits(self):
        if self._logits is None:
            self._logits = math_ops.log(self._probs)
        return self._logits

    @property
    def probs(self):
        if self._probs is None:
            self._probs = nn_ops.softmax(self._logits)
        return self._probs

    @property
    def event_size(self):
        return shape_ops.shape(self.logits)[-1]

    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Gumbel-max: argmax(logits + G), G = -log(-log(U)), has the categorical distribution."""
        with self._scope(name):
            logits = nn_ops.log_softmax(self.logits)
            shape = shape_ops.concat([_sample_shape(sample_shape), shape_ops.shape(logits)], 0)
            tiny = np.finfo(logits.dtype.as_numpy_dtype).tiny
            u = random_ops.random_uniform(shape, minval=tiny, maxval=1.0, dtype=logits.dtype,
                                          seed=seed)
            gumbel = -math_ops.log(-math_ops.log(u))
            return math_ops.argmax(logits + gumbel, axis=-1, output_type=self.dtype)

    def log_prob(self, value, name="log_prob"):
        with self._scope(name):
            logits = nn_ops.log_softmax(self.logits)
            one_hot = array_ops.one_hot(value, self.event_size, dtype=logits.dtype)
            return math_ops.reduce_sum(one_hot * logits, axis=-1)

    def entropy(self, name="entropy"):
        with self._scope(name):
            log_p = nn_ops.log_softmax(self.logits)
            return -math_ops.reduce_sum(math_ops.exp(log_p) * log_p, axis=-1)

    def mode(self, name="mode"):
        with self._scope(name):
            return math_ops.argmax(self.logits, axis=-1, output_type=self.dtype)


def _kl_normal(a, b):
    ratio = math_ops.square(a.scale / b.scale)
    diff = math_ops.square((a.loc - b.loc) / b.scale)
    return 0.5 * (ratio + diff - 1.0 - math_ops.log(ratio))


def _kl_bernoulli(a, b):
    pa = a.probs
    log_pa, log_1pa = -math_ops.softplus(-a.logits), -math_ops.softplus(a.logits)
    log_pb, log_1pb = -math_ops.softplus(-b.logits), -math_ops.softplus(b.logits)
    return pa * (log_pa - log_pb) + (1.0 - pa) * (log_1pa - log_1pb)


def _kl_categorical(a, b):
    log_pa, log_pb = nn_ops.log_softmax(a.logits), nn_ops.log_softmax(b.logits)
    return math_ops.reduce_sum(math_ops.exp(log_pa) * (log_pa - log_pb), axis=-1)


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(a || b) for two distributions of the same family (TF1's registered pairs)."""
    a, b = distribution_a, distribution_b
    with name_scope(name or "KullbackLeibler"):
        if isinstance(a, MultivariateNormalDiag) and isinstance(b, MultivariateNormalDiag):
            return math_ops.reduce_sum(_kl_normal(a, b), axis=-1)
        if type(a) is Normal and type(b) is Normal:
            return _kl_normal(a, b)
        if isinstance(a, Bernoulli) and isinstance(b, Bernoulli):
            return _kl_bernoulli(a, b)
        if isinstance(a, Categorical) and isinstance(b, Categorical):
            return _kl_categorical(a, b)
    raise NotImplementedError(f"No KL(distribution_a || distribution_b) registered for "
                              f"distribution_a type {type(a).__name__} and distribution_b type "
                              f"{type(b).__name__}")


FULLY_REPARAMETERIZED = "FULLY_REPARAMETERIZED"
NOT_REPARAMETERIZED = "NOT_REPARAMETERIZED"

__all__ = ["Distribution", "Normal", "MultivariateNormalDiag", "Uniform", "Bernoulli",
           "Categorical", "kl_divergence", "FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED"]
