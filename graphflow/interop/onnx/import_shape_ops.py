"""ONNX ops whose axes, sizes or bounds may come as inputs: Unsqueeze, Squeeze, Split, Slice and
Pad (same `builder` registry as `import_ops.py`).

A constant input (an initializer or Constant) gives the static form (`tf.expand_dims`,
`tf.strided_slice` with masks, `tf.pad` with a constant paddings list); an input known only at
run time (a graph input, or a value computed from one) is read as a tensor, as TF1's own
`tf.pad` / `tf.strided_slice` / `tf.slice` take their bounds: the output's dims are then known
at run time, its rank when the graph is built.
"""

import numpy as np

import graphflow as tf
from graphflow.interop.onnx.import_ops import _ints_from, _rank, builder
from graphflow.ops import static_value


def _at_run_time(inputs, index):
    return (len(inputs) > index and inputs[index] is not None
            and static_value.constant_value(inputs[index]) is None)


def _vector_length(t, what):
    if t.shape.ndims != 1 or t.shape.as_list()[0] is None:
        raise ValueError(f"{what} computed at run time must be a 1-D tensor of known length")
    return t.shape.as_list()[0]


def _normalized_axes(axes, rank):
    """Run-time axes as int64, negatives counted from the end of a tensor of rank `rank`."""
    axes = tf.cast(axes, tf.int64)
    return tf.where(axes < 0, axes + rank, axes)


def _axis_mask(axes, count, rank):
    """A bool [rank] vector: True at the `count` run-time `axes` (normalized)."""
    hits = tf.scatter_nd(tf.reshape(axes, [count, 1]), tf.ones([count], tf.int32),
                         tf.constant([rank], tf.int64))
    return hits > 0


@builder("Unsqueeze")
def _unsqueeze(ctx, node, inputs):
    x = inputs[0]
    if _at_run_time(inputs, 1):  # the new dims' places are known at run time only
        count = _vector_length(inputs[1], "Unsqueeze's axes")
        rank = _rank(x) + count
        inserted = _axis_mask(_normalized_axes(inputs[1], rank), count, rank)
        kept = tf.cast(tf.logical_not(inserted), tf.int32)
        source = tf.maximum(tf.cumsum(kept) - 1, 0)  # which input dim each kept place takes
        dims = tf.concat([tf.shape(x, out_type=tf.int32), [1]], axis=0)  # [1]: a rank-0 input
        shape = tf.where(inserted, tf.ones([rank], tf.int32), tf.gather(dims, source))
        return [tf.reshape(x, shape)]
    axes = _ints_from(ctx, node, inputs, 1, "axes")
    rank = _rank(x) + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = tf.expand_dims(x, axis)
    return [x]


@builder("Squeeze")
def _squeeze(ctx, node, inputs):
    x = inputs[0]
    if _at_run_time(inputs, 1):
        count = _vector_length(inputs[1], "Squeeze's axes")
        rank = _rank(x)
        removed = _axis_mask(_normalized_axes(inputs[1], rank), count, rank)
        shape = tf.boolean_mask(tf.shape(x, out_type=tf.int32), tf.logical_not(removed))
        y = tf.reshape(x, shape)
        y.set_shape([None] * (rank - count))
        return [y]
    axes = _ints_from(ctx, node, inputs, 1, "axes")
    return [tf.squeeze(x, axis=axes) if axes else tf.squeeze(x)]


@builder("Split")
def _split(ctx, node, inputs):
    x = inputs[0]
    a = ctx.attrs(node)
    axis = a.get("axis", 0) % _rank(x)
    count = len(node.output)
    if _at_run_time(inputs, 1):  # sizes fed at run time, as TF1's tf.split takes them
        if _vector_length(inputs[1], "Split's split") != count:
            raise ValueError(f"split has {inputs[1].shape.as_list()[0]} sizes for {count} outputs")
        return list(tf.split(x, inputs[1], axis=axis))
    sizes = _ints_from(ctx, node, inputs, 1, "split")
    if not sizes and "num_outputs" in a:  # opset 18: ceil-sized pieces, the last one smaller
        dim = x.shape.as_list()[axis]
        if dim is not None and dim % count:
            chunk = -(-dim // count)
            sizes = [min(chunk, dim - start) for start in range(0, dim, chunk)]
    return list(tf.split(x, sizes if sizes else count, axis=axis))


@builder("Slice")
def _slice(ctx, node, inputs):
    x = inputs[0]
    rank = _rank(x)
    if ctx.opset < 10:
        a = ctx.attrs(node)
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        if any(_at_run_time(inputs, i) for i in range(1, 5)):
            return [_dynamic_slice(x, rank, inputs[1:5])]
        axes = _ints_from(ctx, node, inputs, 3, "axes")
        steps = _ints_from(ctx, node, inputs, 4, "steps")
        starts = _ints_from(ctx, node, inputs, 1, "starts")
        ends = _ints_from(ctx, node, inputs, 2, "ends")
    axes = axes or list(range(len(starts)))
    steps = steps or [1] * len(starts)
    begin, end, stride = [0] * rank, [0] * rank, [1] * rank
    begin_mask = end_mask = (1 << rank) - 1
    big = 1 << 62
    for s, e, a, st in zip(starts, ends, axes, steps):
        a %= rank
        stride[a] = st
        begin_mask &= ~(1 << a)
        end_mask &= ~(1 << a)
        begin[a] = max(min(s, big), -big)
        if (st > 0 and e >= big) or (st < 0 and e <= -big):
            end_mask |= 1 << a
        else:
            end[a] = e
    return [tf.strided_slice(x, begin, end, stride, begin_mask=begin_mask, end_mask=end_mask)]


def _dynamic_slice(x, rank, bounds):
    """A Slice whose starts, ends, axes or steps are known at run time only: full-rank begin /
    end / strides vectors are scattered from them (an axis not named runs whole: 0, its size,
    step 1) and given to `tf.strided_slice` as tensors. ONNX's clamping of out-of-range bounds is
    strided_slice's own: a negative bound counts from the end, then clamps into the axis."""
    starts, ends, axes, steps = (list(bounds) + [None] * 4)[:4]
    count = _vector_length(starts, "Slice's starts")
    if axes is None:
        axes = tf.range(count, dtype=tf.int64)
    where = tf.reshape(_normalized_axes(axes, rank), [count, 1])
    named = _axis_mask(tf.reshape(where, [count]), count, rank)
    size = tf.constant([rank], tf.int64)

    def full(values, default):
        return tf.where(named, tf.scatter_nd(where, tf.cast(values, tf.int64), size), default)

    zeros = tf.zeros([rank], tf.int64)
    begin = full(starts, zeros)
    end = full(ends, tf.shape(x, out_type=tf.int64))
    stride = tf.ones([rank], tf.int64) if steps is None else full(steps, tf.ones([rank], tf.int64))
    return tf.strided_slice(x, begin, end, stride)


@builder("Pad")
def _pad(ctx, node, inputs):
    x = inputs[0]
    a = ctx.attrs(node)
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    rank = _rank(x)
    paddings = _paddings(ctx, node, inputs, rank)
    if mode == "reflect":
        return [tf.pad(x, paddings, mode="REFLECT")]
    if mode in ("edge", "wrap"):  # repeat the border / the other end: gather along each axis
        return [_gather_pad(x, paddings, rank, mode)]
    if mode != "constant":
        raise ValueError(f"Pad mode '{mode}' is not supported")
    value = inputs[2] if len(inputs) > 2 and inputs[2] is not None else a.get("value", 0.0)
    if isinstance(value, tf.Tensor) and value.shape.ndims != 0:
        value = tf.reshape(value, [])  # a one-element constant_value
    return [tf.pad(x, paddings, constant_values=tf.cast(value, x.dtype))]


def _paddings(ctx, node, inputs, rank):
    """TF's [rank, 2] paddings from ONNX's pads (all befores, then all afters) over `axes` (all
    axes when omitted): a Python list when they are constants, else an int64 tensor."""
    axes_input = len(inputs) > 3 and inputs[3] is not None
    if not (_at_run_time(inputs, 1) or _at_run_time(inputs, 3)):
        pads = _ints_from(ctx, node, inputs, 1, "pads")
        axes = _ints_from(ctx, node, inputs, 3, "axes") if axes_input else list(range(rank))
        paddings = [[0, 0] for _ in range(rank)]
        for i, axis in enumerate(axes):
            paddings[axis % rank] = [pads[i], pads[i + len(axes)]]
        return paddings
    pads = tf.cast(inputs[1], tf.int64)
    if not axes_input:
        return tf.transpose(tf.reshape(pads, [2, rank]))
    count = _vector_length(inputs[3], "Pad's axes")
    where = tf.reshape(_normalized_axes(inputs[3], rank), [count, 1])
    rows = tf.transpose(tf.reshape(pads, [2, count]))
    return tf.scatter_nd(where, rows, tf.constant([rank, 2], tf.int64))


def _gather_pad(x, paddings, rank, mode):
    """edge: indices clipped into the axis; wrap: indices modulo the axis size."""
    for axis in range(rank):
        if isinstance(paddings, list):
            before, after = paddings[axis]
            if not (before or after):
                continue
            size = x.shape.as_list()[axis]
            if size is None:
                size = tf.shape(x, out_type=tf.int64)[axis]
        else:
            before, after = paddings[axis][0], paddings[axis][1]
            size = tf.shape(x, out_type=tf.int64)[axis]
        if all(isinstance(v, int) for v in (before, after, size)):
            positions = np.arange(-before, size + after)
            index = np.clip(positions, 0, size - 1) if mode == "edge" else positions % size
        else:
            positions = tf.range(-tf.cast(before, tf.int64), tf.cast(size + after, tf.int64))
            index = (tf.clip_by_value(positions, tf.constant(0, tf.int64), size - 1)
                     if mode == "edge" else positions % size)
        x = tf.gather(x, index, axis=axis)
    return x
