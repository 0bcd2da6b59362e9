"""Tensor's Python operators: `x + y`, `2 * x`, `x @ w`, `-x`, `x < y`, `x & y`, `x[1:, None]`.

Tensor (`framework/tensor.py`) sits a floor below the ops its operators build, so this package
gives them to it when it loads (`install_operators`). Each builds the op of its `tf.` function,
looked up when it runs, with numpy broadcasting semantics: `x + y` is `tf.add(x, y)`, `1 - x` is
`tf.subtract(1, x)`, `x[...]` is `tf.strided_slice` (`array_ops.getitem`)."""

from graphflow.framework.tensor import install_operators
from graphflow.ops import array_ops, math_ops


def _binary(name):
    def operator(self, other):
        return getattr(math_ops, name)(self, other)
    return operator


def _reflected(name):
    def operator(self, other):
        return getattr(math_ops, name)(other, self)
    return operator


def _unary(name):
    def operator(self):
        return getattr(math_ops, name)(self)
    return operator


def _getitem(self, key):
    return array_ops.getitem(self, key)


_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "truediv",
           "floordiv": "floordiv", "mod": "mod", "pow": "pow", "matmul": "matmul",
           "and": "logical_and", "or": "logical_or"}
_NOT_REFLECTED = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                "xor": "logical_xor"}

OPERATORS = {"__neg__": _unary("negative"), "__abs__": _unary("abs"),
             "__invert__": _unary("logical_not"), "__getitem__": _getitem}
for _op, _fn in _BINARY.items():
    OPERATORS[f"__{_op}__"] = _binary(_fn)
    OPERATORS[f"__r{_op}__"] = _reflected(_fn)
for _op, _fn in _NOT_REFLECTED.items():
    OPERATORS[f"__{_op}__"] = _binary(_fn)
for _name, _method in OPERATORS.items():
    _method.__name__ = _method.__qualname__ = _name

install_operators(OPERATORS)
