"""ONNX index, sorting, image and matrix ops as graphflow ops: Einsum, TopK, GatherND, ScatterND,
OneHot, NonZero, Resize, CumSum, Trilu, Det, Unique, DepthToSpace, SpaceToDepth (same `builder`
registry as `import_ops.py`)."""

import numpy as np

import graphflow as tf
from graphflow.interop.onnx.import_ops import _known, _rank, builder
from graphflow.ops import static_value


@builder("Einsum")
def _einsum(ctx, node, inputs):
    equation = ctx.attrs(node)["equation"]
    return [tf.einsum(equation.decode() if isinstance(equation, bytes) else equation, *inputs)]


@builder("TopK")
def _top_k(ctx, node, inputs):
    """graphflow's top_k takes the largest along the last axis: other axes are transposed
    there and back, the smallest are the largest of -x (equal values keep the lower index)."""
    x, k = inputs
    a = ctx.attrs(node)
    rank = _rank(x)
    axis = a.get("axis", -1) % rank
    known = static_value.constant_value(k)  # else k is fed at run time, as TF1's top_k takes it
    kk = int(np.asarray(known).reshape(-1)[0]) if known is not None else tf.cast(
        tf.reshape(k, []), tf.int32)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = x if axis == rank - 1 else tf.transpose(x, perm)
    largest = a.get("largest", 1)
    values, indices = tf.nn.top_k(moved if largest else -moved, kk, sorted=True)
    values = values if largest else -values
    if axis != rank - 1:
        values, indices = tf.transpose(values, perm), tf.transpose(indices, perm)
    return [values, tf.cast(indices, tf.int64)]


@builder("GatherND")
def _gather_nd(ctx, node, inputs):
    if ctx.attrs(node).get("batch_dims", 0):
        raise ValueError("GatherND with batch_dims is not supported")
    return [tf.gather_nd(inputs[0], inputs[1])]


@builder("ScatterND")
def _scatter_nd(ctx, node, inputs):
    """data with updates written (reduction none) or added (add) at indices."""
    data, indices, updates = inputs
    reduction = ctx.attrs(node).get("reduction", b"none")
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    shape = tf.shape(data, out_type=indices.dtype)
    scattered = tf.scatter_nd(indices, updates, shape)
    if reduction == "add":
        return [data + scattered]
    if reduction != "none":
        raise ValueError(f"ScatterND reduction '{reduction}' is not supported")
    written = tf.scatter_nd(indices, tf.ones_like(updates, dtype=tf.int32), shape) > 0
    return [tf.where(written, scattered, data)]


@builder("OneHot")
def _one_hot(ctx, node, inputs):  # ONNX counts a negative index from the end; TF's is all off
    indices, depth, values = inputs
    known = static_value.constant_value(depth)  # else a depth fed at run time (any numeric type)
    d = (int(np.asarray(known).reshape(-1)[0]) if known is not None
         else tf.cast(tf.reshape(depth, []), tf.int64))
    index = tf.cast(indices, tf.int64)
    index = tf.where(index < 0, index + d, index)
    off, on = values[0], values[1]
    return [tf.one_hot(index, d, on_value=on, off_value=off, axis=ctx.attrs(node).get("axis", -1),
                       dtype=values.dtype)]


@builder("NonZero")
def _non_zero(ctx, node, inputs):  # ONNX's [rank, n] = transpose of TF's [n, rank] coordinates
    x = inputs[0]
    mask = x if x.dtype == tf.bool else tf.not_equal(x, tf.zeros([], x.dtype))
    return [tf.transpose(tf.cast(tf.where(mask), tf.int64))]


_RESIZE_MODES = {  # (mode, coordinate transformation, nearest_mode) -> (align_corners, half_pixel)
    ("linear", "asymmetric", None): (False, False),
    ("linear", "align_corners", None): (True, False),
    ("linear", "half_pixel", None): (False, True),
    ("nearest", "asymmetric", "floor"): (False, False),
    ("nearest", "align_corners", "round_prefer_ceil"): (True, False),
    ("nearest", "tf_half_pixel_for_nn", "floor"): (False, True),
}


@builder("Resize")
def _resize(ctx, node, inputs):
    """Resize of the two spatial axes of a 4-D image (NHWC, or NCHW through transposes) with the
    coordinate modes TF's resize_bilinear / resize_nearest_neighbor have."""
    x = inputs[0]
    a = ctx.attrs(node)

    def text(key, default):
        v = a.get(key, default)
        return v.decode() if isinstance(v, bytes) else v

    mode = text("mode", "nearest")
    coords = text("coordinate_transformation_mode", "half_pixel")
    nearest = text("nearest_mode", "round_prefer_floor") if mode == "nearest" else None
    key = (mode, coords, nearest)
    if key not in _RESIZE_MODES:
        raise ValueError(f"Resize mode={mode} coordinate_transformation_mode={coords}"
                         + (f" nearest_mode={nearest}" if nearest else "") + " is not supported")
    align, half = _RESIZE_MODES[key]
    if _rank(x) != 4 or x.shape.is_fully_defined() is False:
        raise ValueError("Resize needs a 4-D input of known shape")
    shape = x.shape.as_list()
    sizes = inputs[3] if len(inputs) > 3 and inputs[3] is not None else None
    if sizes is not None:
        out = [int(v) for v in _known(sizes, "sizes")]
    else:
        scales = _known(inputs[2], "scales").astype(np.float64)
        out = [int(np.floor(d * s)) for d, s in zip(shape, scales)]
    if out[0] != shape[0]:
        raise ValueError("Resize of the batch axis is not supported")
    if out[3] == shape[3]:
        images, nchw = x, False
    elif out[1] == shape[1]:
        images, nchw = tf.transpose(x, [0, 2, 3, 1]), True
        out = [out[0], out[2], out[3], out[1]]
    else:
        raise ValueError("Resize must keep the channel axis (axis 1 or 3) unchanged")
    resize = tf.image.resize_bilinear if mode == "linear" else tf.image.resize_nearest_neighbor
    y = resize(images, out[1:3], align_corners=align, half_pixel_centers=half)
    if y.dtype != x.dtype:
        y = tf.cast(y, x.dtype)
    return [tf.transpose(y, [0, 3, 1, 2]) if nchw else y]


@builder("CumSum")
def _cumsum(ctx, node, inputs):
    x, axis = inputs
    a = ctx.attrs(node)
    flags = {"exclusive": bool(a.get("exclusive", 0)), "reverse": bool(a.get("reverse", 0))}
    known = static_value.constant_value(axis)  # else an axis fed at run time: a tensor
    axis = int(np.asarray(known).reshape(-1)[0]) if known is not None else tf.reshape(axis, [])
    return [tf.cumsum(x, axis, **flags)]


@builder("Trilu")
def _trilu(ctx, node, inputs):
    """upper=1 keeps j - i >= k, upper=0 keeps j - i <= k: one band part when k is a constant
    and the kept part holds the main diagonal; otherwise a mask built from the row and column
    indices (k may then be a value known at run time only)."""
    x = inputs[0]
    upper = bool(ctx.attrs(node).get("upper", 1))
    k_input = inputs[1] if len(inputs) > 1 and inputs[1] is not None else None
    k = 0 if k_input is None else static_value.constant_value(k_input)
    if k is not None:
        k = int(np.asarray(k).reshape(-1)[0])
        if upper and k <= 0:
            return [tf.matrix_band_part(x, -k, -1)]
        if not upper and k >= 0:
            return [tf.matrix_band_part(x, -1, k)]
        k = tf.constant(k, tf.int64)
    else:
        k = tf.cast(tf.reshape(k_input, []), tf.int64)
    dims = tf.shape(x, out_type=tf.int64)
    rows, cols = dims[-2], dims[-1]
    offset = tf.range(cols)[None, :] - tf.range(rows)[:, None]  # j - i
    keep = tf.greater_equal(offset, k) if upper else tf.less_equal(offset, k)
    return [tf.where(keep, x, tf.zeros_like(x))]


@builder("Det")
def _det(ctx, node, inputs):
    return [tf.matrix_determinant(inputs[0])]


@builder("Unique")
def _unique(ctx, node, inputs):
    """The flattened input's distinct values, the first position of each, each entry's value
    index and the counts (int64); sorted=1 (the default) orders them by value."""
    a = ctx.attrs(node)
    if "axis" in a:
        raise ValueError("ONNX Unique along an axis is not supported (graphflow's unique is 1-D)")
    y, idx, count = tf.unique_with_counts(tf.reshape(inputs[0], [-1]), out_idx=tf.int64)
    values = tf.range(tf.size(y, out_type=tf.int64), dtype=tf.int64)
    hits = tf.cast(tf.equal(tf.expand_dims(values, 1), tf.expand_dims(idx, 0)), tf.int32)
    first = tf.argmax(hits, axis=1)  # the first position holding each value
    if a.get("sorted", 1):
        perm = tf.argsort(y, stable=True)
        rank = tf.cast(tf.argsort(perm), tf.int64)
        y, first, count = tf.gather(y, perm), tf.gather(first, perm), tf.gather(count, perm)
        idx = tf.gather(rank, idx)
    return [y, first, idx, count]


def _nchw_around(fn, node, a, x):  # NCHW around graphflow's NHWC ops; DCR is TF's order
    mode = a.get("mode", b"DCR")
    if (mode.decode() if isinstance(mode, bytes) else mode) != "DCR":
        raise ValueError(f"{node.op_type} mode CRD is not supported (graphflow's is DCR)")
    y = fn(tf.transpose(x, [0, 2, 3, 1]), a["blocksize"])
    return [tf.transpose(y, [0, 3, 1, 2])]


@builder("DepthToSpace")
def _depth_to_space(ctx, node, inputs):
    return _nchw_around(tf.depth_to_space, node, ctx.attrs(node), inputs[0])


@builder("SpaceToDepth")
def _space_to_depth(ctx, node, inputs):
    return _nchw_around(tf.space_to_depth, node, ctx.attrs(node), inputs[0])
