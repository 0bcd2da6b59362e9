"""Gradient rules for the 3-D convolution and pooling ops (`conv3d_ops.py`), the same rules as
their 2-D counterparts in `nn_grad.py`: the conv backprops are linear in each argument,
MaxPool3DGrad and MaxPool3DGradGrad are each other's adjoint (zero with respect to the pooled
input; away from ties: at a tie TF's MaxPool3DGrad feeds every maximum and MaxPool3DGradGrad reads
the first, and graphflow keeps TF's numbers), AvgPool3DGrad's adjoint is AvgPool3D.
"""

from graphflow.ops import conv3d_ops, shape_ops
from graphflow.ops.grad_util import shape_of
from graphflow.ops.registry import register_gradient


def _conv_kw(op):
    a = op.attrs
    return {"strides": a["strides"], "padding": a["padding"], "data_format": a["data_format"],
            "dilations": a["dilations"]}


@register_gradient("Conv3D")
def _conv3d_grad(op, grad):
    x, f = op.inputs
    kw = _conv_kw(op)
    return (conv3d_ops.conv3d_backprop_input_v2(shape_of(x), f, grad, **kw),
            conv3d_ops.conv3d_backprop_filter_v2(x, shape_of(f), grad, **kw))


@register_gradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op, grad):
    _, f, g = op.inputs
    kw = _conv_kw(op)
    return (None,
            conv3d_ops.conv3d_backprop_filter_v2(grad, shape_of(f), g, **kw),
            conv3d_ops.conv3d(grad, f, **kw))


@register_gradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op, grad):
    x, _, g = op.inputs
    kw = _conv_kw(op)
    return (conv3d_ops.conv3d_backprop_input_v2(shape_of(x), grad, g, **kw),
            None,
            conv3d_ops.conv3d(x, grad, **kw))


def _pool_kw(op):
    a = op.attrs
    return {"ksize": a["ksize"], "strides": a["strides"], "padding": a["padding"],
            "data_format": a["data_format"]}


@register_gradient("MaxPool3D")
def _max_pool3d_grad(op, grad):
    return (conv3d_ops.max_pool3d_grad(op.inputs[0], op.outputs[0], grad, **_pool_kw(op)),)


@register_gradient("MaxPool3DGrad")
def _max_pool3d_grad_grad(op, grad):
    x, y, _ = op.inputs
    return (shape_ops.zeros_like(x), shape_ops.zeros_like(y),
            conv3d_ops.max_pool3d_grad_grad(x, y, grad, **_pool_kw(op)))


@register_gradient("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return (shape_ops.zeros_like(x), shape_ops.zeros_like(y),
            conv3d_ops.max_pool3d_grad(x, y, grad, **_pool_kw(op)))


@register_gradient("AvgPool3D")
def _avg_pool3d_grad(op, grad):
    return (conv3d_ops.avg_pool3d_grad(shape_of(op.inputs[0]), grad, **_pool_kw(op)),)


@register_gradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op, grad):
    return (None, conv3d_ops.avg_pool3d(grad, **_pool_kw(op)))
