"""ONNX sequences at import: a `Sequence` value holds a Python list of graphflow tensors.

An ONNX sequence (SequenceEmpty, SequenceConstruct, SplitToSequence) is only a value between
import-time builders: its length and the positions given to SequenceInsert / SequenceErase are
known when the graph is built (constants, initializers, or the static length of a split-sizes
input), so every element is an ordinary tensor of the graph and the ops that read a sequence
(SequenceAt, SequenceLength, ConcatFromSequence) become plain graphflow ops. Only SequenceAt
also takes a position computed at run time (the elements are then stacked and gathered, which
needs elements of one shape). A model output that is a sequence is fetched as a list of arrays.
"""

import numpy as np

import graphflow as tf
from graphflow.interop.onnx.import_ops import _rank, builder
from graphflow.ops import static_value


class Sequence:
    """An ONNX sequence value: `tensors` (a list, in order) and the element `dtype`."""

    def __init__(self, tensors, dtype):
        self.tensors, self.dtype = list(tensors), dtype

    def __len__(self):
        return len(self.tensors)


def _sequence(value, what="input"):
    if not isinstance(value, Sequence):
        raise ValueError(f"the {what} must be a sequence, got a tensor")
    return value


def _tensor(value, what):
    if isinstance(value, Sequence):
        raise ValueError(f"the {what} must be a tensor, got a sequence")
    return value


def _position(value, length, what, default, insert=False):
    """A position known at import, made non-negative (an insert may also name `length`)."""
    if value is None:
        return default
    known = static_value.constant_value(value)
    if known is None:
        raise ValueError(f"the {what} must be a constant (an initializer or Constant) to import it")
    pos = int(np.asarray(known).reshape(()))
    limit = length + 1 if insert else length
    if not -length <= pos < limit:
        raise ValueError(f"the {what} {pos} is out of range for a sequence of {length} elements")
    return pos + length if pos < 0 else pos


@builder("SequenceEmpty")
def _sequence_empty(ctx, node, inputs):
    elem = ctx.attrs(node).get("dtype", ctx.onnx.TensorProto.FLOAT)
    return [Sequence([], tf.as_dtype(ctx.onnx.helper.tensor_dtype_to_np_dtype(elem)))]


@builder("SequenceConstruct")
def _sequence_construct(ctx, node, inputs):
    tensors = [_tensor(x, "element") for x in inputs]
    if len({t.dtype for t in tensors}) != 1:
        raise ValueError("the elements of a sequence must have one dtype")
    return [Sequence(tensors, tensors[0].dtype)]


@builder("SequenceInsert")
def _sequence_insert(ctx, node, inputs):
    seq = _sequence(inputs[0])
    x = _tensor(inputs[1], "tensor to insert")
    if seq.tensors and x.dtype != seq.dtype:
        raise ValueError(f"cannot insert a {x.dtype.name} tensor into a sequence of {seq.dtype.name}")
    pos = _position(inputs[2] if len(inputs) > 2 else None, len(seq), "position", len(seq),
                    insert=True)
    tensors = list(seq.tensors)
    tensors.insert(pos, x)
    return [Sequence(tensors, x.dtype)]


@builder("SequenceErase")
def _sequence_erase(ctx, node, inputs):
    seq = _sequence(inputs[0])
    if not seq.tensors:
        raise ValueError("cannot erase from an empty sequence")
    pos = _position(inputs[1] if len(inputs) > 1 else None, len(seq), "position", len(seq) - 1)
    return [Sequence(seq.tensors[:pos] + seq.tensors[pos + 1:], seq.dtype)]


@builder("SequenceAt")
def _sequence_at(ctx, node, inputs):
    seq = _sequence(inputs[0])
    if static_value.constant_value(inputs[1]) is not None:
        return [tf.identity(seq.tensors[_position(inputs[1], len(seq), "position", None)])]
    if not seq.tensors:
        raise ValueError("SequenceAt on an empty sequence")
    length = tf.constant(len(seq), inputs[1].dtype)
    pos = tf.reshape(inputs[1], [])
    pos = tf.where(pos < 0, pos + length, pos)  # a run-time position: stack, then gather
    return [tf.gather(tf.stack(seq.tensors), pos)]


@builder("SequenceLength")
def _sequence_length(ctx, node, inputs):
    return [tf.constant(len(_sequence(inputs[0])), tf.int64)]


@builder("ConcatFromSequence")
def _concat_from_sequence(ctx, node, inputs):
    seq = _sequence(inputs[0])
    a = ctx.attrs(node)
    if not seq.tensors:
        raise ValueError("ConcatFromSequence on an empty sequence")
    if a.get("new_axis", 0):
        return [tf.stack(seq.tensors, axis=a["axis"])]
    return [tf.concat(seq.tensors, axis=a["axis"])]


@builder("SplitToSequence")
def _split_to_sequence(ctx, node, inputs):
    x = _tensor(inputs[0], "input")
    a = ctx.attrs(node)
    axis = a.get("axis", 0) % _rank(x)
    split = inputs[1] if len(inputs) > 1 else None
    if split is None:  # pieces of size 1, without the axis unless keepdims
        size = x.shape.as_list()[axis]
        if size is None:
            raise ValueError("SplitToSequence without split needs a known size along the axis")
        pieces = tf.split(x, size, axis=axis) if size else []
        if not a.get("keepdims", 1):
            pieces = [tf.squeeze(p, [axis]) for p in pieces]
        return [Sequence(pieces, x.dtype)]
    known = static_value.constant_value(split)
    if known is not None and np.ndim(known) == 0:
        return [Sequence(tf.split(x, _equal_sizes(x, axis, int(known)), axis=axis), x.dtype)]
    if known is not None:
        return [Sequence(tf.split(x, [int(v) for v in np.asarray(known)], axis=axis), x.dtype)]
    if split.shape.ndims != 1 or split.shape.as_list()[0] is None:
        raise ValueError("a split computed at run time must be a 1-D tensor of known length (a "
                         "scalar split or one of unknown length gives a number of pieces known "
                         "only at run time)")
    count = split.shape.as_list()[0]
    sizes = tf.cast(split, tf.int64)
    pieces, start = [], tf.constant(0, tf.int64)
    for i in range(count):  # piece i: x[..., start:start + sizes[i], ...]
        begin = [tf.constant(0, tf.int64)] * _rank(x)
        size = [tf.constant(-1, tf.int64)] * _rank(x)
        begin[axis], size[axis] = start, sizes[i]
        pieces.append(tf.slice(x, tf.stack(begin), tf.stack(size)))
        start = start + sizes[i]
    return [Sequence(pieces, x.dtype)]


def _equal_sizes(x, axis, chunk):
    """ONNX's scalar split: pieces of `chunk` elements, the last one smaller if need be."""
    size = x.shape.as_list()[axis]
    if size is None:
        raise ValueError("a scalar split needs a known size along the axis")
    if chunk <= 0:
        raise ValueError(f"the split size must be positive, got {chunk}")
    return [min(chunk, size - start) for start in range(0, size, chunk)]
