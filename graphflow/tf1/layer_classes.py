"""`tf.layers` layer objects: `Dense`, `Conv2D`, `Conv2DTranspose`, `Conv3D`, `SeparableConv2D`,
`Flatten`, `Dropout`, `MaxPooling2D`, `AveragePooling2D`.

A layer object picks its variable scope at its first call ('dense', 'dense_1', ... or its `name`)
and creates its variables there through the functional layer of the same name; every later call
(`layer(x)` or `layer.apply(x)`) re-enters that scope with reuse, so one object applied twice
shares its variables. `variables`, `trainable_variables` (`trainable_weights`) and the named
variables (`kernel`, `bias`, ...) are available after the first call.
"""

from graphflow.framework.func_graph import outermost_graph
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.tf1 import layers, layers_conv
from graphflow.tf1.variable_scope import variable_scope


class Layer:
    """Base class: `__call__(inputs, *args, **kwargs)` builds the layer's ops on `inputs`."""

    _default_name = "layer"
    _function = None  # the functional layer that builds the ops (creates variables)

    def __init__(self, trainable=True, name=None, dtype=None, _options=None, **kwargs):
        self.trainable = trainable
        self._given_name = name
        self._options = dict(_options or {})
        self._scope = None
        self._variables = []
        self.built = False

    @property
    def name(self):
        return self._scope.name if self._scope is not None else (self._given_name or
                                                                 self._default_name)

    def __call__(self, inputs, *args, **kwargs):
        graph = outermost_graph(get_default_graph())  # a loop body's variables live there
        if self._scope is None:
            with variable_scope(self._given_name, default_name=self._default_name,
                                auxiliary_name_scope=False) as scope:
                pass
            self._scope = scope
            before = {id(v) for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
            outputs = self._build_ops(inputs, reuse=None, **kwargs)
            self._variables = [v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
                               if id(v) not in before]
            for variable in self._variables:
                setattr(self, variable.op.name.rsplit("/", 1)[-1], variable)
            self.built = True
            return outputs
        return self._build_ops(inputs, reuse=True, **kwargs)

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    def _build_ops(self, inputs, reuse, **kwargs):
        function = type(self)._function
        return function(inputs, **self._options, trainable=self.trainable, name=self._scope,
                        reuse=reuse, **kwargs)

    @property
    def variables(self):
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self):
        trainable = set(id(v) for v in get_default_graph().get_collection(
            GraphKeys.TRAINABLE_VARIABLES))
        return [v for v in self._variables if id(v) in trainable]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self._variables if id(v) not in trainable]

    non_trainable_weights = non_trainable_variables


def _layer_class(class_name, function, default_name, positional, doc):
    """A Layer subclass whose constructor takes `positional` arguments then the functional
    layer's keyword options."""
    def __init__(self, *args, trainable=True, name=None, dtype=None, **options):
        if len(args) > len(positional):
            raise TypeError(f"{class_name} takes at most {len(positional)} positional arguments")
        options.update(zip(positional, args))
        missing = [p for p in positional if p not in options]
        if missing:
            raise TypeError(f"{class_name} is missing {missing}")
        Layer.__init__(self, trainable=trainable, name=name, dtype=dtype, _options=options)

    return type(class_name, (Layer,), {"__init__": __init__, "_function": staticmethod(function),
                                       "_default_name": default_name, "__doc__": doc})


Dense = _layer_class("Dense", layers.dense, "dense", ["units"],
                     "`Dense(units, activation=None, use_bias=True, ...)`: see `tf.layers.dense`.")
Conv2D = _layer_class("Conv2D", layers.conv2d, "conv2d", ["filters", "kernel_size"],
                      "`Conv2D(filters, kernel_size, strides=(1, 1), padding='valid', ...)`.")
Conv2DTranspose = _layer_class("Conv2DTranspose", layers_conv.conv2d_transpose,
                               "conv2d_transpose", ["filters", "kernel_size"],
                               "`Conv2DTranspose(filters, kernel_size, strides=(1, 1), ...)`.")
Conv3D = _layer_class("Conv3D", layers_conv.conv3d, "conv3d", ["filters", "kernel_size"],
                      "`Conv3D(filters, kernel_size, strides=(1, 1, 1), ...)`.")
SeparableConv2D = _layer_class("SeparableConv2D", layers_conv.separable_conv2d,
                               "separable_conv2d", ["filters", "kernel_size"],
                               "`SeparableConv2D(filters, kernel_size, depth_multiplier=1, ...)`.")


class _StatelessLayer(Layer):
    """A layer without variables: each call builds its ops under the layer's name."""

    def __call__(self, inputs, *args, **kwargs):
        self.built = True
        return self._build(inputs, *args, **kwargs)


class Flatten(_StatelessLayer):
    """`Flatten(data_format=None)`: [batch, ...] -> [batch, -1]."""

    _default_name = "flatten"

    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name)
        self.data_format = data_format or "channels_last"

    def _build(self, inputs):
        return layers.flatten(inputs, name=self._given_name, data_format=self.data_format)


class Dropout(_StatelessLayer):
    """`Dropout(rate=0.5, noise_shape=None, seed=None)`; call with `training=`."""

    _default_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def _build(self, inputs, training=False):
        return layers.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape,
                              seed=self.seed, training=training, name=self._given_name)


class _Pooling2D(_StatelessLayer):
    """A pooling layer (2-D or 3-D: the pooling function `_pool` decides)."""

    _pool = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name)
        self.pool_size, self.strides = pool_size, strides
        self.padding, self.data_format = padding, data_format

    def _build(self, inputs):
        return type(self)._pool(inputs, self.pool_size, self.strides, padding=self.padding,
                                data_format=self.data_format, name=self._given_name)


class MaxPooling2D(_Pooling2D):
    """`MaxPooling2D(pool_size, strides, padding='valid', data_format='channels_last')`."""

    _default_name = "max_pooling2d"
    _pool = staticmethod(layers.max_pooling2d)


class AveragePooling2D(_Pooling2D):
    """`AveragePooling2D(pool_size, strides, padding='valid', data_format='channels_last')`."""

    _default_name = "average_pooling2d"
    _pool = staticmethod(layers.average_pooling2d)


class MaxPooling3D(_Pooling2D):
    """`MaxPooling3D(pool_size, strides, padding='valid', data_format='channels_last')`."""

    _default_name = "max_pooling3d"
    _pool = staticmethod(layers_conv.max_pooling3d)


class AveragePooling3D(_Pooling2D):
    """`AveragePooling3D(pool_size, strides, padding='valid', data_format='channels_last')`."""

    _default_name = "average_pooling3d"
    _pool = staticmethod(layers_conv.average_pooling3d)


__all__ = ["Layer", "Dense", "Conv2D", "Conv2DTranspose", "Conv3D", "SeparableConv2D", "Flatten",
           "Dropout", "MaxPooling2D", "AveragePooling2D", "MaxPooling3D", "AveragePooling3D"]
