"""`tensorflow.python.framework.tensor_shape`: `TensorShape`, `as_shape`, `unknown_shape`,
`scalar`, `dimension_value`."""

from graphflow.framework.tensor_shape import TensorShape, as_shape


def unknown_shape(rank=None):
    """A shape of unknown rank, or of `rank` unknown dimensions."""
    return TensorShape(None if rank is None else [None] * rank)


def scalar():
    return TensorShape([])


def dimension_value(dimension):
    """The int (or None) a dimension holds (graphflow's dimensions are plain ints already)."""
    return getattr(dimension, "value", dimension)


__all__ = ["TensorShape", "as_shape", "unknown_shape", "scalar", "dimension_value"]
