"""ONNX index, sorting, image and matrix ops as graphflow ops: Einsum, TopK, GatherND, ScatterND,
OneHot, NonZero, CumSum, Trilu, Det, Unique, DepthToSpace, SpaceToDepth (same `builder`
registry as `import_ops.py`)."""

import numpy as np

import graphflow as tf
from graphflow.interop.onnx.import_ops import _rank, builder
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
    # (a fed k is clamped, not wrapped, into int32: one above 2**31 exceeds any axis and fails)
    kk = int(np.asarray(known).reshape(-1)[0]) if known is not None else tf.cast(
        tf.minimum(tf.cast(tf.reshape(k, []), tf.int64), np.iinfo(np.int32).max), tf.int32)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = x if axis == rank - 1 else tf.transpose(x, perm)
    largest = a.get("largest", 1)
    unsigned = moved.dtype in (tf.uint16, tf.uint32, tf.uint64)
    if unsigned:  # through int64, shifted by -2**63 (an order-keeping map of every uint64)
        dtype, low = moved.dtype, tf.constant(np.iinfo(np.int64).min, tf.int64)
        moved = tf.cast(moved, tf.int64) + low
    if not largest:  # the smallest are the largest of the order-reversed values
        moved = -moved if moved.dtype.is_floating else -1 - moved  # (-1 - v: no int overflow)
    values, indices = tf.nn.top_k(moved, kk, sorted=True)
    if not largest:
        values = -values if values.dtype.is_floating else -1 - values
    if unsigned:
        values = tf.cast(values + low, dtype)
    if axis != rank - 1:
        values, indices = tf.transpose(values, perm), tf.transpose(indices, perm)
    return [values, tf.cast(indices, tf.int64)]


@builder("GatherND")
def _gather_nd(ctx, node, inputs):
    params, indices = inputs
    batch = ctx.attrs(node).get("batch_dims", 0)
    if batch:  # each index is preceded by its own batch position: one gather over all
        rank = _rank(indices, "indices")
        ones = tf.ones_like(indices[..., :1])
        dims = tf.shape(indices, out_type=indices.dtype)
        coords = [tf.reshape(tf.range(dims[i]), [1] * i + [-1] + [1] * (rank - 1 - i)) * ones
                  for i in range(batch)]
        indices = tf.concat(coords + [indices], axis=-1)
    return [tf.gather_nd(params, indices)]


@builder("ScatterND")
def _scatter_nd(ctx, node, inputs):
    """data with updates written (reduction none) or added (add) at indices."""
    data, indices, updates = inputs
    reduction = ctx.attrs(node).get("reduction", b"none")
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    shape = tf.shape(data, out_type=indices.dtype)
    if reduction in ("max", "min"):
        return [_scatter_nd_extreme(data, indices, updates, reduction)]
    if reduction == "mul":
        return [_scatter_nd_product(data, indices, updates, shape)]
    scattered = tf.scatter_nd(indices, updates, shape)
    if reduction == "add":
        return [data + scattered]
    if reduction != "none":
        raise ValueError(f"ScatterND reduction '{reduction}' is not supported")
    written = tf.scatter_nd(indices, tf.ones_like(updates, dtype=tf.int32), shape) > 0
    return [tf.where(written, scattered, data)]


def _scatter_nd_extreme(data, indices, updates, reduction):
    """ScatterND max / min: the index tuples become flat positions over data's first k axes;
    unsorted_segment_max / min combine the updates of each position (an untouched one gets the
    dtype's lowest / highest value) and data keeps the larger / smaller."""
    k = indices.shape.as_list()[-1]
    if k is None or data.shape.ndims is None:
        raise ValueError("ScatterND max/min needs indices of known last dim and data of known rank")
    dims = tf.shape(data, out_type=tf.int64)
    strides = [tf.reduce_prod(dims[j + 1:k]) for j in range(k)]
    index = tf.cast(indices, tf.int64)
    flat = tf.add_n([index[..., j] * strides[j] for j in range(k)])
    positions = tf.reduce_prod(dims[:k])
    rest = tf.shape(data)[k:]
    table = tf.reshape(data, tf.concat([[-1], rest], axis=0))
    rows = tf.reshape(updates, tf.concat([[-1], rest], axis=0))
    combine = tf.unsorted_segment_max if reduction == "max" else tf.unsorted_segment_min
    pick = tf.maximum if reduction == "max" else tf.minimum
    merged = pick(table, combine(rows, tf.reshape(flat, [-1]), positions))
    return tf.reshape(merged, tf.shape(data))


def _scatter_nd_product(data, indices, updates, shape):
    """ScatterND mul: data multiplied by each update in turn, in the order of the updates (as
    ONNX's reference does), one scatter per update: their count must be known when the graph is
    built."""
    k = indices.shape.ndims
    dims = indices.shape.as_list()[:-1] if k else None
    if dims is None or None in dims:
        raise ValueError("ScatterND mul needs indices whose leading dims are known")
    count = int(np.prod(dims))
    index = tf.reshape(indices, tf.concat([[count], tf.shape(indices)[-1:]], axis=0))
    rows = tf.reshape(updates, tf.concat([[count], tf.shape(updates)[len(dims):]], axis=0))
    out = data
    for i in range(count):
        hit = tf.scatter_nd(index[i:i + 1], tf.ones_like(rows[i:i + 1], dtype=tf.int32), shape)
        factor = tf.scatter_nd(index[i:i + 1], rows[i:i + 1], shape)
        out = tf.where(hit > 0, out * factor, out)
    return out


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
        return _unique_along_axis(inputs[0], a["axis"] % _rank(inputs[0]), a.get("sorted", 1))
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


def _unique_along_axis(x, axis, ordered):
    """Unique slices along `axis`: each slice flattened to a row, rows compared pairwise (the
    first equal row stands for each), sorted lexicographically (by the first column where two
    rows differ) when `ordered`, else kept in order of first appearance."""
    rank = _rank(x)
    moved = tf.transpose(x, [axis] + [d for d in range(rank) if d != axis])
    n = tf.shape(x, out_type=tf.int64)[axis]
    rows = tf.reshape(moved, tf.stack([n, tf.constant(-1, tf.int64)]))
    same = tf.reduce_all(tf.equal(rows[:, None, :], rows[None, :, :]), axis=2)
    first = tf.argmax(tf.cast(same, tf.int32), axis=1)  # the first row equal to each row
    positions = tf.range(n, dtype=tf.int64)
    reps = tf.boolean_mask(positions, tf.equal(first, positions))
    if ordered:
        picked = tf.gather(rows, reps)
        differ = tf.not_equal(picked[:, None, :], picked[None, :, :])
        column = tf.argmax(tf.cast(differ, tf.int32), axis=2)  # first column where they differ
        at = tf.one_hot(column, tf.shape(rows)[1], on_value=True, off_value=False)
        before = tf.reduce_any(tf.logical_and(at, picked[:, None, :] < picked[None, :, :]), axis=2)
        rank_of = tf.reduce_sum(tf.cast(before, tf.int64), axis=0)  # rows ordered before each
        reps = tf.gather(reps, tf.argsort(rank_of, stable=True))
    y = tf.gather(x, reps, axis=axis)
    inverse = tf.argmax(tf.cast(tf.equal(first[:, None], reps[None, :]), tf.int32), axis=1)
    slots = tf.range(tf.size(reps, out_type=tf.int64), dtype=tf.int64)
    counts = tf.reduce_sum(tf.cast(tf.equal(inverse[:, None], slots[None, :]), tf.int64), axis=0)
    return [y, reps, inverse, counts]


def _nchw_around(fn, node, a, x):
    """NCHW around graphflow's NHWC ops, whose channel order is DCR (TF's); CRD (channel, then
    the block's row and column) through a reshape / transpose / reshape of its own."""
    mode = a.get("mode", b"DCR")
    b = a["blocksize"]
    if (mode.decode() if isinstance(mode, bytes) else mode) == "DCR":
        y = fn(tf.transpose(x, [0, 2, 3, 1]), b)
        return [tf.transpose(y, [0, 3, 1, 2])]
    if _rank(x) != 4:
        raise ValueError(f"{node.op_type} needs a 4-D input")
    n, c, h, w = (d if d is not None else tf.shape(x)[i] for i, d in enumerate(x.shape.as_list()))

    def shape(*dims):
        return tf.stack(dims) if any(isinstance(d, tf.Tensor) for d in dims) else list(dims)

    if fn is tf.depth_to_space:  # [n, c/b², b, b, h, w] -> [n, c/b², h, b, w, b]
        y = tf.transpose(tf.reshape(x, shape(n, c // (b * b), b, b, h, w)), [0, 1, 4, 2, 5, 3])
        return [tf.reshape(y, shape(n, c // (b * b), h * b, w * b))]
    y = tf.transpose(tf.reshape(x, shape(n, c, h // b, b, w // b, b)), [0, 1, 3, 5, 2, 4])
    return [tf.reshape(y, shape(n, c * b * b, h // b, w // b))]


@builder("DepthToSpace")
def _depth_to_space(ctx, node, inputs):
    return _nchw_around(tf.depth_to_space, node, ctx.attrs(node), inputs[0])


@builder("SpaceToDepth")
def _space_to_depth(ctx, node, inputs):
    return _nchw_around(tf.space_to_depth, node, ctx.attrs(node), inputs[0])
