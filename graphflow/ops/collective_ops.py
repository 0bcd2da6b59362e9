"""Collective ops across processes (MPI): allreduce, allgather and broadcast as graph ops.

They appear in the graph, run inside `Session.run` and have gradients where meaningful: the
gradient of an allreduce is an allreduce of the gradient; of an allgather, this process's rows of
the summed gradient. They are stateful (never folded, merged or pruned when fetched) because their
value depends on other processes. `graphflow.interop.distribute` builds them; kernels are in
`kernels/cpu/collective_kernels.py`.
"""

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.registry import define, make_tensor, register_gradient


def _same(inputs, attrs):
    x = inputs[0]
    return [(x.dtype, x.shape)]


def _gathered(inputs, attrs):
    x = inputs[0]
    dims = x.shape.dims
    return [(x.dtype, TensorShape(None if dims is None else [None] + list(dims[1:])))]


define("MpiAllreduce", _same, stateful=True, attrs="average:bool size:int>=1")
define("MpiAllgather", _gathered, stateful=True)
define("MpiBroadcast", _same, stateful=True, attrs="root:int>=0")


def allreduce(tensor, average, size, name=None):
    return make_tensor("MpiAllreduce", (tensor,), {"average": bool(average), "size": int(size)},
                       name=name or "allreduce")


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


define("MpiAllgatherGrad", _grad_like_input, stateful=True)


__all__ = []
