"""Convolution on the GPU (conv.cu, GEMMs of matmul.cu), NHWC layout; pooling is in pool.py.

Conv2D is im2col + GEMM: col [N*OH*OW, KH*KW*C] @ filter [KH*KW*C, OC] is the NHWC output (a 1x1,
stride-1, unpadded convolution skips im2col: the input already is col). Its backprops are
dcol = dout @ filter^T then col2im (a gather, no atomics), and dfilter = col^T @ dout accumulated
over batch chunks (beta = 1). The batch is processed in chunks so that the col buffer stays under
`COL_BYTES`. NCHW graphs run these ops on the CPU (the placement report says so). FusedConv2D
is Conv2D followed by one generated elementwise kernel (bias + activation), as FusedMatMul is;
Conv2DBackpropFilterBias is the Conv2DBackpropFilter kernel and the bias gradient as the Sum
kernel's reduction of dy over its non-channel axes (`reduce.Reducer`): the same two launches as the
unfused ops, so CUDA plans of a fused graph run as before.
"""

import numpy as np

from graphflow.kernels.cuda import FLOAT_DTYPES, cuda_kernel, runtime
from graphflow.kernels.cuda.elementwise import kernel_for
from graphflow.kernels.cuda.launch import SUFFIX, launch_1d
from graphflow.kernels.cuda.matmul import activation_supported, bias_activation_epilogue, gemm
from graphflow.kernels.cuda.reduce import Reducer

COL_BYTES = 256 << 20


def axis_geometry(size, k, s, d, padding):
    """(output size, padding before) along one spatial dim, TF's SAME/VALID rules."""
    effective = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + effective - size, 0)
        return out, total // 2
    if size < effective:
        raise ValueError(f"the window ({effective}) is larger than the input ({size}) with VALID "
                         "padding")
    return (size - effective) // s + 1, 0


def nhwc_only(in_dtypes, out_dtypes, attrs):
    if attrs.get("data_format", "NHWC") != "NHWC":
        return "the CUDA kernels take NHWC data (data_format NCHW runs on the CPU)"
    return None


class ConvGeometry:
    def __init__(self, attrs, x_shape, f_shape):
        n, h, w, c = x_shape
        kh, kw, ki, oc = f_shape
        if c != ki:
            raise ValueError(f"input has {c} channels but the filter expects {ki} "
                             f"(filter shape {list(f_shape)})")
        sh, sw = attrs["strides"][1:3]
        dh, dw = (attrs.get("dilations") or [1, 1, 1, 1])[1:3]
        oh, pt = axis_geometry(h, kh, sh, dh, attrs["padding"])
        ow, pl = axis_geometry(w, kw, sw, dw, attrs["padding"])
        self.n, self.h, self.w, self.c, self.oc = n, h, w, c, oc
        self.oh, self.ow, self.kh, self.kw = oh, ow, kh, kw
        self.sh, self.sw, self.dh, self.dw, self.pt, self.pl = sh, sw, dh, dw, pt, pl
        self.kkc = kh * kw * c
        self.trivial = kh == kw == 1 and sh == sw == 1 and pt == pl == 0

    def packed(self, n):
        return np.array([n, self.h, self.w, self.c, self.oh, self.ow, self.kh, self.kw, self.sh,
                         self.sw, self.dh, self.dw, self.pt, self.pl, 0, 0], np.int64).tobytes()

    def chunk(self, itemsize):
        per_image = self.oh * self.ow * self.kkc * itemsize
        return max(1, min(self.n, COL_BYTES // max(per_image, 1)))


def dims(shape_array):
    return tuple(int(d) for d in np.asarray(shape_array).reshape(-1))


@cuda_kernel("Conv2D", dtypes=(np.float32, np.float64), supports=nhwc_only)
def _conv2d(node):
    rt, attrs = runtime(), node.attrs
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def conv2d(x, f):
        g = ConvGeometry(attrs, x.shape, f.shape)
        out = rt.empty((g.n, g.oh, g.ow, g.oc), x.dtype)
        if out.size == 0:
            return out
        if g.kkc == 0:
            return rt.fill(out, 0)
        size = x.dtype.itemsize
        step = g.chunk(size)
        col = None if g.trivial else rt.empty((step * g.oh * g.ow, g.kkc), x.dtype)
        im2col = rt.kernel("conv.cu", f"gf_im2col_{t}", "PP128s")
        for n0 in range(0, g.n, step):
            n = min(step, g.n - n0)
            pix = n * g.oh * g.ow
            x_addr = int(x.gpudata) + n0 * g.h * g.w * g.c * size
            if g.trivial:
                a_addr = x_addr
            else:
                launch_1d(rt, im2col, pix * g.kkc, np.uintp(x_addr), int(col.gpudata), g.packed(n))
                a_addr = int(col.gpudata)
            gemm(rt, x.dtype, a_addr, int(f.gpudata), int(out.gpudata) + n0 * g.oh * g.ow * g.oc * size,
                 pix, g.oc, g.kkc)
        return out
    return conv2d


def supports_float_nhwc(in_dtypes, out_dtypes, attrs):
    """None when the backprop kernels can run this op, else the reason they cannot."""
    return nhwc_only(in_dtypes, out_dtypes, attrs) or (
        None if out_dtypes[0] in FLOAT_DTYPES else f"no CUDA kernel for {out_dtypes[0].name}")


def _check_out_backprop(dy, g):
    if dy.shape != (g.n, g.oh, g.ow, g.oc):
        raise ValueError(f"out_backprop has shape {dy.shape}, expected "
                         f"{(g.n, g.oh, g.ow, g.oc)} (NHWC)")


@cuda_kernel("Conv2DBackpropInput", dtypes=(np.float32, np.float64, np.int32), host_inputs=(0,),
             supports=supports_float_nhwc)
def _conv2d_backprop_input(node):
    rt, attrs = runtime(), node.attrs
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def conv2d_backprop_input(input_sizes, f, dy):
        x_shape = dims(input_sizes)
        g = ConvGeometry(attrs, x_shape, f.shape)
        _check_out_backprop(dy, g)
        dx = rt.empty(x_shape, dy.dtype)
        if dx.size == 0:
            return dx
        if dy.size == 0 or g.oc == 0:
            return rt.fill(dx, 0)
        size = dy.dtype.itemsize
        step = g.chunk(size)
        dcol = None if g.trivial else rt.empty((step * g.oh * g.ow, g.kkc), dy.dtype)
        col2im = rt.kernel("conv.cu", f"gf_col2im_{t}", "PP128s")
        for n0 in range(0, g.n, step):
            n = min(step, g.n - n0)
            pix = n * g.oh * g.ow
            dx_addr = int(dx.gpudata) + n0 * g.h * g.w * g.c * size
            dy_addr = int(dy.gpudata) + n0 * g.oh * g.ow * g.oc * size
            target = dx_addr if g.trivial else int(dcol.gpudata)
            gemm(rt, dy.dtype, dy_addr, int(f.gpudata), target, pix, g.kkc, g.oc, tb=True)
            if not g.trivial:
                launch_1d(rt, col2im, n * g.h * g.w * g.c, int(dcol.gpudata), np.uintp(dx_addr),
                          g.packed(n))
        return dx
    return conv2d_backprop_input


@cuda_kernel("Conv2DBackpropFilter", dtypes=(np.float32, np.float64, np.int32), host_inputs=(1,),
             supports=supports_float_nhwc)
def _conv2d_backprop_filter(node):
    rt, attrs = runtime(), node.attrs
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def conv2d_backprop_filter(x, filter_sizes, dy):
        f_shape = dims(filter_sizes)
        g = ConvGeometry(attrs, x.shape, f_shape)
        _check_out_backprop(dy, g)
        df = rt.empty(f_shape, x.dtype)
        if df.size == 0:
            return df
        if dy.size == 0:
            return rt.fill(df, 0)
        size = x.dtype.itemsize
        step = g.chunk(size)
        col = None if g.trivial else rt.empty((step * g.oh * g.ow, g.kkc), x.dtype)
        im2col = rt.kernel("conv.cu", f"gf_im2col_{t}", "PP128s")
        for i, n0 in enumerate(range(0, g.n, step)):
            n = min(step, g.n - n0)
            pix = n * g.oh * g.ow
            x_addr = int(x.gpudata) + n0 * g.h * g.w * g.c * size
            if g.trivial:
                a_addr = x_addr
            else:
                launch_1d(rt, im2col, pix * g.kkc, np.uintp(x_addr), int(col.gpudata), g.packed(n))
                a_addr = int(col.gpudata)
            gemm(rt, x.dtype, a_addr, int(dy.gpudata) + n0 * g.oh * g.ow * g.oc * size,
                 int(df.gpudata), g.kkc, g.oc, pix, ta=True, beta=0.0 if i == 0 else 1.0)
        return df
    return conv2d_backprop_filter


@cuda_kernel("Conv2DBackpropFilterBias", dtypes=(np.float32, np.float64, np.int32), host_inputs=(1,),
             supports=supports_float_nhwc)
def _conv2d_backprop_filter_bias(node):
    """(Conv2DBackpropFilter(x, filter_sizes, dy), dy summed over N, H, W): the filter gradient
    kernel, then one reduction of dy (what the Sum and BiasAddGrad kernels launch)."""
    filter_grad = _conv2d_backprop_filter(node)
    reducer = Reducer(runtime(), "sum", node.out_dtypes[1])

    def conv2d_backprop_filter_bias(x, filter_sizes, dy):
        df = filter_grad(x, filter_sizes, dy)
        return df, reducer(dy, (0, 1, 2), (dy.shape[3],))
    return conv2d_backprop_filter_bias


@cuda_kernel("Conv2DBackpropInputFilter", dtypes=(np.float32, np.float64, np.int32),
             host_inputs=(0, 4), supports=supports_float_nhwc)
def _conv2d_backprop_input_filter(node):
    """(Conv2DBackpropInput(input_sizes, f, dy), *Conv2DBackpropFilterBias(x, filter_sizes, dy)),
    or without a `bias_reduction` the Conv2DBackpropFilter kernel's one output: the kernels one
    after the other (the GPU runs each on all its cores already)."""
    input_grad = _conv2d_backprop_input(node)
    if node.attrs.get("bias_reduction"):
        filter_grads = _conv2d_backprop_filter_bias(node)
    else:
        filter_grad = _conv2d_backprop_filter(node)

        def filter_grads(x, filter_sizes, dy):
            return (filter_grad(x, filter_sizes, dy),)

    def conv2d_backprop_input_filter(input_sizes, f, dy, x, filter_sizes):
        return (input_grad(input_sizes, f, dy), *filter_grads(x, filter_sizes, dy))
    return conv2d_backprop_input_filter


def _relu_mask_program(dtype):
    """where(y > 0, g, 0) over inputs (g, y) of `dtype`, as one elementwise program."""
    name = np.dtype(dtype).name
    return {"version": 1, "inputs": [name, name],
            "instructions": [["Const", [], {"value": 0}, name],
                             ["Greater", [1, 2], {}, "bool"],
                             ["Select", [3, 0, 2], {}, name]],
            "output": 4}


@cuda_kernel("Conv2DBackpropFilterBiasReluMask", dtypes=(np.float32, np.float64, np.int32),
             host_inputs=(1,), supports=supports_float_nhwc)
def _conv2d_backprop_filter_bias_relu_mask(node):
    """Conv2DBackpropFilterBias of where(y > 0, dy, 0): the mask as one generated elementwise
    kernel (what the unfused Select, Greater and zero launch as one fused group), then the
    Conv2DBackpropFilterBias kernel."""
    both = _conv2d_backprop_filter_bias(node)
    mask = kernel_for(_relu_mask_program(node.out_dtypes[0]))

    def conv2d_backprop_filter_bias_relu_mask(x, filter_sizes, dy, y):
        if tuple(y.shape) != tuple(dy.shape):
            raise ValueError(f"the ReLU output's shape {tuple(y.shape)} does not match "
                             f"out_backprop's {tuple(dy.shape)}")
        return both(x, filter_sizes, mask(dy, y)[0])
    return conv2d_backprop_filter_bias_relu_mask


def _fused_conv2d_supported(in_dtypes, out_dtypes, attrs):
    reason = nhwc_only(in_dtypes, out_dtypes, attrs)
    return reason if reason is not None else activation_supported(out_dtypes, attrs)


@cuda_kernel("FusedConv2D", dtypes=(np.float32, np.float64), supports=_fused_conv2d_supported)
def _fused_conv2d(node):
    """activation(conv2d(x, f) + bias): the Conv2D kernel, then one generated kernel for the
    per-channel bias (broadcast over the NHWC output's last axis) and the activation."""
    conv = _conv2d(node)
    epilogue = bias_activation_epilogue(node)

    def fused_conv2d(x, f, bias):
        if len(bias.shape) != 1 or bias.shape[0] != f.shape[3]:
            raise ValueError(f"bias of shape {tuple(bias.shape)} does not match the {f.shape[3]} "
                             "output channels of the convolution")
        return epilogue(conv(x, f), bias)
    return fused_conv2d
