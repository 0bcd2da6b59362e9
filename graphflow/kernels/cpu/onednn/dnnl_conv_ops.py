"""The convolution ops' "onednn" implementations (`dnnl_conv.py`, `dnnl_conv_grads.py`): Conv2D,
Conv2DBackpropInput, Conv2DBackpropFilter and the fusion pass's FusedConv2D,
Conv2DBackpropFilterBias(ReluMask) and Conv2DBackpropInputFilter, for float32 operands of at least
`dnnl_conv.MIN_MACS` multiply-adds with static shapes, where oneDNN has a primitive for the
geometry (`dnnl_conv.implements`). They rank below the few-channel tap products (`conv_taps.py`)
and above the gathered and blocked numpy kernels (`conv_gather.py`, `conv_blocked.py`).

FusedConv2D: one primitive computes the whole op: the bias is the convolution primitive's bias
argument and Relu, Relu6 and LeakyRelu are elementwise post-ops (`dnnl.activation_post_ops`),
applied to each block of output while it is still in cache, so the output is written once instead
of three times. Those three compute the same values as graphflow's numpy ones (comparisons and one
multiply); the other activations (transcendental functions, where oneDNN's approximations differ
from numpy's in the last bits) run as the numpy instruction over the primitive's conv + bias result
(`dnnl_fused_matmul.FusedActivation`, shared with FusedMatMul).

Conv2DBackpropFilterBias: the thread that runs the filter gradient's primitive on a block of images
sums that block's dy just before (with numba one compiled pass, float64 sums, `conv_dy_pass`, also
on the OpenMP team; without it one BLAS ones @ dy right after), the blocks summed in order
(`dnnl_conv_grads.conv2d_backprop_filter`): the bias gradient's pass over dy is shared out with the
filter gradient's blocks instead of running as an op of its own. The filter gradient is the
Conv2DBackpropFilter implementation's bits (the same primitive; the tests check it); the bias
gradient sums in another order than the unfused Sum kernel (one BLAS ones @ dy over the whole batch)
or BiasAddGrad (numpy's sum): float32 rounding differs, within 5e-7 of sum(|dy|) per channel (the
tests' bound; measured on the CNN benchmarks' layers with the BLAS sums: within 3e-8 of the exact
one, the Sum kernel's within 2.2e-8, BiasAddGrad's within 1.6e-7; the float64 sums are rounded
once). It applies where the plan would run the member Conv2DBackpropFilter through oneDNN.
Conv2DBackpropFilterBiasReluMask (the same of `where(y > 0, dy, 0)`): each block of dy is masked
right before its primitive reads it, into a buffer of the thread that runs it, so the masked dy is
never written out whole and read back.

Conv2DBackpropInputFilter: where the plan would run both member gradients through oneDNN, their
blocks of images share the cores (`dnnl_conv_grads.conv2d_backprop_input_filter`: the same bits
as the two implementations).
"""

import numpy as np

from graphflow.kernels.cpu import choose, cpu_kernel
from graphflow.kernels.cpu.onednn import dnnl_conv, dnnl_conv_grads
from graphflow.kernels.cpu.onednn.dnnl_fused_matmul import fused_activation_of
from graphflow.kernels.cpu.reference import fused_conv_kernels as fused
from graphflow.kernels.cpu.reference.conv_geometry import (
    Conv,
    check4,
    dtypes_are,
    filter_grad_kernel,
    forward_kernel,
    from_nhwc,
    input_grad_kernel,
    sizes,
    static_conv,
    to_nhwc,
)
from graphflow.kernels.cpu.threads import blas

F32 = np.dtype(np.float32)


def _large(node, float32_inputs):
    """The node's StaticConv where its inputs at `float32_inputs` are float32 and it has at least
    MIN_MACS multiply-adds; else None."""
    shapes = static_conv(node)
    if (shapes is None or not dtypes_are(node, F32, float32_inputs)
            or shapes.macs < max(dnnl_conv.MIN_MACS, 1)):
        return None
    return shapes


def _none_is_an_error(result, what):
    if result is None:
        raise RuntimeError(f"oneDNN has no {what} primitive for this geometry")
    return result


def conv2d_applies(node):
    shapes = _large(node, (0, 1))
    return shapes is not None and dnnl_conv.implements("forward", shapes.geo, shapes.c, shapes.oc)


@cpu_kernel("Conv2D", name="onednn", preference=30, requires=("onednn",), applies=conv2d_applies)
def conv2d_onednn(node):
    threads = blas.session_threads(node)
    return forward_kernel(node, lambda x, f, geo: _none_is_an_error(
        dnnl_conv.conv2d(x, f, geo, threads), "convolution"))


def input_grad_applies(node):
    shapes = _large(node, (1, 2))
    return shapes is not None and dnnl_conv.implements("backward_data", shapes.geo, shapes.c,
                                                       shapes.oc)


@cpu_kernel("Conv2DBackpropInput", name="onednn", preference=30, requires=("onednn",),
            applies=input_grad_applies)
def conv2d_backprop_input_onednn(node):
    threads = blas.session_threads(node)
    return input_grad_kernel(node, lambda g, f, geo, n, c: _none_is_an_error(
        dnnl_conv.conv2d_backprop_input(g, f, geo, n, c, threads), "input gradient"))


def filter_grad_applies(node):
    shapes = _large(node, (0, 2))
    return shapes is not None and dnnl_conv.implements("backward_weights", shapes.geo, shapes.c,
                                                       shapes.oc)


@cpu_kernel("Conv2DBackpropFilter", name="onednn", preference=30, requires=("onednn",),
            applies=filter_grad_applies)
def conv2d_backprop_filter_onednn(node):
    threads = blas.session_threads(node)
    return filter_grad_kernel(node, lambda x, g, geo, f_shape: _none_is_an_error(
        dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f_shape, threads), "filter gradient"))


# ---------------------------------------------------------------- the fusion pass's ops
def fused_conv2d_applies(node):
    shapes = _large(node, (0, 1, 2))
    if shapes is None:
        return False
    post_ops = fused_activation_of(node).post_ops
    return dnnl_conv.implements("forward", shapes.geo, shapes.c, shapes.oc, True, post_ops)


@cpu_kernel("FusedConv2D", name="onednn", preference=30, requires=("onednn",),
            applies=fused_conv2d_applies)
def fused_conv2d_onednn(node):
    threads = blas.session_threads(node)
    activation = fused_activation_of(node)
    post_ops = activation.post_ops
    return fused.fused_conv2d_kernel(node, fused=lambda x, f, bias, geo: _none_is_an_error(
        dnnl_conv.conv2d(x, f, geo, threads, bias, post_ops), "convolution"), activation=activation)


def _onednn_chosen(node):
    return choose(node).name == "onednn"


def filter_bias_applies(node):
    """Where the member Conv2DBackpropFilter would run through oneDNN."""
    shapes = _large(node, (0, 2))
    return (shapes is not None
            and dnnl_conv.implements("backward_weights", shapes.geo, shapes.c, shapes.oc,
                                     dnnl_conv_grads.BIAS_BY_PRIMITIVE)
            and _onednn_chosen(fused.filter_member_node(node)))


def filter_bias_gradients(node):
    """`run(x, filter_sizes, g, relu_output=None)` -> (filter gradient, bias gradient) through
    the backward-weights primitive, the bias sums (and the mask) beside each block."""
    conv = Conv(node)
    threads = blas.session_threads(node)

    def run(x, filter_sizes, g, relu_output=None):
        check4(x, "input")
        check4(g, "out_backprop")
        f_shape = sizes(filter_sizes, "filter_sizes")
        xn, gn = to_nhwc(x, conv.fmt), to_nhwc(g, conv.fmt)
        geo = conv.geometry(xn.shape, f_shape)
        conv.check_grad(gn, geo, xn.shape[0], f_shape[3])
        mask = None if relu_output is None else to_nhwc(relu_output, conv.fmt)
        return _none_is_an_error(dnnl_conv_grads.conv2d_backprop_filter(
            xn, gn, geo, f_shape, threads, bias=True, relu_output=mask), "filter gradient")
    return run


@cpu_kernel("Conv2DBackpropFilterBias", name="onednn", preference=30, requires=("onednn",),
            applies=filter_bias_applies)
def conv2d_backprop_filter_bias_onednn(node):
    return filter_bias_gradients(node)


def filter_bias_relu_mask_applies(node):
    """`filter_bias_applies`, and the ReLU output to mask with is float32."""
    return dtypes_are(node, F32, (3,)) and filter_bias_applies(node)


@cpu_kernel("Conv2DBackpropFilterBiasReluMask", name="onednn", preference=30,
            requires=("onednn",), applies=filter_bias_relu_mask_applies)
def conv2d_backprop_filter_bias_relu_mask_onednn(node):
    return fused.with_relu_mask(filter_bias_gradients(node))


def input_filter_applies(node):
    """Where the plan would run both member gradients through oneDNN, on one geometry (x of
    input_sizes' shape, the filter of filter_sizes')."""
    shapes = _large(node, (1, 2, 3))
    if shapes is None or not node.out_shapes or len(node.out_shapes) < 2:
        return False
    if (tuple(node.out_shapes[0] or ()) != tuple(node.in_shapes[3])
            or tuple(node.out_shapes[1] or ()) != tuple(node.in_shapes[1])):
        return False
    input_node, filter_node = fused.member_nodes(node)
    return _onednn_chosen(input_node) and _onednn_chosen(filter_node)


@cpu_kernel("Conv2DBackpropInputFilter", name="onednn", preference=30, requires=("onednn",),
            applies=input_filter_applies)
def conv2d_backprop_input_filter_onednn(node):
    """(input gradient, filter gradient(, bias gradient)) with the blocks of both gradients taken
    from one iterator by this thread and the intra-op pool's."""
    conv = Conv(node)
    threads = blas.session_threads(node)
    bias = bool(node.attrs.get("bias_reduction"))

    def conv2d_backprop_input_filter(input_sizes, f, g, x, filter_sizes):
        check4(f, "filter")
        check4(g, "out_backprop")
        check4(x, "input")
        if sizes(input_sizes, "input_sizes") != x.shape \
                or sizes(filter_sizes, "filter_sizes") != f.shape:
            raise ValueError(f"input_sizes and filter_sizes must be the shapes of the input "
                             f"{x.shape} and the filter {f.shape}")
        xn, gn = to_nhwc(x, conv.fmt), to_nhwc(g, conv.fmt)
        geo = conv.geometry(xn.shape, f.shape)
        conv.check_grad(gn, geo, xn.shape[0], f.shape[3])
        grads = _none_is_an_error(dnnl_conv_grads.conv2d_backprop_input_filter(
            gn, f, xn, geo, threads, bias), "input and filter gradient")
        return (from_nhwc(grads[0], conv.fmt), *grads[1:])
    return conv2d_backprop_input_filter
