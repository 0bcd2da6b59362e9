"""ONNX convolutions, pooling and normalization as graphflow ops (NCHW / NCDHW, 1-D as 2-D with a
unit height).

Explicit ONNX pads become a `tf.pad` before a VALID op (so asymmetric pads import exactly); groups
split the channels into separate convolutions joined by a concat. Pooling with ceil_mode pads the
end further (the overhang is not counted by an average); pooling with dilations, which TF1's
pooling ops lack, is the max / sum over one strided slice per window tap.
"""

import itertools

import numpy as np

import graphflow as tf
from graphflow.interop.onnx.import_ops import _rank, builder
from graphflow.ops import static_value


def _as_nd(x):
    """(x as a 4-D NCHW or 5-D NCDHW tensor, whether it was 1-D spatial: a unit height added)."""
    rank = _rank(x)
    if rank == 3:
        return tf.expand_dims(x, 2), True
    if rank not in (4, 5):
        raise ValueError(f"only 1-D, 2-D and 3-D spatial inputs are supported, got rank {rank}")
    return x, False


def _spatial_attrs(a, name, spatial, default):
    value = list(a.get(name, [default] * spatial))
    return [default] * (2 - spatial) + value if spatial == 1 else value


def _explicit_pads(a, spatial):
    """ONNX `pads` [b1, .., bn, e1, .., en] as [[b1, e1], ...] (a unit height first for 1-D)."""
    raw = list(a.get("pads", [0] * (2 * spatial)))
    pads = [[raw[i], raw[i + spatial]] for i in range(spatial)]
    return [[0, 0]] + pads if spatial == 1 else pads


def _pads_and_mode(a, x, kernel, strides, dilations, spatial):
    """(paddings [[begin, end] per spatial dim], 'VALID'|'SAME') for the ONNX pad attributes."""
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        dims = x.shape.as_list()[2:]
        if None in dims:
            if auto == "SAME_UPPER":
                return [[0, 0]] * len(dims), "SAME"  # TF's SAME is SAME_UPPER
            raise ValueError("SAME_LOWER needs known spatial dims")
        pads = []
        for size, k, s, d in zip(dims, kernel, strides, dilations):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            pads.append([small, big] if auto == "SAME_UPPER" else [big, small])
        return pads, "VALID"
    return _explicit_pads(a, spatial), "VALID"


def _same_upper_pads(x, kernel, strides, dilations):
    """The pads TF's SAME padding gives (odd padding at the end), or None if dims are unknown."""
    dims = x.shape.as_list()[2:] if x.shape.ndims in (4, 5) else [None]
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


def _conv_nd(x, f, strides, mode, dilations):
    """conv2d (NCHW) or conv3d (NCDHW) by the rank of `x`; `f` is [k..., in, out]."""
    fn, fmt = (tf.nn.conv2d, "NCHW") if _rank(x) == 4 else (tf.nn.conv3d, "NCDHW")
    return fn(x, f, strides=[1, 1] + strides, padding=mode, data_format=fmt,
              dilations=[1, 1] + dilations)


@builder("Conv")
def _conv(ctx, node, inputs):
    a = ctx.attrs(node)
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    x, one_d = _as_nd(x)
    spatial = 1 if one_d else _rank(x) - 2
    if one_d:
        w = tf.expand_dims(w, 2)
    kernel = w.shape.as_list()[2:]
    strides = _spatial_attrs(a, "strides", spatial, 1)
    dilations = _spatial_attrs(a, "dilations", spatial, 1)
    pads, mode = _pads_and_mode(a, x, kernel, strides, dilations, spatial)
    if mode == "VALID" and pads == _same_upper_pads(x, kernel, strides, dilations):
        pads, mode = [[0, 0]] * len(pads), "SAME"  # the convolution pads itself: no Pad op, no copy
    x = _pad_spatial(x, pads)
    groups = a.get("group", 1)
    order = list(range(2, _rank(x))) + [1, 0]  # ONNX [out, in/g, k...] -> [k..., in/g, out]
    filt = _constant_or(w, lambda v: np.transpose(v, order), lambda t: tf.transpose(t, order))
    xs = tf.split(x, groups, axis=1) if groups > 1 else [x]
    fs = tf.split(filt, groups, axis=-1) if groups > 1 else [filt]
    ys = [_conv_nd(xi, fi, strides, mode, dilations) for xi, fi in zip(xs, fs)]
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
        shape = [1, -1] + [1] * (_rank(y) - 2)
        y = y + _constant_or(bias, lambda v: v.reshape(shape), lambda t: tf.reshape(t, shape))
    return tf.squeeze(y, [2]) if one_d else y


@builder("ConvTranspose")
def _conv_transpose(ctx, node, inputs):
    a = ctx.attrs(node)
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    if a.get("group", 1) != 1 or any(d != 1 for d in a.get("dilations", [1])):
        raise ValueError("ConvTranspose with groups or dilations is not supported")
    x, one_d = _as_nd(x)
    if _rank(x) != 4:
        raise ValueError("ConvTranspose is supported for 1-D and 2-D inputs only")
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


def _ceil_extra(x, pads, kernel, strides, dilations):
    """Per spatial dim, the padding to add at the end so that VALID pooling gives ONNX's
    ceil_mode output size (a last window may overhang the end, but must start inside the input or
    its begin padding)."""
    dims = x.shape.as_list()[2:]
    if None in dims:
        raise ValueError("pooling with ceil_mode needs known spatial dims")
    extra = []
    for size, (lo, hi), k, s, d in zip(dims, pads, kernel, strides, dilations):
        effective = (k - 1) * d + 1
        padded = size + lo + hi
        out = -(-(padded - effective) // s) + 1
        if (out - 1) * s >= size + lo:
            out -= 1
        extra.append(max((out - 1) * s + effective - padded, 0))
    return extra


def _window_taps(xp, kernel, strides, dilations):
    """The strided slices of a (VALID-padded) NC... tensor, one per window tap: pooling with
    dilations as an elementwise reduction over them (TF1's pooling ops have no dilations)."""
    dims = xp.shape.as_list()[2:]
    if None in dims:
        raise ValueError("pooling with dilations needs known spatial dims")
    outs = [(size - (k - 1) * d - 1) // s + 1 for size, k, s, d in zip(dims, kernel, strides, dilations)]
    taps = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        index = [slice(None), slice(None)]
        for t, s, d, o in zip(tap, strides, dilations, outs):
            index.append(slice(t * d, t * d + (o - 1) * s + 1, s))
        taps.append(xp[tuple(index)])
    return taps


def _window_reduce(kind, xp, kernel, strides, dilations, mode):
    """Max or sum of each pooling window of NC... `xp` (average pooling's sum: mean * size)."""
    if any(d != 1 for d in dilations):
        taps = _window_taps(xp, kernel, strides, dilations)
        if kind == "max":
            out = taps[0]
            for tap in taps[1:]:
                out = tf.maximum(out, tap)
            return out
        return tf.add_n(taps)
    fmt = "NCHW" if _rank(xp) == 4 else "NCDHW"
    ksize, stride = [1, 1] + kernel, [1, 1] + strides
    if kind == "max":
        fn = tf.nn.max_pool if fmt == "NCHW" else tf.nn.max_pool3d
        return fn(xp, ksize, stride, mode, data_format=fmt)
    fn = tf.nn.avg_pool if fmt == "NCHW" else tf.nn.avg_pool3d
    return fn(xp, ksize, stride, mode, data_format=fmt) * float(np.prod(kernel))


@builder("MaxPool", "AveragePool")
def _pool(ctx, node, inputs):
    a = ctx.attrs(node)
    x, one_d = _as_nd(inputs[0])
    spatial = 1 if one_d else _rank(x) - 2
    kernel = _spatial_attrs(a, "kernel_shape", spatial, 1)
    strides = _spatial_attrs(a, "strides", spatial, 1)
    dilations = _spatial_attrs(a, "dilations", spatial, 1)
    pads, mode = _pads_and_mode(a, x, kernel, strides, dilations, spatial)
    extra = _ceil_extra(x, pads, kernel, strides, dilations) if a.get("ceil_mode", 0) else None
    if extra is not None and mode == "SAME":
        pads, mode = _same_upper_pads(x, kernel, strides, dilations), "VALID"
    full = [[lo, hi + e] for (lo, hi), e in zip(pads, extra)] if extra else pads
    if node.op_type == "MaxPool":
        lowest = -np.inf if x.dtype.is_floating else int(np.iinfo(np.dtype(x.dtype.as_numpy_dtype)).min)
        y = _window_reduce("max", _pad_spatial(x, full, lowest), kernel, strides, dilations, mode)
    else:
        total = _window_reduce("sum", _pad_spatial(x, full), kernel, strides, dilations, mode)
        if mode == "SAME":  # TF's SAME averages over the real elements only
            y = total / float(np.prod(kernel))
        else:  # divide each window's sum by the number of elements it counts
            ones = tf.ones_like(x)
            if a.get("count_include_pad", 0):  # the explicit padding counts, the ceil overhang not
                mask = _pad_spatial(_pad_spatial(ones, pads, 1.0),
                                    [[0, e] for e in extra] if extra else [[0, 0]] * len(pads))
            else:
                mask = _pad_spatial(ones, full)
            if mask is ones:
                y = total / float(np.prod(kernel))
            else:
                y = total / _window_reduce("sum", mask, kernel, strides, dilations, mode)
    return [tf.squeeze(y, [2]) if one_d else y]


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



