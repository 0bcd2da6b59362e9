"""ONNX reductions as graphflow ops: ReduceSum / Mean / Max / Min / Prod / SumSquare / L1 / L2 /
LogSumExp / LogSum (axes as an attribute, a constant input or an input fed at run time; ReduceMax
/ ReduceMin of bools as any / all) and ArgMax / ArgMin (with select_last_index), in the same
`builder` registry as `import_ops.py`."""

import graphflow as tf
from graphflow.interop.onnx.import_ops import _ints_from, _rank, builder
from graphflow.ops import static_value

_REDUCE = {"ReduceSum": tf.reduce_sum, "ReduceMean": tf.reduce_mean, "ReduceMax": tf.reduce_max,
           "ReduceMin": tf.reduce_min, "ReduceProd": tf.reduce_prod}


@builder(*_REDUCE, "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceLogSum")
def _reduce(ctx, node, inputs):
    a = ctx.attrs(node)
    x = inputs[0]
    from_input = node.op_type == "ReduceSum" and ctx.opset >= 13 or ctx.opset >= 18
    noop_when_empty = bool(a.get("noop_with_empty_axes", 0))
    if from_input and _axes_at_run_time(inputs):
        axes = _run_time_axes(x, inputs[1], noop_when_empty)
    else:
        axes = _ints_from(ctx, node, inputs, 1, "axes") if from_input else a.get("axes")
        if not axes:
            if noop_when_empty:
                return [tf.identity(x)]
            axes = None
    keep = bool(a.get("keepdims", 1))
    kind = node.op_type
    if x.dtype == tf.bool and kind in ("ReduceMax", "ReduceMin"):  # of bools: any / all
        return [(tf.reduce_any if kind == "ReduceMax" else tf.reduce_all)(x, axis=axes,
                                                                          keepdims=keep)]
    if kind in _REDUCE:
        return [_REDUCE[kind](x, axis=axes, keepdims=keep)]
    if kind == "ReduceSumSquare":
        return [tf.reduce_sum(x * x, axis=axes, keepdims=keep)]
    if kind == "ReduceL1":
        return [tf.reduce_sum(tf.abs(x), axis=axes, keepdims=keep)]
    if kind == "ReduceL2":
        return [tf.sqrt(tf.reduce_sum(x * x, axis=axes, keepdims=keep))]
    if kind == "ReduceLogSum":
        return [tf.log(tf.reduce_sum(x, axis=axes, keepdims=keep))]
    return [tf.reduce_logsumexp(x, axis=axes, keepdims=keep)]  # ReduceLogSumExp


def _axes_at_run_time(inputs):
    return (len(inputs) > 1 and inputs[1] is not None
            and static_value.constant_value(inputs[1]) is None)


def _run_time_axes(x, axes, noop_when_empty):
    """Axes fed at run time, as graphflow's reductions read them (an empty list reduces nothing);
    ONNX reduces over all axes when the list is empty unless noop_with_empty_axes is set."""
    if noop_when_empty:
        return axes
    every = tf.range(tf.rank(x), dtype=axes.dtype)
    return tf.cond(tf.equal(tf.size(axes), 0), lambda: every, lambda: axes)


@builder("ArgMax", "ArgMin")
def _arg(ctx, node, inputs):
    a = ctx.attrs(node)
    x = inputs[0]
    axis = a.get("axis", 0) % _rank(x)
    fn = tf.argmax if node.op_type == "ArgMax" else tf.argmin
    if a.get("select_last_index", 0):  # the last of equal extremes: the first one of x reversed
        last = tf.cast(tf.shape(x)[axis], tf.int64) - 1
        y = last - fn(tf.reverse(x, [axis]), axis=axis, output_type=tf.int64)
    else:
        y = fn(x, axis=axis, output_type=tf.int64)
    return [tf.expand_dims(y, axis) if a.get("keepdims", 1) else y]
