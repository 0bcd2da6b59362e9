"""Cases for the fused ops the fusion pass builds (FusedElementwise, FusedMatMul, FusedConv2D,
Conv2DBackpropFilterBias, Conv2DBackpropFilterBiasReluMask, FusedMaxPoolGradReluMask).
They have no gradient (fusion runs on a plan's copy, after gradients were built), so `grad=False`.

The float32 FusedConv2D cases are large enough for oneDNN (`dnnl_conv.MIN_MACS`) where it is
installed: bias and Relu/LeakyRelu as the primitive's bias and post-op, Tanh in numpy after it; the
float64 ones run the numpy Conv2D kernel, bias add and activation.

The Conv2DBackpropFilterBias cases compare both outputs with the float64 loop references of the
filter gradient and of the bias gradient (dy summed over all but its channel axis); the float32
ones over oneDNN's threshold take the primitive's diff-bias path where oneDNN is installed.

The FusedElementwise cases cover both evaluation modes of the CPU kernel: whole arrays (small) and
chunked (several chunks of `CHUNK_ELEMENTS` and a partial one), with broadcasting inputs.

The FusedMaxPoolGradReluMask cases take inputs half negative (the mask drops their gradient):
small float64 ones (numpy kernels), and float32 ones over the compiled loops' threshold
(`jit_pool.MIN_ELEMENTS` pooled elements: the compiled mask pass, then oneDNN or the loops).
"""

import numpy as np

import graphflow as tf
from graphflow.kernels.cpu.reference.fused_kernels import CHUNK_ELEMENTS
from graphflow.ops import fused_ops
from tests.op_cases import OpCase, rand
from tests.op_cases.nn_cases import (
    _conv_filter_grad_ref,
    _conv_input_grad_ref,
    _conv_ref,
    _distinct,
    _max_pool_grad_ref,
    _nchw,
    _nhwc,
    _pads,
    _pooled_shape,
)

f32 = np.float32


def _program(inputs, instructions, output=None):
    n = len(inputs)
    return {"version": 1, "inputs": inputs, "instructions": instructions,
            "output": n + len(instructions) - 1 if output is None else output}


# tanh(x * 1.5 + 0.25) * 0.5 + relu(x) - exp(-x * x): the benchmark expression
BENCH_PROGRAM = _program(["float32"], [
    ["Const", [], {"value": 1.5}, "float32"],   # 1
    ["Mul", [0, 1], {}, "float32"],              # 2
    ["Const", [], {"value": 0.25}, "float32"],  # 3
    ["Add", [2, 3], {}, "float32"],              # 4
    ["Tanh", [4], {}, "float32"],                # 5
    ["Const", [], {"value": 0.5}, "float32"],   # 6
    ["Mul", [5, 6], {}, "float32"],              # 7
    ["Relu", [0], {}, "float32"],                # 8
    ["Add", [7, 8], {}, "float32"],              # 9
    ["Mul", [0, 0], {}, "float32"],              # 10
    ["Neg", [10], {}, "float32"],                # 11
    ["Exp", [11], {}, "float32"],                # 12
    ["Sub", [9, 12], {}, "float32"],             # 13
])


def bench_reference(x):
    x = x.astype(f32)
    return np.tanh(x * f32(1.5) + f32(0.25)) * f32(0.5) + np.maximum(x, 0) - np.exp(-x * x)


# where(a > b, sigmoid(a) * b, relu6(a - b) + cast(a > 0, float)), with b broadcast along rows
MIXED_PROGRAM = _program(["float64", "float64"], [
    ["Greater", [0, 1], {}, "bool"],             # 2
    ["Sigmoid", [0], {}, "float64"],             # 3
    ["Mul", [3, 1], {}, "float64"],              # 4
    ["Sub", [0, 1], {}, "float64"],              # 5
    ["Relu6", [5], {}, "float64"],               # 6
    ["Const", [], {"value": 0.0}, "float64"],   # 7
    ["Greater", [0, 7], {}, "bool"],             # 8
    ["Cast", [8], {"DstT": "float64"}, "float64"],  # 9
    ["Add", [6, 9], {}, "float64"],              # 10
    ["Select", [2, 4, 10], {}, "float64"],       # 11
])


def mixed_reference(a, b):
    sig = 1 / (1 + np.exp(-a))
    return np.where(a > b, sig * b, np.minimum(np.maximum(a - b, 0), 6) + (a > 0))


# (x mod 7) * y + 3 over int32, with an outer-product broadcast (rows x 1) * (1 x cols)
INT_PROGRAM = _program(["int32", "int32"], [
    ["Const", [], {"value": 7}, "int32"],        # 2
    ["FloorMod", [0, 2], {}, "int32"],           # 3
    ["Mul", [3, 1], {}, "int32"],                # 4
    ["Const", [], {"value": 3}, "int32"],        # 5
    ["Add", [4, 5], {}, "int32"],                # 6
])

# leaky_relu(softsign(x), 0.1) - elu(x) * selu(x): activations that cannot write over their input
ACTIVATIONS_PROGRAM = _program(["float32"], [
    ["Softsign", [0], {}, "float32"],            # 1
    ["LeakyRelu", [1], {"alpha": 0.1}, "float32"],  # 2
    ["Elu", [0], {}, "float32"],                 # 3
    ["Selu", [0], {}, "float32"],                # 4
    ["Mul", [3, 4], {}, "float32"],              # 5
    ["Sub", [2, 5], {}, "float32"],              # 6
])


def activations_reference(x):
    s = x / (1 + np.abs(x))
    leaky = np.where(s > 0, s, s * f32(0.1))
    elu = np.where(x > 0, x, np.expm1(np.minimum(x, 0)))
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    selu = scale * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))
    return leaky - elu * selu


def _fused(program):
    return lambda *xs: fused_ops.fused_elementwise(list(xs), program)


_BIG_ROWS = 2 * (CHUNK_ELEMENTS // 500) + 3  # two chunks of rows and a partial one


def _relu_ref(a, b, bias):
    return np.maximum(a @ b + bias, 0)


CASES = [
    OpCase("FusedElementwise", _fused(BENCH_PROGRAM), [rand(3, 4, dtype=f32)], bench_reference,
           grad=False, name="FusedElementwise[bench,small]"),
    OpCase("FusedElementwise", _fused(BENCH_PROGRAM), [rand(_BIG_ROWS, 500, dtype=f32)],
           bench_reference, grad=False, rtol=2e-6, name="FusedElementwise[bench,chunked]"),
    OpCase("FusedElementwise", _fused(MIXED_PROGRAM), [rand(4, 5), rand(5)], mixed_reference,
           grad=False, name="FusedElementwise[mixed,small]"),
    OpCase("FusedElementwise", _fused(MIXED_PROGRAM), [rand(_BIG_ROWS, 500), rand(500, seed=1)],
           mixed_reference, grad=False, name="FusedElementwise[mixed,chunked]"),
    OpCase("FusedElementwise", _fused(INT_PROGRAM),
           [rand(_BIG_ROWS, 1, dtype=np.int32, low=-50, high=50),
            rand(1, 500, dtype=np.int32, low=-9, high=9)],
           lambda x, y: np.mod(x, 7) * y + 3, grad=False, name="FusedElementwise[int,outer]"),
    OpCase("FusedElementwise", _fused(ACTIVATIONS_PROGRAM), [rand(_BIG_ROWS, 500, dtype=f32)],
           activations_reference, grad=False, rtol=2e-6, atol=1e-6,
           name="FusedElementwise[activations,chunked]"),
    OpCase("FusedMatMul", lambda a, b, c: fused_ops.fused_matmul(a, b, c, "Relu"),
           [rand(4, 3), rand(3, 5), rand(5)], _relu_ref, grad=False),
    OpCase("FusedMatMul", lambda a, b, c: fused_ops.fused_matmul(a, b, c, "", transpose_b=True),
           [rand(4, 3), rand(5, 3), rand(1, 5)], lambda a, b, c: a @ b.T + c, grad=False),
    OpCase("FusedMatMul",
           lambda a, b, c: fused_ops.fused_matmul(a, b, c, "LeakyRelu", transpose_a=True,
                                                  activation_attrs={"alpha": 0.3}),
           [rand(3, 4, dtype=f32), rand(3, 6, dtype=f32), rand(6, dtype=f32)],
           lambda a, b, c: np.where(a.T @ b + c > 0, a.T @ b + c, (a.T @ b + c) * f32(0.3)),
           grad=False, rtol=1e-5),
]


def _fused_sum(program, leading, keepdims=False, mean=False):
    return lambda *xs: fused_ops.fused_elementwise_sum(list(xs), program, leading, keepdims, mean)


def _summed(reference, leading, keepdims=False, mean=False):
    def expected(*xs):
        value = np.asarray(reference(*[np.asarray(x, np.float64) for x in xs]))
        axes = tuple(range(leading))
        return value.mean(axes, keepdims=keepdims) if mean else value.sum(axes, keepdims=keepdims)
    return expected


# FusedElementwiseSum: the program's value summed over leading axes; small (one block), and over
# several blocks of `fused_sum_kernels.BLOCK_ELEMENTS` with a partial one, an input broadcast over
# the rows, keepdims and mean
CASES += [
    OpCase("FusedElementwiseSum", _fused_sum(MIXED_PROGRAM, 1), [rand(4, 5), rand(5)],
           _summed(mixed_reference, 1), grad=False, name="FusedElementwiseSum[mixed,small]"),
    OpCase("FusedElementwiseSum", _fused_sum(MIXED_PROGRAM, 2, keepdims=True, mean=True),
           [rand(300, 2000, 3), rand(3, seed=1)], _summed(mixed_reference, 2, True, True),
           grad=False, name="FusedElementwiseSum[mixed,blocks,keepdims,mean]"),
    OpCase("FusedElementwiseSum", _fused_sum(BENCH_PROGRAM, 1), [rand(_BIG_ROWS, 500, dtype=f32)],
           _summed(bench_reference, 1), grad=False, rtol=1e-4, atol=1e-3,
           name="FusedElementwiseSum[bench,float32]"),
]


def _conv_case(x_shape, f_shape, activation, reference, s=(1, 1), padding="SAME",
               data_format="NHWC", dtype=np.float64, act_attrs=None, rtol=1e-5):
    def build(x, f, b):
        strides = [1, 1, *s] if data_format == "NCHW" else [1, *s, 1]
        return fused_ops.fused_conv2d(x, f, b, strides, padding, activation, data_format,
                                      activation_attrs=act_attrs)

    def expected(x, f, b):
        x, f, b = (a.astype(np.float64) for a in (x, f, b))
        if data_format == "NCHW":
            return _nchw(reference(_conv_ref(_nhwc(x), f, s, padding) + b))
        return reference(_conv_ref(x, f, s, padding) + b)
    channels = f_shape[3]
    return OpCase("FusedConv2D", build,
                  # (a small filter keeps float32 sums' rounding within the ONNX round trip's
                  # tolerance against onnxruntime's convolution, which sums in another order)
                  [rand(*x_shape, dtype=dtype), rand(*f_shape, dtype=dtype, low=-0.5, high=0.5,
                                                     seed=7),
                   rand(channels, dtype=dtype, seed=8)],
                  expected, grad=False, rtol=rtol, atol=1e-4,
                  name=f"FusedConv2D[{x_shape}x{f_shape} {activation or 'bias'} s={s} {padding} "
                       f"{data_format} {np.dtype(dtype).name}]")


def _leaky(x):
    return np.where(x > 0, x, x * 0.3)


CASES += [
    _conv_case((2, 5, 6, 3), (3, 3, 3, 4), "Relu", lambda y: np.maximum(y, 0)),
    _conv_case((2, 7, 6, 3), (2, 3, 3, 2), "", lambda y: y, s=(2, 1), padding="VALID"),
    _conv_case((1, 3, 5, 4), (3, 3, 3, 2), "Relu6", lambda y: np.clip(y, 0, 6),
               data_format="NCHW"),
    # float32, over oneDNN's threshold: bias and activation inside the primitive where it runs
    _conv_case((2, 16, 16, 16), (3, 3, 16, 32), "Relu", lambda y: np.maximum(y, 0),
               dtype=f32, rtol=1e-4),
    _conv_case((2, 16, 16, 16), (3, 3, 16, 32), "LeakyRelu", _leaky, dtype=f32,
               act_attrs={"alpha": 0.3}, rtol=1e-4),
    _conv_case((4, 17, 15, 16), (3, 3, 16, 32), "Tanh", np.tanh, s=(2, 2), dtype=f32, rtol=1e-4),
    _conv_case((2, 32, 16, 16), (3, 3, 32, 16), "Relu6", lambda y: np.clip(y, 0, 6),
               data_format="NCHW", dtype=f32, rtol=1e-4),
]


def _out_backprop_shape(x_shape, f_shape, s, padding, data_format):
    """The shape of conv2d(x, f)'s output (and so of its gradient dy), in `data_format`."""
    nhwc = x_shape if data_format == "NHWC" else (x_shape[0], *x_shape[2:], x_shape[1])
    out = (nhwc[0], _pads(nhwc[1], f_shape[0], s[0], 1, padding)[0],
           _pads(nhwc[2], f_shape[1], s[1], 1, padding)[0], f_shape[3])
    return out if data_format == "NHWC" else (out[0], out[3], out[1], out[2])


def _filter_bias_case(x_shape, f_shape, s=(1, 1), padding="SAME", data_format="NHWC",
                      reduction="Sum", dtype=np.float64, rtol=1e-5):
    """Conv2DBackpropFilterBias on x_shape (in `data_format`) and an out_backprop of the
    convolution's output shape."""
    g_shape = _out_backprop_shape(x_shape, f_shape, s, padding, data_format)

    def build(x, g):
        strides = [1, 1, *s] if data_format == "NCHW" else [1, *s, 1]
        return fused_ops.conv2d_backprop_filter_bias(x, list(f_shape), g, strides, padding,
                                                     data_format, bias_reduction=reduction)

    def expected(x, g):
        x, g = x.astype(np.float64), g.astype(np.float64)
        if data_format == "NCHW":
            x, g = _nhwc(x), _nhwc(g)
        return _conv_filter_grad_ref(x, f_shape, g, s, padding), g.sum(axis=(0, 1, 2))
    return OpCase("Conv2DBackpropFilterBias", build,
                  [rand(*x_shape, dtype=dtype, seed=12), rand(*g_shape, dtype=dtype, seed=13)],
                  expected, grad=False, rtol=rtol, atol=1e-4,
                  name=f"Conv2DBackpropFilterBias[{x_shape}x{f_shape} s={s} {padding} "
                       f"{data_format} {reduction} {np.dtype(dtype).name}]")


# The geometries of the convolution gradient cases (x shape, filter shape, keywords).
_GRADIENT_GEOMETRIES = [
    ((2, 5, 6, 3), (3, 3, 3, 4), {}),
    ((2, 7, 6, 3), (2, 3, 3, 2), dict(s=(2, 1), padding="VALID", reduction="BiasAddGrad")),
    ((1, 3, 5, 4), (3, 3, 3, 2), dict(data_format="NCHW")),
    # float32, over oneDNN's threshold: the primitives' blocks (the bias gradient beside them; with
    # the input gradient, the two gradients' blocks on shared cores)
    ((4, 16, 16, 16), (3, 3, 16, 32), dict(dtype=f32, rtol=1e-4)),
    ((4, 16, 16, 16), (3, 3, 16, 32), dict(data_format="NCHW", reduction="BiasAddGrad", dtype=f32,
                                           rtol=1e-4)),
]
CASES += [_filter_bias_case(x, f, **kw) for x, f, kw in _GRADIENT_GEOMETRIES]


def _filter_bias_mask_case(x_shape, f_shape, data_format="NHWC", dtype=np.float64, rtol=1e-5):
    """Conv2DBackpropFilterBiasReluMask: the gradients of `where(y > 0, dy, 0)`, y half negative
    (and one NaN: masked out, as Select's `y > 0` is false there)."""
    nhwc = x_shape if data_format == "NHWC" else (x_shape[0], *x_shape[2:], x_shape[1])
    out = (nhwc[0], nhwc[1], nhwc[2], f_shape[3])  # SAME, stride 1
    g_shape = out if data_format == "NHWC" else (out[0], out[3], out[1], out[2])
    y = rand(*g_shape, dtype=dtype, seed=14)
    y.reshape(-1)[3] = np.nan

    def build(x, g, y):
        strides = [1, 1, 1, 1]
        return fused_ops.conv2d_backprop_filter_bias_relu_mask(x, list(f_shape), g, y, strides,
                                                               "SAME", data_format)

    def expected(x, g, y):
        g = np.where(y > 0, g, 0).astype(np.float64)
        x = x.astype(np.float64)
        if data_format == "NCHW":
            x, g = _nhwc(x), _nhwc(g)
        return _conv_filter_grad_ref(x, f_shape, g, (1, 1), "SAME"), g.sum(axis=(0, 1, 2))
    return OpCase("Conv2DBackpropFilterBiasReluMask", build,
                  [rand(*x_shape, dtype=dtype, seed=12), rand(*g_shape, dtype=dtype, seed=13), y],
                  expected, grad=False, rtol=rtol, atol=1e-4,
                  name=f"Conv2DBackpropFilterBiasReluMask[{x_shape}x{f_shape} {data_format} "
                       f"{np.dtype(dtype).name}]")


CASES += [
    _filter_bias_mask_case((2, 5, 6, 3), (3, 3, 3, 4)),
    _filter_bias_mask_case((1, 3, 5, 4), (3, 3, 3, 2), data_format="NCHW"),
    # float32, over oneDNN's threshold: each block masked as its primitive reads it
    _filter_bias_mask_case((8, 16, 16, 3), (3, 3, 3, 32), dtype=f32, rtol=1e-4),
]


def _input_filter_case(x_shape, f_shape, s=(1, 1), padding="SAME", data_format="NHWC",
                       reduction="Sum", dtype=np.float64, rtol=1e-5):
    """Conv2DBackpropInputFilter: the input, filter and bias gradients of one dy (no bias gradient
    with reduction "") against the float64 loop references (float32 over oneDNN's threshold: the
    two gradients' shared blocks)."""
    g_shape = _out_backprop_shape(x_shape, f_shape, s, padding, data_format)

    def build(f, g, x):
        strides = [1, 1, *s] if data_format == "NCHW" else [1, *s, 1]
        return fused_ops.conv2d_backprop_input_filter(
            list(x_shape), f, g, x, list(f_shape), strides, padding, data_format,
            bias_reduction=reduction)

    def expected(f, g, x):
        f, g, x = f.astype(np.float64), g.astype(np.float64), x.astype(np.float64)
        if data_format == "NCHW":
            x, g = _nhwc(x), _nhwc(g)
        dx = _conv_input_grad_ref(x.shape, f, g, s, padding)
        grads = (_nchw(dx) if data_format == "NCHW" else dx,
                 _conv_filter_grad_ref(x, f_shape, g, s, padding))
        return grads + (g.sum(axis=(0, 1, 2)),) if reduction else grads
    return OpCase("Conv2DBackpropInputFilter", build,
                  [rand(*f_shape, dtype=dtype, seed=11), rand(*g_shape, dtype=dtype, seed=13),
                   rand(*x_shape, dtype=dtype, seed=12)],
                  expected, grad=False, rtol=rtol, atol=1e-4,
                  name=f"Conv2DBackpropInputFilter[{x_shape}x{f_shape} s={s} {padding} "
                       f"{data_format} {reduction or 'no-bias'} {np.dtype(dtype).name}]")


CASES += [_input_filter_case(x, f, **kw) for x, f, kw in _GRADIENT_GEOMETRIES]
CASES += [_input_filter_case(x, f, **{**kw, "reduction": ""})  # no bias
          for x, f, kw in _GRADIENT_GEOMETRIES[::2]]


def _pool_mask_case(k, s, padding, shape, data_format="NHWC", dtype=np.float64):
    """where(x > 0, max_pool_grad(x, max_pool(x), g), 0) against the loop reference."""
    ks = [1, 1, *k] if data_format == "NCHW" else [1, *k, 1]
    ss = [1, 1, *s] if data_format == "NCHW" else [1, *s, 1]
    kw = dict(ksize=ks, strides=ss, padding=padding, data_format=data_format)
    to, back = (_nhwc, _nchw) if data_format == "NCHW" else (lambda a: a, lambda a: a)
    x = _distinct(*shape).astype(dtype)
    g = back(rand(*_pooled_shape(to(x).shape, k, s, padding), dtype=dtype, seed=13))

    def expected(x, g):
        x, g = to(x).astype(np.float64), to(g).astype(np.float64)
        return back(np.where(x > 0, _max_pool_grad_ref(x, g, k, s, padding), 0))
    return OpCase("FusedMaxPoolGradReluMask",
                  lambda x, g: fused_ops.fused_max_pool_grad_relu_mask(
                      x, tf.nn.max_pool(x, **kw), g, **kw),
                  [x, g], expected, grad=False,
                  name=f"FusedMaxPoolGradReluMask[{shape} k={k} s={s} {padding} {data_format} "
                       f"{np.dtype(dtype).name}]")


CASES += [
    _pool_mask_case((2, 2), (2, 2), "VALID", (2, 4, 4, 3)),
    _pool_mask_case((2, 2), (2, 2), "VALID", (1, 5, 7, 2)),   # windows tile a cropped input
    _pool_mask_case((3, 3), (2, 2), "SAME", (2, 5, 5, 2)),    # overlapping windows
    _pool_mask_case((2, 2), (2, 2), "SAME", (1, 2, 5, 3), data_format="NCHW"),
    _pool_mask_case((2, 2), (2, 2), "VALID", (2, 16, 16, 16), dtype=f32),
    _pool_mask_case((3, 3), (2, 2), "SAME", (2, 12, 12, 16), dtype=f32),
]
