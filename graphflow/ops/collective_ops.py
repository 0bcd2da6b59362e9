"""Collective ops across processes (MPI): allreduce, allgather and broadcast as graph ops.

They appear in the graph, run inside `Session.run` and have gradients where meaningful: the
gradient of an allreduce is an allreduce of the gradient; of an allgather, this process's rows of
the summed gradient. They are stateful (never folded, merged or pruned when fetched) because their
value depends on other processes. `graphflow.interop.distribute` builds them; kernels are in
`kernels/cpu/reference/collective_kernels.py`.

A fused allreduce of several tensors is split in two ops so that it can overlap with computation:
`MpiAllreduceStart` (the tensors -> an int64 token of the posted reduction) is scheduled as early
as its inputs allow and `MpiAllreduceWait` (token -> the reduced tensors) as late as its readers
allow (`OpDef.schedule`, applied by `engine/scheduling.py`), so the ops in between run
while the reduction is in flight. They have no gradient (they carry gradients to the optimizer).
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.registry import define, make_op, make_tensor, no_gradient, register_gradient


def _same(inputs, attrs):
    x = inputs[0]
    return [(x.dtype, x.shape)]


def _gathered(inputs, attrs):
    x = inputs[0]
    dims = x.shape.dims
    return [(x.dtype, TensorShape(None if dims is None else [None] + list(dims[1:])))]


# fresh_output: the kernels return arrays of their own (new, or buffers they reuse only once
# nothing refers to them), so a later op may write over them in place and an Assign may keep them
# touches="network": every collective exchanges its values with the other processes
define("MpiAllreduce", _same, stateful=True, touches="network", attrs="average:bool size:int>=1",
       fresh_output=True, onnx=no_onnx.COLLECTIVE)
define("MpiAllgather", _gathered, stateful=True, touches="network", fresh_output=True,
       onnx=no_onnx.COLLECTIVE)
define("MpiBroadcast", _same, stateful=True, touches="network", attrs="root:int>=0",
       fresh_output=True, onnx=no_onnx.COLLECTIVE)


def _start_infer(inputs, attrs):
    if not inputs:
        raise ValueError("needs at least one tensor to reduce")
    first = inputs[0].dtype
    for t in inputs:
        if t.dtype != first:
            raise TypeError(f"all tensors of one fused allreduce need one dtype: {t.name} is "
                            f"{t.dtype.name}, {inputs[0].name} is {first.name}")
        if not t.shape.is_fully_defined():
            raise ValueError(f"fused allreduce needs fully known shapes: {t.name} has {t.shape}")
    return [(dtypes.int64, TensorShape([]))]


def _wait_infer(inputs, attrs):
    dtype = dtypes.as_dtype(attrs["dtype"])
    return [(dtype, TensorShape(list(shape))) for shape in attrs["shapes"]]


define("MpiAllreduceStart", _start_infer, stateful=True, touches="network", attrs="average:bool",
       schedule="early", onnx=no_onnx.COLLECTIVE)
# MpiAllreduceWait's outputs: views of a buffer of its own
define("MpiAllreduceWait", _wait_infer, stateful=True, touches="network",
       attrs="average:bool dtype:dtype shapes:list(shape)", schedule="late", fresh_output=True,
       onnx=no_onnx.COLLECTIVE)
no_gradient("MpiAllreduceStart", "MpiAllreduceWait")


def allreduce(tensor, average, size, name=None):
    return make_tensor("MpiAllreduce", (tensor,), {"average": bool(average), "size": int(size)},
                       name=name or "allreduce")


def fused_allreduce(tensors, average, name=None, control_inputs=()):
    """The sums (means) over all processes of `tensors` (one dtype, known shapes), reduced as one
    buffer by a start op and a wait op; `control_inputs` hold the start back until they ran."""
    tensors = list(tensors)
    name = name or "fused_allreduce"
    with tensors[0].graph.control_dependencies(list(control_inputs)):
        start = make_op("MpiAllreduceStart", tensors, {"average": bool(average)},
                        name=name + "_start")
    wait = make_op("MpiAllreduceWait", (start.outputs[0],),
                   {"average": bool(average), "dtype": tensors[0].dtype,
                    "shapes": [t.shape.as_list() for t in tensors]}, name=name)
    return list(wait.outputs)


def allgather(tensor, name=None):
    return make_tensor("MpiAllgather", (tensor,), {}, name=name or "allgather")


def broadcast(tensor, root, name=None):
    return make_tensor("MpiBroadcast", (tensor,), {"root": int(root)}, name=name or "broadcast")


@register_gradient("MpiAllreduce")
def _allreduce_grad(op, grad):  # d(sum_p x_p)/dx_q = 1 on every process: reduce the gradients
    return (allreduce(grad, op.attrs["average"], op.attrs["size"]),)


@register_gradient("MpiAllgather")
def _allgather_grad(op, grad):  # this process's rows of the gradient summed over processes
    return (make_tensor("MpiAllgatherGrad", (grad, op.inputs[0]), {}, name="allgather_grad"),)


def _grad_like_input(inputs, attrs):
    grad, x = inputs
    return [(grad.dtype, x.shape)]


define("MpiAllgatherGrad", _grad_like_input, stateful=True, touches="network",
       onnx=no_onnx.COLLECTIVE)


__all__ = []
