"""ONNX Resize as graphflow ops (same `builder` registry as `import_ops.py`).

Sizes or scales known when the graph is built, with a mode TF1's resize ops have (linear or
nearest with their coordinate conventions, over the two spatial axes of a 4-D image), become
`tf.image.resize_bilinear` / `resize_nearest_neighbor`. Every other Resize — sizes, scales or
roi fed at run time, cubic, the other coordinate transformations and nearest roundings,
`exclude_outside`, `axes`, `keep_aspect_ratio_policy`, tf_crop_and_resize's extrapolation — is
resampled one axis at a time, as ONNX's own reference does: each output position's source
coordinate is computed in float64 from the run-time sizes, its 1 (nearest), 2 (linear) or 4
(cubic) neighbours are gathered with their indices clamped into the axis (edge padding) and
summed with their weights. With antialias, the linear or cubic kernel widens by 1 / scale when
downscaling: each axis is then a product with a dense [output, input] weight matrix (the kernel
at every input position, the positions past either end folded onto the edge), which needs the
input's size along the axis when the graph is built.
"""

import numpy as np

import graphflow as tf
from graphflow.interop.onnx.import_ops import _known, _rank, builder
from graphflow.ops import static_value

_TF_MODES = {  # (mode, coordinate transformation, nearest_mode) -> (align_corners, half_pixel)
    ("linear", "asymmetric", None): (False, False),
    ("linear", "align_corners", None): (True, False),
    ("linear", "half_pixel", None): (False, True),
    ("nearest", "asymmetric", "floor"): (False, False),
    ("nearest", "align_corners", "round_prefer_ceil"): (True, False),
    ("nearest", "tf_half_pixel_for_nn", "floor"): (False, True),
}
_F64 = tf.float64


def _input(inputs, index):
    return inputs[index] if len(inputs) > index and inputs[index] is not None else None


@builder("Resize")
def _resize(ctx, node, inputs):
    x = inputs[0]
    a = ctx.attrs(node)

    def text(key, default):
        v = a.get(key, default)
        return v.decode() if isinstance(v, bytes) else v

    mode = text("mode", "nearest")
    coords = text("coordinate_transformation_mode", "half_pixel")
    nearest = text("nearest_mode", "round_prefer_floor") if mode == "nearest" else None
    if mode not in ("nearest", "linear", "cubic"):
        raise ValueError(f"Resize mode={mode} is not supported")
    antialias = bool(a.get("antialias", 0))
    if antialias and mode == "nearest":
        raise ValueError("Resize antialias applies to linear and cubic modes only")
    roi, scales, sizes = _input(inputs, 1), _input(inputs, 2), _input(inputs, 3)
    if scales is not None and scales.shape.as_list() == [0]:
        scales = None  # an empty scales input (opset 11-12) stands for "use sizes"
    plain = (not antialias and _rank(x) == 4 and (mode, coords, nearest) in _TF_MODES
             and x.shape.is_fully_defined() and "axes" not in a
             and text("keep_aspect_ratio_policy", "stretch") == "stretch"
             and all(t is None or static_value.constant_value(t) is not None
                     for t in (scales, sizes)))
    if plain:
        y = _tf_resize(x, mode, _TF_MODES[(mode, coords, nearest)], scales, sizes)
        if y is not None:
            return [y]
    rank = _rank(x)
    axes = [ax % rank for ax in a.get("axes", range(rank))]
    out, scale = _output_sizes(x, axes, scales, sizes, text("keep_aspect_ratio_policy", "stretch"))
    if coords == "tf_crop_and_resize":
        if roi is None:
            raise ValueError("Resize tf_crop_and_resize needs roi")
        roi = tf.cast(tf.reshape(roi, [-1]), _F64)
    work = x if x.dtype in (tf.float32, tf.float64) else tf.cast(x, tf.float32)
    extrapolation = tf.constant(a.get("extrapolation_value", 0.0), work.dtype)
    for i, axis in enumerate(axes):
        bounds = None if roi is None else (roi[i], roi[i + len(axes)])
        source, outside = _source_coordinates(work, axis, out[i], scale[i], coords, bounds)
        if antialias:
            work = _resample_antialiased(work, axis, source, scale[i], mode,
                                         a.get("cubic_coeff_a", -0.75),
                                         bool(a.get("exclude_outside", 0)))
        else:
            work = _resample(work, axis, source, mode, nearest, a.get("cubic_coeff_a", -0.75),
                             bool(a.get("exclude_outside", 0)))
        if outside is not None:  # tf_crop_and_resize: positions outside the input
            shape = [1] * rank
            shape[axis] = -1
            work = tf.where(tf.reshape(outside, shape), tf.fill(tf.shape(work), extrapolation),
                            work)
    return [work if work.dtype == x.dtype else tf.cast(work, x.dtype)]


def _tf_resize(x, mode, flags, scales, sizes):
    """TF1's resize ops over the spatial axes of NHWC (or NCHW, through transposes) for sizes
    or scales known at build time; None when the batch or channel axis would change."""
    shape = x.shape.as_list()
    if sizes is not None:
        out = [int(v) for v in _known(sizes, "sizes")]
    else:
        factors = _known(scales, "scales").astype(np.float32)
        out = [int(v) for v in (factors * np.array(shape, np.float32)).astype(np.int64)]
    if out[0] != shape[0]:
        return None
    if out[3] == shape[3]:
        images, nchw = x, False
    elif out[1] == shape[1]:
        images, nchw = tf.transpose(x, [0, 2, 3, 1]), True
        out = [out[0], out[2], out[3], out[1]]
    else:
        return None
    resize = tf.image.resize_bilinear if mode == "linear" else tf.image.resize_nearest_neighbor
    y = resize(images, out[1:3], align_corners=flags[0], half_pixel_centers=flags[1])
    if y.dtype != x.dtype:
        y = tf.cast(y, x.dtype)
    return tf.transpose(y, [0, 3, 1, 2]) if nchw else y


def _output_sizes(x, axes, scales, sizes, policy):
    """Per resized axis: the output size (int32 scalar tensor) and the scale (float64) that maps
    its coordinates, as ONNX computes them (scales: floor(scale * size) in float32; sizes, with a
    keep_aspect_ratio_policy: one scale for all axes, the sizes rounded half up)."""
    dims = tf.shape(x)
    in_sizes = [tf.cast(dims[axis], _F64) for axis in axes]
    if sizes is not None:
        wanted = tf.cast(tf.reshape(sizes, [-1]), _F64)
        scale = [wanted[i] / in_sizes[i] for i in range(len(axes))]
        if policy in ("not_larger", "not_smaller"):
            pick = tf.reduce_min if policy == "not_larger" else tf.reduce_max
            one = pick(tf.stack(scale))
            scale = [one] * len(axes)
            out = [tf.cast(tf.floor(one * n + 0.5), tf.int32) for n in in_sizes]
        elif policy != "stretch":
            raise ValueError(f"keep_aspect_ratio_policy={policy} is not supported")
        else:
            out = [tf.cast(wanted[i], tf.int32) for i in range(len(axes))]
        return out, scale
    if scales is None:
        raise ValueError("Resize needs scales or sizes")
    factors = tf.cast(tf.reshape(scales, [-1]), tf.float32)
    out = [tf.cast(tf.floor(factors[i] * tf.cast(dims[axis], tf.float32)), tf.int32)
           for i, axis in enumerate(axes)]
    return out, [tf.cast(factors[i], _F64) for i in range(len(axes))]


def _source_coordinates(x, axis, out, scale, coords, roi):
    """Each output position's coordinate in the input along `axis` (float64), and for
    tf_crop_and_resize which positions fall outside it."""
    size = tf.cast(tf.shape(x)[axis], _F64)
    y = tf.cast(tf.range(out), _F64)
    width = scale * size  # ONNX's output width: scale * input size, not rounded
    single = tf.equal(width, 1.0)
    span = tf.where(single, tf.constant(1.0, _F64), width - 1.0)  # (never divide by zero)
    if coords == "align_corners":
        return tf.where(single, tf.zeros_like(y), y * (size - 1.0) / span), None
    if coords == "asymmetric":
        return y / scale, None
    if coords == "tf_crop_and_resize":
        start, end = roi
        source = tf.where(single, tf.fill(tf.shape(y), (end - start) * (size - 1.0) / 2.0),
                          y * (end - start) * (size - 1.0) / span) + start * (size - 1.0)
        return source, tf.logical_or(source < 0.0, source > size - 1.0)
    if coords == "pytorch_half_pixel":
        return tf.where(single, tf.fill(tf.shape(y), tf.constant(-0.5, _F64)),
                        (y + 0.5) / scale - 0.5), None
    if coords == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if coords == "half_pixel_symmetric":
        offset = size / 2.0 * (1.0 - tf.cast(out, _F64) / width)
        return offset + (y + 0.5) / scale - 0.5, None
    raise ValueError(f"Resize coordinate_transformation_mode={coords} is not supported")


def _taps(source, mode, nearest, a):
    """[(index, weight or None)]: the input positions each output reads (float64 indices, not
    yet clamped) and their weights (ONNX's coefficients)."""
    base = tf.floor(source)
    frac = source - base
    if mode == "nearest":
        up = {"round_prefer_floor": frac > 0.5, "round_prefer_ceil": frac >= 0.5,
              "floor": tf.zeros_like(frac, dtype=tf.bool), "ceil": frac > 0.0}
        if nearest not in up:
            raise ValueError(f"Resize nearest_mode={nearest} is not supported")
        return [(base + tf.cast(up[nearest], _F64), None)]
    if mode == "linear":
        return [(base, 1.0 - frac), (base + 1.0, frac)]
    r, s = frac + 1.0, 2.0 - frac  # cubic: distances to the outer taps
    c = [((a * r - 5 * a) * r + 8 * a) * r - 4 * a,
         ((a + 2) * frac - (a + 3)) * frac * frac + 1,
         ((a + 2) * (1.0 - frac) - (a + 3)) * (1.0 - frac) * (1.0 - frac) + 1,
         ((a * s - 5 * a) * s + 8 * a) * s - 4 * a]
    return [(base + float(k - 1), c[k]) for k in range(4)]


def _resample(x, axis, source, mode, nearest, cubic_a, exclude_outside):
    size = tf.cast(tf.shape(x)[axis], _F64)
    taps = _taps(source, mode, nearest, cubic_a)
    if exclude_outside and taps[0][1] is not None:  # outside taps weigh 0, the rest renormalized
        inside = [tf.logical_and(i >= 0.0, i <= size - 1.0) for i, _ in taps]
        weights = [tf.where(m, w, tf.zeros_like(w)) for m, (_, w) in zip(inside, taps)]
        total = tf.add_n(weights)
        total = tf.where(tf.equal(total, 0.0), tf.ones_like(total), total)
        taps = [(i, w / total) for (i, _), w in zip(taps, weights)]
    shape = [1] * _rank(x)
    shape[axis] = -1
    result = None
    for index, weight in taps:
        index = tf.cast(tf.clip_by_value(index, tf.constant(0.0, _F64), size - 1.0), tf.int32)
        picked = tf.gather(x, index, axis=axis)
        if weight is not None:
            picked = picked * tf.reshape(tf.cast(weight, x.dtype), shape)
        result = picked if result is None else result + picked
    return result


def _kernel(distance, mode, a):
    """ONNX's linear (triangle) or cubic (Keys, parameter a) interpolation kernel."""
    d = tf.abs(distance)
    if mode == "linear":
        return tf.maximum(1.0 - d, tf.zeros_like(d))
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    zero = tf.zeros_like(d)
    return tf.where(d <= 1.0, near, tf.where(d < 2.0, far, zero))


def _resample_antialiased(x, axis, source, scale, mode, a, exclude_outside):
    """Resample along `axis` with the kernel stretched by 1 / min(scale, 1): weights at every
    integer position within reach (normalized to sum 1, as ONNX's window does), the positions
    outside the input folded onto its first / last element (edge padding) or, with
    exclude_outside, dropped before normalizing."""
    size = x.shape.as_list()[axis]
    if size is None:
        raise ValueError("Resize with antialias needs the input's size along each resized axis")
    reach = (1 if mode == "linear" else 2) * size + 2  # 1 / scale <= size for a non-empty output
    positions = np.arange(-reach, size + reach)
    shrink = tf.minimum(scale, tf.constant(1.0, _F64))
    weights = _kernel((tf.constant(positions, _F64)[None, :] - source[:, None]) * shrink, mode, a)
    if exclude_outside:
        inside = ((positions >= 0) & (positions < size)).astype(np.float64)
        weights = weights * tf.constant(inside[None, :])
    weights = weights / tf.reduce_sum(weights, axis=1, keepdims=True)
    fold = np.zeros((len(positions), size))
    fold[np.arange(len(positions)), np.clip(positions, 0, size - 1)] = 1.0
    matrix = tf.cast(tf.matmul(weights, tf.constant(fold)), x.dtype)  # [output, input]
    y = tf.tensordot(x, matrix, axes=[[axis], [1]])  # the new axis comes last
    rank = _rank(x)
    return tf.transpose(y, list(range(axis)) + [rank - 1] + list(range(axis, rank - 1)))
