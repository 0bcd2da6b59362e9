"""`tensorflow.python.framework.constant_op`: `constant`."""

from graphflow.ops.core_ops import constant

__all__ = ["constant"]
