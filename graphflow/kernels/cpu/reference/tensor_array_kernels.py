"""numpy kernels of the TensorArray ops (`graphflow/ops/tensor_array_ops.py`).

A forward array is a `TensorArrayValue` (one per run, updated in place by writes, as TF1's
resource is); a gradient array is a plain dict index -> ndarray, never mutated once built.
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel

_CLEARED = object()


class TensorArrayValue:
    """The elements of one TensorArray during a run (None: not written yet)."""

    __slots__ = ("name", "dtype", "element_shape", "dynamic_size", "clear_after_read", "elements")

    def __init__(self, name, dtype, element_shape, dynamic_size, clear_after_read, size):
        self.name = name
        self.dtype = dtype
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.elements = [None] * size

    def _check_index(self, index, growing):
        size = len(self.elements)
        if index < 0 or (index >= size and not (growing and self.dynamic_size)):
            raise IndexError(f"TensorArray {self.name}: index {index} is out of range for an "
                             f"array of size {size}" + ("" if self.dynamic_size else
                                                        " (dynamic_size=False)"))
        if index >= size:
            self.elements.extend([None] * (index + 1 - size))

    def write(self, index, value):
        index = int(index)
        self._check_index(index, growing=True)
        value = np.asarray(value)
        if value.dtype != self.dtype:
            raise TypeError(f"TensorArray {self.name} holds {self.dtype}, cannot write "
                            f"{value.dtype}")
        if self.element_shape is not None and not _compatible(self.element_shape, value.shape):
            raise ValueError(f"TensorArray {self.name}: cannot write a value of shape "
                             f"{value.shape} into an array of elements shaped "
                             f"{tuple(self.element_shape)}")
        if self.elements[index] is not None:
            raise ValueError(f"TensorArray {self.name}: index {index} was already written (a "
                             "TensorArray element is written once)")
        self.elements[index] = value

    def read(self, index):
        index = int(index)
        self._check_index(index, growing=False)
        value = self.elements[index]
        if value is _CLEARED:
            raise ValueError(f"TensorArray {self.name}: could not read index {index} twice "
                             "because it was cleared after a previous read (clear_after_read)")
        if value is None:
            return self._zeros(f"read index {index}, which was never written")
        if self.clear_after_read:
            self.elements[index] = _CLEARED
        return value

    def _zeros(self, what):
        written = [e for e in self.elements if isinstance(e, np.ndarray)]
        if written:
            return np.zeros_like(written[0])
        if self.element_shape is None or None in self.element_shape:
            raise ValueError(f"TensorArray {self.name}: {what}, and the element shape is "
                             "unknown")
        return np.zeros(self.element_shape, self.dtype)

    def stack(self, indices=None):
        indices = range(len(self.elements)) if indices is None else indices
        items = [self.read(i) for i in indices]
        if not items:
            if self.element_shape is None or None in self.element_shape:
                raise ValueError(f"TensorArray {self.name}: cannot stack an empty array whose "
                                 "element shape is unknown")
            return np.zeros((0,) + tuple(self.element_shape), self.dtype)
        return np.stack(items)


def _compatible(known, shape):
    return len(known) == len(shape) and all(k is None or k == s for k, s in zip(known, shape))


@cpu_kernel("TensorArrayV3")
def _create(node):
    a = node.attrs
    dtype = np.dtype(a["dtype"]) if a["dtype"] != "bool" else np.dtype(np.bool_)
    shape = a["element_shape"]
    return lambda size: TensorArrayValue(node.name, dtype, shape, a["dynamic_size"],
                                         a["clear_after_read"], int(size))


@cpu_kernel("TensorArrayWriteV3")
def _write(node):
    def write(array, index, value):
        array.write(index, value)
        return array
    return write


@cpu_kernel("TensorArrayScatterV3")
def _scatter(node):
    def scatter(array, indices, value):
        for i, v in zip(np.asarray(indices).reshape(-1), value):
            array.write(i, v)
        return array
    return scatter


@cpu_kernel("TensorArrayUnstack")
def _unstack(node):
    def unstack(array, value):
        for i, v in enumerate(value):
            array.write(i, v)
        return array
    return unstack


@cpu_kernel("TensorArrayReadV3")
def _read(node):
    return lambda array, index: array.read(index)


@cpu_kernel("TensorArrayGatherV3")
def _gather(node):
    return lambda array, indices: array.stack(np.asarray(indices).reshape(-1).tolist())


@cpu_kernel("TensorArrayStack")
def _stack(node):
    return lambda array: array.stack()


@cpu_kernel("TensorArrayConcatV3")
def _concat(node):
    def concat(array):
        items = [array.read(i) for i in range(len(array.elements))]
        lengths = np.array([len(x) for x in items], dtype=np.int64)
        if not items:
            return array._zeros("concat of an empty array").reshape((0,) + tuple(
                array.element_shape[1:])), lengths
        return np.concatenate(items), lengths
    return concat


@cpu_kernel("TensorArraySizeV3")
def _size(node):
    return lambda array: np.asarray(len(array.elements), dtype=np.int32)


# ---------------------------------------------------------------- gradient arrays (dicts)
def add_gradient_arrays(a, b):
    """index-wise sum of two gradient arrays (a new dict)."""
    out = dict(a)
    for i, g in b.items():
        out[i] = out[i] + g if i in out else g
    return out


@cpu_kernel("TensorArrayZeroGradient")
def _zero_grad(node):
    return lambda: {}


@cpu_kernel("TensorArrayAddGradients")
def _add_grads(node):
    return add_gradient_arrays


@cpu_kernel("TensorArrayGradOfRead")
def _grad_of_read(node):
    return lambda index, grad: {int(index): grad}


def _scatter_into_dict(indices, grad):
    out = {}
    for i, g in zip(np.asarray(indices).reshape(-1).tolist(), grad):
        out[i] = out[i] + g if i in out else g
    return out


@cpu_kernel("TensorArrayGradOfGather")
def _grad_of_gather(node):
    return _scatter_into_dict


@cpu_kernel("TensorArrayGradOfStack")
def _grad_of_stack(node):
    return lambda grad: {i: g for i, g in enumerate(grad)}


@cpu_kernel("TensorArrayGradOfConcat")
def _grad_of_concat(node):
    def grad_of_concat(grad, lengths):
        bounds = np.cumsum(lengths)[:-1]
        return dict(enumerate(np.split(grad, bounds)))
    return grad_of_concat


@cpu_kernel("TensorArrayGradRead")
def _grad_read(node):
    def grad_read(grads, index, like):
        g = grads.get(int(index))
        return np.zeros_like(like) if g is None else g
    return grad_read


@cpu_kernel("TensorArrayGradGather")
def _grad_gather(node):
    def grad_gather(grads, indices, like):
        out = np.zeros_like(like)
        for k, i in enumerate(np.asarray(indices).reshape(-1).tolist()):
            g = grads.get(i)
            if g is not None:
                out[k] = g
        return out
    return grad_gather


@cpu_kernel("TensorArrayGradStack")
def _grad_stack(node):
    def grad_stack(grads, like):
        out = np.zeros_like(like)
        for i, g in grads.items():
            if i < len(out):
                out[i] = g
        return out
    return grad_stack
