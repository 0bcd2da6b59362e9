"""TF1's older spellings of existing ops, with their own argument order: `tf.arg_max(input,
dimension, output_type, name)` and `tf.arg_min` (argmax/argmin along `dimension`)."""

from graphflow.framework import dtypes
from graphflow.ops.math_ops import argmax, argmin


def arg_max(input, dimension, output_type=dtypes.int64, name=None):
    """`tf.arg_max`: the index of the largest value along `dimension` (int64 by default)."""
    return argmax(input, axis=dimension, output_type=output_type, name=name or "ArgMax")


def arg_min(input, dimension, output_type=dtypes.int64, name=None):
    """`tf.arg_min`: the index of the smallest value along `dimension` (int64 by default)."""
    return argmin(input, axis=dimension, output_type=output_type, name=name or "ArgMin")


__all__ = ["arg_max", "arg_min"]
