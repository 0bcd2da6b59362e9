"""Parsing `tf.train.Example` protos and raw bytes: `tf.parse_single_example`, `tf.parse_example`
(`tf.io.*`), the feature specs `tf.FixedLenFeature`, `tf.VarLenFeature`,
`tf.FixedLenSequenceFeature`, and `tf.decode_raw` / `tf.io.decode_raw`.

`ParseExample` (a batch: a vector of serialized Examples) and `ParseSingleExample` (one scalar) have
TF's outputs in TF's order: for each VarLenFeature an (indices, values, dense_shape) triple of a
SparseTensor, then one dense tensor per FixedLenFeature, its static shape the feature's shape (with
the batch size in front for ParseExample; a FixedLenSequenceFeature's first dimension is the length,
known only from the data). Their inputs are the serialized protos followed by one default per dense
feature (the kernel reads a default only when a feature marked optional is missing). Keys are sorted
as TF sorts them, so the output order does not depend on the order of the `features` dict. Decoding
the protos uses the `protobuf` package (graphflow[records]); none of these ops has a gradient.
"""

import collections

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor, no_gradient, require_dtype
from graphflow.ops.sparse_tensor import SparseTensor

EXAMPLE_DTYPES = (dtypes.float32, dtypes.int64, dtypes.string)
_DECODE_RAW_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
                      dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.bool_)


# ---------------------------------------------------------------- feature specs
class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype",
                                                                 "default_value"])):
    """`tf.FixedLenFeature(shape, dtype, default_value=None)`: a feature with exactly
    prod(shape) values in every Example; required unless `default_value` is given."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """`tf.VarLenFeature(dtype)`: any number of values, parsed to a SparseTensor."""


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """`tf.FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)`: any
    number of items of `shape` each, parsed to a dense [length] + shape tensor (in a batch, padded
    with `default_value` to the longest Example's length)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


def _example_dtype(dtype, key):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in EXAMPLE_DTYPES:
        raise ValueError(f"Feature {key!r}: an Example holds float32, int64 or string values, "
                         f"not {dtype.name}")
    return dtype


def _fully_defined(shape, key):
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Feature {key!r}: the shape of a FixedLenFeature must be fully "
                         f"defined, got {shape}")
    return [int(d) for d in shape.dims]


def _split_features(features):
    """(sparse [(key, dtype)], dense [(key, dtype, shape dims, required, default)]), each sorted."""
    if not isinstance(features, dict) or not features:
        raise ValueError("features must be a non-empty dict of feature keys to FixedLenFeature, "
                         "VarLenFeature or FixedLenSequenceFeature")
    sparse, dense = [], []
    for key in sorted(features):
        spec = features[key]
        if not isinstance(key, str):
            raise TypeError(f"feature keys must be strings, got {key!r}")
        if isinstance(spec, VarLenFeature):
            sparse.append((key, _example_dtype(spec.dtype, key)))
        elif isinstance(spec, FixedLenFeature):
            dtype, dims = _example_dtype(spec.dtype, key), _fully_defined(spec.shape, key)
            default = spec.default_value
            if default is not None:
                default = np.asarray(default, dtype=dtype.as_numpy_dtype)
                if default.size != int(np.prod(dims)):
                    raise ValueError(f"Feature {key!r}: the default_value has {default.size} "
                                     f"values, the shape {dims} needs {int(np.prod(dims))}")
                default = default.reshape(dims)
            dense.append((key, dtype, dims, default is None, default))
        elif isinstance(spec, FixedLenSequenceFeature):
            if not spec.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to "
                                 "be True.")
            dtype, dims = _example_dtype(spec.dtype, key), _fully_defined(spec.shape, key)
            default = np.zeros((), dtype.as_numpy_dtype) if dtype != dtypes.string else b""
            if spec.default_value is not None:
                default = np.asarray(spec.default_value, dtype=dtype.as_numpy_dtype)
                if default.size != 1:
                    raise ValueError(f"Feature {key!r}: the default_value of a "
                                     "FixedLenSequenceFeature is one padding value")
                default = default.reshape(())
            dense.append((key, dtype, [None] + dims, not spec.allow_missing, default))
        else:
            raise TypeError(f"Feature {key!r}: unsupported feature spec {spec!r} (FixedLenFeature, "
                            "VarLenFeature or FixedLenSequenceFeature)")
    return sparse, dense


# ---------------------------------------------------------------- the ops
_PARSE_ATTRS = ("sparse_keys:list(string) sparse_types:list(dtype) dense_keys:list(string) "
                "dense_types:list(dtype) dense_shapes:list(shape) dense_required:list(bool)")


def _parse_infer(batched):
    def infer(inputs, attrs):
        serialized, defaults = inputs[0], inputs[1:]
        require_dtype(serialized, (dtypes.string,), "the serialized Examples")
        rank = 1 if batched else 0
        if serialized.shape.ndims not in (None, rank):
            raise ValueError(f"the serialized Examples must be a {'vector' if batched else 'scalar'}"
                             f", got shape {serialized.shape}")
        batch = serialized.shape.dims[0] if batched and serialized.shape.dims else None
        n_dense = len(attrs["dense_keys"])
        lengths = {len(attrs[k]) for k in ("dense_types", "dense_shapes", "dense_required")}
        if lengths != {n_dense} or len(defaults) != n_dense:
            raise ValueError("dense_keys, dense_types, dense_shapes, dense_required and the dense "
                             "defaults must have one entry per dense feature")
        if len(attrs["sparse_types"]) != len(attrs["sparse_keys"]):
            raise ValueError("sparse_keys and sparse_types must have one entry per sparse feature")
        out = []
        for dtype in attrs["sparse_types"]:
            _example_dtype(dtype, "sparse")
            out.append((dtypes.int64, TensorShape([None, rank + 1])))
        for dtype in attrs["sparse_types"]:
            out.append((dtypes.as_dtype(dtype), TensorShape([None])))
        out.extend([(dtypes.int64, TensorShape([rank + 1]))] * len(attrs["sparse_types"]))
        for key, dtype, shape, default in zip(attrs["dense_keys"], attrs["dense_types"],
                                              attrs["dense_shapes"], defaults):
            dtype = _example_dtype(dtype, key)
            if default.dtype != dtype:
                raise TypeError(f"the default of feature {key!r} is {default.dtype.name}, the "
                                f"feature is {dtype.name}")
            dims = as_shape(shape).dims
            if dims is None or any(d is None for d in dims[1:]):
                raise ValueError(f"feature {key!r}: shape {shape} must be fully defined (but for "
                                 "a sequence feature's first dimension)")
            out.append((dtype, TensorShape(([batch] if batched else []) + list(dims))))
        return out
    return infer


_PARSED = {"value_dependent_shape": True}  # sparse sizes and sequence lengths come from the data
define("ParseExample", _parse_infer(True), attrs=_PARSE_ATTRS, **_PARSED, onnx=no_onnx.PARSE_EXAMPLE)
define("ParseSingleExample", _parse_infer(False), attrs=_PARSE_ATTRS, **_PARSED, onnx=no_onnx.PARSE_EXAMPLE)


def _parse(op_type, serialized, features, name):
    sparse, dense = _split_features(features)
    serialized = convert_to_tensor(serialized, dtype=dtypes.string)
    defaults = []
    for _, dtype, _, _, default in dense:
        value = default if default is not None else np.zeros((), dtype.as_numpy_dtype)
        if dtype == dtypes.string:
            value = np.asarray(value if default is not None else b"", dtype=object)
        defaults.append(convert_to_tensor(value, dtype=dtype))
    attrs = {"sparse_keys": [k for k, _ in sparse], "sparse_types": [t.name for _, t in sparse],
             "dense_keys": [d[0] for d in dense], "dense_types": [d[1].name for d in dense],
             "dense_shapes": [list(d[2]) for d in dense], "dense_required": [d[3] for d in dense]}
    outputs = make_op(op_type, [serialized] + defaults, attrs, name=name or op_type).outputs
    n = len(sparse)
    result = {}
    for i, (key, _) in enumerate(sparse):
        result[key] = SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
    for j, item in enumerate(dense):
        result[item[0]] = outputs[3 * n + j]
    return result


def parse_example(serialized, features, name=None, example_names=None):
    """`tf.parse_example` / `tf.io.parse_example`: parse a vector of serialized `tf.train.Example`s
    into {key: Tensor or SparseTensor}; dense features get the batch dimension in front, sparse ones
    are [batch, max values] SparseTensors."""
    return _parse("ParseExample", serialized, features, name)


def parse_single_example(serialized, features, name=None, example_names=None):
    """`tf.parse_single_example` / `tf.io.parse_single_example`: parse one serialized
    `tf.train.Example` (a scalar string) into {key: Tensor or SparseTensor}."""
    return _parse("ParseSingleExample", serialized, features, name)


# ---------------------------------------------------------------- decode_raw
def _decode_raw_infer(inputs, attrs):
    require_dtype(inputs[0], (dtypes.string,), "the input of decode_raw")
    shape = inputs[0].shape
    dims = None if shape.dims is None else list(shape.dims) + [None]
    return [(dtypes.as_dtype(attrs["out_type"]), TensorShape(dims))]


define("DecodeRaw", _decode_raw_infer, attrs="out_type:dtype little_endian:bool",
       value_dependent_shape=True,
       onnx=no_onnx.none("reinterpreting the bytes of strings as numbers has no ONNX operator"))
no_gradient("ParseExample", "ParseSingleExample", "DecodeRaw")


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):
    """`tf.decode_raw` / `tf.io.decode_raw`: reinterpret the bytes of each string as a vector of
    `out_type` (every string of the input must have the same length, a multiple of the type's
    size); the output's shape is the input's plus that vector's length."""
    if input_bytes is None:
        input_bytes = bytes
    if out_type is None:
        raise TypeError("decode_raw: out_type is required")
    out_type = dtypes.as_dtype(out_type)
    if out_type not in _DECODE_RAW_DTYPES:
        raise TypeError(f"decode_raw: out_type must be one of "
                        f"{[t.name for t in _DECODE_RAW_DTYPES]}, got {out_type.name}")
    t = convert_to_tensor(input_bytes, dtype=dtypes.string)
    return make_tensor("DecodeRaw", (t,), {"out_type": out_type.name,
                                           "little_endian": bool(little_endian)},
                       name=name or "DecodeRaw")


__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "parse_example",
           "parse_single_example", "decode_raw"]
