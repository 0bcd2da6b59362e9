"""CPU kernels of the fusion pass's (`graphflow/optimizer_passes/fusion.py`) convolution ops:
`FusedConv2D`, activation(conv2d(x, filter) + bias), its replacement for Conv2D + BiasAdd/Add
(+ activation), and `Conv2DBackpropFilterBias`, the filter and bias gradients of that sum in one
pass over the output gradient (at the end of this docstring).

Where oneDNN runs the convolution (`dnnl_conv.applies`: float32, large enough), one primitive
computes the whole op: the bias is the convolution primitive's bias argument and Relu, Relu6 and
LeakyRelu are elementwise post-ops (`dnnl.activation_post_ops`), applied to each block of output
while it is still in cache, so the output is written once instead of three times. Those three
compute the same values as graphflow's numpy ones (comparisons and one multiply); the other
activations (transcendental functions, where oneDNN's approximations differ from numpy's in the
last bits) run as the numpy instruction over the primitive's conv + bias result
(`dnnl_fused_matmul.FusedActivation`, shared with FusedMatMul). Elsewhere the Conv2D kernel
(`conv_kernels.py`) runs, then the bias add and the activation in place: the numpy reference the
tests compare with. A small convolution the Conv2D kernel would run gathered (`conv_gather.py`:
below oneDNN's `MIN_MACS`, as at batch 1) goes there directly, the route decided once per input
shapes instead of by the Conv2D kernel's checks on every call (the digits CNN at batch 1: a step of
0.076 ms became 0.062 ms with this and FusedMatMul's bias check made once per shapes). An NHWC
convolution with few filter taps (a first layer on 1-4 channels) and no activation or a Relu runs
as one compiled loop with the bias and Relu inside (`jit_conv.py`, with numba; for at most 9
taps up to 2^20 outputs, the digits CNN's 8x8x1 -> 32 to batch 512); a gathered one adds the
bias and applies a Relu in one compiled pass (`jit_small.add_bias`). Where oneDNN is loaded, a
small NHWC float32 one runs instead as one oneDNN primitive with the bias and post-ops, its memory
objects made once per thread
(`dnnl_small_conv.py`: the digits CNN's 8x8x32 -> 32 at batch 1 14.5 -> 7-8 us as an op; its
values are oneDNN's sums, equal to the gathered product's to float32 rounding).

Conv2DBackpropFilterBiasReluMask (the same of `where(y > 0, dy, 0)`, a first layer's ReLU
gradient): where oneDNN runs, each block of dy is masked right before its primitive reads it, into
a buffer of the thread that runs it, so the masked dy is never written out whole and read back
(`dnnl_conv_grads.conv2d_backprop_filter`); elsewhere the mask, then the Conv2DBackpropFilterBias
kernel.

Conv2DBackpropInputFilter (a hidden layer's input gradient with its filter and bias gradients):
where oneDNN runs both, their blocks of images share the cores
(`dnnl_conv_grads.conv2d_backprop_input_filter`); elsewhere the two kernels in turn.

Conv2DBackpropFilterBias: where oneDNN runs the filter gradient (the Conv2DBackpropFilter kernel's
own test: float32, large enough, a geometry it implements), the thread that runs the primitive on a
block of images sums that block's dy just before (with numba one compiled pass, float64 sums,
`conv_dy_pass`, also on the OpenMP team; without it one BLAS ones @ dy right after), the blocks
summed in order (`dnnl_conv_grads.conv2d_backprop_filter`): the bias gradient's pass over dy is
shared out with the filter gradient's blocks instead of running as an op of its own. The filter
gradient is the Conv2DBackpropFilter kernel's bits (the same primitive; the tests check it); the
bias gradient sums in another order than the unfused Sum kernel (one BLAS ones @ dy over the whole
batch) or BiasAddGrad (numpy's sum): float32 rounding differs, within 5e-7 of sum(|dy|) per
channel (the tests' bound; measured on the CNN benchmarks' layers with the BLAS sums: within 3e-8
of the exact one, the Sum kernel's within 2.2e-8, BiasAddGrad's within 1.6e-7; the float64 sums
are rounded once). Elsewhere the
two kernels the op replaced run one after the other: the Conv2DBackpropFilter kernel and the kernel
of the `bias_reduction` op (Sum over the non-channel axes, or BiasAddGrad), the unfused graph's
exact bits: the reference the tests compare with.
"""

import numpy as np

from graphflow.kernels import KernelNode
from graphflow.kernels.cpu import choose, cpu_kernel
from graphflow.kernels.cpu.blocked import conv_gather, conv_taps
from graphflow.kernels.cpu.numba import jit_conv, jit_small
from graphflow.kernels.cpu.onednn import dnnl_conv, dnnl_conv_grads, dnnl_small_conv
from graphflow.kernels.cpu.onednn.dnnl_fused_matmul import FusedActivation
from graphflow.kernels.cpu.reference import conv_kernels
from graphflow.kernels.cpu.reference.fused_kernels import member_error
from graphflow.kernels.cpu.threads import blas
from graphflow.ops import fused_ops

LOOP, GATHER, BOUND = "loop", "gather", "bound"  # the routes of a small convolution
# Small NHWC float32 convolutions run as one oneDNN primitive bound once per thread
# (`dnnl_small_conv.py`) where oneDNN is loaded; False keeps them on the gathered product.
SMALL_DNNL = True


@cpu_kernel("FusedConv2D")
def _fused_conv2d(node):
    conv = conv_kernels._Conv(node)
    plain_conv = conv_kernels._conv2d(node)  # the Conv2D kernel (oneDNN or numpy)
    threads = blas.session_threads(node)
    activation = FusedActivation(node.attrs.get("activation", ""),
                                 node.attrs.get("activation_attrs"), node.out_dtypes[0])
    channel_axis = -1 if conv.fmt == "NHWC" else 1

    def through_dnnl(x, f, bias):
        """(the oneDNN result, True) (post-ops applied), or (None, False) where it does not run."""
        if x.ndim != 4 or f.ndim != 4 or bias.shape != f.shape[3:]:
            return None, False
        xn = conv_kernels._to_nhwc(x, conv.fmt)
        geo = conv.geometry(xn.shape, f.shape)
        if not dnnl_conv.applies(xn, f, bias, macs=dnnl_conv.conv_macs(xn.shape[0], geo,
                                                                         *f.shape[2:])) \
                or conv_kernels.taps_forward(geo, *f.shape[2:]):
            return None, False
        out = dnnl_conv.conv2d(xn, f, geo, threads, bias, activation.post_ops)
        if out is None:
            return None, False
        return conv_kernels._from_nhwc(out, conv.fmt), True

    small = {}  # shapes, dtypes and settings -> (route, Geometry) of a small convolution, or None
    loop_activation = activation.relu_or_none is not False
    relu = activation.relu_or_none is True

    def small_route(x, f, bias):
        """(LOOP, geometry, its `jit_conv.Prepared`) where the compiled loop of `jit_conv` runs the
        whole op (few filter taps, NHWC, no activation or Relu); (BOUND, geometry, its primitive)
        where the Conv2D kernel would run `conv_gather` (small, below oneDNN's minimum) on NHWC
        float32 operands and `dnnl_small_conv` has a primitive for them; (GATHER, geometry) where
        the Conv2D kernel would run `conv_gather` and the bias fits; else None. Once per shapes."""
        key = (x.shape, x.dtype, f.shape, f.dtype, bias.shape, bias.dtype, conv_kernels.BLOCKED,
               dnnl_conv.MIN_MACS, SMALL_DNNL)
        try:
            return small[key]
        except KeyError:
            pass
        route = None
        if (x.ndim == 4 and f.ndim == 4 and bias.shape == f.shape[3:]
                and x.shape[channel_axis] == f.shape[2]):
            xn_shape = x.shape if conv.fmt == "NHWC" else (x.shape[0],) + x.shape[2:] + x.shape[1:2]
            g = conv.geometry(xn_shape, f.shape)
            if (conv.fmt == "NHWC" and loop_activation and bias.dtype == x.dtype
                    and jit_conv.applies(x, f, g)):
                route = (LOOP, g, jit_conv.Prepared(x, f, g, relu, threads))
            elif (SMALL_DNNL and conv.fmt == "NHWC"
                  and conv_kernels.gathered_below_dnnl(xn_shape[0], g, *f.shape[2:])
                  and dnnl_small_conv.applies(x, f, bias)
                  and (bound := dnnl_small_conv.get(g, x.shape[0], x.shape[3], f.shape[3],
                                                    activation.post_ops)) is not None):
                route = (BOUND, g, bound)
            elif conv_kernels.gathered_below_dnnl(xn_shape[0], g, *f.shape[2:]):
                # with the bias add (and Relu) as one compiled pass where it applies
                out_shape = (xn_shape[0], g.oh, g.ow, f.shape[3])
                route = (GATHER, g, conv.fmt == "NHWC" and loop_activation
                         and jit_small.add_bias_applies(np.empty(out_shape, x.dtype), bias))
        if len(small) >= 16:
            small.clear()
        small[key] = route
        return route

    def fused_conv2d(x, f, bias):
        stage = 0  # the member being computed: conv, bias, activation
        try:
            bias = np.asarray(bias)
            route = small_route(x, f, bias)
            geo = None if route is None else route[1]
            if route is not None and route[0] is LOOP:
                if f.flags.c_contiguous and bias.flags.c_contiguous:
                    return route[2](x, f, bias)
                return jit_conv.conv2d(x, f, geo, bias, relu)
            if route is not None and route[0] is BOUND:  # conv, bias and post-ops in one call
                if not (x.flags.c_contiguous and f.flags.c_contiguous and bias.flags.c_contiguous):
                    x, f, bias = (np.ascontiguousarray(a) for a in (x, f, bias))
                out = route[2](x, f, bias)
                stage = 2
                return activation.finish(out, True)
            if geo is not None:  # what the Conv2D kernel runs, without its per-call checks
                out = conv_kernels._from_nhwc(
                    conv_gather.conv2d(conv_kernels._to_nhwc(x, conv.fmt), f, geo), conv.fmt)
                stage = 1
                if route[2]:  # bias (and Relu) in one compiled pass
                    return jit_small.add_bias(out, bias, relu)
                np.add(out, bias if channel_axis == -1 else bias[:, None, None], out=out)
                by_primitive = False
            else:
                out, by_primitive = through_dnnl(x, f, bias)
            if out is None:
                out = plain_conv(x, f)
                stage = 1
                if bias.ndim != 1 or bias.shape[0] != out.shape[channel_axis]:
                    raise ValueError(f"bias of shape {bias.shape} does not match the "
                                     f"{out.shape[channel_axis]} output channels of the convolution")
                np.add(out, bias if channel_axis == -1 else bias[:, None, None], out=out)
            stage = 2
            return activation.finish(out, by_primitive)
        except Exception as exc:
            raise member_error(exc, node.attrs, stage) from exc
    return fused_conv2d


def _filter_and_bias_gradients(node):
    """`run(x, filter_sizes, g, relu_output=None)`: (filter gradient, bias gradient) of `g`, or of
    `where(relu_output > 0, g, 0)`. Where the Conv2DBackpropFilter kernel would run oneDNN, one
    primitive per block of images with the bias sums (and the mask) beside it
    (`dnnl_conv_grads.conv2d_backprop_filter`); elsewhere the mask, then the Conv2DBackpropFilter
    kernel and the kernel of the `bias_reduction` op."""
    conv = conv_kernels._Conv(node)
    threads = blas.session_threads(node)
    filter_grad = conv_kernels._conv2d_backprop_filter(node)  # the Conv2DBackpropFilter kernel
    reduction = _bias_reduction_node(node)
    bias_grad = choose(reduction).build(reduction)

    def run(x, filter_sizes, g, relu_output=None):
        if x.ndim == 4 and g.ndim == 4:
            f_shape = conv_kernels._sizes(filter_sizes, "filter_sizes")
            xn, gn = conv_kernels._to_nhwc(x, conv.fmt), conv_kernels._to_nhwc(g, conv.fmt)
            geo = conv.geometry(xn.shape, f_shape)
            if (gn.shape == (xn.shape[0], geo.oh, geo.ow, f_shape[3]) and 0 not in f_shape
                    and (relu_output is None or relu_output.dtype == np.float32)
                    and dnnl_conv.applies(xn, gn, macs=dnnl_conv.conv_macs(xn.shape[0], geo,
                                                                           *f_shape[2:]))):
                mask = None if relu_output is None else conv_kernels._to_nhwc(relu_output,
                                                                              conv.fmt)
                both = dnnl_conv_grads.conv2d_backprop_filter(xn, gn, geo, f_shape, threads,
                                                              bias=True, relu_output=mask)
                if both is not None:
                    return both
        if relu_output is not None:
            g = np.where(relu_output > 0, g, g.dtype.type(0))
        return filter_grad(x, filter_sizes, g), bias_grad(g)
    return run


@cpu_kernel("Conv2DBackpropFilterBias")
def _conv2d_backprop_filter_bias(node):
    return _filter_and_bias_gradients(node)


@cpu_kernel("Conv2DBackpropFilterBiasReluMask")
def _conv2d_backprop_filter_bias_relu_mask(node):
    """Conv2DBackpropFilterBias of `where(y > 0, dy, 0)`: where oneDNN runs the filter gradient,
    each block of dy is masked by the thread that then runs the block's primitive (the masked
    block read from the cache, `dnnl_conv_grads.conv2d_backprop_filter`); elsewhere the mask, then
    the Conv2DBackpropFilterBias kernels (the same values either way: the same blocks)."""
    gradients = _filter_and_bias_gradients(node)

    def conv2d_backprop_filter_bias_relu_mask(x, filter_sizes, g, y):
        if y.shape != g.shape:
            raise ValueError(f"the ReLU output's shape {y.shape} does not match out_backprop's "
                             f"{g.shape}")
        return gradients(x, filter_sizes, g, y)
    return conv2d_backprop_filter_bias_relu_mask


@cpu_kernel("Conv2DBackpropInputFilter")
def _conv2d_backprop_input_filter(node):
    """(Conv2DBackpropInput(input_sizes, f, dy), *Conv2DBackpropFilterBias(x, filter_sizes, dy)),
    or without a `bias_reduction` (Conv2DBackpropInput(...), Conv2DBackpropFilter(x, filter_sizes,
    dy)). Where oneDNN would run both gradients (the two kernels' own tests) on one geometry (x of
    input_sizes' shape, f of filter_sizes'), their blocks of images share the cores
    (`dnnl_conv_grads.conv2d_backprop_input_filter`: the same bits as the two kernels);
    elsewhere the Conv2DBackpropInput kernel, then the filter gradient's."""
    conv = conv_kernels._Conv(node)
    threads = blas.session_threads(node)
    bias = bool(node.attrs.get("bias_reduction"))
    input_node, filter_node = _member_nodes(node, bias)
    input_grad = conv_kernels._conv2d_backprop_input(input_node)
    if bias:
        filter_grads = _filter_and_bias_gradients(filter_node)
    else:
        filter_grad = conv_kernels._conv2d_backprop_filter(filter_node)

        def filter_grads(x, filter_sizes, g):
            return (filter_grad(x, filter_sizes, g),)

    def shared(input_sizes, f, g, x, filter_sizes):
        """The gradients with shared cores, or None where that route does not apply."""
        if not (f.ndim == g.ndim == x.ndim == 4 and f.dtype == g.dtype == x.dtype == np.float32):
            return None
        sizes = conv_kernels._sizes(input_sizes, "input_sizes")
        if tuple(sizes) != x.shape or conv_kernels._sizes(filter_sizes, "filter_sizes") != f.shape:
            return None
        xn, gn = conv_kernels._to_nhwc(x, conv.fmt), conv_kernels._to_nhwc(g, conv.fmt)
        n, _, _, c = xn.shape
        geo = conv.geometry(xn.shape, f.shape)
        if (gn.shape != (n, geo.oh, geo.ow, f.shape[3]) or 0 in f.shape
                or (conv_kernels.BLOCKED and conv_taps.input_grad_applies(geo, c, f.shape[3]))
                or not dnnl_conv.applies(f, gn, xn,
                                         macs=dnnl_conv.conv_macs(n, geo, c, f.shape[3]))):
            return None
        grads = dnnl_conv_grads.conv2d_backprop_input_filter(gn, f, xn, geo, threads, bias)
        if grads is None:
            return None
        return (conv_kernels._from_nhwc(grads[0], conv.fmt), *grads[1:])

    def conv2d_backprop_input_filter(input_sizes, f, g, x, filter_sizes):
        grads = shared(input_sizes, f, g, x, filter_sizes)
        if grads is not None:
            return grads
        return (input_grad(input_sizes, f, g), *filter_grads(x, filter_sizes, g))
    return conv2d_backprop_input_filter


def _member_nodes(node, bias):
    """The kernel nodes of Conv2DBackpropInputFilter's two parts: (Conv2DBackpropInput
    (input_sizes, filter, dy) -> dx, Conv2DBackpropFilterBias(x, filter_sizes, dy) -> df, db, or
    without `bias`, Conv2DBackpropFilter(x, filter_sizes, dy) -> df)."""
    attrs = node.attrs
    conv_attrs = {k: attrs[k] for k in ("strides", "padding", "data_format", "dilations")
                  if k in attrs}
    shapes = node.out_shapes
    dtypes = node.in_dtypes
    input_node = KernelNode(node.name, "Conv2DBackpropInput", conv_attrs, dtypes[:3],
                            node.out_dtypes[:1], shapes[:1] if shapes else None, node.state)
    filter_node = KernelNode(node.name, "Conv2DBackpropFilterBias" if bias else
                             "Conv2DBackpropFilter", attrs if bias else conv_attrs,
                             (dtypes[3], dtypes[4], dtypes[2]), node.out_dtypes[1:],
                             shapes[1:] if shapes else None, node.state)
    return input_node, filter_node


def _bias_reduction_node(node):
    """The kernel node of the op whose value output 1 is (`bias_reduction`)."""
    reduction = node.attrs["bias_reduction"]
    attrs = fused_ops.bias_reduction_attrs(reduction, node.attrs.get("data_format") or "NHWC")
    return KernelNode(node.name, reduction, attrs, node.in_dtypes[2:3], node.out_dtypes[1:],
                      node.out_shapes[1:] if node.out_shapes else None, node.state)
