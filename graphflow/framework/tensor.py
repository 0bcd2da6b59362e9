"""Tensor: one output of an Operation, with a dtype, a static (partial) shape and Python operators.

Operators follow numpy broadcasting semantics and build ops through a late import of
`graphflow.ops.math_ops` / `array_ops` (ops sit above the graph layer). TF1 semantics: `==` is identity
(use `tf.equal`), and a Tensor cannot be used as a Python bool.
"""

from graphflow.framework.tensor_shape import as_shape


class Tensor:
    """One output of an Operation: `(op, value_index)` with a dtype and a static (partial) shape."""

    __slots__ = ("op", "value_index", "dtype", "_shape", "_consumers", "__weakref__")
    __array_priority__ = 100  # numpy scalars/arrays defer to our reflected operators

    def __init__(self, op, value_index, dtype, shape):
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = shape
        self._consumers = []

    @property
    def name(self):
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self):
        return self.op.graph

    @property
    def device(self):
        return self.op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Refine the static shape (TF1 semantics: must be compatible with what is known)."""
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self):
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        from graphflow.framework.default_session import get_default_session_or_error
        session = session or get_default_session_or_error()
        return session.run(self, feed_dict)

    def __repr__(self):
        return f"<graphflow.Tensor '{self.name}' shape={self._shape} dtype={self.dtype.name}>"

    __str__ = __repr__

    __hash__ = object.__hash__  # identity hashing, at C speed

    def __eq__(self, other):  # TF1: identity, use tf.equal for elementwise comparison
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a graphflow Tensor as a Python bool is not allowed: the value is only "
                        "known when the graph runs. Use tf.cond-free formulations such as tf.where.")

    def __iter__(self):
        raise TypeError("Tensor objects are not iterable when the graph is being built; "
                        "use tf.unstack or slicing.")

    def __len__(self):
        raise TypeError("len() of a symbolic Tensor is not defined; use tf.shape(x)[0].")

    # Operators: numpy broadcasting semantics, op constructors imported late (ops sit above graph).
    def __add__(self, other):
        return _math().add(self, other)

    def __radd__(self, other):
        return _math().add(other, self)

    def __sub__(self, other):
        return _math().subtract(self, other)

    def __rsub__(self, other):
        return _math().subtract(other, self)

    def __mul__(self, other):
        return _math().multiply(self, other)

    def __rmul__(self, other):
        return _math().multiply(other, self)

    def __truediv__(self, other):
        return _math().truediv(self, other)

    def __rtruediv__(self, other):
        return _math().truediv(other, self)

    def __floordiv__(self, other):
        return _math().floordiv(self, other)

    def __rfloordiv__(self, other):
        return _math().floordiv(other, self)

    def __mod__(self, other):
        return _math().mod(self, other)

    def __rmod__(self, other):
        return _math().mod(other, self)

    def __pow__(self, other):
        return _math().pow(self, other)

    def __rpow__(self, other):
        return _math().pow(other, self)

    def __matmul__(self, other):
        return _math().matmul(self, other)

    def __rmatmul__(self, other):
        return _math().matmul(other, self)

    def __neg__(self):
        return _math().negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _math().abs(self)

    def __lt__(self, other):
        return _math().less(self, other)

    def __le__(self, other):
        return _math().less_equal(self, other)

    def __gt__(self, other):
        return _math().greater(self, other)

    def __ge__(self, other):
        return _math().greater_equal(self, other)

    def __and__(self, other):
        return _math().logical_and(self, other)

    def __rand__(self, other):
        return _math().logical_and(other, self)

    def __or__(self, other):
        return _math().logical_or(self, other)

    def __ror__(self, other):
        return _math().logical_or(other, self)

    def __xor__(self, other):
        return _math().logical_xor(self, other)

    def __invert__(self):
        return _math().logical_not(self)

    def __getitem__(self, key):
        from graphflow.ops import array_ops
        return array_ops.getitem(self, key)


_math_module = None


def _math():
    global _math_module
    if _math_module is None:
        from graphflow.ops import math_ops
        _math_module = math_ops
    return _math_module
