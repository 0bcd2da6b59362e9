"""Keras's merge layers beyond Add and Concatenate: Multiply, Subtract, Average, Maximum, Minimum
(elementwise over a list of tensors, numpy broadcasting) and Dot (a per-sample dot product over
`axes`, optionally of l2-normalized inputs: cosine proximity), with their functional forms."""

from graphflow.ops import math_ops, nn_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.keras import backend_math
from graphflow.tf1.keras.base_layer import Layer


class _Merge(Layer):
    """A layer over a list of at least two tensors."""

    def _tensors(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer ({type(self).__name__} {self.name!r}) should be "
                             f"called on a list of at least 2 inputs. Got {inputs!r}")
        return [convert_to_tensor(t) for t in inputs]


class Multiply(_Merge):
    """`Multiply()([a, b, ...])`: the elementwise product."""

    def call(self, inputs):
        tensors = self._tensors(inputs)
        out = tensors[0]
        for t in tensors[1:]:
            out = out * t
        return out


class Subtract(_Merge):
    """`Subtract()([a, b])`: a - b."""

    def call(self, inputs):
        tensors = self._tensors(inputs)
        if len(tensors) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs, got "
                             f"{len(tensors)}")
        return tensors[0] - tensors[1]


class Average(_Merge):
    """`Average()([a, b, ...])`: the elementwise mean."""

    def call(self, inputs):
        tensors = self._tensors(inputs)
        out = tensors[0]
        for t in tensors[1:]:
            out = out + t
        return out / float(len(tensors))


class Maximum(_Merge):
    """`Maximum()([a, b, ...])`: the elementwise maximum."""

    def call(self, inputs):
        tensors = self._tensors(inputs)
        out = tensors[0]
        for t in tensors[1:]:
            out = math_ops.maximum(out, t)
        return out


class Minimum(_Merge):
    """`Minimum()([a, b, ...])`: the elementwise minimum."""

    def call(self, inputs):
        tensors = self._tensors(inputs)
        out = tensors[0]
        for t in tensors[1:]:
            out = math_ops.minimum(out, t)
        return out


class Dot(_Merge):
    """`Dot(axes, normalize=False)([a, b])`: `backend.batch_dot(a, b, axes)`; with `normalize`
    the inputs are l2-normalized along their axes first (the cosine similarity)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axes, int):
            axes = (axes, axes)
        elif not isinstance(axes, (list, tuple)) or len(axes) != 2:
            raise ValueError(f"Invalid format for `axes` - must be an int or a list of 2 ints. "
                             f"Received: axes={axes!r}")
        self.axes, self.normalize = tuple(int(a) for a in axes), bool(normalize)

    def call(self, inputs):
        tensors = self._tensors(inputs)
        if len(tensors) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs, got "
                             f"{len(tensors)}")
        x1, x2 = tensors
        axes = [a % t.shape.ndims for a, t in zip(self.axes, tensors)]
        if self.normalize:
            x1 = nn_ops.l2_normalize(x1, axis=axes[0])
            x2 = nn_ops.l2_normalize(x2, axis=axes[1])
        return backend_math.batch_dot(x1, x2, axes)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


__all__ = ["Multiply", "Subtract", "Average", "Maximum", "Minimum", "Dot", "multiply",
           "subtract", "average", "maximum", "minimum", "dot"]
