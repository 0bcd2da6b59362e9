"""Tensor: one output of an Operation, with a dtype, a static (partial) shape and Python operators.

The operators (`x + y`, `x[1:]`, `-x`, `x < y`, ...) build ops, which sit a floor above the graph
data model: `graphflow.ops` gives them to Tensor when it loads (`install_operators`, called by
`ops/tensor_operators.py`), so this module imports nothing of the ops. They follow numpy
broadcasting semantics. TF1 semantics: `==` is identity (use `tf.equal`), and a Tensor cannot be
used as a Python bool. A graph's Tensor has no `.numpy()`: asking for it says how to get the
value (`no_numpy`); the eager mode's tensors (`framework/eager_tensor.py`) have theirs.
"""

from graphflow.framework.errors import NotImplementedInGraphflow
from graphflow.framework.tensor_shape import as_shape


def no_numpy(obj):
    """`t.numpy` of a graph value: an AttributeError (so `hasattr(t, "numpy")` is False) saying to
    run the graph to get the value."""
    kind = type(obj).__name__
    var = kind[0].lower()
    raise NotImplementedInGraphflow(
        f"graphflow does not implement {kind}.numpy() in graph mode: a {kind} of a graph has a "
        f"value only when the graph runs: run it in a Session: `sess.run({var})`, or "
        f"`{var}.eval()` inside `with tf.Session() as sess:`; or call "
        "tf.enable_eager_execution() at program start, and ops return values (see "
        "docs/compat.md#coming-from-tensorflow-2)")


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

    numpy = property(no_numpy, doc="TF2's eager `t.numpy()`: an error saying to run `t` instead")

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

    def __pos__(self):
        return self


# The operators graphflow.ops gives Tensor (`install_operators`): arithmetic and matrix product
# with their reflected forms, comparisons, logical operators and indexing.
OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
             "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
             "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__",
             "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
             "__invert__", "__getitem__")


def install_operators(methods):
    """Give Tensor its operators: `methods` maps each name of OPERATORS to a function of the
    tensor (and the other operand) that builds the op. graphflow.ops calls this when it loads."""
    missing = sorted(set(OPERATORS) - set(methods))
    unknown = sorted(set(methods) - set(OPERATORS))
    if missing or unknown:
        raise ValueError(f"Tensor operators: missing {missing}, unknown {unknown}")
    for name in OPERATORS:
        setattr(Tensor, name, methods[name])
