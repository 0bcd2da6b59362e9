"""Keras's regularization layers active only in training: GaussianNoise (adds N(0, stddev)),
GaussianDropout (multiplies by N(1, sqrt(rate / (1 - rate)))), SpatialDropout1D/2D/3D (drops
whole channels: the dropout mask shared over the steps or pixels), and ActivityRegularization
(adds l1 * sum|x| + l2 * sum x^2 of its input, divided by the batch size as TF Keras does, to
the model's losses). Outside training they pass their input through."""

import numpy as np

from graphflow.ops import math_ops, random_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.tf1 import layers as tf_layers
from graphflow.tf1.keras import backend_graph
from graphflow.tf1.keras.base_layer import Layer


class GaussianNoise(Layer):
    """`GaussianNoise(stddev)`: x + N(0, stddev) in training."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.stddev, self.seed = float(stddev), seed

    def call(self, inputs, training=None):
        x = convert_to_tensor(inputs)

        def noised():
            return x + random_ops.random_normal(shape_ops.shape(x), 0.0, self.stddev, x.dtype,
                                                self.seed)
        return backend_graph.in_train_phase(noised, lambda: identity(x), training=training)


class GaussianDropout(Layer):
    """`GaussianDropout(rate)`: x * N(1, sqrt(rate / (1 - rate))) in training."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate, self.seed = float(rate), seed

    def call(self, inputs, training=None):
        x = convert_to_tensor(inputs)
        if not 0 < self.rate < 1:
            return identity(x)
        stddev = float(np.sqrt(self.rate / (1.0 - self.rate)))

        def noised():
            return x * random_ops.random_normal(shape_ops.shape(x), 1.0, stddev, x.dtype,
                                                self.seed)
        return backend_graph.in_train_phase(noised, lambda: identity(x), training=training)


class _SpatialDropout(Layer):
    """Dropout with one mask value per example and channel (channels_last)."""

    _rank = None

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"{type(self).__name__}: only channels_last")
        self.rate, self.seed = float(rate), seed
        self.data_format = "channels_last"

    def call(self, inputs, training=None):
        x = convert_to_tensor(inputs)
        if x.shape.ndims != self._rank:
            raise ValueError(f"{type(self).__name__} {self.name!r} expects inputs of rank "
                             f"{self._rank}, got shape {x.shape}")
        if isinstance(training, int) and not isinstance(training, bool):
            training = bool(training)
        if self.rate == 0.0:
            return identity(x)
        dims = shape_ops.shape(x)
        noise_shape = [dims[0]] + [1] * (self._rank - 2) + [dims[self._rank - 1]]
        return tf_layers.dropout(x, rate=self.rate, noise_shape=noise_shape, seed=self.seed,
                                 training=training, name="dropout")


class SpatialDropout1D(_SpatialDropout):
    """`SpatialDropout1D(rate)`: [batch, steps, channels], whole channels dropped."""

    _rank = 3


class SpatialDropout2D(_SpatialDropout):
    """`SpatialDropout2D(rate)`: [batch, h, w, channels], whole feature maps dropped."""

    _rank = 4


class SpatialDropout3D(_SpatialDropout):
    """`SpatialDropout3D(rate)`: [batch, d, h, w, channels], whole feature maps dropped."""

    _rank = 5


class ActivityRegularization(Layer):
    """`ActivityRegularization(l1=0.0, l2=0.0)`: passes x through and adds
    (l1 * sum|x| + l2 * sum x^2) / batch size to the losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        penalty = convert_to_tensor(0.0, dtype=x.dtype)
        if self.l1:
            penalty = penalty + self.l1 * math_ops.reduce_sum(math_ops.abs(x))
        if self.l2:
            penalty = penalty + self.l2 * math_ops.reduce_sum(math_ops.square(x))
        batch = math_ops.cast(shape_ops.shape(x)[0], x.dtype)
        self.add_loss(penalty / batch)
        return identity(x)


__all__ = ["GaussianNoise", "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D",
           "SpatialDropout3D", "ActivityRegularization"]
