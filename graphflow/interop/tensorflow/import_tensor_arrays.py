"""TensorFlow's TensorArray ops (TensorArrayV3 and the ops taking its handle and flow), read into
graphflow's TensorArray, whose array value is the flow itself (`ops/tensor_array_ops.py`).

TensorFlow's TensorArrayV3 returns a resource handle and a float "flow" scalar that orders the
ops; every later op takes both (handle first, flow last) and writes return a new flow. graphflow's
array ops take and return the array as one variant value, so here both outputs of TensorArrayV3
stand for that value and each op reads the flow input it is given: the same ordering, and inside
a loop the flow is the loop variable TensorFlow made it (the handle enters as an invariant).
"""

from graphflow.interop.tensorflow.import_core import rule
from graphflow.ops.registry import make_tensor


def _element(ctx, node):
    attrs = ctx.attrs(node)
    shape = attrs.get("element_shape")
    return {"dtype": attrs["dtype"], "element_shape": None if shape is None else list(shape)}


def _count(ctx, node, inputs, n):
    if len(inputs) != n:
        raise ctx.error(node, f"takes {n} inputs, got {len(inputs)}")


@rule("tensor_array")
def _tensor_array(ctx, node, inputs, record):
    _count(ctx, node, inputs, 1)
    attrs = ctx.attrs(node)
    shape = attrs.get("element_shape")
    flow = make_tensor("TensorArrayV3", (inputs[0],), {
        "dtype": attrs["dtype"], "element_shape": None if shape is None else list(shape),
        "dynamic_size": bool(attrs.get("dynamic_size")),
        "clear_after_read": bool(attrs.get("clear_after_read", True))}, name=ctx.op_name(node))
    return [flow, flow]


@rule("tensor_array_write")
def _write(ctx, node, inputs, record):
    _count(ctx, node, inputs, 4)
    ctx.attrs(node)
    return [make_tensor("TensorArrayWriteV3", (inputs[3], inputs[1], inputs[2]),
                        name=ctx.op_name(node))]


@rule("tensor_array_scatter")
def _scatter(ctx, node, inputs, record):
    _count(ctx, node, inputs, 4)
    ctx.attrs(node)
    return [make_tensor("TensorArrayScatterV3", (inputs[3], inputs[1], inputs[2]),
                        name=ctx.op_name(node))]


@rule("tensor_array_read")
def _read(ctx, node, inputs, record):
    _count(ctx, node, inputs, 3)
    attrs = _element(ctx, node)
    attrs["element_shape"] = None
    return [make_tensor("TensorArrayReadV3", (inputs[2], inputs[1]), attrs, name=ctx.op_name(node))]


@rule("tensor_array_gather")
def _gather(ctx, node, inputs, record):
    _count(ctx, node, inputs, 3)
    out = make_tensor("TensorArrayGatherV3", (inputs[2], inputs[1]), _element(ctx, node),
                      name=ctx.op_name(node))
    return [out]


@rule("tensor_array_size")
def _size(ctx, node, inputs, record):
    _count(ctx, node, inputs, 2)
    return [make_tensor("TensorArraySizeV3", (inputs[1],), name=ctx.op_name(node))]
