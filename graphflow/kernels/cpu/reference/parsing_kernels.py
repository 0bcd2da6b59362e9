"""numpy kernels for the Example-parsing ops and DecodeRaw (graphflow/ops/parsing_ops.py).

Each serialized Example is decoded by the `protobuf` package into graphflow's `tensorflow.Example`
message class (framework/example_proto.py); the kernels then check each feature's type and size
and raise TF1's `InvalidArgumentError` messages (a missing required feature, a type or size that
does not match the spec, bytes that are not an Example).
"""

import math

import numpy as np

from graphflow.framework import example_proto
from graphflow.framework.errors import InvalidArgumentError
from graphflow.kernels.cpu import cpu_kernel

_KIND = {np.dtype(np.float32): "float_list", np.dtype(np.int64): "int64_list",
         np.dtype(object): "bytes_list"}
_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


_TF_TYPE_NAMES = {"float16": "half", "float32": "float", "float64": "double", "bool": "bool"}


def _shape_text(shape):
    """A shape as TF's messages write it: [?,2]."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _error(message):
    return InvalidArgumentError(None, None, message)


def _bytes_of(value):
    return value[()] if isinstance(value, np.ndarray) else value


def _values(feature, kind, dtype, key, index):
    """The values of one Feature as a 1-D array of `dtype`, checking the list's type."""
    present = feature.WhichOneof("kind")
    if present is None:  # an empty Feature holds no values of any type
        return np.empty(0, dtype)
    if present != kind:
        raise _error(f"Name: <unknown>, Key: {key}, Index: {index}.  Data types don't match. "
                     f"Data type: {_TYPE_NAME[present]} but expected type: {_TYPE_NAME[kind]}")
    values = getattr(feature, kind).value
    if kind == "bytes_list":
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    return np.array(values, dtype=dtype)


class _Spec:
    def __init__(self, node):
        a = node.attrs
        n_sparse = len(a["sparse_keys"])
        self.sparse = [(k, _KIND[np.dtype(t)], np.dtype(t))
                       for k, t in zip(a["sparse_keys"], node.out_dtypes[n_sparse:2 * n_sparse])]
        dense_types = node.out_dtypes[3 * n_sparse:]
        self.dense = [(k, _KIND[np.dtype(t)], np.dtype(t), list(s), r) for k, t, s, r in
                      zip(a["dense_keys"], dense_types, a["dense_shapes"], a["dense_required"])]


def _example_features(serialized, example_class):
    data = _bytes_of(serialized)
    try:
        return example_class.FromString(data).features.feature
    except Exception:  # protobuf raises DecodeError (and others for hostile bytes)
        shown = data[:40] + (b"..." if len(data) > 40 else b"")
        raise _error(f"Could not parse example input, value: {shown!r}") from None


def _dense_values(feature_map, key, kind, dtype, shape, inner, required, index, batched):
    """The values of one dense feature of one Example, flat (None when missing and optional)."""
    type_name = _TYPE_NAME[kind]
    if key not in feature_map:
        if required:
            name = "Name: <unknown>, " if batched else ""
            raise _error(f"{name}Feature: {key} (data type: {type_name}) is required but could "
                         "not be found.")
        return None
    values = _values(feature_map[key], kind, dtype, key, index)
    if shape and shape[0] is None:
        if inner == 0 or values.size % inner:
            raise _error(f"Name: <unknown>, Key: {key}, Index: {index}.  Number of {type_name} "
                         f"values is not a multiple of stride length. Saw {values.size} values "
                         f"but output shape is: {_shape_text(shape)}")
    elif values.size != inner:
        raise _error(f"Name: <unknown>, Key: {key}, Index: {index}.  Number of {type_name} "
                     f"values != expected.  Values size: {values.size} but output shape: "
                     f"{_shape_text(shape)}")
    return values


def _dense(maps, key, kind, dtype, shape, required, default, batched):
    """One dense feature of every Example: [batch] + shape (a sequence padded with `default`)."""
    sequence = bool(shape) and shape[0] is None
    inner = math.prod(shape[1:] if sequence else shape)
    parts = [_dense_values(m, key, kind, dtype, shape, inner, required, i, batched)
             for i, m in enumerate(maps)]
    default = np.asarray(default, dtype=dtype).reshape(-1)
    if not sequence:
        flat = np.empty((len(parts), inner), dtype=dtype)
        for i, part in enumerate(parts):
            flat[i] = default if part is None else part
        return flat.reshape([len(parts)] + shape)
    length = max((p.size // inner for p in parts if p is not None), default=0)
    flat = np.empty((len(parts), length * inner), dtype=dtype)
    flat[...] = default[0] if dtype.kind != "O" else np.full(flat.shape, default[0], dtype=object)
    for i, part in enumerate(parts):
        if part is not None:
            flat[i, :part.size] = part
    return flat.reshape([len(parts), length] + shape[1:])


def _parse(spec, serialized_items, defaults, batched):
    example_class = example_proto.message_class("Example")
    maps = [_example_features(s, example_class) for s in serialized_items]
    sparse_out = ([], [], [])
    for key, kind, dtype in spec.sparse:
        rows = [(_values(m[key], kind, dtype, key, i) if key in m else np.empty(0, dtype))
                for i, m in enumerate(maps)]
        width = max((r.size for r in rows), default=0)
        if batched:
            indices = [np.stack([np.full(r.size, i), np.arange(r.size)], 1) for i, r in
                       enumerate(rows)]
            dense_shape = [len(rows), width]
        else:
            indices = [np.arange(rows[0].size)[:, None]]
            dense_shape = [width]
        values = np.concatenate(rows) if rows else np.empty(0, dtype)
        if dtype.kind == "O" and values.dtype.kind != "O":
            values = values.astype(object)
        indices = np.concatenate(indices) if indices else np.empty((0, 2), np.int64)
        sparse_out[0].append(indices.astype(np.int64).reshape(-1, len(dense_shape)))
        sparse_out[1].append(values)
        sparse_out[2].append(np.array(dense_shape, np.int64))
    dense_out = []
    for (key, kind, dtype, shape, required), default in zip(spec.dense, defaults):
        out = _dense(maps, key, kind, dtype, shape, required, default, batched)
        dense_out.append(out if batched else out[0, ...])
    outputs = sparse_out[0] + sparse_out[1] + sparse_out[2] + dense_out
    return outputs[0] if len(outputs) == 1 else tuple(outputs)  # one output: the array itself


@cpu_kernel("ParseExample")
def _parse_example(node):
    spec = _Spec(node)

    def parse(serialized, *defaults):
        return _parse(spec, list(np.asarray(serialized, dtype=object).reshape(-1)), defaults, True)
    return parse


@cpu_kernel("ParseSingleExample")
def _parse_single_example(node):
    spec = _Spec(node)
    return lambda serialized, *defaults: _parse(spec, [serialized], defaults, False)


# ---------------------------------------------------------------- DecodeRaw
@cpu_kernel("DecodeRaw")
def _decode_raw(node):
    dtype = np.dtype(node.out_dtypes[0])
    if dtype.itemsize > 1:
        dtype = dtype.newbyteorder("<" if node.attrs["little_endian"] else ">")

    type_name = _TF_TYPE_NAMES.get(dtype.name, dtype.name)

    def decode(data):
        data = np.asarray(data, dtype=object)
        flat = data.reshape(-1)
        if flat.size == 0:
            return np.empty(data.shape + (0,), dtype=dtype.newbyteorder("="))
        size = len(flat[0])
        if size % dtype.itemsize:
            raise _error(f"Input to DecodeRaw has length {size} that is not a multiple of "
                         f"{dtype.itemsize}, the size of {type_name}")
        for i, item in enumerate(flat):
            if len(item) != size:
                raise _error(f"DecodeRaw requires input strings to all be the same size, but "
                             f"element {i} has size {size} != {len(item)}")
        joined = b"".join(flat)
        out = np.frombuffer(joined, dtype=dtype).astype(dtype.newbyteorder("="))
        return out.reshape(data.shape + (size // dtype.itemsize,))
    return decode
