"""ONNX convolutions, pooling and normalization as graphflow ops (NCHW, 1-D as 2-D with a unit height).

Explicit ONNX pads become a `tf.pad` before a VALID op (so asymmetric pads import exactly); groups
split the channels into separate convolutions joined by a concat.
"""

import numpy as np

import graphflow as tf
from graphflow.interop.onnx.import_ops import _rank, builder
from graphflow.ops import static_value


def _as_2d(x):
    """(x as a 4-D NCHW tensor, whether it was 1-D spatial)."""
    rank = _rank(x)
    if rank == 3:
        return tf.expand_dims(x, 2), True
    if rank != 4:
        raise ValueError(f"only 1-D and 2-D spatial inputs are supported, got rank {rank}")
    return x, False


def _spatial_attrs(a, name, spatial, default):
    value = list(a.get(name, [default] * spatial))
    return [default] * (2 - spatial) + value if spatial == 1 else value


def _pads_and_mode(a, x, kernel, strides, dilations, spatial):
    """(paddings [[top, bottom], [left, right]], 'VALID'|'SAME') for the ONNX pad attributes."""
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        dims = x.shape.as_list()[2:]
        if None in dims:
            if auto == "SAME_UPPER":
                return [[0, 0], [0, 0]], "SAME"  # TF's SAME is SAME_UPPER
            raise ValueError("SAME_LOWER needs known spatial dims")
        pads = []
        for size, k, s, d in zip(dims, kernel, strides, dilations):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            pads.append([small, big] if auto == "SAME_UPPER" else [big, small])
        return pads, "VALID"
    raw = list(a.get("pads", [0] * (2 * spatial)))
    if spatial == 1:
        return [[0, 0], [raw[0], raw[1]]], "VALID"
    return [[raw[0], raw[2]], [raw[1], raw[3]]], "VALID"


def _same_upper_pads(x, kernel, strides, dilations):
    """The pads TF's SAME padding gives (odd padding at the end), or None if dims are unknown."""
    dims = x.shape.as_list()[2:] if x.shape.ndims == 4 else [None]
    if None in dims:
        return None
    pads = []
    for size, k, s, d in zip(dims, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        pads.append([total // 2, total - total // 2])
    return pads


def _pad_spatial(x, pads, value=0.0):
    if not any(p for pair in pads for p in pair):
        return x
    return tf.pad(x, [[0, 0], [0, 0]] + pads, constant_values=tf.cast(value, x.dtype))


@builder("Conv")
def _conv(ctx, node, inputs):
    a = ctx.attrs(node)
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    x, one_d = _as_2d(x)
    spatial = 1 if one_d else 2
    if one_d:
        w = tf.expand_dims(w, 2)
    kernel = w.shape.as_list()[2:]
    strides = _spatial_attrs(a, "strides", spatial, 1)
    dilations = _spatial_attrs(a, "dilations", spatial, 1)
    pads, mode = _pads_and_mode(a, x, kernel, strides, dilations, spatial)
    if mode == "VALID" and pads == _same_upper_pads(x, kernel, strides, dilations):
        pads, mode = [[0, 0], [0, 0]], "SAME"  # the convolution pads itself: no Pad op, no copy
    x = _pad_spatial(x, pads)
    groups = a.get("group", 1)
    filt = _constant_or(w, lambda v: np.transpose(v, (2, 3, 1, 0)),  # ONNX [out, in/g, kh, kw]
                        lambda t: tf.transpose(t, [2, 3, 1, 0]))    # -> [kh, kw, in/g, out]
    xs = tf.split(x, groups, axis=1) if groups > 1 else [x]
    fs = tf.split(filt, groups, axis=3) if groups > 1 else [filt]
    ys = [tf.nn.conv2d(xi, fi, strides=[1, 1] + strides, padding=mode, data_format="NCHW",
                       dilations=[1, 1] + dilations) for xi, fi in zip(xs, fs)]
    y = tf.concat(ys, axis=1) if groups > 1 else ys[0]
    return [_with_channel_bias(y, bias, one_d)]


def _constant_or(t, on_value, on_tensor):
    """A constant weight rearranged once, at import (no op that redoes it on every run); a
    variable (trainable import) or computed tensor through the op."""
    value = static_value.constant_value(t)
    return tf.constant(on_value(np.asarray(value))) if value is not None else on_tensor(t)


def _with_channel_bias(y, bias, one_d):
    """NCHW output `y` plus the per-channel `bias` (when given), back to NCW for a 1-D op."""
    if bias is not None:
        y = y + _constant_or(bias, lambda v: v.reshape(1, -1, 1, 1),
                             lambda t: tf.reshape(t, [1, -1, 1, 1]))
    return tf.squeeze(y, [2]) if one_d else y


@builder("ConvTranspose")
def _conv_transpose(ctx, node, inputs):
    a = ctx.attrs(node)
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    if a.get("group", 1) != 1 or any(d != 1 for d in a.get("dilations", [1])):
        raise ValueError("ConvTranspose with groups or dilations is not supported")
    x, one_d = _as_2d(x)
    spatial = 1 if one_d else 2
    if one_d:
        w = tf.expand_dims(w, 2)
    n, _, h, wd = x.shape.as_list()
    kh, kw = w.shape.as_list()[2:]
    out_c = w.shape.as_list()[1]
    if None in (h, wd, kh, kw, out_c):
        raise ValueError("ConvTranspose needs known spatial sizes")
    sh, sw = _spatial_attrs(a, "strides", spatial, 1)
    full = [(h - 1) * sh + kh, (wd - 1) * sw + kw]
    batch = tf.shape(x)[0] if n is None else n
    y = tf.nn.conv2d_transpose(x, tf.transpose(w, [2, 3, 1, 0]),  # [in, out, kh, kw] -> [kh, kw, out, in]
                               tf.stack([batch, out_c, full[0], full[1]]) if n is None
                               else [n, out_c, full[0], full[1]],
                               strides=[1, 1, sh, sw], padding="VALID", data_format="NCHW")
    raw = list(a.get("pads", [0] * (2 * spatial)))
    pads = [[0, 0], [raw[0], raw[1]]] if one_d else [[raw[0], raw[2]], [raw[1], raw[3]]]
    extra = _spatial_attrs(a, "output_padding", spatial, 0)
    if any(extra):  # output_padding extends the full grid at the end (no input reaches it)
        y = tf.pad(y, [[0, 0], [0, 0], [0, extra[0]], [0, extra[1]]])
    # output index o is full-grid position o + pad_begin: drop pads from both ends
    y = y[:, :, pads[0][0]:full[0] + extra[0] - pads[0][1], pads[1][0]:full[1] + extra[1] - pads[1][1]]
    return [_with_channel_bias(y, bias, one_d)]


@builder("MaxPool", "AveragePool")
def _pool(ctx, node, inputs):
    a = ctx.attrs(node)
    if a.get("ceil_mode", 0) or any(d != 1 for d in a.get("dilations", [1])):
        raise ValueError("pooling with ceil_mode or dilations is not supported")
    x, one_d = _as_2d(inputs[0])
    spatial = 1 if one_d else 2
    kernel = _spatial_attrs(a, "kernel_shape", spatial, 1)
    strides = _spatial_attrs(a, "strides", spatial, 1)
    pads, mode = _pads_and_mode(a, x, kernel, strides, [1, 1], spatial)
    ksize, stride = [1, 1] + kernel, [1, 1] + strides
    if node.op_type == "MaxPool":
        y = tf.nn.max_pool(_pad_spatial(x, pads, -np.inf if x.dtype.is_floating else 0), ksize, stride,
                           mode, data_format="NCHW")
        outputs = [y]
    else:
        total = tf.nn.avg_pool(_pad_spatial(x, pads), ksize, stride, mode, data_format="NCHW")
        if a.get("count_include_pad", 0) or mode == "SAME" or not any(p for q in pads for p in q):
            y = total
        else:  # the mean over real elements: divide by the share of real elements in each window
            real = tf.nn.avg_pool(_pad_spatial(tf.ones_like(x), pads), ksize, stride, mode,
                                  data_format="NCHW")
            y = total / real
        outputs = [y]
    return [tf.squeeze(o, [2]) if one_d else o for o in outputs]


@builder("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx, node, inputs):
    x = inputs[0]
    axes = list(range(2, _rank(x)))
    fn = tf.reduce_mean if node.op_type == "GlobalAveragePool" else tf.reduce_max
    return [fn(x, axis=axes, keepdims=True)]


@builder("BatchNormalization")
def _batch_norm(ctx, node, inputs):  # inference: (x - mean) / sqrt(var + eps) * scale + bias
    a = ctx.attrs(node)
    x, scale, bias, mean, var = inputs[:5]
    shape = [1, -1] + [1] * (_rank(x) - 2)
    eps = a.get("epsilon", 1e-5)
    inv = tf.reshape(scale / tf.sqrt(var + eps), shape)
    return [x * inv + tf.reshape(bias - mean * scale / tf.sqrt(var + eps), shape)]


@builder("InstanceNormalization")
def _instance_norm(ctx, node, inputs):
    x, scale, bias = inputs
    axes = list(range(2, _rank(x)))
    mean = tf.reduce_mean(x, axis=axes, keepdims=True)
    var = tf.reduce_mean(tf.square(x - mean), axis=axes, keepdims=True)
    shape = [1, -1] + [1] * (_rank(x) - 2)
    eps = ctx.attrs(node).get("epsilon", 1e-5)
    return [(x - mean) / tf.sqrt(var + eps) * tf.reshape(scale, shape) + tf.reshape(bias, shape)]


@builder("LRN")
def _lrn(ctx, node, inputs):  # x / (bias + alpha/size * sum of squares over `size` channels)^beta
    a = ctx.attrs(node)
    x = inputs[0]
    size = a["size"]
    sq = tf.square(x)
    c = x.shape.as_list()[1]
    if c is None:
        raise ValueError("LRN needs a known channel count")
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    padded = tf.pad(sq, [[0, 0], [lo, hi]] + [[0, 0]] * (_rank(x) - 2))
    total = tf.add_n([padded[:, i:i + c] for i in range(size)])
    return [x / tf.pow(a.get("bias", 1.0) + a.get("alpha", 1e-4) / size * total, a.get("beta", 0.75))]



