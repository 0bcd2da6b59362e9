"""numpy arrays <-> TensorFlow's `TensorProto`, dtypes <-> `DataType`, shapes <-> `TensorShapeProto`.

Reading follows TensorFlow's rules: the bytes of `tensor_content` (little-endian), or the typed
`*_val` field (`float_val`, `int_val`, `half_val` holding float16 bit patterns, `string_val`, ...)
where fewer values than elements repeat the last one, and no values at all mean zeros. Every
size is checked before anything is allocated: the element count a shape declares, the bytes it
would take (`Limits.max_tensor_bytes`), the bytes a repeated last value may expand to
(`Limits.max_filled_bytes`), and `tensor_content` must hold exactly the bytes the shape declares.
Faults raise `TensorProtoError` (a ValueError) saying what is wrong; the graph reader adds the
node and the file.

Writing uses `tensor_content` for arrays of more than one element and the typed field for
scalars and one-element arrays (as TensorFlow's `make_tensor_proto` does for numpy values).
"""

import dataclasses
import math

import numpy as np

from graphflow.fileformat import tf_protos as pb
from graphflow.framework import dtypes

DT = pb.DataType

# graphflow dtype name <-> TensorFlow DataType
_TO_TF = {
    "float16": DT.DT_HALF, "float32": DT.DT_FLOAT, "float64": DT.DT_DOUBLE,
    "int8": DT.DT_INT8, "int16": DT.DT_INT16, "int32": DT.DT_INT32, "int64": DT.DT_INT64,
    "uint8": DT.DT_UINT8, "uint16": DT.DT_UINT16, "uint32": DT.DT_UINT32, "uint64": DT.DT_UINT64,
    "complex64": DT.DT_COMPLEX64, "complex128": DT.DT_COMPLEX128, "bool": DT.DT_BOOL,
    "string": DT.DT_STRING, "variant": DT.DT_VARIANT,
}
_FROM_TF = {v: k for k, v in _TO_TF.items()}
REF_OFFSET = 100  # DT_FLOAT_REF = DT_FLOAT + 100: the type of a ref (VariableV2) output

# the typed field TensorFlow keeps each dtype's values in (when tensor_content is empty)
_VAL_FIELD = {
    "float16": "half_val", "float32": "float_val", "float64": "double_val",
    "int8": "int_val", "int16": "int_val", "int32": "int_val", "uint8": "int_val",
    "uint16": "int_val", "int64": "int64_val", "uint32": "uint32_val", "uint64": "uint64_val",
    "complex64": "scomplex_val", "complex128": "dcomplex_val", "bool": "bool_val",
    "string": "string_val",
}
MAX_RANK = 254  # TensorFlow's own bound on a shape's rank (TensorShape::MaxDimensions)


class TensorProtoError(ValueError):
    """A TensorProto, DataType or shape that graphflow cannot (or will not) read."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """Bounds on what a GraphDef may make graphflow allocate (checked before allocating)."""
    max_file_bytes: int = 2 << 30          # a .pb/.pbtxt file (protobuf's own ceiling is 2 GiB)
    max_nodes: int = 1_000_000             # nodes of the graph and of all its functions
    max_tensor_bytes: int = 1 << 30        # one tensor's decoded bytes
    max_total_tensor_bytes: int = 4 << 30  # all constant tensors of one graph
    max_filled_bytes: int = 256 << 20      # a tensor expanded from fewer values than elements
    max_list_length: int = 1_000_000       # items of one list attr, inputs of one node
    max_function_depth: int = 32           # functions calling functions (If in a While body ...)


DEFAULT_LIMITS = Limits()


def tf_dtype(dtype):
    """The DataType enum of a graphflow dtype (a DType or its name)."""
    name = dtypes.as_dtype(dtype).name
    try:
        return _TO_TF[name]
    except KeyError:
        raise TensorProtoError(f"dtype {name} has no TensorFlow DataType") from None


def gf_dtype_name(enum, what="dtype"):
    """The graphflow dtype name of a TensorFlow DataType (ref types read as their value type)."""
    enum = int(enum)
    if enum > REF_OFFSET:
        enum -= REF_OFFSET
    name = _FROM_TF.get(enum)
    if name is None:
        label = DT.Name(enum) if enum in DT.values() else str(enum)
        raise TensorProtoError(f"{what}: TensorFlow type {label} has no graphflow dtype")
    return name


def shape_proto(dims):
    """A TensorShapeProto from a graphflow shape (tuple/list with None dims, or None: unknown)."""
    proto = pb.TensorShapeProto()
    if dims is None:
        proto.unknown_rank = True
    else:
        for d in dims:
            proto.dim.add(size=-1 if d is None else int(d))
    return proto


def shape_dims(proto, what="shape"):
    """A graphflow shape (tuple, None dims) from a TensorShapeProto; None for unknown rank."""
    if proto.unknown_rank:
        return None
    if len(proto.dim) > MAX_RANK:
        raise TensorProtoError(f"{what}: rank {len(proto.dim)} exceeds {MAX_RANK}")
    dims = []
    for d in proto.dim:
        if d.size < -1:
            raise TensorProtoError(f"{what}: dimension {d.size} is negative")
        dims.append(None if d.size == -1 else int(d.size))
    return tuple(dims)


def _element_count(dims, what):
    n = 1
    for d in dims:
        if d is None:
            raise TensorProtoError(f"{what}: a constant tensor's shape must be fully known")
        n *= d
        if n > 1 << 62:
            raise TensorProtoError(f"{what}: shape {list(dims)} declares too many elements")
    return n


def to_array(proto, what="tensor", limits=DEFAULT_LIMITS):
    """The numpy array a TensorProto holds (a new array; strings as bytes objects)."""
    name = gf_dtype_name(proto.dtype, what)
    if name == "variant":
        raise TensorProtoError(f"{what}: a variant tensor has no numpy value")
    dims = shape_dims(proto.tensor_shape, what)
    if dims is None:
        raise TensorProtoError(f"{what}: a constant tensor's shape must be known")
    n = _element_count(dims, what)
    np_dtype = np.dtype(object) if name == "string" else dtypes.as_dtype(name).as_numpy_dtype
    itemsize = 8 if name == "string" else np.dtype(np_dtype).itemsize
    if n * itemsize > limits.max_tensor_bytes:
        raise TensorProtoError(f"{what}: shape {list(dims)} of {name} is {n * itemsize} bytes, more "
                               f"than the limit of {limits.max_tensor_bytes}")
    if proto.tensor_content and name != "string":
        content = proto.tensor_content
        if len(content) != n * itemsize:
            raise TensorProtoError(f"{what}: tensor_content holds {len(content)} bytes, shape "
                                   f"{list(dims)} of {name} needs {n * itemsize}")
        flat = np.frombuffer(content, dtype=np.dtype(np_dtype).newbyteorder("<"))
        return flat.astype(np_dtype).reshape(dims)
    field = _VAL_FIELD[name]
    values = getattr(proto, field)
    count = len(values)
    if name.startswith("complex"):
        if count % 2:
            raise TensorProtoError(f"{what}: {field} holds an odd number of values")
        count //= 2
    if count > n:
        raise TensorProtoError(f"{what}: {field} holds {count} values, shape {list(dims)} has {n}")
    if count < n and n * itemsize > max(limits.max_filled_bytes, 64 * count * itemsize):
        raise TensorProtoError(f"{what}: {count} values would fill a tensor of {n * itemsize} bytes "
                               f"(limit {limits.max_filled_bytes})")
    if name == "string":
        out = np.empty(n, dtype=object)
        items = list(values)
        for i in range(n):
            out[i] = items[min(i, count - 1)] if count else b""
        return out.reshape(dims)
    if name == "float16":
        raw = np.asarray(values, dtype=np.int64)
        if raw.size and (raw.min() < 0 or raw.max() > 0xFFFF):
            raise TensorProtoError(f"{what}: half_val holds a value that is no 16-bit pattern")
        given = raw.astype(np.uint16).view(np.float16)
    elif name.startswith("complex"):
        pairs = np.asarray(values, dtype=np.float64).reshape(-1, 2)
        given = (pairs[:, 0] + 1j * pairs[:, 1]).astype(np_dtype)
    else:
        given = np.asarray(values)
        if given.size and np.issubdtype(np.dtype(np_dtype), np.integer):
            info = np.iinfo(np_dtype)
            if given.min() < info.min or given.max() > info.max:
                raise TensorProtoError(f"{what}: {field} holds a value outside {name}'s range")
        given = given.astype(np_dtype)
    out = np.empty(n, dtype=np_dtype)
    if count == 0:
        out[:] = 0
    else:
        out[:count] = given
        out[count:] = given[-1]
    return out.reshape(dims)


def from_array(value, dtype=None):
    """A TensorProto holding `value` (numpy array or scalar) as graphflow dtype `dtype`."""
    name = dtypes.as_dtype(dtype).name if dtype is not None else None
    array = np.asarray(value)
    if name is None:
        name = "string" if array.dtype.kind in "OSU" else dtypes.as_dtype(array.dtype).name
    proto = pb.TensorProto(dtype=tf_dtype(name))
    proto.tensor_shape.CopyFrom(shape_proto(array.shape))
    if name == "string":
        proto.string_val.extend(x if isinstance(x, bytes) else str(x).encode("utf-8")
                                for x in array.ravel().tolist())
        return proto
    array = array.astype(dtypes.as_dtype(name).as_numpy_dtype, copy=False)
    if array.size > 1:
        proto.tensor_content = np.ascontiguousarray(array).astype(
            array.dtype.newbyteorder("<"), copy=False).tobytes()
        return proto
    field = getattr(proto, _VAL_FIELD[name])
    flat = array.ravel()
    if name == "float16":
        field.extend(int(x) for x in flat.view(np.uint16))
    elif name.startswith("complex"):
        for x in flat:
            field.extend([float(x.real), float(x.imag)])
    elif name == "bool":
        field.extend(bool(x) for x in flat)
    elif array.dtype.kind == "f":
        field.extend(float(x) for x in flat)
    else:
        field.extend(int(x) for x in flat)
    return proto


def byte_size(proto):
    """The bytes `to_array(proto)` would allocate (0 for an unreadable proto, which it refuses)."""
    try:
        dims = shape_dims(proto.tensor_shape)
        name = gf_dtype_name(proto.dtype)
    except TensorProtoError:
        return 0
    if dims is None or any(d is None for d in dims):
        return 0
    n = math.prod(dims)
    return n * (8 if name in ("string", "variant") else dtypes.as_dtype(name).as_numpy_dtype().itemsize)
