"""Cases for the 3-D convolution and pooling ops (Conv3D and its two backprop ops, MaxPool3D,
AvgPool3D and their gradient ops): naive loop-over-windows numpy references, NDHWC and NCDHW,
VALID / SAME, strides and dilations; the generic harnesses add shape inference and
finite-difference gradients."""

import itertools

import numpy as np

import graphflow as tf
from graphflow.ops import conv3d_ops
from tests.op_cases import OpCase, rand


def _axis(size, k, s, d, padding):
    """(output size, padding before) of one spatial axis, TF's rule."""
    effective = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        return out, max((out - 1) * s + effective - size, 0) // 2
    return (size - effective) // s + 1, 0


def _window_positions(spatial, k, s, d, padding):
    """For every output position: (out index, list of in-bounds input positions of its window,
    in row-major tap order)."""
    axes = [_axis(*a, padding) for a in zip(spatial, k, s, d)]
    for out in itertools.product(*(range(o) for o, _ in axes)):
        taps = []
        for tap in itertools.product(*(range(kk) for kk in k)):
            pos = tuple(o * ss + t * dd - lo for o, ss, t, dd, (_, lo) in zip(out, s, tap, d, axes))
            if all(0 <= p < n for p, n in zip(pos, spatial)):
                taps.append((tap, pos))
        yield out, taps


def _out_shape(shape, k, s, d, padding, c):
    return (shape[0], *(_axis(*a, padding)[0] for a in zip(shape[1:4], k, s, d)), c)


def _conv_ref(x, f, s, padding, d):
    out = np.zeros(_out_shape(x.shape, f.shape[:3], s, d, padding, f.shape[4]))
    for o, taps in _window_positions(x.shape[1:4], f.shape[:3], s, d, padding):
        for tap, pos in taps:
            out[(slice(None), *o)] += x[(slice(None), *pos)] @ f[tap]
    return out


def _conv_input_grad_ref(in_shape, f, g, s, padding, d):
    dx = np.zeros(in_shape)
    for o, taps in _window_positions(in_shape[1:4], f.shape[:3], s, d, padding):
        for tap, pos in taps:
            dx[(slice(None), *pos)] += g[(slice(None), *o)] @ f[tap].T
    return dx


def _conv_filter_grad_ref(x, f_shape, g, s, padding, d):
    df = np.zeros(f_shape)
    for o, taps in _window_positions(x.shape[1:4], f_shape[:3], s, d, padding):
        for tap, pos in taps:
            df[tap] += x[(slice(None), *pos)].T @ g[(slice(None), *o)]
    return df


def _ncdhw(a):
    return np.transpose(a, (0, 4, 1, 2, 3))


def _ndhwc(a):
    return np.transpose(a, (0, 2, 3, 4, 1))


def _conv_cases(x_shape, f_shape, s, padding, d=(1, 1, 1), data_format="NDHWC"):
    first = data_format == "NCDHW"
    to, back = (_ndhwc, _ncdhw) if first else (lambda a: a, lambda a: a)
    five = (lambda v: [1, 1, *v]) if first else (lambda v: [1, *v, 1])
    kw = dict(strides=five(s), padding=padding, data_format=data_format, dilations=five(d))
    x, f = rand(*x_shape), rand(*f_shape, seed=21)
    nd_shape = to(np.zeros(x_shape)).shape
    g = rand(*back(np.zeros(_out_shape(nd_shape, f_shape[:3], s, d, padding, f_shape[4]))).shape,
             seed=22)
    label = f"[{list(x_shape)}x{list(f_shape)} s={s} d={d} {padding} {data_format}]"
    return [
        OpCase("Conv3D", lambda x, f: tf.nn.conv3d(x, f, **kw), [x, f],
               lambda x, f: back(_conv_ref(to(x), f, s, padding, d)), name="Conv3D" + label),
        OpCase("Conv3DBackpropInputV2",
               lambda f, g: conv3d_ops.conv3d_backprop_input_v2(list(x_shape), f, g, **kw), [f, g],
               lambda f, g: back(_conv_input_grad_ref(nd_shape, f, to(g), s, padding, d)),
               name="Conv3DBackpropInputV2" + label),
        OpCase("Conv3DBackpropFilterV2",
               lambda x, g: tf.nn.conv3d_backprop_filter_v2(x, list(f_shape), g, **kw), [x, g],
               lambda x, g: _conv_filter_grad_ref(to(x), f_shape, to(g), s, padding, d),
               name="Conv3DBackpropFilterV2" + label),
    ]


CASES = []
CASES += _conv_cases((2, 4, 4, 3, 2), (2, 2, 2, 2, 3), (1, 1, 1), "VALID")
CASES += _conv_cases((1, 5, 4, 4, 1), (3, 2, 3, 1, 2), (2, 1, 2), "SAME")
CASES += _conv_cases((1, 5, 5, 4, 2), (2, 2, 2, 2, 2), (1, 2, 1), "VALID", d=(2, 1, 2))
CASES += _conv_cases((1, 2, 4, 3, 5), (2, 2, 1, 2, 2), (1, 1, 2), "SAME", d=(1, 2, 1),
                     data_format="NCDHW")


# ---------------------------------------------------------------- pooling
def _distinct(*shape):
    """Values with no ties (a max-pool gradient is only differentiable away from ties)."""
    r = np.random.default_rng(7)
    return (r.permutation(int(np.prod(shape))).reshape(shape) / 10.0 - 1.0).astype(np.float64)


def _max_pool_ref(x, k, s, padding):
    out = np.zeros(_out_shape(x.shape, k, s, (1, 1, 1), padding, x.shape[4]), dtype=x.dtype)
    for o, taps in _window_positions(x.shape[1:4], k, s, (1, 1, 1), padding):
        values = np.stack([x[(slice(None), *pos)] for _, pos in taps])
        out[(slice(None), *o)] = values.max(axis=0)
    return out


def _argmax_positions(x, k, s, padding):
    """(out position, batch, channel, input position of the first window maximum)."""
    for o, taps in _window_positions(x.shape[1:4], k, s, (1, 1, 1), padding):
        for b in range(x.shape[0]):
            for ch in range(x.shape[4]):
                best = max(taps, key=lambda t: (x[(b, *t[1], ch)], -taps.index(t)))[1]
                yield o, b, ch, best


def _max_pool_grad_ref(x, g, k, s, padding):
    """TF's rule: a window's gradient goes to every element equal to its maximum."""
    dx = np.zeros(x.shape)
    for o, taps in _window_positions(x.shape[1:4], k, s, (1, 1, 1), padding):
        for b in range(x.shape[0]):
            for ch in range(x.shape[4]):
                best = max(x[(b, *pos, ch)] for _, pos in taps)
                for _, pos in taps:
                    if x[(b, *pos, ch)] == best:
                        dx[(b, *pos, ch)] += g[(b, *o, ch)]
    return dx


def _max_pool_grad_grad_ref(x, h, k, s, padding):
    out = np.zeros(_out_shape(x.shape, k, s, (1, 1, 1), padding, x.shape[4]))
    for o, b, ch, pos in _argmax_positions(x, k, s, padding):
        out[(b, *o, ch)] = h[(b, *pos, ch)]
    return out


def _avg_pool_ref(x, k, s, padding):
    out = np.zeros(_out_shape(x.shape, k, s, (1, 1, 1), padding, x.shape[4]))
    for o, taps in _window_positions(x.shape[1:4], k, s, (1, 1, 1), padding):
        out[(slice(None), *o)] = np.mean([x[(slice(None), *pos)] for _, pos in taps], axis=0)
    return out


def _avg_pool_grad_ref(in_shape, g, k, s, padding):
    dx = np.zeros(in_shape)
    for o, taps in _window_positions(in_shape[1:4], k, s, (1, 1, 1), padding):
        for _, pos in taps:
            dx[(slice(None), *pos)] += g[(slice(None), *o)] / len(taps)
    return dx


def _pool_cases(k, s, padding, shape, data_format="NDHWC"):
    first = data_format == "NCDHW"
    to, back = (_ndhwc, _ncdhw) if first else (lambda a: a, lambda a: a)
    five = (lambda v: [1, 1, *v]) if first else (lambda v: [1, *v, 1])
    kw = dict(ksize=five(k), strides=five(s), padding=padding, data_format=data_format)
    x = _distinct(*shape)
    nd_shape = to(np.zeros(shape)).shape
    pooled = back(np.zeros(_out_shape(nd_shape, k, s, (1, 1, 1), padding, nd_shape[4]))).shape
    label = f"[{list(shape)} k={k} s={s} {padding} {data_format}]"
    return [
        OpCase("MaxPool3D", lambda x: tf.nn.max_pool3d(x, **kw), [x],
               lambda x: back(_max_pool_ref(to(x), k, s, padding)), name="MaxPool3D" + label),
        OpCase("AvgPool3D", lambda x: tf.nn.avg_pool3d(x, **kw), [rand(*shape)],
               lambda x: back(_avg_pool_ref(to(x), k, s, padding)), name="AvgPool3D" + label),
        OpCase("MaxPool3DGrad",
               lambda x, g: conv3d_ops.max_pool3d_grad(x, tf.nn.max_pool3d(x, **kw), g, **kw),
               [x, rand(*pooled, seed=23)],
               lambda x, g: back(_max_pool_grad_ref(to(x), to(g), k, s, padding)),
               name="MaxPool3DGrad" + label),
        OpCase("MaxPool3DGradGrad",
               lambda x, h: conv3d_ops.max_pool3d_grad_grad(x, tf.nn.max_pool3d(x, **kw), h,
                                                            **kw),
               [x, rand(*shape, seed=24)],
               lambda x, h: back(_max_pool_grad_grad_ref(to(x), to(h), k, s, padding)),
               name="MaxPool3DGradGrad" + label),
        OpCase("AvgPool3DGrad", lambda g: conv3d_ops.avg_pool3d_grad(list(shape), g, **kw),
               [rand(*pooled, seed=25)],
               lambda g: back(_avg_pool_grad_ref(nd_shape, to(g), k, s, padding)),
               name="AvgPool3DGrad" + label),
    ]


CASES += _pool_cases((2, 2, 2), (2, 2, 2), "VALID", (2, 4, 4, 4, 2))
CASES += _pool_cases((3, 2, 3), (2, 1, 2), "SAME", (1, 5, 3, 4, 2))
CASES += _pool_cases((2, 2, 1), (1, 2, 1), "SAME", (1, 2, 3, 3, 4), data_format="NCDHW")
CASES += [
    OpCase("MaxPool3D", lambda x: tf.nn.max_pool3d(x, 2, 1, "SAME"),
           [rand(1, 3, 2, 3, 2, dtype=np.int32, low=-50, high=50)],
           lambda x: _max_pool_ref(x, (2, 2, 2), (1, 1, 1), "SAME"), grad=False,
           name="MaxPool3D[int32]"),
    OpCase("AvgPool3D", lambda x: tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
           [rand(2, 3, 5, 4, 3, dtype=np.float32)],
           lambda x: _avg_pool_ref(x, (2, 3, 2), (2, 2, 2), "SAME"), grad=False,
           name="AvgPool3D[float32]"),
    OpCase("MaxPool3DGrad",  # ties: every maximum of a window gets its gradient, as in TF
           lambda x, g: conv3d_ops.max_pool3d_grad(x, tf.nn.max_pool3d(x, 2, 1, "VALID"), g, 2, 1,
                                                   "VALID"),
           [np.round(rand(1, 3, 3, 3, 2, seed=27)), rand(1, 2, 2, 2, 2, seed=28)],
           lambda x, g: _max_pool_grad_ref(x, g, (2, 2, 2), (1, 1, 1), "VALID"), grad=False,
           name="MaxPool3DGrad[ties]"),
]
CASES += [
    OpCase("Conv3DBackpropInputV2",
           lambda v, f: tf.nn.conv3d_transpose(v, f, [1, 5, 4, 6, 2], [1, 2, 1, 2, 1], "SAME"),
           [rand(1, 3, 4, 3, 3), rand(2, 3, 2, 2, 3, seed=26)],
           lambda v, f: _conv_input_grad_ref((1, 5, 4, 6, 2), f, v, (2, 1, 2), "SAME", (1, 1, 1)),
           name="Conv3DBackpropInputV2[conv3d_transpose]"),
]
