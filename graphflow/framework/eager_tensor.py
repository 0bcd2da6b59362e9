"""EagerTensor: a Tensor that already holds its value, made by an op run in eager mode.

In eager mode (`tf.enable_eager_execution()`, `engine/eager.py`) an op runs its kernel as soon as
it is built, and its outputs are EagerTensors: ordinary `Tensor`s (same dtype, a fully known
static shape, the same Python operators, which build the next op, again eagerly) that also carry
the numpy value. The value can be read at once: `t.numpy()`, `np.asarray(t)`, `repr(t)`,
`float(t)`, `bool(t)`, iteration over the first axis. As in TF1, `==` stays identity (use
`tf.equal`). This module is data only: it runs no kernel and imports nothing of the ops.
"""

import numpy as np

from graphflow.framework.tensor import Tensor

# How many times a shape rule read an eager tensor's value (`static_value.constant_value`,
# `registry.constant_value_of` count them): the eager graph reuses a shape rule's answer for the
# same op type, attrs, input dtypes and shapes only when the rule read no input's value.
VALUE_READS = [0]


class EagerTensor(Tensor):
    """The output of an op run eagerly: a Tensor holding its value (`numpy()`)."""

    __slots__ = ("_value",)

    def __init__(self, op, value_index, dtype, shape, value):
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = shape
        self._consumers = ()  # eager ops are not recorded: nothing consumes it in a graph
        self._value = value

    def numpy(self):
        """The value as a new numpy array (a scalar tensor: a numpy scalar, as TF gives)."""
        value = self._value
        return value[()] if value.ndim == 0 else np.array(value)

    def __array__(self, dtype=None, copy=None):
        value = self._value
        return value if dtype is None else value.astype(dtype)

    def eval(self, feed_dict=None, session=None):
        raise NotImplementedError("eval is not supported when eager execution is enabled, is "
                                  ".numpy() what you're looking for?")

    def __repr__(self):
        value = self._value
        shown = str(value[()]) if value.ndim == 0 else repr(value)
        return (f"<tf.Tensor: id={id(self)}, shape={tuple(value.shape)}, dtype={self.dtype.name}, "
                f"numpy={shown}>")

    def __str__(self):
        value = self._value
        text = str(value.item()) if value.ndim == 0 else str(value)
        return f"tf.Tensor({text}, shape={tuple(value.shape)}, dtype={self.dtype.name})"

    def __format__(self, spec):
        return format(self.numpy(), spec) if spec else str(self)

    def _scalar(self, what):
        value = self._value
        if value.size != 1:
            raise TypeError(f"only a tensor of one element can be converted to a Python {what}, "
                            f"got shape {tuple(value.shape)}")
        return value.reshape(()).item()

    def __bool__(self):
        return bool(self._scalar("bool"))

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __index__(self):
        if self.dtype.is_integer:
            return int(self._scalar("int"))
        raise TypeError(f"only integer scalar tensors can be used as an index, got "
                        f"{self.dtype.name}")

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._value.shape[0]))

    def __reduce__(self):  # copy.deepcopy / pickle: the value, as TF's eager tensors give
        return (np.asarray, (np.array(self._value),))


__all__ = ["EagerTensor", "VALUE_READS"]
