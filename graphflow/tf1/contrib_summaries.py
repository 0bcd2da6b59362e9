"""`tf.contrib.layers.summarize_activation` and friends: histogram (and, for ReLU-like layers,
zero-fraction) summaries of layer outputs, with contrib's tags ('<op>/activation', '<op>/zeros',
'<op>/sixes', '<op>_summary'), built with `tf.summary.scalar` / `histogram`.
"""

import re

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.ops import math_ops
from graphflow.tf1.summary.summary_ops import histogram, scalar


def _fraction(condition):
    return math_ops.reduce_mean(math_ops.cast(condition, dtypes.float32))


def _scalar(tensor, tag=None):
    if tensor.shape.ndims not in (None, 0):
        raise ValueError(f"Shape {tensor.shape} must have rank 0 for a scalar summary")
    return scalar(tag or f"{tensor.op.name}_summary", tensor)


def _histogram(tensor, tag=None):
    return histogram(tag or f"{tensor.op.name}_summary", tensor)


def summarize_activation(op):
    """A histogram of the activation `op` ('<name>/activation'); for Relu, Relu6 and Softplus
    also the fraction of negative pre-activations ('<name>/zeros'), for Relu6 the fraction above
    six ('<name>/sixes'). Returns the histogram summary."""
    kind = op.op.type
    if kind in ("Relu", "Softplus", "Relu6"):
        pre = op.op.inputs[0]
        _scalar(_fraction(math_ops.less(pre, math_ops.cast(0.0, pre.dtype))),
                f"{op.op.name}/zeros")
    if kind == "Relu6":
        pre = op.op.inputs[0]
        _scalar(_fraction(math_ops.greater(pre, math_ops.cast(6.0, pre.dtype))),
                f"{op.op.name}/sixes")
    return _histogram(op, f"{op.op.name}/activation")


def summarize_tensor(tensor, tag=None):
    """A scalar summary for a scalar, a histogram otherwise; None for string and bool tensors."""
    if tensor.dtype in (dtypes.string, dtypes.bool_):
        return None
    if tensor.shape.ndims == 0:
        return _scalar(tensor, tag)
    return _histogram(tensor, tag)


def summarize_tensors(tensors, summarizer=summarize_tensor):
    return [summarizer(tensor) for tensor in tensors]


def summarize_collection(collection, name_filter=None, summarizer=summarize_tensor):
    """Summarize every tensor of `collection` whose name matches the regular expression
    `name_filter` (matched against the op name; all of them when None)."""
    pattern = re.compile(name_filter) if name_filter is not None else None
    tensors = [t for t in get_default_graph().get_collection(collection)
               if pattern is None or pattern.match(t.op.name)]
    return summarize_tensors(tensors, summarizer)


def summarize_activations(name_filter=None, summarizer=summarize_activation):
    """`summarize_activation` over the ACTIVATIONS collection."""
    return summarize_collection(GraphKeys.ACTIVATIONS, name_filter, summarizer)


def summarize_variables(name_filter=None, summarizer=summarize_tensor):
    """`summarize_tensor` over the global variables."""
    return summarize_collection(GraphKeys.GLOBAL_VARIABLES, name_filter, summarizer)


def summarize_weights(name_filter=None, summarizer=summarize_tensor):
    """`summarize_tensor` over the WEIGHTS collection."""
    return summarize_collection(GraphKeys.WEIGHTS, name_filter, summarizer)


def summarize_biases(name_filter=None, summarizer=summarize_tensor):
    """`summarize_tensor` over the BIASES collection."""
    return summarize_collection(GraphKeys.BIASES, name_filter, summarizer)

__all__ = ["summarize_activation", "summarize_activations", "summarize_tensor",
           "summarize_tensors", "summarize_collection", "summarize_variables",
           "summarize_weights", "summarize_biases"]
