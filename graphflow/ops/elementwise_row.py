"""One row of the elementwise table (`Elementwise`) and what rows share: the dtype rules, the
gradient markers, integer division's check and the numpy function a row's kernel runs. The rows
themselves are in `elementwise_spec.py` (the common functions) and `elementwise_special.py` (TF's
inverse trigonometric, hyperbolic and special functions), which both build on this module."""

from dataclasses import dataclass
from typing import Callable, Optional, Union

import numpy as np

from graphflow.framework.errors import CheckFailedError

# ---------------------------------------------------------------- dtype rules (dtype names)
_FLOATS = ("float16", "float32", "float64")
_INTEGERS = ("int8", "int16", "int32", "int64", "uint8")
DTYPE_SETS = {
    "float": _FLOATS,
    "signed": _FLOATS + ("int8", "int16", "int32", "int64"),
    "numeric": _FLOATS + _INTEGERS,
    "numeric|bool": _FLOATS + _INTEGERS + ("bool",),
    "numeric|bool|string": _FLOATS + _INTEGERS + ("bool", "string"),  # Equal, NotEqual (as TF1)
    "bool": ("bool",),
    "any": None,  # no restriction (Cast, the identities)
}
# True division of integers gives floats (numpy's and TF's choice): int -> this float dtype.
TRUEDIV = {"int8": "float32", "uint8": "float32", "int16": "float32", "int32": "float64",
           "int64": "float64"}
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946

ZERO = "zero"                # gradient: zeros of each input's shape (derivative 0 almost everywhere)
NO_GRADIENT = "no_gradient"  # gradient: none flows through (integer or bool results)


@dataclass(frozen=True)
class Attr:
    name: str
    type: str  # attr type of `ops/attr_types.py`
    default: object

    @property
    def is_float(self):
        """A float attr (the C expression takes it as a literal of the operand's type)."""
        return self.type == "float"


@dataclass(frozen=True)
class Elementwise:
    op: str
    fn: str
    arity: int
    dtypes: str
    result: str = "same"
    numpy: Union[str, Callable, None] = None
    numpy_for_attrs: bool = False
    alias_ok: bool = True
    clamp: tuple = ()
    compiled_float32: bool = False
    c: str = ""
    dydx: Optional[Callable] = None
    grad: Union[str, Callable, None] = None
    attrs: tuple = ()
    custom: bool = False
    fusible: bool = True
    public: tuple = ("tf",)
    commutative: bool = False
    onnx: object = None
    shape_arithmetic: bool = False
    zero_divisor: bool = False

    @property
    def allowed(self):
        """Allowed operand dtype names (None: any)."""
        return DTYPE_SETS[self.dtypes]

    def result_dtype(self, in_dtypes, attrs=None):
        """The result dtype name for operand dtype names `in_dtypes` (the row's dtype rule)."""
        if self.result == "bool":
            return "bool"
        if self.result == "cast":
            return str((attrs or {}).get("DstT"))
        first = in_dtypes[1] if self.result == "select" else in_dtypes[0]
        if self.result == "truediv":
            return TRUEDIV.get(first, first)
        return first

    def attr_values(self, attrs):
        """{name: value} of every declared attr, defaults filled in."""
        return {a.name: (attrs or {}).get(a.name, a.default) for a in self.attrs}

    def checks_divisor(self, in_dtypes):
        """True when a zero divisor raises for these operand dtypes (`zero_divisor`, integers)."""
        return self.zero_divisor and np.dtype(getattr(in_dtypes[1], "as_numpy_dtype",
                                                      in_dtypes[1])).kind in "iu"


# TF's message (its kernels raise InvalidArgumentError with it)
INTEGER_DIVISION_BY_ZERO = "Integer division by zero"


def checked_division(fn):
    """`fn(x, y, out=None)` that first raises CheckFailedError("Integer division by zero") when
    any divisor in `y` is zero (the session reports it as InvalidArgumentError naming the op and
    the user's line); one pass over `y`, which an integer division reads anyway."""
    def divide(x, y, *, out=None):
        if not np.all(y):
            raise CheckFailedError(INTEGER_DIVISION_BY_ZERO)
        return fn(x, y, out=out)
    divide.__name__ = f"checked_{getattr(fn, '__name__', 'division')}"
    return divide


def numpy_function(row, attrs, in_dtypes):
    """The numpy function `fn(*operands, out=None)` of a row for these attrs and operand dtypes:
    the unfused CPU kernel and a fused program's instruction (one function serves both)."""
    if isinstance(row.numpy, str):
        fn = getattr(np, row.numpy)
    elif row.numpy_for_attrs:
        fn = row.numpy({**(attrs or {}), **row.attr_values(attrs)}, in_dtypes)
    else:
        fn = row.numpy
    return checked_division(fn) if row.checks_divisor(in_dtypes) else fn


# ---------------------------------------------------------------- numpy
# Each is `fn(*operands, out=None) -> result`: written into `out` when given (an instruction of a
# fused CPU program), else into a new array (the op's own CPU kernel), so both compute the same.
# A first step with out=None gives a numpy scalar for 0-d operands: np.asarray makes it an array
# the next steps can write into.
def _into(out, value):
    """`value`, computed as a whole array, as the result: copied into `out` when there is one."""
    if out is None:
        return value
    np.copyto(out, value)
    return out
