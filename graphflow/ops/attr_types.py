"""Typed op attrs: the small language an OpDef uses to declare its attrs, and the one checker.

An OpDef declares its attrs in one line, `attrs="transpose_a:bool transpose_b:bool"`: entries are
`name:type` separated by spaces, and a type is one or more alternatives joined by `|`:

    bool                 True/False (never 0/1, never a string)
    int  int>=0  int>=1  a Python int (not bool) within int64, optionally with a lower bound
    float                a Python float or int (not bool)
    string               a str
    enum(SAME,VALID)     one of the listed strings
    dtype                a graphflow dtype, by name ("float32") or as a DType
    shape                a TensorShape, or a list/tuple of dims (int >= 0 or None); `none` = unknown
    tensor               a numpy array of a graphflow dtype (Const values)
    dict                 a string-keyed dict (an op-private structure its shape rule validates)
    none                 None (an omitted optional value: `axis:none|int|list(int)`)
    function             a sub-graph (FuncGraph) of a control-flow op
    list(T)              a list or tuple whose items are all of the (single-word) type T

`check_attrs` is used by `make_op` (Python op constructors), by the graph-file loader and by the
encoder, so that a value the Python API refuses can neither be saved nor loaded. Range checks that
depend on inputs (an axis within the input's rank) stay in the op's shape rule, which both paths
run too.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
MAX_LIST_ITEMS = 1 << 16


class AttrTypeError(TypeError):
    """An attr value does not have its declared type. `attr` names it; the caller names the op."""

    def __init__(self, attr, message):
        super().__init__(f"attr '{attr}' {message}")
        self.attr = attr


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(v):
    return type(v) is int or (isinstance(v, np.integer) and not isinstance(v, np.bool_))


# Each base checker returns None when `v` is acceptable, else a short description of what is wrong.
def _check_bool(v):
    return None if type(v) is bool or isinstance(v, np.bool_) else "must be a bool"


def _int_checker(low):
    def check(v):
        if not _is_int(v):
            return "must be an int"
        if not INT64_MIN <= int(v) <= INT64_MAX:
            return "must fit int64"
        if low is not None and int(v) < low:
            return f"must be >= {low}"
        return None
    return check


def _check_float(v):
    if type(v) is bool or not (isinstance(v, (int, float, np.integer, np.floating))):
        return "must be a float"
    return None


def _check_string(v):
    return None if type(v) is str else "must be a string"


def _enum_checker(choices):
    def check(v):
        return None if type(v) is str and v in choices else f"must be one of {sorted(choices)}"
    return check


def _check_dtype(v):
    if isinstance(v, dtypes.DType):
        return None
    if type(v) is str:
        try:
            dtypes.as_dtype(v)
            return None
        except (TypeError, ValueError):
            pass
    return "must be a dtype name such as 'float32'"


def _check_shape(v):
    if isinstance(v, TensorShape):
        return None
    if type(v) not in (list, tuple):
        return "must be a shape (a list of dims, None for unknown ones)"
    if len(v) > 64:
        return "must be a shape of rank <= 64"
    for d in v:
        if d is not None and (not _is_int(d) or not 0 <= int(d) <= INT64_MAX):
            return f"must be a shape of dims >= 0 that fit int64 (found dim {_short(d)})"
    return None


def _check_tensor(v):
    if not isinstance(v, np.ndarray):
        return "must be a numpy array"
    try:
        dt = dtypes.as_dtype(v.dtype)
    except (TypeError, ValueError):
        return f"must be an array of a graphflow dtype, found {v.dtype}"
    if dt.as_numpy_dtype != v.dtype:  # text: only object arrays of bytes (tf.string's own form)
        return f"must be an array of a graphflow dtype, found {v.dtype} (tf.string: object arrays)"
    return None


def _check_dict(v):
    if type(v) is not dict or not all(type(k) is str for k in v):
        return "must be a dict with string keys"
    return None


def _check_none(v):
    return None if v is None else "must be None"


def _check_function(v):  # a sub-graph held by a control-flow op (If branches, While body)
    from graphflow.framework.func_graph import FuncGraph  # noqa: PLC0415 (graph floor, no cycle)
    return None if isinstance(v, FuncGraph) else "must be a function graph"


_BASES = {"bool": _check_bool, "int": _int_checker(None), "float": _check_float,
          "string": _check_string, "dtype": _check_dtype, "shape": _check_shape,
          "tensor": _check_tensor, "dict": _check_dict, "none": _check_none,
          "function": _check_function}


def _list_checker(item):
    def check(v):
        if type(v) not in (list, tuple):
            return "must be a list"
        if len(v) > MAX_LIST_ITEMS:
            return f"must be a list of at most {MAX_LIST_ITEMS} items"
        for i, x in enumerate(v):
            problem = item(x)
            if problem is not None:
                return f"item {i} ({_short(x)}) {problem}"
        return None
    return check


def _parse_alternative(text):
    if text.startswith("list(") and text.endswith(")"):
        return _list_checker(_parse_alternative(text[5:-1]))
    if text.startswith("enum(") and text.endswith(")"):
        choices = frozenset(c for c in text[5:-1].split(",") if c)
        if not choices:
            raise ValueError("enum() needs at least one choice")
        return _enum_checker(choices)
    if text.startswith("int>="):
        return _int_checker(int(text[5:]))
    if text in _BASES:
        return _BASES[text]
    raise ValueError(f"unknown attr type '{text}' (known: {', '.join(sorted(_BASES))}, int>=N, "
                     "enum(A,B), list(T))")


class AttrType:
    """A parsed attr type: `check(value)` returns None or what is wrong."""

    __slots__ = ("spec", "_alternatives")

    def __init__(self, spec):
        self.spec = spec
        self._alternatives = [_parse_alternative(a) for a in spec.split("|")]

    def problem(self, value):
        problems = []
        for alt in self._alternatives:
            found = alt(value)
            if found is None:
                return None
            problems.append(found)
        if len(problems) == 1:
            return problems[0]
        return f"must be {self.spec} ({'; '.join(problems)})"

    def __repr__(self):
        return f"AttrType({self.spec!r})"


def parse_attr_spec(spec):
    """'name:type name:type' -> {name: AttrType} (in declaration order)."""
    types = {}
    for entry in spec.split():
        name, sep, type_text = entry.partition(":")
        if not sep or not name or not type_text:
            raise ValueError(f"attr declaration '{entry}' is not 'name:type'")
        if name in types:
            raise ValueError(f"attr '{name}' is declared twice")
        types[name] = AttrType(type_text)
    return types


def check_attrs(attr_types, attrs):
    """Raise AttrTypeError for an attr that is undeclared or not of its declared type."""
    for key, value in attrs.items():
        attr_type = attr_types.get(key)
        if attr_type is None:
            declared = ", ".join(attr_types) or "none"
            raise AttrTypeError(key, f"is not an attr of this op type (it declares: {declared})")
        problem = attr_type.problem(value)
        if problem is not None:
            raise AttrTypeError(key, f"{problem}, found {type(value).__name__} {_short(value)}")


__all__ = ["AttrType", "AttrTypeError", "parse_attr_spec", "check_attrs"]
