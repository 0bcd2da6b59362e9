"""numpy reference kernels of the fusion pass's (`graphflow/optimizer_passes/fusion.py`) convolution
ops, each the definition its other implementations are tested against:

- `FusedConv2D`, activation(conv2d(x, filter) + bias): the reference Conv2D, the bias add, then
  the activation (graphflow's numpy instruction, `fused_matmul_kernels.Activation`);
- `Conv2DBackpropFilterBias` (the filter and bias gradients of that sum) and
  `Conv2DBackpropFilterBiasReluMask` (the same of `where(y > 0, dy, 0)`, a first layer's ReLU
  gradient): the mask, the reference filter gradient, then the reference kernel of the
  `bias_reduction` op (Sum over the non-channel axes, or BiasAddGrad);
- `Conv2DBackpropInputFilter` (a hidden layer's input gradient with its filter (and bias)
  gradients): the reference input gradient, then the filter gradients as above.

The helpers that build these kernels around other implementations' functions (`fused_conv2d_kernel`,
`filter_bias_kernel`, `input_filter_kernel`) and the kernel nodes of the ops' members
(`member_nodes`, `filter_member_node`, `bias_reduction_node`) are public: the other
implementations register in their own modules: `numba/jit_conv.py` (the few-tap compiled loop),
`onednn/dnnl_small_conv.py` (small ones as one bound primitive), `onednn/dnnl_conv_ops.py` (one
primitive with the bias and post-ops; the gradients' shared blocks), `blocked/fused_conv_blocked.py`
(the blocked, gathered and tap-product convolutions with the bias add, and the gradient ops as
their members' chosen kernels).
"""

import numpy as np

from graphflow.kernels import KernelNode
from graphflow.kernels.cpu import cpu_kernel, reference_builder
from graphflow.kernels.cpu.reference import conv_kernels
from graphflow.kernels.cpu.reference.conv_geometry import Conv, check4, from_nhwc, to_nhwc
from graphflow.kernels.cpu.reference.fused_kernels import member_error
from graphflow.kernels.cpu.reference.fused_matmul_kernels import activation_of
from graphflow.kernels.cpu.threads import blas
from graphflow.ops import fused_ops

_CONV_ATTRS = ("strides", "padding", "data_format", "dilations")


def fused_conv2d_kernel(node, conv=None, fused=None, add_bias=None, activation=None):
    """A FusedConv2D kernel around an NHWC function: `conv(xn, f, geo)` computes the convolution,
    then the bias is added (`add_bias(out, bias)` in place, returning whether it also applied the
    activation; numpy's add by default) and the activation applied; or `fused(xn, f, bias, geo)`
    computes activation(conv + bias) as far as the exact post-ops go (`activation` is then a
    oneDNN `FusedActivation`, whose `finish` applies the rest). `activation`: the node's numpy
    `Activation` by default. Errors name the member (conv, bias, activation) that failed."""
    shape_of = Conv(node)
    activation = activation or activation_of(node)
    fmt = shape_of.fmt
    channel_axis = -1 if fmt == "NHWC" else 1

    def fused_conv2d(x, f, bias):
        stage = 0  # the member being computed: conv, bias, activation
        try:
            bias = np.asarray(bias)
            check4(x, "input")
            check4(f, "filter")
            xn = to_nhwc(x, fmt)
            geo = shape_of.geometry(xn.shape, f.shape)
            if fused is not None:
                stage = 1
                _check_bias(bias, f.shape[3])
                stage = 0
                out = from_nhwc(fused(xn, f, bias, geo), fmt)
                stage = 2
                return activation.finish(out, True)
            out = from_nhwc(conv(xn, f, geo), fmt)
            stage = 1
            _check_bias(bias, out.shape[channel_axis])
            if add_bias is not None and add_bias(out, bias):
                return out
            if add_bias is None:
                np.add(out, bias if channel_axis == -1 else bias[:, None, None], out=out)
            stage = 2
            return activation.apply(out)
        except Exception as exc:
            raise member_error(exc, node.attrs, stage) from exc
    return fused_conv2d


def _check_bias(bias, channels):
    if bias.ndim != 1 or bias.shape[0] != channels:
        raise ValueError(f"bias of shape {bias.shape} does not match the {channels} output "
                         "channels of the convolution")


@cpu_kernel("FusedConv2D")
def fused_conv2d_reference(node):
    threads = blas.session_threads(node)
    return fused_conv2d_kernel(node, conv=lambda x, f, geo: conv_kernels.conv2d(x, f, geo, threads))


# ---------------------------------------------------------------- filter (and bias) gradients
def filter_bias_kernel(node, filter_grad, bias_grad):
    """`run(x, filter_sizes, g, relu_output=None)` -> (filter gradient, bias gradient) of `g`, or
    of `where(relu_output > 0, g, 0)`: the mask, then the kernels `filter_grad` (a
    Conv2DBackpropFilter kernel) and `bias_grad` (the `bias_reduction` op's)."""
    def run(x, filter_sizes, g, relu_output=None):
        if relu_output is not None:
            g = np.where(relu_output > 0, g, g.dtype.type(0))
        return filter_grad(x, filter_sizes, g), bias_grad(g)
    return run


def with_relu_mask(gradients):
    """The Conv2DBackpropFilterBiasReluMask kernel of a `filter_bias_kernel`-like `gradients`."""
    def conv2d_backprop_filter_bias_relu_mask(x, filter_sizes, g, y):
        if y.shape != g.shape:
            raise ValueError(f"the ReLU output's shape {y.shape} does not match out_backprop's "
                             f"{g.shape}")
        return gradients(x, filter_sizes, g, y)
    return conv2d_backprop_filter_bias_relu_mask


def _reference_filter_bias(node):
    member = filter_member_node(node)
    reduction = bias_reduction_node(node)
    return filter_bias_kernel(node, reference_builder(member.type)(member),
                              reference_builder(reduction.type)(reduction))


@cpu_kernel("Conv2DBackpropFilterBias")
def conv2d_backprop_filter_bias_reference(node):
    return _reference_filter_bias(node)


@cpu_kernel("Conv2DBackpropFilterBiasReluMask")
def conv2d_backprop_filter_bias_relu_mask_reference(node):
    return with_relu_mask(_reference_filter_bias(node))


def input_filter_kernel(input_grad, filter_grads):
    """Conv2DBackpropInputFilter: (input_grad(input_sizes, f, g), *filter_grads(x, filter_sizes,
    g)), `filter_grads` giving (filter gradient, bias gradient) or (filter gradient,)."""
    def conv2d_backprop_input_filter(input_sizes, f, g, x, filter_sizes):
        return (input_grad(input_sizes, f, g), *filter_grads(x, filter_sizes, g))
    return conv2d_backprop_input_filter


def only_filter_grad(filter_grad):
    """`filter_grads` of a Conv2DBackpropInputFilter without a bias reduction."""
    return lambda x, filter_sizes, g: (filter_grad(x, filter_sizes, g),)


@cpu_kernel("Conv2DBackpropInputFilter")
def conv2d_backprop_input_filter_reference(node):
    input_node, filter_node = member_nodes(node)
    input_grad = reference_builder(input_node.type)(input_node)
    if filter_node.attrs.get("bias_reduction"):  # Conv2DBackpropFilterBias
        return input_filter_kernel(input_grad, _reference_filter_bias(filter_node))
    return input_filter_kernel(input_grad,
                               only_filter_grad(reference_builder(filter_node.type)(filter_node)))


# ---------------------------------------------------------------- the members' kernel nodes
def _conv_attrs(attrs):
    return {k: attrs[k] for k in _CONV_ATTRS if k in attrs}


def _pick(values, indices):
    if values is None:
        return None
    return tuple(values[i] if i < len(values) else None for i in indices)


def member_nodes(node):
    """The kernel nodes of Conv2DBackpropInputFilter's two parts: Conv2DBackpropInput
    (input_sizes, filter, dy) -> dx, and Conv2DBackpropFilterBias(x, filter_sizes, dy) -> df, db
    (without a `bias_reduction`, Conv2DBackpropFilter(x, filter_sizes, dy) -> df)."""
    attrs = node.attrs
    bias = bool(attrs.get("bias_reduction"))
    shapes = node.out_shapes
    input_node = KernelNode(node.name, "Conv2DBackpropInput", _conv_attrs(attrs),
                            _pick(node.in_dtypes, (0, 1, 2)), node.out_dtypes[:1],
                            shapes[:1] if shapes else None, node.state,
                            in_shapes=_pick(node.in_shapes, (0, 1, 2)))
    filter_node = KernelNode(node.name, "Conv2DBackpropFilterBias" if bias else
                             "Conv2DBackpropFilter", attrs if bias else _conv_attrs(attrs),
                             _pick(node.in_dtypes, (3, 4, 2)), node.out_dtypes[1:],
                             shapes[1:] if shapes else None, node.state,
                             in_shapes=_pick(node.in_shapes, (3, 4, 2)))
    return input_node, filter_node


def filter_member_node(node):
    """The Conv2DBackpropFilter node of a Conv2DBackpropFilterBias(ReluMask) node (its inputs x,
    filter_sizes, dy; its first output)."""
    shapes = node.out_shapes
    return KernelNode(node.name, "Conv2DBackpropFilter", _conv_attrs(node.attrs),
                      _pick(node.in_dtypes, (0, 1, 2)), node.out_dtypes[:1],
                      shapes[:1] if shapes else None, node.state,
                      in_shapes=_pick(node.in_shapes, (0, 1, 2)))


def bias_reduction_node(node):
    """The kernel node of the op whose value output 1 is (`bias_reduction`, of dy)."""
    reduction = node.attrs["bias_reduction"]
    attrs = fused_ops.bias_reduction_attrs(reduction, node.attrs.get("data_format") or "NHWC")
    return KernelNode(node.name, reduction, attrs, node.in_dtypes[2:3], node.out_dtypes[1:],
                      node.out_shapes[1:] if node.out_shapes else None, node.state,
                      in_shapes=_pick(node.in_shapes, (2,)))
