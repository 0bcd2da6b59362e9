"""Data types: graphflow's `DType` objects and their mapping to numpy dtypes.

TF1 rules apply: tensors of different dtypes never mix silently; Python numbers adopt the dtype of the
tensor they meet; fed arrays are cast to the placeholder's dtype when the cast is safe ("same kind").

Names follow TF's table, not numpy's: `as_dtype("float")` is float32 (numpy would say float64),
"double" is float64, "half" float16. `tf.string` holds byte strings: its arrays are numpy object
arrays of `bytes` (str values are encoded as UTF-8), as TF1's `Session.run` returns them.
"""

import numpy as np


class DType:
    """A tensor element type (`graphflow.float32`, ...). Compares equal to its name and numpy dtype."""

    __slots__ = ("name", "as_numpy_dtype")

    def __init__(self, name, numpy_dtype):
        self.name = name
        self.as_numpy_dtype = np.dtype(numpy_dtype)

    @property
    def is_floating(self):
        return self.as_numpy_dtype.kind == "f"

    @property
    def is_complex(self):
        return self.as_numpy_dtype.kind == "c"

    @property
    def is_integer(self):
        return self.as_numpy_dtype.kind in "iu"

    @property
    def is_unsigned(self):
        return self.as_numpy_dtype.kind == "u"

    @property
    def is_bool(self):
        return self.as_numpy_dtype.kind == "b"

    @property
    def is_numeric(self):
        return self.as_numpy_dtype.kind in "iufc"

    @property
    def base_dtype(self):
        return self

    @property
    def size(self):
        return 0 if self.name == "string" else self.as_numpy_dtype.itemsize

    @property
    def real_dtype(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def min(self):
        info = np.finfo if self.is_floating else np.iinfo
        return info(self.as_numpy_dtype).min

    @property
    def max(self):
        info = np.finfo if self.is_floating else np.iinfo
        return info(self.as_numpy_dtype).max

    def __repr__(self):
        return f"tf.{self.name}"

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.name == other.name
        try:
            return self.name == as_dtype(other).name
        except (TypeError, ValueError):
            return False

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
bool_ = DType("bool", np.bool_)
string = DType("string", np.object_)
# An opaque value the kernels agree on (a TensorArray's elements); never fed, fetched or folded.
variant = DType("variant", np.object_)
half = float16
double = float64

ALL_DTYPES = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              complex64, complex128, bool_, string)
NUMERIC_DTYPES = tuple(d for d in ALL_DTYPES if d.is_numeric)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
# TF's own aliases (tensorflow/python/framework/dtypes.py, _STRING_TO_TF): "float" is float32
_BY_NAME.update({"float": float32, "half": float16, "double": float64})
_BY_NAME.update({f"{n}_ref": d for n, d in list(_BY_NAME.items())})  # TF1 reference dtypes
_BY_NUMPY = {d.as_numpy_dtype: d for d in ALL_DTYPES}
_BY_NAME[variant.name] = variant
_BY_PYTHON = {float: float32, int: int32, bool: bool_, object: string}


def as_dtype(value):
    """Convert a DType, TF dtype name ("float", "float32", "double", "string", ...), numpy dtype or
    type, or Python type (float, int, bool, object) to a graphflow `DType`, as TF1's `as_dtype`."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value)
        if found is None:
            names = ", ".join(n for n in _BY_NAME if not n.endswith("_ref"))
            raise TypeError(f"graphflow does not know the dtype name {value!r}; the names are "
                            f"{names}")
        return found
    if value in _BY_PYTHON:
        return _BY_PYTHON[value]
    np_dtype = None
    if not (isinstance(value, type) and not issubclass(value, np.generic)):  # dict -> no dtype
        try:
            np_dtype = np.dtype(value)
        except TypeError:
            pass
    found = None
    if np_dtype is not None:
        found = string if np_dtype.kind in "OUS" else _BY_NUMPY.get(np_dtype)
    if found is None:
        raise TypeError(f"graphflow does not support the dtype {value!r}; supported: "
                        f"{', '.join(d.name for d in ALL_DTYPES)}")
    return found


def _to_bytes(item):
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, (bytearray, memoryview, np.bytes_)):
        return bytes(item)
    raise TypeError(f"a tf.string value must hold str or bytes, found {type(item).__name__} "
                    f"{item!r}")


def string_array(value):
    """An object array of `bytes` from str/bytes data (nested lists, numpy U/S/O arrays): the
    representation of every `tf.string` value. TypeError names the first element that is not text."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "O":
        arr = value
    elif isinstance(value, (str, bytes)):
        out = np.empty((), dtype=object)
        out[()] = _to_bytes(value)
        return out
    else:
        arr = value if isinstance(value, np.ndarray) else np.array(value, dtype=object)
        if arr.dtype.kind == "S":
            out = np.empty(arr.shape, dtype=object)
            out.reshape(-1)[:] = [bytes(x) for x in arr.reshape(-1)]
            return out
        if arr.dtype.kind not in "UO":
            if arr.size == 0:
                return np.empty(arr.shape, dtype=object)
            raise TypeError(f"Cannot convert a value of dtype {arr.dtype} to a tf.string tensor")
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(arr.reshape(-1)):
        flat[i] = _to_bytes(item)
    return out


def can_feed(source_numpy_dtype, target):
    """True when fed data of `source_numpy_dtype` may be cast to `target` (TF1's feed rule)."""
    src = np.dtype(source_numpy_dtype)
    dst = target.as_numpy_dtype
    if src == dst:
        return True
    if src.kind in "OUS":
        return False
    return bool(np.can_cast(src, dst, casting="same_kind"))
