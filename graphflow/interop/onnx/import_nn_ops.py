"""ONNX convolutions, pooling and normalization as graphflow ops (NCHW / NCDHW, 1-D as 2-D with a
unit height).

Explicit ONNX pads become a `tf.pad` before a VALID op (so asymmetric pads import exactly); groups
split the channels into separate convolutions joined by a concat. Pooling with ceil_mode pads the
end further (the overhang is not counted by an average); pooling with dilations, which TF1's
pooling ops lack, is the max / sum over one strided slice per window tap. LpPool is the p-th root
of the window sums of |x|^p.
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
    x, one_d = _as_nd(x)
    spatial = 1 if one_d else _rank(x) - 2
    if one_d:
        w = tf.expand_dims(w, 2)
    rank, groups = _rank(x), a.get("group", 1)
    n, dims, kernel = x.shape.as_list()[0], x.shape.as_list()[2:], w.shape.as_list()[2:]
    out_c = w.shape.as_list()[1]
    if None in dims + kernel or out_c is None:
        raise ValueError("ConvTranspose needs known spatial sizes")
    strides = _spatial_attrs(a, "strides", spatial, 1)
    dilations = _spatial_attrs(a, "dilations", spatial, 1)
    full = [(size - 1) * s + (k - 1) * d + 1 for size, k, s, d in zip(dims, kernel, strides, dilations)]
    batch = tf.shape(x)[0] if n is None else n
    shape = tf.stack([batch, out_c] + full) if n is None else [n, out_c] + full
    fn, fmt = (tf.nn.conv2d_transpose, "NCHW") if rank == 4 else (tf.nn.conv3d_transpose, "NCDHW")
    order = list(range(2, rank)) + [1, 0]  # [in, out/g, k...] -> [k..., out/g, in]
    xs = tf.split(x, groups, axis=1) if groups > 1 else [x]
    ws = tf.split(w, groups, axis=0) if groups > 1 else [w]
    ys = [fn(xi, tf.transpose(wi, order), shape, strides=[1, 1] + strides, padding="VALID",
             data_format=fmt, dilations=[1, 1] + dilations) for xi, wi in zip(xs, ws)]
    y = tf.concat(ys, axis=1) if groups > 1 else ys[0]
    pads, sizes = _transpose_output(a, spatial, dims, full)
    grow = [max(lo + size - f, 0) for (lo, _), size, f in zip(pads, sizes, full)]
    if any(grow):  # output_padding / output_shape extend the full grid at the end (zeros)
        y = tf.pad(y, [[0, 0], [0, 0]] + [[0, g] for g in grow])
    # output index o is full-grid position o + pad_begin
    y = y[(slice(None), slice(None), *(slice(lo, lo + size) for (lo, _), size in zip(pads, sizes)))]
    return [_with_channel_bias(y, bias, one_d)]


def _transpose_output(a, spatial, dims, full):
    """ConvTranspose's ([[pad begin, pad end]...], output sizes): explicit pads; SAME_UPPER /
    SAME_LOWER pads that give `output_shape` (default input * stride); or a given
    `output_shape` with no pads, the full grid cut or zero-extended at the end."""
    extra = _spatial_attrs(a, "output_padding", spatial, 0)
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    shape = a.get("output_shape")
    shape = None if shape is None else _spatial_attrs(a, "output_shape", spatial, 1)
    if auto in ("SAME_UPPER", "SAME_LOWER") and "pads" not in a:
        strides = _spatial_attrs(a, "strides", spatial, 1)
        shape = shape or [size * s for size, s in zip(dims, strides)]
        pads = []
        for f, e, out in zip(full, extra, shape):
            total = f + e - out
            small, big = total // 2, total - total // 2
            pads.append([small, big] if auto == "SAME_UPPER" else [big, small])
        return pads, shape
    pads = _explicit_pads(a, spatial)
    if shape is not None and "pads" not in a:
        return pads, shape
    return pads, [f + e - lo - hi for f, e, (lo, hi) in zip(full, extra, pads)]


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


@builder("MaxPool", "AveragePool", "LpPool")
def _pool(ctx, node, inputs):
    a = ctx.attrs(node)
    x, one_d = _as_nd(inputs[0])
    spatial = 1 if one_d else _rank(x) - 2
    kernel = _spatial_attrs(a, "kernel_shape", spatial, 1)
    strides = _spatial_attrs(a, "strides", spatial, 1)
    dilations = _spatial_attrs(a, "dilations", spatial, 1)
    pads, mode = _pads_and_mode(a, x, kernel, strides, dilations, spatial)
    extra = _ceil_extra(x, pads, kernel, strides, dilations) if a.get("ceil_mode", 0) else None
    if mode == "SAME" and (extra is not None or node.op_type == "LpPool"):
        pads, mode = _same_upper_pads(x, kernel, strides, dilations), "VALID"
        if pads is None:
            raise ValueError(f"{node.op_type} with auto_pad here needs known spatial dims")
    full = [[lo, hi + e] for (lo, hi), e in zip(pads, extra)] if extra else pads
    if node.op_type == "LpPool":  # (sum of |x|^p over the window)^(1/p), padding adds 0
        p = float(a.get("p", 2))
        total = _window_reduce("sum", _pad_spatial(tf.pow(tf.abs(x), p), full), kernel, strides,
                               dilations, mode)
        y = tf.pow(total, 1.0 / p)
    elif node.op_type == "MaxPool":
        lowest = -np.inf if x.dtype.is_floating else int(np.iinfo(np.dtype(x.dtype.as_numpy_dtype)).min)
        if len(node.output) > 1 and node.output[1]:  # the Indices output too
            if mode == "SAME":
                full = _same_upper_pads(x, kernel, strides, dilations)
            y, indices = _max_pool_indices(x, full, lowest, kernel, strides, dilations,
                                           a.get("storage_order", 0))
            return [tf.squeeze(y, [2]) if one_d else y, tf.squeeze(indices, [2]) if one_d
                    else indices]
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


def _max_pool_indices(x, pads, lowest, kernel, strides, dilations, storage_order):
    """MaxPool with ONNX's Indices: the window maximum over one strided slice per tap, and the
    flat input index of its first (row-major) largest element, (n * C + c) * H * W + h * W + w
    (h + w * H with storage_order 1)."""
    dims = x.shape.as_list()[2:]
    if pads is None or None in dims:
        raise ValueError("MaxPool's Indices output needs known spatial dims")
    plane = np.arange(int(np.prod(dims)), dtype=np.int64).reshape(dims)
    if storage_order:
        if len(dims) != 2:
            raise ValueError("MaxPool storage_order 1 is implemented for 2-D pooling only")
        plane = plane.reshape(dims[::-1]).T
    plane = np.pad(plane, pads, constant_values=-1)  # padding: never the maximum
    batch_channel = tf.shape(x, out_type=tf.int64)[:2]
    base = tf.reshape(tf.range(tf.reduce_prod(batch_channel)) * int(np.prod(dims)),
                      tf.concat([batch_channel, tf.ones([len(dims)], tf.int64)], axis=0))
    values = _window_taps(_pad_spatial(x, pads, lowest), kernel, strides, dilations)
    places = [base + tap for tap in _window_taps(tf.constant(plane[None, None]), kernel, strides,
                                                  dilations)]
    first = tf.argmax(tf.stack(values), axis=0, output_type=tf.int32)
    chosen = tf.one_hot(first, len(values), on_value=True, off_value=False, axis=0)
    picked = tf.reduce_sum(tf.where(chosen, tf.stack(places), tf.zeros_like(tf.stack(places))),
                           axis=0)
    return tf.reduce_max(tf.stack(values), axis=0), picked


@builder("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx, node, inputs):
    x = inputs[0]
    axes = list(range(2, _rank(x)))
    fn = tf.reduce_mean if node.op_type == "GlobalAveragePool" else tf.reduce_max
    return [fn(x, axis=axes, keepdims=True)]


@builder("BatchNormalization")
def _batch_norm(ctx, node, inputs):
    """Inference: (x - mean) / sqrt(var + eps) * scale + bias. Training mode (opset 14+): the
    batch's own mean and (population) variance over every axis but the channel one normalize
    x, and the running statistics come out as mean * momentum + batch mean * (1 - momentum)."""
    a = ctx.attrs(node)
    x, scale, bias, mean, var = inputs[:5]
    shape = [1, -1] + [1] * (_rank(x) - 2)
    eps = a.get("epsilon", 1e-5)
    training = a.get("training_mode", 0)
    if training:
        momentum = a.get("momentum", 0.9)
        running = (mean, var)
        mean, var = tf.nn.moments(x, [0] + list(range(2, _rank(x))))
    inv = tf.reshape(scale / tf.sqrt(var + eps), shape)
    y = x * inv + tf.reshape(bias - mean * scale / tf.sqrt(var + eps), shape)
    if not training:
        return [y]
    return [y] + [old * momentum + new * (1.0 - momentum) for old, new in zip(running, (mean, var))]


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



