"""Export lowerings: graphflow ops TensorFlow has no op for, written as the few TensorFlow ops
that compute the same thing, so that graphs graphflow's `gradients()` and losses build (training
graphs: `.meta` files, SavedModels) go to TensorFlow too.

Each lowering names its last node after the graphflow op (TensorFlow finds the tensor under the
same name) and its helper nodes `<op name>/<part>`. The algebra, per op:

    SumToShape(x, shape)       -> Reshape(Sum(x, axes, keep_dims=True), shape)
                                  axes: where `shape`, left-padded with 1s to x's rank, is 1
                                  (known when the shape is: a Const; else computed by Where)
    ReducedShape(shape, axis)  -> DynamicStitch([Range(rank), axis mod rank], [shape, ones])
    GatherGrad(g, idx, shape)  -> UnsortedSegmentSum(g, idx, shape[0])           (axis 0)
    SigmoidCrossEntropyWithLogits(x, z) -> Relu(x) - x*z + Log1p(Exp(-|x|))
    LogicalXor(a, b)           -> NotEqual(a, b)

`order_reads_before_writes` (export_ordering.py) then orders variable reads before updates.
"""

import numpy as np

from graphflow.fileformat import tf_protos as pb
from graphflow.framework.graph import describe_op
from graphflow.interop.tensorflow.attr_values import to_attr_value
from graphflow.interop.tensorflow.exporter import (
    ExportError,
    fill_type_attrs,
    finish_attrs,
    rule,
)
from graphflow.interop.tensorflow.signatures import signature


def emit(ctx, op, tf_type, name, inputs, out_dtypes, attrs=None, last=False):
    """Add one TensorFlow node; `inputs` are (TF input name, dtype name) pairs. The type attrs
    (T, N, Tidx, ...) are filled from the dtypes. `last` gives the node the graphflow op's name,
    device and control inputs. Returns the node."""
    sig = signature(tf_type)
    node_attrs = {key: value if isinstance(value, pb.AttrValue)
                  else to_attr_value(value, sig.attrs[key].kind)
                  for key, value in (attrs or {}).items()}
    fill_type_attrs(sig, node_attrs, [d for _, d in inputs], out_dtypes)
    missing = finish_attrs(sig, node_attrs, name)
    if missing:
        raise ExportError(f"{describe_op(op)}: TensorFlow's {tf_type} requires attrs {missing}")
    if last:
        return ctx.add_node(tf_type, op.name, [n for n, _ in inputs], node_attrs, op.device,
                            ctx.controls(op))
    return ctx.add_node(tf_type, ctx.fresh(f"{op.name}/{name}"), [n for n, _ in inputs],
                        node_attrs, op.device)


def _out(ctx, node, index=0):
    return ctx.output_name(node, index)


def _input(ctx, op, i):
    return ctx.name(op.inputs[i]), op.inputs[i].dtype.name


def _const(ctx, op, value, part, dtype):
    array = np.asarray(value, dtype=object if dtype == "string" else dtype)
    return ctx.const(array, f"{op.name}/{part}", dtype), dtype


# ------------------------------------------------------------------------------- gradients
def _static_sum_axes(op):
    """The axes SumToShape reduces, when its input rank and target shape are known; else None."""
    x_dims = op.inputs[0].shape.dims
    target = op.outputs[0].shape.dims
    if x_dims is None or target is None or any(d is None for d in target):
        return None
    padded = [1] * (len(x_dims) - len(target)) + list(target)
    return [axis for axis, want in enumerate(padded) if want == 1 and x_dims[axis] != 1]


@rule("sum_to_shape")
def _sum_to_shape(ctx, op, record):
    x, shape = _input(ctx, op, 0), _input(ctx, op, 1)
    axes = _static_sum_axes(op)
    if axes is None:
        axes = _dynamic_sum_axes(ctx, op, x, shape)
    else:
        axes = _const(ctx, op, axes, "axes", "int32")
    total = emit(ctx, op, "Sum", "Sum", [x, axes], [x[1]], {"keep_dims": True})
    emit(ctx, op, "Reshape", "Reshape", [(_out(ctx, total), x[1]), shape], [x[1]], last=True)
    ctx.set_outputs(op, ctx.nodes[-1])


def _dynamic_sum_axes(ctx, op, x, shape):
    """Where(Equal(Concat([Fill([rank(x) - size(shape)], 1), shape]), 1)), as an int64 vector."""
    int_type = shape[1]
    x_shape = emit(ctx, op, "Shape", "x_shape", [x], [int_type], {"out_type": int_type})
    x_rank = emit(ctx, op, "Size", "x_rank", [(_out(ctx, x_shape), int_type)], [int_type],
                  {"out_type": int_type})
    t_rank = emit(ctx, op, "Size", "target_rank", [shape], [int_type], {"out_type": int_type})
    extra = emit(ctx, op, "Sub", "extra_rank", [(_out(ctx, x_rank), int_type),
                                                (_out(ctx, t_rank), int_type)], [int_type])
    dims = emit(ctx, op, "Reshape", "extra_dims",
                [(_out(ctx, extra), int_type), _const(ctx, op, [1], "vector", "int32")],
                [int_type])
    one = _const(ctx, op, 1, "one", int_type)
    ones = emit(ctx, op, "Fill", "ones", [(_out(ctx, dims), int_type), one], [int_type])
    padded = emit(ctx, op, "ConcatV2", "padded",
                  [(_out(ctx, ones), int_type), shape, _const(ctx, op, 0, "concat_axis", "int32")],
                  [int_type])
    is_one = emit(ctx, op, "Equal", "is_one", [(_out(ctx, padded), int_type), one], ["bool"])
    where = emit(ctx, op, "Where", "where", [(_out(ctx, is_one), "bool")], ["int64"])
    flat = emit(ctx, op, "Reshape", "axes", [(_out(ctx, where), "int64"),
                                             _const(ctx, op, [-1], "flat", "int32")], ["int64"])
    return _out(ctx, flat), "int64"


@rule("reduced_shape")
def _reduced_shape(ctx, op, record):
    shape = _input(ctx, op, 0)
    int_type = shape[1]
    axis = op.attrs.get("axis")
    if len(op.inputs) == 1 and axis is None:
        emit(ctx, op, "OnesLike", "OnesLike", [shape], [int_type], last=True)
        ctx.set_outputs(op, ctx.nodes[-1])
        return
    axes = _input(ctx, op, 1) if len(op.inputs) == 2 else \
        _const(ctx, op, np.atleast_1d(axis), "axis", int_type)
    axes = _cast(ctx, op, axes, int_type)
    rank = emit(ctx, op, "Size", "rank", [shape], [int_type], {"out_type": int_type})
    rank = (_out(ctx, rank), int_type)
    shifted = emit(ctx, op, "AddV2", "shifted", [axes, rank], [int_type])
    wrapped = emit(ctx, op, "FloorMod", "axes", [(_out(ctx, shifted), int_type), rank],
                   [int_type])
    wrapped = _cast(ctx, op, (_out(ctx, wrapped), int_type), "int32")
    zero, step = _const(ctx, op, 0, "start", int_type), _const(ctx, op, 1, "delta", int_type)
    every = emit(ctx, op, "Range", "range", [zero, rank, step], [int_type])
    every = _cast(ctx, op, (_out(ctx, every), int_type), "int32")
    axes_shape = emit(ctx, op, "Shape", "axes_shape", [wrapped], ["int32"], {"out_type": "int32"})
    ones = emit(ctx, op, "Fill", "ones", [(_out(ctx, axes_shape), "int32"),
                                          _const(ctx, op, 1, "one", int_type)], [int_type])
    emit(ctx, op, "DynamicStitch", "DynamicStitch",
         [every, wrapped, shape, (_out(ctx, ones), int_type)], [int_type],
         {"N": 2, "T": int_type}, last=True)
    ctx.set_outputs(op, ctx.nodes[-1])


def _cast(ctx, op, tensor, dtype):
    if tensor[1] == dtype:
        return tensor
    node = emit(ctx, op, "Cast", f"to_{dtype}", [tensor], [dtype],
                {"SrcT": tensor[1], "DstT": dtype})
    return _out(ctx, node), dtype


@rule("gather_grad")
def _gather_grad(ctx, op, record):
    if op.attrs.get("axis", 0) != 0 or op.attrs.get("batch_dims", 0) != 0:
        raise ExportError(f"{describe_op(op)}: the gradient of a gather along axis "
                          f"{op.attrs.get('axis')} (batch_dims {op.attrs.get('batch_dims')}) has "
                          "no TensorFlow form here; only axis 0 is written")
    grad, indices, shape = (_input(ctx, op, i) for i in range(3))
    rows = op.outputs[0].shape.dims
    if rows is not None and rows[0] is not None:
        count = _const(ctx, op, rows[0], "num_segments", "int32")
    else:
        first = emit(ctx, op, "StridedSlice", "num_segments",
                     [shape, _const(ctx, op, [0], "begin", shape[1]),
                      _const(ctx, op, [1], "end", shape[1]),
                      _const(ctx, op, [1], "strides", shape[1])],
                     [shape[1]], {"shrink_axis_mask": 1, "Index": shape[1]})
        count = _out(ctx, first), shape[1]
    emit(ctx, op, "UnsortedSegmentSum", "UnsortedSegmentSum", [grad, indices, count], [grad[1]],
         last=True)
    ctx.set_outputs(op, ctx.nodes[-1])


@rule("fused_batch_norm_grad")
def _fused_batch_norm_grad(ctx, op, record):
    """graphflow's FusedBatchNormGrad has TensorFlow's 5 inputs but only the 3 outputs read;
    TensorFlow's has 2 more (reserve spaces nothing reads)."""
    t = op.inputs[1].dtype.name
    attrs = {key: op.attrs[key] for key in ("epsilon", "data_format", "is_training")
             if op.attrs.get(key) is not None}
    emit(ctx, op, "FusedBatchNormGrad", "FusedBatchNormGrad",
         [_input(ctx, op, i) for i in range(5)], [t] * 5, attrs, last=True)
    ctx.set_outputs(op, ctx.nodes[-1])


# ------------------------------------------------------------------------------- losses, logic
@rule("sigmoid_xent")
def _sigmoid_xent(ctx, op, record):
    x, z = _input(ctx, op, 0), _input(ctx, op, 1)
    t = x[1]
    relu = emit(ctx, op, "Relu", "Relu", [x], [t])
    xz = emit(ctx, op, "Mul", "mul", [x, z], [t])
    diff = emit(ctx, op, "Sub", "sub", [(_out(ctx, relu), t), (_out(ctx, xz), t)], [t])
    absolute = emit(ctx, op, "Abs", "Abs", [x], [t])
    negative = emit(ctx, op, "Neg", "Neg", [(_out(ctx, absolute), t)], [t])
    exp = emit(ctx, op, "Exp", "Exp", [(_out(ctx, negative), t)], [t])
    log1p = emit(ctx, op, "Log1p", "Log1p", [(_out(ctx, exp), t)], [t])
    emit(ctx, op, "AddV2", "add", [(_out(ctx, diff), t), (_out(ctx, log1p), t)], [t], last=True)
    ctx.set_outputs(op, ctx.nodes[-1])


@rule("logical_xor")
def _logical_xor(ctx, op, record):
    emit(ctx, op, "NotEqual", "NotEqual", [_input(ctx, op, 0), _input(ctx, op, 1)], ["bool"],
         last=True)
    ctx.set_outputs(op, ctx.nodes[-1])
