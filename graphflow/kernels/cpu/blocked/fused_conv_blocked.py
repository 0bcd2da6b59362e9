"""The fusion pass's convolution ops on the numpy convolutions of this package, and the gradient ops
as their members' chosen kernels.

FusedConv2D, activation(conv2d(x, f) + bias): the convolution of Conv2D's "gather", "taps" or
"blocked" implementation (chosen by the same predicates and preferences as Conv2D's), then the bias
add and the activation, the unfused graph's bits. A gathered convolution (small, below oneDNN's
minimum: the digits CNN at batch 1) in NHWC with no activation or a Relu adds the bias and applies
the Relu in one compiled pass where numba is installed (`jit_small.add_bias`; a [64, 32] output
1.9 -> 0.5 us, the same values as numpy's add and maximum). Where the FusedConv2D node's shapes
fit the few-tap compiled loop (`numba/jit_conv.py`) or a bound oneDNN primitive
(`onednn/dnnl_small_conv.py`), or oneDNN runs the convolution with the bias and post-ops
(`onednn/dnnl_conv_ops.py`), those implementations are preferred.

Conv2DBackpropFilterBias(ReluMask) and Conv2DBackpropInputFilter, "members": the kernels the plan
chooses for the ops each replaced (Conv2DBackpropInput, Conv2DBackpropFilter and the
`bias_reduction` op, Sum or BiasAddGrad), one after the other: the unfused graph's exact bits. The
oneDNN implementations that share one pass over dy (or the cores) are preferred where they apply.
"""

import numpy as np

from graphflow.kernels.cpu import choose, cpu_kernel
from graphflow.kernels.cpu.blocked import conv_blocked, conv_gather, conv_taps
from graphflow.kernels.cpu.numba import fused_jit, jit_small
from graphflow.kernels.cpu.reference import fused_conv_kernels as fused
from graphflow.kernels.cpu.reference.fused_matmul_kernels import activation_of
from graphflow.kernels.cpu.threads import blas

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _activation(node):
    """The node's activation as the unfused op computes it (a float32 Sigmoid: the compiled row of
    its "numba" implementation, where the plan may choose that), so fused and unfused bits agree."""
    return activation_of(node, fused_jit.usable_kernel_function())


def _bias_loop(node):
    """`add_bias(out, bias)` adding the bias (and a Relu) in one compiled pass, or None where it
    does not apply to this node (NCHW, another activation, dtypes) or numba is missing."""
    activation = activation_of(node)
    dtypes = node.in_dtypes or ()
    if ((node.attrs.get("data_format") or "NHWC") != "NHWC" or activation.relu_or_none is False
            or len(dtypes) < 3 or np.dtype(node.out_dtypes[0]) not in _FLOATS
            or np.dtype(dtypes[2]) != np.dtype(node.out_dtypes[0])
            or jit_small.loops() is None):
        return None
    relu = activation.relu_or_none is True

    def add_bias(out, bias):
        if bias.dtype != out.dtype or not out.flags.c_contiguous:
            return False  # numpy's add (then the activation), the same values
        jit_small.add_bias(out, bias, relu)
        return True
    return add_bias


@cpu_kernel("FusedConv2D", name="gather", preference=20, applies=conv_gather.conv2d_applies)
def fused_conv2d_gathered(node):
    add_bias = _bias_loop(node)
    if add_bias is None:
        return fused.fused_conv2d_kernel(node, conv=conv_gather.conv2d,
                                         activation=_activation(node))

    def add(out, bias):
        if add_bias(out, bias):
            return True
        np.add(out, bias, out=out)  # (NHWC)
        return False
    return fused.fused_conv2d_kernel(node, conv=conv_gather.conv2d, add_bias=add,
                                     activation=_activation(node))


@cpu_kernel("FusedConv2D", name="taps", preference=40, applies=conv_taps.forward_node_applies)
def fused_conv2d_taps(node):
    return fused.fused_conv2d_kernel(node, conv=conv_taps.forward(blas.session_threads(node)),
                                     activation=_activation(node))


@cpu_kernel("FusedConv2D", name="blocked", preference=10)
def fused_conv2d_blocked(node):
    return fused.fused_conv2d_kernel(node, conv=conv_blocked.forward(blas.session_threads(node)),
                                     activation=_activation(node))


# ---------------------------------------------------------------- gradients: the members' kernels
def _chosen(node):
    return choose(node).build(node)


def _filter_bias_members(node):
    return fused.filter_bias_kernel(node, _chosen(fused.filter_member_node(node)),
                                    _chosen(fused.bias_reduction_node(node)))


@cpu_kernel("Conv2DBackpropFilterBias", name="members", preference=10)
def conv2d_backprop_filter_bias_members(node):
    return _filter_bias_members(node)


@cpu_kernel("Conv2DBackpropFilterBiasReluMask", name="members", preference=10)
def conv2d_backprop_filter_bias_relu_mask_members(node):
    return fused.with_relu_mask(_filter_bias_members(node))


@cpu_kernel("Conv2DBackpropInputFilter", name="members", preference=10)
def conv2d_backprop_input_filter_members(node):
    input_node, filter_node = fused.member_nodes(node)
    if filter_node.attrs.get("bias_reduction"):  # Conv2DBackpropFilterBias
        filter_grads = _filter_bias_members(filter_node)
    else:
        filter_grads = fused.only_filter_grad(_chosen(filter_node))
    return fused.input_filter_kernel(_chosen(input_node), filter_grads)
