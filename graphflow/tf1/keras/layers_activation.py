"""Keras's advanced-activation layers and LayerNormalization: PReLU (a learned slope `alpha` per
unit, shared over `shared_axes`), ELU, ThresholdedReLU, Softmax, ReLU (negative slope, threshold,
cap), and LayerNormalization (per-example statistics over `axis`, gamma then beta as weights)."""

from graphflow.ops import math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.keras import activations, backend_nn
from graphflow.tf1.keras.base_layer import Layer, shape_list


class PReLU(Layer):
    """`PReLU(alpha_initializer='zeros', shared_axes=None)`: max(x, 0) - alpha * max(-x, 0),
    `alpha` of the input shape without the batch axis (1 on `shared_axes`)."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer, self.alpha_regularizer = alpha_initializer, alpha_regularizer
        self.alpha_constraint = alpha_constraint
        if shared_axes is None:
            self.shared_axes = None
        else:
            self.shared_axes = [int(a) for a in (shared_axes if isinstance(
                shared_axes, (list, tuple)) else [shared_axes])]

    def build(self, input_shape):
        shape = shape_list(input_shape)[1:]
        for axis in self.shared_axes or ():
            shape[axis - 1] = 1
        if any(d is None for d in shape):
            raise ValueError(f"PReLU {self.name!r}: the input shape {input_shape} must be known "
                             "beyond the batch axis (or those axes shared)")
        self.alpha = self.add_weight("alpha", shape, None, self.alpha_initializer,
                                     self.alpha_regularizer, constraint=self.alpha_constraint)

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        return math_ops.relu(x) - self.alpha * math_ops.relu(-x)


class ELU(Layer):
    """`ELU(alpha=1.0)`: x above 0, alpha * (exp(x) - 1) below."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs):
        return activations.elu(convert_to_tensor(inputs), self.alpha)


class ThresholdedReLU(Layer):
    """`ThresholdedReLU(theta=1.0)`: x where x > theta, else 0."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None or theta < 0:
            raise ValueError(f"The theta value of a Thresholded ReLU layer should be >=0, got "
                             f"{theta}")
        self.theta = float(theta)

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        return x * math_ops.cast(math_ops.greater(x, self.theta), x.dtype)


class Softmax(Layer):
    """`Softmax(axis=-1)`."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return nn_ops.softmax(inputs, axis=self.axis)


class ReLU(Layer):
    """`ReLU(max_value=None, negative_slope=0, threshold=0)`: `backend.relu`."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value, got "
                             f"{max_value}")
        if negative_slope is None or negative_slope < 0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be a negative value, got "
                             f"{negative_slope}")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope, self.threshold = float(negative_slope), float(threshold)

    def call(self, inputs):
        return backend_nn.relu(inputs, alpha=self.negative_slope, max_value=self.max_value,
                               threshold=self.threshold)


class LayerNormalization(Layer):
    """`LayerNormalization(axis=-1, epsilon=1e-3, center=True, scale=True)`: each example
    normalized by its mean and variance over `axis`, then * gamma + beta (weights of the shape
    of those axes)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.axis = [int(a) for a in axis] if isinstance(axis, (list, tuple)) else int(axis)
        self.epsilon, self.center, self.scale = float(epsilon), bool(center), bool(scale)
        self.inits = (beta_initializer, gamma_initializer)
        self.regularizers = (beta_regularizer, gamma_regularizer)
        self.constraints = (beta_constraint, gamma_constraint)

    def build(self, input_shape):
        dims = shape_list(input_shape)
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -len(dims) <= a < len(dims):
                raise ValueError(f"LayerNormalization {self.name!r}: invalid axis {a} for an "
                                 f"input of rank {len(dims)}")
        self._axes = sorted(a % len(dims) for a in axes)
        shape = [dims[a] for a in self._axes]
        if any(d is None for d in shape):
            raise ValueError(f"LayerNormalization {self.name!r}: the normalized axes of "
                             f"{input_shape} must be known")
        self.gamma = self.add_weight("gamma", shape, None, self.inits[1], self.regularizers[1],
                                     constraint=self.constraints[1]) if self.scale else None
        self.beta = self.add_weight("beta", shape, None, self.inits[0], self.regularizers[0],
                                    constraint=self.constraints[0]) if self.center else None

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        ndims = x.shape.ndims
        broadcast = [1] * ndims
        for a in self._axes:
            broadcast[a] = x.shape.as_list()[a]

        def shaped(v):
            if v is None:
                return None
            return v if self._axes == [ndims - 1] else shape_ops.reshape(v, broadcast)
        mean, variance = nn_ops.moments(x, self._axes, keep_dims=True)
        return nn_ops.batch_normalization(x, mean, variance, shaped(self.beta),
                                          shaped(self.gamma), self.epsilon)


__all__ = ["PReLU", "ELU", "ThresholdedReLU", "Softmax", "ReLU", "LayerNormalization"]
