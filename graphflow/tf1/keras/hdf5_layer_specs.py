"""The layer configurations of Keras's HDF5 model files: for each layer class graphflow's tf.keras
has, the keys tf_keras writes in its `config`, how each is checked and turned into the argument
graphflow's constructor takes (reading), and how it is taken from a graphflow layer (writing).

Kinds of keys:
- passed on (checked for type and range): numbers, booleans, activations by name,
  initializers by class name, L1/L2/L1L2 regularizers, shapes, axes, paddings;
- required at the value graphflow computes (`none`, `false`, `zero`, `one`, `last`,
  `nearest`): a constraint, `stateful=True`, RNN dropout, `groups`, channels_first where
  graphflow has only channels_last... any other value changes the numbers, so the load is
  refused with the layer's class, name and key;
- ignored, because they do not change what the loaded model computes: `optional` (InputLayer),
  `unroll` and `implementation` (RNNs: the same function), `fused`, `renorm_momentum`
  (BatchNormalization), `batch_size`, and an initializer graphflow does not know (the file's
  weights replace it; a fresh model falls back to the layer's default).
"""

from graphflow.tf1 import init_ops
from graphflow.tf1.keras import activations
from graphflow.tf1.keras import initializers as keras_initializers


class Malformed(Exception):
    """A value of the wrong type or out of range (the file is malformed)."""


class Unsupported(Exception):
    """A value graphflow cannot compute with."""


def _int(value, low=0, high=1 << 40):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Malformed(f"expected an integer in [{low}, {high}], found {value!r}")
    return value


def _float(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Malformed(f"expected a number, found {value!r}")
    return float(value)


def _bool(value):
    if not isinstance(value, bool):
        raise Malformed(f"expected true or false, found {value!r}")
    return value


def _ints(value, n, low=1):
    if isinstance(value, int) and not isinstance(value, bool):
        return (_int(value, low),) * n
    if not isinstance(value, list) or len(value) != n:
        raise Malformed(f"expected an integer or a list of {n}, found {value!r}")
    return tuple(_int(v, low) for v in value)


def _choice(options):
    def check(value):
        if value not in options:
            raise Malformed(f"expected one of {sorted(map(str, options))}, found {value!r}")
        return value
    return check


def _shape(value, allow_none=False, allow_minus_one=False):
    if not isinstance(value, list) or len(value) > 64:
        raise Malformed(f"expected a shape (a list of integers), found {value!r}")
    low = -1 if allow_minus_one else 0
    return tuple(None if v is None and allow_none else _int(v, low) for v in value)


def _activation(value):
    if not isinstance(value, str):
        raise Malformed(f"expected an activation name, found {value!r}")
    if value not in activations._BY_NAME:
        raise Unsupported(f"{value!r} (an activation graphflow does not have)")
    return value


_INIT_NAMES = {"GlorotUniform": "glorot_uniform", "GlorotNormal": "glorot_normal",
               "Zeros": "zeros", "Ones": "ones", "Orthogonal": "orthogonal",
               "HeNormal": "he_normal", "HeUniform": "he_uniform", "LecunNormal": "lecun_normal",
               "LecunUniform": "lecun_uniform", "RandomUniform": "random_uniform",
               "RandomNormal": "random_normal", "TruncatedNormal": "truncated_normal"}


def _initializer(value):
    """A graphflow initializer (a name or an object) or None (the layer's default)."""
    if isinstance(value, str):
        return value.lower() if value.lower() in keras_initializers._BY_NAME else None
    if not isinstance(value, dict) or not isinstance(value.get("class_name"), str):
        raise Malformed(f"expected an initializer, found {value!r}")
    name, config = value["class_name"], value.get("config") or {}
    if not isinstance(config, dict):
        raise Malformed(f"expected an initializer's config, found {config!r}")
    numbers = {k: v for k, v in config.items() if isinstance(v, (int, float))
               and not isinstance(v, bool)}
    seed = config.get("seed") if isinstance(config.get("seed"), int) else None
    if name == "RandomUniform" and {"minval", "maxval"} <= set(numbers):
        return keras_initializers.RandomUniform(numbers["minval"], numbers["maxval"], seed)
    if name in ("RandomNormal", "TruncatedNormal") and {"mean", "stddev"} <= set(numbers):
        cls = getattr(keras_initializers, name)
        return cls(numbers["mean"], numbers["stddev"], seed)
    if name == "Constant" and "value" in numbers:
        return keras_initializers.Constant(numbers["value"])
    if name == "Orthogonal" and "gain" in numbers:
        return keras_initializers.Orthogonal(numbers["gain"], seed)
    if name == "VarianceScaling" and "scale" in numbers and \
            config.get("mode") in ("fan_in", "fan_out", "fan_avg") and \
            config.get("distribution") in ("truncated_normal", "untruncated_normal", "uniform",
                                           "normal"):
        return keras_initializers.VarianceScaling(numbers["scale"], config["mode"],
                                                  config["distribution"], seed)
    return _INIT_NAMES.get(name)


def _regularizer(value):
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("config"), dict):
        raise Malformed(f"expected a regularizer, found {value!r}")
    name, config = value.get("class_name"), value["config"]
    if name not in ("L1L2", "L1", "L2") or set(config) - {"l1", "l2"}:
        raise Unsupported(f"{name!r} (only L1, L2, L1L2 regularizers)")
    return keras_initializers.L1L2(_float(config.get("l1", 0.0)), _float(config.get("l2", 0.0)))


def _required(expected):
    def check(value):
        if value != expected and not (expected is False and value is None):
            raise Unsupported(f"{value!r} (graphflow computes {expected!r} only)")
        return value
    return check


def _axis(value):
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return _int(value, -64, 64)


def _noise_shape(value):
    return None if value is None else list(_shape(value, allow_none=True))


def _pads(value):
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, list) for v in value):
        return tuple(_ints(v, 2, low=0) for v in value)
    rows, cols = _ints(value, 2, low=0)
    return ((rows, rows), (cols, cols))


def _pads_n(n):
    """n (before, after) pairs, or n ints (symmetric)."""
    def read(value):
        if isinstance(value, list) and len(value) == n and all(isinstance(v, list) for v in value):
            return tuple(_ints(v, 2, low=0) for v in value)
        return tuple((v, v) for v in _ints(value, n, low=0))
    return read


def _axes(value):
    """An axis or a list of axes."""
    if isinstance(value, list):
        if not 1 <= len(value) <= 64:
            raise Malformed(f"expected a list of axes, found {value!r}")
        return [_int(v, -64, 64) for v in value]
    return _int(value, -64, 64)


def _optional(read):
    return lambda value: None if value is None else read(value)


def _dims(value):
    if not isinstance(value, list) or not 1 <= len(value) <= 64:
        raise Malformed(f"expected a list of axes, found {value!r}")
    return tuple(_int(v, 1, 64) for v in value)


# kinds: (reader(value) -> argument or Unsupported, writer(graphflow value) -> JSON, passed on)
def _write_initializer(value):
    if isinstance(value, str):
        name = {"uniform": "random_uniform", "normal": "random_normal", "zero": "zeros",
                "one": "ones"}.get(value.lower(), value.lower())
        for cls, known in _INIT_NAMES.items():
            if known == name:
                return {"class_name": cls, "config": {}}
        return None
    for cls, graphflow_cls, fields in _INIT_CLASSES:
        if isinstance(value, graphflow_cls):
            return {"class_name": cls,
                    "config": {k: getattr(value, attr, None) for k, attr in fields.items()}}
    return None


_INIT_CLASSES = [   # subclasses before their bases
    ("GlorotUniform", init_ops.glorot_uniform_initializer, {"seed": "seed"}),
    ("GlorotNormal", init_ops.glorot_normal_initializer, {"seed": "seed"}),
    ("VarianceScaling", init_ops.variance_scaling_initializer,
     {"scale": "scale", "mode": "mode", "distribution": "distribution", "seed": "seed"}),
    ("TruncatedNormal", init_ops.truncated_normal_initializer,
     {"mean": "mean", "stddev": "stddev", "seed": "seed"}),
    ("RandomNormal", init_ops.random_normal_initializer,
     {"mean": "mean", "stddev": "stddev", "seed": "seed"}),
    ("RandomUniform", init_ops.random_uniform_initializer,
     {"minval": "minval", "maxval": "maxval", "seed": "seed"}),
    ("Orthogonal", keras_initializers.Orthogonal, {"gain": "gain", "seed": "seed"}),
    ("Zeros", init_ops.zeros_initializer, {}),
    ("Ones", init_ops.ones_initializer, {}),
]


def _write_regularizer(value):
    if value is None:
        return None
    if isinstance(value, str):
        value = keras_initializers.get_regularizer(value)
    if isinstance(value, keras_initializers.L1L2):
        return {"class_name": "L1L2", "config": {"l1": value.l1, "l2": value.l2}}
    raise Unsupported(f"regularizer {value!r} (only L1/L2 regularizers are written)")


def _write_activation(fn):
    name = getattr(fn, "__name__", None)
    if activations._BY_NAME.get(name) is not fn:
        raise Unsupported(f"activation {fn!r} (only Keras's activations, by name)")
    return name


def _same(value):
    return value


KINDS = {
    "int": (_int, _same, True), "units": (lambda v: _int(v, 1), _same, True),
    "float": (_float, _same, True), "bool": (_bool, _same, True),
    "act": (_activation, _write_activation, True),
    "init": (_initializer, _write_initializer, True),
    "reg": (_regularizer, _write_regularizer, True),
    "pair": (lambda v: _ints(v, 2), list, True), "single": (lambda v: _ints(v, 1), list, True),
    "pads": (_pads, lambda v: [list(p) for p in v], True),
    "padding": (_choice(("valid", "same")), lambda v: str(v).lower(), True),
    "fmt": (_choice(("channels_last", "channels_first")), _same, True),
    "axis": (_axis, _same, True), "noise": (_noise_shape, _same, True),
    "seed": (lambda v: None if v is None else _int(v), _same, True),
    "target": (lambda v: _shape(v, allow_minus_one=True), list, True),
    "none": (_required(None), lambda v: None, False),
    "false": (_required(False), lambda v: False, False),
    "zero": (_required(0.0), lambda v: 0.0, False), "one": (_required(1), lambda v: 1, False),
    "ones": (lambda v: _required((1, 1))(_ints(v, 2)), lambda v: [1, 1], False),
    "last": (_required("channels_last"), lambda v: "channels_last", False),
    "nearest": (_required("nearest"), lambda v: "nearest", False),
    "ignore": (lambda v: v, None, False),
    "triple": (lambda v: _ints(v, 3), list, True),
    # written as tf_keras writes them, read and not passed on (SeparableConv2D has no kernel)
    "unused_init": (lambda v: v, _write_initializer, False),
    "unused_reg": (lambda v: v, _write_regularizer, False),
    "pads1": (lambda v: _pads_n(1)([v])[0], list, True),
    "pads3": (_pads_n(3), lambda v: [list(p) for p in v], True),
    "axes": (_axes, _same, True), "dims": (_dims, list, True),
    "optfloat": (_optional(_float), _same, True),
    "optaxes": (_optional(lambda v: _dims(v if isinstance(v, list) else [v])),
                lambda v: None if v is None else list(v), True),
}


def _attr(name):
    return lambda layer: getattr(layer, name)


def _item(name, i):
    return lambda layer: getattr(layer, name)[i]


_CONSTRAINTS = {"kernel_constraint": ("none", None), "bias_constraint": ("none", None)}


def _weighted(tuples=True, activity=False):
    """The keys of Dense and the convolutions: kernel/bias initializers and regularizers as
    attributes (Dense) or as the `inits`/`regularizers` pairs (the convolutions)."""
    def get(name, i):
        return _item(name + "s", i) if tuples else \
            _attr(("kernel_", "bias_")[i] + name)
    return {"activation": ("act", _attr("activation")), "use_bias": ("bool", _attr("use_bias")),
            "kernel_initializer": ("init", get("init" if tuples else "initializer", 0)),
            "bias_initializer": ("init", get("init" if tuples else "initializer", 1)),
            "kernel_regularizer": ("reg", get("regularizer", 0)),
            "bias_regularizer": ("reg", get("regularizer", 1)),
            "activity_regularizer": ("reg", _attr("activity_regularizer")) if activity
            else ("none", None), **_CONSTRAINTS}


def _unit_forget_bias(layer):
    from graphflow.tf1.keras.layers_recurrent import _UnitForgetBias
    return isinstance(layer.inits[2], _UnitForgetBias)


def _bias_init(layer):
    return "zeros" if _unit_forget_bias(layer) else layer.inits[2]


_RNN = {
    "units": ("units", _attr("units")), "activation": ("act", _attr("activation")),
    "use_bias": ("bool", _attr("use_bias")),
    "kernel_initializer": ("init", _item("inits", 0)),
    "recurrent_initializer": ("init", _item("inits", 1)),
    "bias_initializer": ("init", _bias_init),
    "kernel_regularizer": ("reg", _item("regularizers", 0)),
    "recurrent_regularizer": ("reg", _item("regularizers", 1)),
    "bias_regularizer": ("reg", _item("regularizers", 2)),
    "activity_regularizer": ("none", None), "recurrent_constraint": ("none", None),
    **_CONSTRAINTS, "dropout": ("zero", None), "recurrent_dropout": ("zero", None),
    "return_sequences": ("bool", _attr("return_sequences")),
    "return_state": ("bool", _attr("return_state")),
    "go_backwards": ("bool", _attr("go_backwards")),
    "stateful": ("false", None), "time_major": ("false", None),
    "unroll": ("ignore", None), "implementation": ("ignore", None)}

_POOL2D = {"pool_size": ("pair", _attr("pool_size")), "strides": ("pair", _attr("strides")),
           "padding": ("padding", _attr("padding")), "data_format": ("fmt", _attr("data_format"))}
_POOL1D = {"pool_size": ("single", lambda layer: [layer.pool_size]),
           "strides": ("single", lambda layer: [layer.strides]),
           "padding": ("padding", _attr("padding")), "data_format": ("last", None)}
_GLOBAL = {"data_format": ("fmt", _attr("data_format")), "keepdims": ("false", None)}
_POOL3D = {"pool_size": ("triple", _attr("pool_size")), "strides": ("triple", _attr("strides")),
           "padding": ("padding", _attr("padding")), "data_format": ("last", None)}
_GLOBAL3D = {"data_format": ("last", None), "keepdims": ("false", None)}


def _bn_axis(layer):
    return [getattr(layer, "_axis", layer.axis)]


# class name -> {keras key: (kind, getter for writing)}
SPECS = {
    "Dense": {"units": ("units", _attr("units")), **_weighted(False, True)},
    "Activation": {"activation": ("act", _attr("activation"))},
    "Flatten": {"data_format": ("fmt", _attr("data_format"))},
    "Dropout": {"rate": ("float", _attr("rate")), "noise_shape": ("noise", _attr("noise_shape")),
                "seed": ("seed", _attr("seed"))},
    "Reshape": {"target_shape": ("target", _attr("target_shape"))},
    "Embedding": {"input_dim": ("units", _attr("input_dim")),
                  "output_dim": ("units", _attr("output_dim")),
                  "embeddings_initializer": ("init", _attr("embeddings_initializer")),
                  "embeddings_regularizer": ("reg", _attr("embeddings_regularizer")),
                  "activity_regularizer": ("none", None), "embeddings_constraint": ("none", None),
                  "mask_zero": ("bool", _attr("mask_zero")), "sparse": ("false", None),
                  "input_length": ("ignore", None)},
    "Masking": {"mask_value": ("float", _attr("mask_value"))},
    "Concatenate": {"axis": ("axis", _attr("axis"))},
    "Add": {},
    "BatchNormalization": {
        "axis": ("axis", _bn_axis), "momentum": ("float", _attr("momentum")),
        "epsilon": ("float", _attr("epsilon")), "center": ("bool", _attr("center")),
        "scale": ("bool", _attr("scale")),
        "beta_initializer": ("init", _item("inits", 0)),
        "gamma_initializer": ("init", _item("inits", 1)),
        "moving_mean_initializer": ("init", _item("inits", 2)),
        "moving_variance_initializer": ("init", _item("inits", 3)),
        "beta_regularizer": ("reg", _item("regularizers", 0)),
        "gamma_regularizer": ("reg", _item("regularizers", 1)),
        "beta_constraint": ("none", None), "gamma_constraint": ("none", None),
        "renorm": ("false", None), "renorm_clipping": ("none", None),
        "renorm_momentum": ("ignore", None), "fused": ("ignore", None),
        "virtual_batch_size": ("none", None), "adjustment": ("none", None),
        "synchronized": ("false", None)},
    "Conv2D": {"filters": ("units", _attr("filters")),
               "kernel_size": ("pair", _attr("kernel_size")),
               "strides": ("pair", _attr("strides")), "padding": ("padding", _attr("padding")),
               "data_format": ("fmt", _attr("data_format")),
               "dilation_rate": ("pair", _attr("dilation_rate")), "groups": ("one", None),
               **_weighted(True, True)},
    "Conv1D": {"filters": ("units", _attr("filters")),
               "kernel_size": ("single", lambda layer: [layer.kernel_size]),
               "strides": ("single", lambda layer: [layer.strides]),
               "padding": ("padding", _attr("padding")), "data_format": ("last", None),
               "dilation_rate": ("single", lambda layer: [layer.dilation_rate]),
               "groups": ("one", None), **_weighted()},
    "Conv2DTranspose": {"filters": ("units", _attr("filters")),
                        "kernel_size": ("pair", _attr("kernel_size")),
                        "strides": ("pair", _attr("strides")),
                        "padding": ("padding", _attr("padding")),
                        "output_padding": ("none", None), "data_format": ("last", None),
                        "dilation_rate": ("ones", None), "groups": ("one", None),
                        **_weighted()},
    "MaxPooling2D": _POOL2D, "AveragePooling2D": _POOL2D,
    "MaxPooling1D": _POOL1D, "AveragePooling1D": _POOL1D,
    "GlobalAveragePooling2D": _GLOBAL, "GlobalMaxPooling2D": _GLOBAL,
    "GlobalAveragePooling1D": _GLOBAL, "GlobalMaxPooling1D": _GLOBAL,
    "UpSampling2D": {"size": ("pair", _attr("size")), "data_format": ("last", None),
                     "interpolation": ("nearest", None)},
    "ZeroPadding2D": {"padding": ("pads", _attr("padding")), "data_format": ("last", None)},
    "LeakyReLU": {"alpha": ("float", _attr("alpha"))},
    **{name: {} for name in ("Multiply", "Subtract", "Average", "Maximum", "Minimum")},
    "Dot": {"axes": ("axes", lambda layer: list(layer.axes)),
            "normalize": ("bool", _attr("normalize"))},
    "PReLU": {"alpha_initializer": ("init", _attr("alpha_initializer")),
              "alpha_regularizer": ("reg", _attr("alpha_regularizer")),
              "alpha_constraint": ("none", None), "shared_axes": ("optaxes", _attr("shared_axes"))},
    "ELU": {"alpha": ("float", _attr("alpha"))},
    "ThresholdedReLU": {"theta": ("float", _attr("theta"))},
    "Softmax": {"axis": ("axis", _attr("axis"))},
    "ReLU": {"max_value": ("optfloat", _attr("max_value")),
             "negative_slope": ("float", _attr("negative_slope")),
             "threshold": ("float", _attr("threshold"))},
    "LayerNormalization": {
        "axis": ("axes", _attr("axis")), "epsilon": ("float", _attr("epsilon")),
        "center": ("bool", _attr("center")), "scale": ("bool", _attr("scale")),
        "beta_initializer": ("init", _item("inits", 0)),
        "gamma_initializer": ("init", _item("inits", 1)),
        "beta_regularizer": ("reg", _item("regularizers", 0)),
        "gamma_regularizer": ("reg", _item("regularizers", 1)),
        "beta_constraint": ("none", None), "gamma_constraint": ("none", None)},
    "RepeatVector": {"n": ("units", _attr("n"))},
    "Permute": {"dims": ("dims", _attr("dims"))},
    "Cropping1D": {"cropping": ("pads1", _attr("cropping"))},
    "Cropping2D": {"cropping": ("pads", _attr("cropping")),
                   "data_format": ("fmt", _attr("data_format"))},
    "ZeroPadding1D": {"padding": ("pads1", _attr("padding"))},
    "ZeroPadding3D": {"padding": ("pads3", _attr("padding")), "data_format": ("last", None)},
    "UpSampling1D": {"size": ("units", _attr("size"))},
    "UpSampling3D": {"size": ("triple", _attr("size")), "data_format": ("last", None)},
    "GaussianNoise": {"stddev": ("float", _attr("stddev")), "seed": ("seed", _attr("seed"))},
    "GaussianDropout": {"rate": ("float", _attr("rate")), "seed": ("seed", _attr("seed"))},
    **{f"SpatialDropout{n}D": {"rate": ("float", _attr("rate")), "noise_shape": ("none", None),
                               "seed": ("seed", _attr("seed"))} for n in (1, 2, 3)},
    "ActivityRegularization": {"l1": ("float", _attr("l1")), "l2": ("float", _attr("l2"))},
    "Conv3D": {"filters": ("units", _attr("filters")),
               "kernel_size": ("triple", _attr("kernel_size")),
               "strides": ("triple", _attr("strides")), "padding": ("padding", _attr("padding")),
               "data_format": ("last", None), "dilation_rate": ("triple", _attr("dilation_rate")),
               "groups": ("one", None), **_weighted(True, True)},
    "SeparableConv2D": {
        "filters": ("units", _attr("filters")), "kernel_size": ("pair", _attr("kernel_size")),
        "strides": ("pair", _attr("strides")), "padding": ("padding", _attr("padding")),
        "data_format": ("last", None), "dilation_rate": ("pair", _attr("dilation_rate")),
        "depth_multiplier": ("units", _attr("depth_multiplier")), "groups": ("one", None),
        "activation": ("act", _attr("activation")), "use_bias": ("bool", _attr("use_bias")),
        "kernel_initializer": ("unused_init", lambda layer: "glorot_uniform"),
        "kernel_regularizer": ("unused_reg", lambda layer: None),
        "depthwise_initializer": ("init", _item("inits", 0)),
        "pointwise_initializer": ("init", _item("inits", 1)),
        "bias_initializer": ("init", _item("inits", 2)),
        "depthwise_regularizer": ("reg", _item("regularizers", 0)),
        "pointwise_regularizer": ("reg", _item("regularizers", 1)),
        "bias_regularizer": ("reg", _item("regularizers", 2)),
        "activity_regularizer": ("reg", _attr("activity_regularizer")),
        **{k: ("none", None) for k in ("kernel_constraint", "bias_constraint",
                                        "depthwise_constraint", "pointwise_constraint")}},
    "DepthwiseConv2D": {
        "kernel_size": ("pair", _attr("kernel_size")), "strides": ("pair", _attr("strides")),
        "padding": ("padding", _attr("padding")), "data_format": ("last", None),
        "dilation_rate": ("pair", _attr("dilation_rate")), "groups": ("one", None),
        "depth_multiplier": ("units", _attr("depth_multiplier")),
        "activation": ("act", _attr("activation")), "use_bias": ("bool", _attr("use_bias")),
        "depthwise_initializer": ("init", _item("inits", 0)),
        "bias_initializer": ("init", _item("inits", 1)),
        "depthwise_regularizer": ("reg", _item("regularizers", 0)),
        "bias_regularizer": ("reg", _item("regularizers", 1)),
        "activity_regularizer": ("reg", _attr("activity_regularizer")),
        "depthwise_constraint": ("none", None), "bias_constraint": ("none", None)},
    "MaxPooling3D": _POOL3D, "AveragePooling3D": _POOL3D,
    "GlobalAveragePooling3D": _GLOBAL3D, "GlobalMaxPooling3D": _GLOBAL3D,
    "LSTM": {**_RNN, "recurrent_activation": ("act", _attr("recurrent_activation")),
             "unit_forget_bias": ("bool", _unit_forget_bias)},
    "GRU": {**_RNN, "recurrent_activation": ("act", _attr("recurrent_activation")),
            "reset_after": ("bool", _attr("reset_after"))},
    "SimpleRNN": dict(_RNN),
}
# graphflow's GRU/SimpleRNN refuse a constraint or activity regularizer given at all; LSTM has
# no such arguments: the "none" kinds are never passed on.

# keys every layer has
COMMON = {"name", "trainable", "dtype", "batch_input_shape", "batch_size"}
