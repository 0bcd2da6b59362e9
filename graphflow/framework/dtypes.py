"""Data types: graphflow's `DType` objects and their mapping to numpy dtypes.

TF1 rules apply: tensors of different dtypes never mix silently; Python numbers adopt the dtype of the
tensor they meet; fed arrays are cast to the placeholder's dtype when the cast is safe ("same kind").
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
        return self.as_numpy_dtype.kind in "iuf"

    @property
    def base_dtype(self):
        return self

    @property
    def size(self):
        return self.as_numpy_dtype.itemsize

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
        except TypeError:
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
bool_ = DType("bool", np.bool_)
# An opaque value the kernels agree on (a TensorArray's elements); never fed, fetched or folded.
variant = DType("variant", np.object_)
half = float16
double = float64

ALL_DTYPES = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NUMPY = {d.as_numpy_dtype: d for d in ALL_DTYPES}
_BY_NAME[variant.name] = variant
_BY_PYTHON = {float: float32, int: int32, bool: bool_}


def as_dtype(value):
    """Convert a DType, numpy dtype, dtype name or Python type to a graphflow `DType`."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value in _BY_PYTHON:
        return _BY_PYTHON[value]
    try:
        found = _BY_NUMPY.get(np.dtype(value))
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"graphflow does not support the dtype {value!r}; supported: "
                        f"{', '.join(_BY_NAME)}")
    return found


def can_feed(source_numpy_dtype, target):
    """True when fed data of `source_numpy_dtype` may be cast to `target` (TF1's feed rule)."""
    src = np.dtype(source_numpy_dtype)
    dst = target.as_numpy_dtype
    if src == dst:
        return True
    if src.kind in "OUS":
        return False
    return bool(np.can_cast(src, dst, casting="same_kind"))
