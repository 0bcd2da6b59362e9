"""Cases for the nn ops (softmax family, cross-entropies, bias_add, l2_loss, conv2d and pooling with
their backprop ops) and the random ops (shape/dtype only; values are tested in
tests/test_random_ops.py).

The conv/pool references are naive loops over output positions with their own padding arithmetic,
written independently of the kernels (which use strided views and a matmul).
"""

import numpy as np

import graphflow as tf
from graphflow.ops import conv_ops, nn_ops
from tests.op_cases import OpCase, rand

f32 = np.float32


# ---------------------------------------------------------------- numpy references
def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _xent(logits, labels, axis=-1):
    return (-(labels * _log_softmax(logits, axis)).sum(axis=axis),
            _softmax(logits, axis) - labels)


def _sparse_xent(logits, labels):
    onehot = np.eye(logits.shape[-1])[labels]
    return _xent(logits, onehot)


def _distribution(*shape, axis=-1, seed=0):
    p = rand(*shape, low=0.1, high=1.0, seed=seed)
    return p / p.sum(axis=axis, keepdims=True)


def _distinct(*shape, seed=0):
    """Values at least 0.1 apart: no ties in a max-pool window, even under finite differences."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).reshape(shape) * 0.1 - n * 0.05)


def _pads(size, k, s, d, padding):
    """(output size, padding before) by TF's rules, computed directly."""
    eff = d * (k - 1) + 1
    if padding == "VALID":
        return (size - eff) // s + 1, 0
    out = (size + s - 1) // s
    return out, max(0, (out - 1) * s + eff - size) // 2


def _conv_ref(x, f, s=(1, 1), padding="VALID", d=(1, 1)):
    n, h, w, c = x.shape
    kh, kw, _, o = f.shape
    oh, pt = _pads(h, kh, s[0], d[0], padding)
    ow, pl = _pads(w, kw, s[1], d[1], padding)
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, q = i * s[0] + a * d[0] - pt, j * s[1] + b * d[1] - pl
                    if 0 <= r < h and 0 <= q < w:
                        out[:, i, j, :] += x[:, r, q, :] @ f[a, b]
    return out


def _conv_input_grad_ref(in_shape, f, g, s=(1, 1), padding="VALID", d=(1, 1)):
    n, h, w, c = in_shape
    kh, kw, _, _ = f.shape
    _, pt = _pads(h, kh, s[0], d[0], padding)
    _, pl = _pads(w, kw, s[1], d[1], padding)
    dx = np.zeros(in_shape)
    for i in range(g.shape[1]):
        for j in range(g.shape[2]):
            for a in range(kh):
                for b in range(kw):
                    r, q = i * s[0] + a * d[0] - pt, j * s[1] + b * d[1] - pl
                    if 0 <= r < h and 0 <= q < w:
                        dx[:, r, q, :] += g[:, i, j, :] @ f[a, b].T
    return dx


def _conv_filter_grad_ref(x, f_shape, g, s=(1, 1), padding="VALID", d=(1, 1)):
    n, h, w, c = x.shape
    kh, kw, _, _ = f_shape
    _, pt = _pads(h, kh, s[0], d[0], padding)
    _, pl = _pads(w, kw, s[1], d[1], padding)
    df = np.zeros(f_shape)
    for i in range(g.shape[1]):
        for j in range(g.shape[2]):
            for a in range(kh):
                for b in range(kw):
                    r, q = i * s[0] + a * d[0] - pt, j * s[1] + b * d[1] - pl
                    if 0 <= r < h and 0 <= q < w:
                        df[a, b] += x[:, r, q, :].T @ g[:, i, j, :]
    return df


def _windows(shape, k, s, padding):
    """Yield (i, j, rows, cols): each output position and the real input rows/cols it covers."""
    _, h, w, _ = shape
    oh, pt = _pads(h, k[0], s[0], 1, padding)
    ow, pl = _pads(w, k[1], s[1], 1, padding)
    for i in range(oh):
        for j in range(ow):
            r0, q0 = i * s[0] - pt, j * s[1] - pl
            yield i, j, range(max(r0, 0), min(r0 + k[0], h)), range(max(q0, 0), min(q0 + k[1], w))


def _pooled_shape(shape, k, s, padding):
    return (shape[0], _pads(shape[1], k[0], s[0], 1, padding)[0],
            _pads(shape[2], k[1], s[1], 1, padding)[0], shape[3])


def _argmax_in_window(x, b, ch, rows, cols):
    best = None
    for r in rows:
        for q in cols:
            if best is None or x[b, r, q, ch] > x[b, best[0], best[1], ch]:
                best = (r, q)
    return best


def _max_pool_ref(x, k, s, padding):
    out = np.zeros(_pooled_shape(x.shape, k, s, padding), dtype=x.dtype)
    for i, j, rows, cols in _windows(x.shape, k, s, padding):
        out[:, i, j, :] = x[:, rows][:, :, cols].max(axis=(1, 2))
    return out


def _avg_pool_ref(x, k, s, padding):
    out = np.zeros(_pooled_shape(x.shape, k, s, padding))
    for i, j, rows, cols in _windows(x.shape, k, s, padding):
        out[:, i, j, :] = x[:, rows][:, :, cols].mean(axis=(1, 2))
    return out


def _max_pool_grad_ref(x, g, k, s, padding):
    dx = np.zeros(x.shape)
    for i, j, rows, cols in _windows(x.shape, k, s, padding):
        for b in range(x.shape[0]):
            for ch in range(x.shape[3]):
                r, q = _argmax_in_window(x, b, ch, rows, cols)
                dx[b, r, q, ch] += g[b, i, j, ch]
    return dx


def _max_pool_grad_grad_ref(x, h, k, s, padding):
    out = np.zeros(_pooled_shape(x.shape, k, s, padding))
    for i, j, rows, cols in _windows(x.shape, k, s, padding):
        for b in range(x.shape[0]):
            for ch in range(x.shape[3]):
                r, q = _argmax_in_window(x, b, ch, rows, cols)
                out[b, i, j, ch] = h[b, r, q, ch]
    return out


def _avg_pool_grad_ref(in_shape, g, k, s, padding):
    dx = np.zeros(in_shape)
    for i, j, rows, cols in _windows(in_shape, k, s, padding):
        share = g[:, i, j, :] / (len(rows) * len(cols))
        for r in rows:
            for q in cols:
                dx[:, r, q, :] += share
    return dx


def _nchw(x):
    return np.transpose(x, (0, 3, 1, 2))


def _nhwc(x):
    return np.transpose(x, (0, 2, 3, 1))


# ---------------------------------------------------------------- softmax family, losses
CASES = [
    OpCase("Softmax", tf.nn.softmax, [rand(3, 5)], _softmax),
    OpCase("Softmax", lambda x: tf.nn.softmax(x, axis=0), [rand(4, 3)], lambda x: _softmax(x, 0)),
    OpCase("Softmax", lambda x: tf.nn.softmax(x, dim=1), [rand(2, 3, 2)], lambda x: _softmax(x, 1)),
    OpCase("Softmax", tf.nn.softmax, [rand(2, 4, dtype=f32) * 200], _softmax, grad=False,
           name="Softmax[large logits]"),
    OpCase("LogSoftmax", tf.nn.log_softmax, [rand(3, 5)], _log_softmax),
    OpCase("LogSoftmax", lambda x: tf.nn.log_softmax(x, axis=0), [rand(4, 2)],
           lambda x: _log_softmax(x, 0)),
    OpCase("LogSoftmax", tf.nn.log_softmax, [np.array([[1000.0, 0.0, -1000.0]], f32)],
           lambda x: _log_softmax(x.astype(np.float64)), grad=False, name="LogSoftmax[extreme]"),
    OpCase("SoftmaxCrossEntropyWithLogits", nn_ops.softmax_cross_entropy_with_logits_op,
           [rand(4, 5), _distribution(4, 5)], _xent),
    OpCase("SoftmaxCrossEntropyWithLogits",
           lambda x, z: nn_ops.softmax_cross_entropy_with_logits_op(x, z, axis=0),
           [rand(3, 2), _distribution(3, 2, axis=0)], lambda x, z: _xent(x, z, 0)),
    OpCase("SoftmaxCrossEntropyWithLogits",
           lambda x, z: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
           [rand(2, 3, 4), _distribution(2, 3, 4)], lambda x, z: _xent(x, z)[0]),
    OpCase("SoftmaxCrossEntropyWithLogits",  # TF1 version: no gradient into labels
           lambda x, z: tf.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
           [rand(3, 4), _distribution(3, 4)], lambda x, z: _xent(x, z)[0], grad_inputs=[0]),
    OpCase("SoftmaxCrossEntropyWithLogits",
           lambda x, z: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
           [np.array([[500.0, 0.0, -500.0]], f32), np.array([[0.0, 0.5, 0.5]], f32)],
           lambda x, z: _xent(x.astype(np.float64), z.astype(np.float64))[0], grad=False,
           rtol=1e-6, name="SoftmaxCrossEntropyWithLogits[extreme]"),
    OpCase("SparseSoftmaxCrossEntropyWithLogits", nn_ops.sparse_softmax_cross_entropy_with_logits_op,
           [rand(4, 5), np.array([0, 4, 2, 2], np.int32)], _sparse_xent),
    OpCase("SparseSoftmaxCrossEntropyWithLogits",
           lambda x, y: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x),
           [rand(2, 3, 4), np.array([[0, 3, 1], [2, 2, 0]], np.int64)],
           lambda x, y: _sparse_xent(x, y)[0]),
    OpCase("SigmoidCrossEntropyWithLogits",
           lambda x, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
           [rand(3, 4, low=-4, high=4), rand(3, 4, low=0, high=1, seed=5)],
           lambda x, z: np.logaddexp(0, x) - x * z),
    OpCase("SigmoidCrossEntropyWithLogits",
           lambda x, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
           [np.array([-200.0, -30.0, 0.0, 30.0, 200.0], f32), np.array([0, 1, 0.5, 0, 1], f32)],
           lambda x, z: np.logaddexp(0, x.astype(np.float64)) - x * z, grad=False,
           name="SigmoidCrossEntropyWithLogits[extreme]"),
    OpCase("BiasAdd", tf.nn.bias_add, [rand(2, 3, 4), rand(4, seed=1)], lambda x, b: x + b),
    OpCase("BiasAdd", tf.nn.bias_add, [rand(5, 3), rand(3, seed=2)], lambda x, b: x + b),
    OpCase("BiasAdd", lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"),
           [rand(2, 3, 2, 2), rand(3, seed=3)], lambda x, b: x + b[:, None, None]),
    OpCase("BiasAddGrad", nn_ops.bias_add_grad, [rand(2, 3, 4)], lambda g: g.sum(axis=(0, 1))),
    OpCase("BiasAddGrad", lambda g: nn_ops.bias_add_grad(g, data_format="NCHW"), [rand(2, 3, 2, 2)],
           lambda g: g.sum(axis=(0, 2, 3))),
    OpCase("L2Loss", tf.nn.l2_loss, [rand(3, 4)], lambda x: (x ** 2).sum() / 2),
    OpCase("L2Loss", tf.nn.l2_loss, [rand(5, dtype=f32)], lambda x: (x.astype(np.float64) ** 2).sum()
           / 2, grad=False),
]


# ---------------------------------------------------------------- convolution
def _conv_case(x_shape, f_shape, s, padding, d=(1, 1), data_format="NHWC", dtype=np.float64,
               grad=True):
    def build(x, f):
        return tf.nn.conv2d(x, f, strides=[1, 1] + list(s) if data_format == "NCHW" else
                            [1] + list(s) + [1], padding=padding, data_format=data_format,
                            dilations=list(d))

    def reference(x, f):
        if data_format == "NCHW":
            return _nchw(_conv_ref(_nhwc(x), f, s, padding, d))
        return _conv_ref(x, f, s, padding, d)
    return OpCase("Conv2D", build, [rand(*x_shape, dtype=dtype), rand(*f_shape, dtype=dtype, seed=7)],
                  reference, grad=grad, rtol=1e-4 if dtype == f32 else 1e-5, atol=1e-4,
                  name=f"Conv2D[{x_shape}x{f_shape} s={s} {padding} d={d} {data_format}]")


def _conv_input_case(in_shape, f_shape, s, padding, d=(1, 1)):
    out_shape = (in_shape[0], _pads(in_shape[1], f_shape[0], s[0], d[0], padding)[0],
                 _pads(in_shape[2], f_shape[1], s[1], d[1], padding)[0], f_shape[3])
    return OpCase(
        "Conv2DBackpropInput",
        lambda f, g: tf.nn.conv2d_backprop_input(list(in_shape), f, g, [1, *s, 1], padding,
                                                 dilations=[1, *d, 1]),
        [rand(*f_shape, seed=8), rand(*out_shape, seed=9)],
        lambda f, g: _conv_input_grad_ref(in_shape, f, g, s, padding, d),
        name=f"Conv2DBackpropInput[{in_shape} {f_shape} s={s} {padding} d={d}]")


def _conv_filter_case(in_shape, f_shape, s, padding, d=(1, 1)):
    out_shape = (in_shape[0], _pads(in_shape[1], f_shape[0], s[0], d[0], padding)[0],
                 _pads(in_shape[2], f_shape[1], s[1], d[1], padding)[0], f_shape[3])
    return OpCase(
        "Conv2DBackpropFilter",
        lambda x, g: tf.nn.conv2d_backprop_filter(x, list(f_shape), g, [1, *s, 1], padding,
                                                  dilations=[1, *d, 1]),
        [rand(*in_shape, seed=10), rand(*out_shape, seed=11)],
        lambda x, g: _conv_filter_grad_ref(x, f_shape, g, s, padding, d),
        name=f"Conv2DBackpropFilter[{in_shape} {f_shape} s={s} {padding} d={d}]")


CASES += [
    _conv_case((2, 5, 5, 2), (3, 3, 2, 3), (1, 1), "VALID"),
    _conv_case((1, 6, 7, 2), (3, 2, 2, 2), (2, 2), "SAME"),
    _conv_case((1, 5, 4, 3), (2, 3, 3, 2), (2, 1), "VALID"),
    _conv_case((1, 6, 6, 1), (2, 2, 1, 2), (1, 1), "SAME", d=(2, 2)),
    _conv_case((2, 2, 5, 4), (3, 3, 2, 2), (1, 2), "SAME", data_format="NCHW"),
    _conv_case((2, 8, 8, 3), (3, 3, 3, 4), (1, 1), "SAME", dtype=f32, grad=False),
    _conv_input_case((2, 5, 5, 2), (3, 3, 2, 3), (1, 1), "VALID"),
    _conv_input_case((1, 7, 6, 2), (3, 3, 2, 2), (2, 2), "SAME"),
    _conv_input_case((1, 6, 6, 1), (2, 2, 1, 2), (1, 1), "SAME", d=(2, 2)),
    _conv_filter_case((2, 5, 5, 2), (3, 3, 2, 3), (1, 1), "VALID"),
    _conv_filter_case((1, 7, 6, 2), (3, 3, 2, 2), (2, 2), "SAME"),
    _conv_filter_case((1, 6, 6, 1), (2, 2, 1, 2), (1, 1), "SAME", d=(2, 2)),
    # stride 1 with >= 8 channels: the flipped-filter input gradient (conv_blocked.py)
    _conv_case((2, 5, 6, 8), (3, 2, 8, 3), (1, 1), "SAME"),
    _conv_case((1, 6, 5, 9), (2, 3, 9, 2), (1, 1), "VALID"),
    _conv_case((2, 8, 4, 5), (3, 3, 8, 2), (1, 1), "SAME", data_format="NCHW"),
    _conv_case((3, 7, 7, 16), (5, 5, 16, 4), (1, 1), "SAME", dtype=f32, grad=False),
    _conv_input_case((2, 5, 6, 8), (3, 2, 8, 3), (1, 1), "SAME"),
    _conv_input_case((1, 6, 5, 9), (2, 3, 9, 2), (1, 1), "VALID"),
    _conv_filter_case((2, 5, 6, 8), (3, 2, 8, 3), (1, 1), "SAME"),
    _conv_filter_case((1, 6, 5, 9), (2, 3, 9, 2), (1, 1), "VALID"),
    OpCase("Conv2DBackpropInput",
           lambda x, f: tf.nn.conv2d_transpose(x, f, [1, 6, 6, 2], [1, 2, 2, 1], "SAME"),
           [rand(1, 3, 3, 3), rand(3, 3, 2, 3, seed=12)],
           lambda x, f: _conv_input_grad_ref((1, 6, 6, 2), f, x, (2, 2), "SAME"),
           name="Conv2DBackpropInput[conv2d_transpose]"),
]


def _conv1d_ref(x, f, s, padding):
    n, w, c = x.shape
    k, _, o = f.shape
    ow, pl = _pads(w, k, s, 1, padding)
    out = np.zeros((n, ow, o))
    for j in range(ow):
        for b in range(k):
            q = j * s + b - pl
            if 0 <= q < w:
                out[:, j, :] += x[:, q, :] @ f[b]
    return out


CASES += [
    OpCase("Conv2D", lambda x, f: tf.nn.conv1d(x, f, stride=2, padding="SAME"),
           [rand(2, 7, 3), rand(3, 3, 2, seed=16)], lambda x, f: _conv1d_ref(x, f, 2, "SAME"),
           name="Conv2D[conv1d NWC]"),
    OpCase("Conv2D", lambda x, f: tf.nn.conv1d(x, f, 1, "VALID", data_format="NCW"),
           [rand(1, 2, 6), rand(2, 2, 3, seed=17)],
           lambda x, f: np.transpose(_conv1d_ref(np.transpose(x, (0, 2, 1)), f, 1, "VALID"),
                                     (0, 2, 1)), name="Conv2D[conv1d NCW]"),
]


# ---------------------------------------------------------------- pooling
def _pool_cases(k, s, padding, shape, data_format="NHWC"):
    ks = [1, 1, *k] if data_format == "NCHW" else [1, *k, 1]
    ss = [1, 1, *s] if data_format == "NCHW" else [1, *s, 1]
    kw = dict(ksize=ks, strides=ss, padding=padding, data_format=data_format)
    to, back = (_nhwc, _nchw) if data_format == "NCHW" else (lambda a: a, lambda a: a)
    x = _distinct(*shape)
    pooled = back(np.zeros(_pooled_shape(to(x).shape, k, s, padding)))
    label = f"[{shape} k={k} s={s} {padding} {data_format}]"
    return [
        OpCase("MaxPool", lambda x: tf.nn.max_pool(x, **kw), [x],
               lambda x: back(_max_pool_ref(to(x), k, s, padding)), name="MaxPool" + label),
        OpCase("AvgPool", lambda x: tf.nn.avg_pool(x, **kw), [rand(*shape)],
               lambda x: back(_avg_pool_ref(to(x), k, s, padding)), name="AvgPool" + label),
        OpCase("MaxPoolGrad",
               lambda x, g: conv_ops.max_pool_grad(x, tf.nn.max_pool(x, **kw), g, **kw),
               [x, rand(*pooled.shape, seed=13)],
               lambda x, g: back(_max_pool_grad_ref(to(x), to(g), k, s, padding)),
               name="MaxPoolGrad" + label),
        OpCase("MaxPoolGradGrad",
               lambda x, h: conv_ops.max_pool_grad_grad(x, tf.nn.max_pool(x, **kw), h, **kw),
               [x, rand(*shape, seed=14)],
               lambda x, h: back(_max_pool_grad_grad_ref(to(x), to(h), k, s, padding)),
               name="MaxPoolGradGrad" + label),
        OpCase("AvgPoolGrad", lambda g: conv_ops.avg_pool_grad(list(shape), g, **kw),
               [rand(*pooled.shape, seed=15)],
               lambda g: back(_avg_pool_grad_ref(to(np.zeros(shape)).shape, to(g), k, s, padding)),
               name="AvgPoolGrad" + label),
    ]


CASES += _pool_cases((2, 2), (2, 2), "VALID", (2, 4, 4, 2))
CASES += _pool_cases((2, 2), (2, 2), "VALID", (1, 5, 7, 2))  # windows tile a cropped input
CASES += _pool_cases((3, 3), (2, 2), "SAME", (1, 5, 5, 2))
CASES += _pool_cases((2, 3), (1, 2), "SAME", (2, 4, 5, 1))
CASES += _pool_cases((2, 2), (2, 2), "SAME", (1, 2, 5, 3), data_format="NCHW")
CASES += [
    OpCase("MaxPool", lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME"),
           [rand(1, 3, 3, 2, dtype=np.int32, low=-50, high=50)],
           lambda x: _max_pool_ref(x, (2, 2), (1, 1), "SAME"), grad=False, name="MaxPool[int32]"),
    OpCase("AvgPool", lambda x: tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
           [rand(2, 6, 6, 3, dtype=f32)], lambda x: _avg_pool_ref(x, (3, 3), (2, 2), "SAME"),
           grad=False, rtol=1e-5, name="AvgPool[float32]"),
]


# ---------------------------------------------------------------- random ops (values: test_random_ops)
CASES += [
    OpCase("RandomStandardNormal", lambda: tf.random_normal([3, 4], seed=1), [], grad=False,
           unknown_shapes=False),
    OpCase("RandomStandardNormal", lambda x: tf.random_normal(tf.shape(x), dtype=tf.float64) + x,
           [rand(2, 3)], grad=False, name="RandomStandardNormal[shape of x]"),
    OpCase("RandomUniform", lambda: tf.random_uniform([5], minval=-1.0, maxval=2.0), [], grad=False,
           unknown_shapes=False),
    OpCase("RandomUniform", lambda: tf.random_uniform([2, 2], dtype=tf.float16, seed=3), [],
           grad=False, unknown_shapes=False, name="RandomUniform[float16]"),
    OpCase("RandomUniformInt", lambda: tf.random_uniform([4, 2], 0, 10, dtype=tf.int32), [],
           grad=False, unknown_shapes=False),
    OpCase("RandomUniformInt", lambda: tf.random_uniform([3], -5, 5, dtype=tf.int64, seed=2), [],
           grad=False, unknown_shapes=False, name="RandomUniformInt[int64]"),
    OpCase("TruncatedNormal", lambda: tf.truncated_normal([6, 2], stddev=0.1, dtype=tf.float64), [],
           grad=False, unknown_shapes=False),
]
