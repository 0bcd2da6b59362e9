"""Keras's core layers: Dense, Activation, Flatten, Dropout, Reshape, Lambda, Embedding
(mask_zero), Masking, Concatenate, Add and BatchNormalization, built from graphflow's ops with
Keras's defaults (glorot_uniform kernels, zero biases; BatchNormalization momentum 0.99,
epsilon 1e-3)."""

from graphflow.ops import control_flow_ops, math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.tf1 import layers as tf_layers
from graphflow.tf1 import layers_norm
from graphflow.tf1.embedding_ops import embedding_lookup
from graphflow.tf1.keras import activations
from graphflow.tf1.keras.base_layer import Layer, set_mask, shape_list


class Dense(Layer):
    """`Dense(units, activation=None, use_bias=True, kernel_initializer='glorot_uniform', ...)`."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.constraints = (kernel_constraint, bias_constraint)

    def build(self, input_shape):
        last = shape_list(input_shape)[-1]
        if last is None:
            raise ValueError(f"The last dimension of the inputs to `Dense` should be defined. "
                             f"Found `None` (input shape {input_shape}).")
        self.kernel = self.add_weight("kernel", [last, self.units], None, self.kernel_initializer,
                                      self.kernel_regularizer, constraint=self.constraints[0])
        self.bias = self.add_weight("bias", [self.units], None, self.bias_initializer,
                                    self.bias_regularizer, constraint=self.constraints[1]) \
            if self.use_bias else None

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        if x.dtype != self.dtype:
            x = math_ops.cast(x, self.dtype)
        if x.shape.ndims == 2:
            out = math_ops.matmul(x, self.kernel)
        else:
            out = tf_layers._dense_nd(x, self.kernel.value(), self.units)
        if self.use_bias:
            out = nn_ops.bias_add(out, self.bias)
        out = self.activation(out)
        if self.activity_regularizer is not None:
            self.add_loss(self.activity_regularizer(out))
        return out


class Activation(Layer):
    """`Activation('relu')`: applies an activation function."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)


class Flatten(Layer):
    """[batch, d1, d2, ...] -> [batch, d1 * d2 * ...]."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs):
        return tf_layers.flatten(inputs, name="Reshape", data_format=self.data_format)


class Dropout(Layer):
    """`Dropout(rate)`: active when the learning phase (or `training=`) is true."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def call(self, inputs, training=None):
        if isinstance(training, int) and not isinstance(training, bool):
            training = bool(training)
        if self.rate == 0.0:
            return identity(inputs)
        return tf_layers.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape,
                                 seed=self.seed, training=training, name="dropout")


class Reshape(Layer):
    """`Reshape(target_shape)`: [batch] + target_shape (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def call(self, inputs):
        return shape_ops.reshape(inputs, [-1] + list(self.target_shape))


class Lambda(Layer):
    """`Lambda(function, arguments=None)`: wraps an expression of tensors as a layer."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function, self.arguments = function, dict(arguments or {})

    def call(self, inputs):
        return self.function(inputs, **self.arguments)


class Embedding(Layer):
    """`Embedding(input_dim, output_dim)`: integer ids [batch, ...] -> vectors [batch, ..., dim]
    (embeddings start uniform in [-0.05, 0.05], Keras's default)."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, activity_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, input_length=None, **kwargs):
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        super().__init__(**kwargs)
        self.mask_zero = mask_zero
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim], None,
                                          self.embeddings_initializer,
                                          self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def call(self, inputs):
        ids = convert_to_tensor(inputs)
        if ids.dtype.is_floating:
            ids = math_ops.cast(ids, "int32")
        out = embedding_lookup(self.embeddings, ids)
        if self.mask_zero:               # id 0 is padding: the recurrent layers skip it
            set_mask(out, math_ops.not_equal(ids, 0))
        return out


class Masking(Layer):
    """`Masking(mask_value=0.0)`: time steps whose features all equal `mask_value` are zeroed
    and masked; a recurrent layer called on the output carries its state over them."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        keep = math_ops.reduce_any(math_ops.not_equal(x, self.mask_value), axis=-1)
        out = x * math_ops.cast(shape_ops.expand_dims(keep, -1), x.dtype)
        set_mask(out, keep)
        return out


class Concatenate(Layer):
    """`Concatenate(axis=-1)([a, b, ...])`."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        tensors = [convert_to_tensor(t) for t in inputs]
        axis = self.axis % tensors[0].shape.ndims if self.axis < 0 else self.axis
        return shape_ops.concat(tensors, axis=axis)


class Add(Layer):
    """`Add()([a, b, ...])`: the elementwise sum."""

    def call(self, inputs):
        return math_ops.add_n([convert_to_tensor(t) for t in inputs])


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


class BatchNormalization(Layer):
    """Normalizes over every axis but `axis` with the batch's statistics when training (updating
    the moving mean and variance by `momentum`) and the moving ones otherwise. The updates are the
    layer's `updates` (run by `fit`) and are also put into tf.GraphKeys.UPDATE_OPS for TF1
    training loops. As in Keras, 4-D inputs normalized over axis 1 or 3 use the fused op
    (FusedBatchNorm, `fused=None`), other inputs (or `fused=False`) tf.nn.moments."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, fused=None, **kwargs):
        super().__init__(**kwargs)
        self.fused = fused
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.inits = (beta_initializer, gamma_initializer, moving_mean_initializer,
                      moving_variance_initializer)
        self.regularizers = (beta_regularizer, gamma_regularizer)
        self.constraints = (beta_constraint, gamma_constraint)

    def build(self, input_shape):
        dims = shape_list(input_shape)
        self._axis = self.axis % len(dims)
        channels = dims[self._axis]
        if channels is None:
            raise ValueError(f"BatchNormalization: axis {self.axis} of the input shape "
                             f"{input_shape} must be known")
        beta_init, gamma_init, mean_init, var_init = self.inits
        self.gamma = self.add_weight("gamma", [channels], None, gamma_init, self.regularizers[1],
                                     constraint=self.constraints[1]) if self.scale else None
        self.beta = self.add_weight("beta", [channels], None, beta_init, self.regularizers[0],
                                    constraint=self.constraints[0]) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", [channels], None, mean_init,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", [channels], None, var_init,
                                               trainable=False)

    def call(self, inputs, training=None):
        x = convert_to_tensor(inputs)
        usable = layers_norm.fused_usable(x.shape.ndims, self._axis)
        if self.fused and not usable:
            raise ValueError(f"BatchNormalization: fused=True needs 4-D inputs normalized over "
                             f"axis 1 or 3, got shape {x.shape} and axis {self.axis}")
        if training is False or training == 0:
            flag = False
        elif training is True or training == 1:
            flag = True
        else:
            flag = convert_to_tensor(training)
        if usable and self.fused is not False:
            y, mean, variance = self._fused(x, flag)
        else:
            y, mean, variance = self._moments(x, flag)
        if flag is not False:  # (a flag false at run time updates nothing: decay 0)
            for var, value, name in ((self.moving_mean, mean, "AssignMovingAvg"),
                                     (self.moving_variance, variance, "AssignMovingAvg_1")):
                self.add_update(layers_norm.assign_moving_average(var, value, self.momentum,
                                                                  flag, name).op)
        return y

    def _fused(self, x, flag):
        """(y, batch mean, unbiased batch variance) of the fused op (`tf.layers.
        batch_normalization`'s, a cond on a training tensor), as Keras's fused path."""
        channels = x.shape[self._axis]
        gamma = self.gamma if self.gamma is not None else shape_ops.ones([channels], x.dtype)
        beta = self.beta if self.beta is not None else shape_ops.zeros([channels], x.dtype)
        return layers_norm.normalize_fused(x, gamma, beta, self.moving_mean, self.moving_variance,
                                           self.epsilon, "NHWC" if self._axis == 3 else "NCHW",
                                           flag)

    def _moments(self, x, flag):
        """(y, batch mean, batch variance for the moving average) with tf.nn.moments; the
        statistics are None when `flag` is False."""
        ndims = x.shape.ndims
        reduce_axes = [i for i in range(ndims) if i != self._axis]
        broadcast = [1] * ndims
        broadcast[self._axis] = -1

        def shaped(v):
            return None if v is None else shape_ops.reshape(v, broadcast)

        def normalize(mean, variance):
            return nn_ops.batch_normalization(x, shaped(mean), shaped(variance), shaped(self.beta),
                                              shaped(self.gamma), self.epsilon)

        def moving():
            return normalize(self.moving_mean.value(), self.moving_variance.value())
        if flag is False:
            return moving(), None, None
        mean, variance = nn_ops.moments(x, reduce_axes)
        variance_for_update = variance
        if ndims == 4:  # TF's fused kernel (4-D inputs) updates with the unbiased variance
            n = math_ops.cast(shape_ops.size(x), x.dtype) / float(x.shape.as_list()[self._axis])
            variance_for_update = variance * (n / math_ops.maximum(n - 1.0, 1.0))
        if flag is True:
            return normalize(mean, variance), mean, variance_for_update
        # as Keras does (smart_cond): one branch runs, and its gradient alone (a constant flag in
        # a plan inlines it, see Session)
        y = control_flow_ops.cond(flag, lambda: normalize(mean, variance), moving)
        return y, mean, variance_for_update


__all__ = ["Dense", "Activation", "Flatten", "Dropout", "Reshape", "Lambda", "Embedding", "Masking",
           "Concatenate", "Add", "concatenate", "add", "BatchNormalization"]
