"""`tf.strings`: the TF1 string namespace (ops in graphflow/ops/string_ops.py)."""

from graphflow.ops.string_ops import as_string, length, split, string_join, to_number

join = string_join

__all__ = ["as_string", "join", "length", "split", "to_number"]
