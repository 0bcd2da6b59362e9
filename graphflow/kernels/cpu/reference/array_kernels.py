"""numpy kernels for the array ops: shape queries, reshape, fill, broadcast, expand/squeeze, concat,
stack/unstack, range, transpose, gather (+ its scatter-add gradient), segment sums, one_hot, tile,
pad, reverse, split, slice and strided slice.

Kernels that return views of input 0 (reshape, transpose, slicing) have `may_alias_input` set on
their OpDef, so the session copies their value before handing it out when the base is shared.
"""

import numpy as np

from graphflow.framework.strided_slice import strided_slice_index
from graphflow.kernels.cpu import cpu_kernel


# ---------------------------------------------------------------- shape queries
@cpu_kernel("Shape")
def _shape(node):
    out = node.out_dtypes[0]
    return lambda x: np.array(np.shape(x), dtype=out)


@cpu_kernel("Size")
def _size(node):
    out = node.out_dtypes[0]
    return lambda x: np.array(np.size(x), dtype=out)


@cpu_kernel("Rank")
def _rank(node):
    return lambda x: np.array(np.ndim(x), dtype=np.int32)


# ---------------------------------------------------------------- reshape, fill, broadcast
def _dims(shape_array, what="shape"):
    dims = tuple(int(d) for d in np.asarray(shape_array).reshape(-1))
    return dims


@cpu_kernel("Reshape")
def _reshape(node):
    # tolist() and tuple methods, not a generator of int() calls: 2.6 -> 1.2 us a call (load 4), most
    # of a reshape's time (a view). A read-only shape array owning its data (a constant: the same
    # object every run; no writable view of it can exist) is read once: the reshape is then one
    # numpy call (digits CNN, batch 1: 1.0 -> 0.3 us).
    last = [(None, None)]  # (the read-only shape array last read, its dims): one cell, read once

    def reshape(x, shape):
        known = last[0]  # (a plan run on several threads at once sees one pair or the other)
        if shape is known[0] and not shape.flags.writeable:
            return x.reshape(known[1]) if type(x) is np.ndarray else np.reshape(x, known[1])
        dims = tuple(np.asarray(shape).reshape(-1).tolist())
        if dims.count(-1) > 1 or (dims and min(dims) < -1):
            raise ValueError(f"invalid new shape {list(dims)}")
        if type(shape) is np.ndarray and not shape.flags.writeable and shape.base is None:
            last[0] = (shape, dims)
        return np.reshape(x, dims)
    return reshape


def _check_dims(dims, what):
    if any(d < 0 for d in dims):
        raise ValueError(f"{what} {list(dims)} has a negative dimension")
    return dims


@cpu_kernel("Fill")
def _fill(node):
    out = node.out_dtypes[0]

    def fill(dims, value):
        value = np.asarray(value)
        if value.ndim:
            raise ValueError(f"value must be a scalar, got shape {value.shape}")
        return np.full(_check_dims(_dims(dims), "dims"), value, dtype=out)
    return fill


@cpu_kernel("ZerosLike")
def _zeros_like(node):
    # np.zeros (calloc: pages zeroed by the system when first touched), not np.zeros_like, which
    # writes every element: a ReLU gradient's [64, 28, 28, 16] zeros took 1.5 ms inside a step
    return lambda x: np.zeros(np.shape(x), dtype=np.asarray(x).dtype)


@cpu_kernel("OnesLike")
def _ones_like(node):
    return lambda x: np.ones_like(x)


@cpu_kernel("BroadcastTo")
def _broadcast_to(node):
    # a real array, not numpy's read-only zero-stride view: the value may be handed out or written
    return lambda x, shape: np.array(np.broadcast_to(x, _check_dims(_dims(shape), "shape")))


@cpu_kernel("ExpandDims")
def _expand_dims(node):
    axis = node.attrs["axis"]
    return lambda x: np.expand_dims(x, axis)


@cpu_kernel("Squeeze")
def _squeeze(node):
    axes = tuple(node.attrs["axis"])
    if not axes:
        return np.squeeze

    def squeeze(x):
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"cannot squeeze dimension {a % x.ndim} of shape {x.shape}: "
                                 f"expected a dimension of 1")
        return np.squeeze(x, axis=axes)
    return squeeze


# ---------------------------------------------------------------- concat, stack, unstack, range
@cpu_kernel("ConcatV2")
def _concat(node):
    axis = node.attrs["axis"]
    return lambda *xs: np.concatenate(xs, axis=axis)


@cpu_kernel("Pack")
def _pack(node):
    axis = node.attrs["axis"]
    return lambda *xs: np.stack(xs, axis=axis)


@cpu_kernel("Unpack")
def _unpack(node):
    axis, num = node.attrs["axis"], node.attrs["num"]

    def unpack(x):
        if x.shape[axis] != num:
            raise ValueError(f"cannot unstack dimension {axis} of shape {x.shape} into {num} "
                             "tensors")
        parts = tuple(np.moveaxis(x, axis, 0))
        return parts[0] if num == 1 else parts  # one output: the value itself, as for any op
    return unpack


@cpu_kernel("Range")
def _range(node):
    out = node.out_dtypes[0]

    def arange(start, limit, delta):
        if delta == 0:
            raise ValueError("delta must not be 0")
        return np.arange(start, limit, delta, dtype=out)
    return arange


# ---------------------------------------------------------------- transpose, gather, scatter
@cpu_kernel("Transpose")
def _transpose(node):
    perm = node.attrs["perm"]
    if perm is None:
        return np.transpose
    perm = tuple(perm)
    return lambda x: np.transpose(x, perm)


def _check_indices(indices, limit, what="indices"):
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = indices[(indices < 0) | (indices >= limit)].reshape(-1)[0]
        raise IndexError(f"{what} contains {bad}, which is not in [0, {limit})")


def _batched(params, indices, batch_dims, fn):
    """Apply `fn(params_i, indices_i)` for each of the flattened leading `batch_dims` entries."""
    if batch_dims == 0:
        return fn(params, indices)
    lead = params.shape[:batch_dims]
    if indices.shape[:batch_dims] != lead:
        raise ValueError(f"batch dimensions of params {params.shape} and indices "
                         f"{indices.shape} differ")
    p = params.reshape((-1,) + params.shape[batch_dims:])
    i = indices.reshape((-1,) + indices.shape[batch_dims:])
    parts = [fn(p[b], i[b]) for b in range(p.shape[0])]
    if parts:
        return np.stack(parts).reshape(lead + parts[0].shape)
    return None


@cpu_kernel("GatherV2")
def _gather(node):
    axis, batch_dims = node.attrs["axis"], node.attrs.get("batch_dims", 0)
    out_dtype = node.out_dtypes[0]

    def gather(params, indices):
        ax = axis % params.ndim
        _check_indices(indices, params.shape[ax])
        bd = batch_dims % indices.ndim if batch_dims < 0 else batch_dims
        out = _batched(params, indices, bd, lambda p, i: np.take(p, i, axis=ax - bd))
        if out is None:  # an empty batch
            shape = params.shape[:ax] + indices.shape[bd:] + params.shape[ax + 1:]
            out = np.zeros(shape, dtype=out_dtype)
        return out
    return gather


def _scatter_add(grad, indices, shape, axis):
    """zeros(shape) with grad's slices added along `axis` at `indices` (repeats accumulate)."""
    out = np.zeros(shape, dtype=grad.dtype)
    moved = np.moveaxis(out, axis, 0)  # a view: writes land in `out`
    g = np.moveaxis(grad.reshape(shape[:axis] + (indices.size,) + shape[axis + 1:]), axis, 0)
    np.add.at(moved, indices.reshape(-1), g)
    return out


@cpu_kernel("GatherGrad")
def _gather_grad(node):
    axis, batch_dims = node.attrs["axis"], node.attrs.get("batch_dims", 0)

    def gather_grad(grad, indices, params_shape):
        shape = _dims(params_shape)
        ax = axis % len(shape)
        _check_indices(indices, shape[ax])
        bd = batch_dims % indices.ndim if batch_dims < 0 else batch_dims
        if bd == 0:
            return _scatter_add(grad, indices, shape, ax)
        lead = shape[:bd]
        g = grad.reshape((-1,) + grad.shape[bd:])
        i = indices.reshape((-1,) + indices.shape[bd:])
        out = np.zeros((g.shape[0],) + shape[bd:], dtype=grad.dtype)
        for b in range(g.shape[0]):
            out[b] = _scatter_add(g[b], i[b], shape[bd:], ax - bd)
        return out.reshape(lead + shape[bd:])
    return gather_grad


def check_unsorted_segments(data, ids, num):
    """The number of segments as an int, after checking the ids (a prefix of data's shape, each
    below `num`) of an unsorted segment reduction."""
    num = int(num)
    if data.shape[:ids.ndim] != ids.shape:
        raise ValueError(f"segment_ids shape {ids.shape} is not a prefix of data shape "
                         f"{data.shape}")
    if ids.size and ids.max() >= num:
        raise IndexError(f"segment id {ids.max()} is not in [0, {num})")
    return num


@cpu_kernel("UnsortedSegmentSum")
def _unsorted_segment_sum(node):
    def segment_sum(data, ids, num):
        num = check_unsorted_segments(data, ids, num)
        out = np.zeros((num,) + data.shape[ids.ndim:], dtype=data.dtype)
        flat_ids = ids.reshape(-1)
        keep = flat_ids >= 0
        rows = data.reshape((-1,) + data.shape[ids.ndim:])
        np.add.at(out, flat_ids[keep], rows[keep])
        return out
    return segment_sum


# ---------------------------------------------------------------- slice, strided slice, split
@cpu_kernel("Slice")
def _slice(node):
    def slice_(x, begin, size):
        index = []
        for d, (b, s) in enumerate(zip(begin.tolist(), size.tolist())):
            stop = x.shape[d] if s == -1 else b + s
            if b < 0 or s < -1 or stop > x.shape[d]:
                raise ValueError(f"slice of dimension {d} (begin {b}, size {s}) is out of bounds "
                                 f"for shape {x.shape}")
            index.append(slice(b, stop))
        if len(index) != x.ndim:
            raise ValueError(f"begin and size need {x.ndim} entries, got {len(index)}")
        return x[tuple(index)]
    return slice_


@cpu_kernel("StridedSlice")
def _strided_slice(node):
    attrs = node.attrs

    def strided_slice(x, begin, end, strides):
        index, dims = strided_slice_index(x.ndim, begin.tolist(), end.tolist(),
                                          strides.tolist(), attrs)
        _check_shrink_bounds(index, dims, x.shape)
        return x[index]
    return strided_slice


def _check_shrink_bounds(index, dims, shape):
    for item, d in zip(index, dims):
        if type(item) is int and not -shape[d] <= item < shape[d]:
            raise IndexError(f"index {item} is out of bounds for dimension {d} with size "
                             f"{shape[d]}")


@cpu_kernel("StridedSliceGrad")
def _strided_slice_grad(node):
    attrs = node.attrs

    def strided_slice_grad(shape, begin, end, strides, dy):
        out = np.zeros(_dims(shape), dtype=dy.dtype)
        index, dims = strided_slice_index(out.ndim, begin.tolist(), end.tolist(),
                                          strides.tolist(), attrs)
        _check_shrink_bounds(index, dims, out.shape)
        out[index] = dy
        return out
    return strided_slice_grad


def _one_or_tuple(parts):
    """A kernel returns its only output itself and several outputs as a tuple."""
    return parts[0] if len(parts) == 1 else parts


@cpu_kernel("Split")
def _split(node):
    num, static, axis = node.attrs["num_split"], node.attrs["size_splits"], node.attrs["axis"]

    def split(x, run_time_sizes=None):  # the second input: sizes fed at run time
        sizes = static if run_time_sizes is None else [int(v) for v in run_time_sizes]
        if sizes is not None and len(sizes) != num:
            raise ValueError(f"size_splits {sizes} must hold {num} sizes")
        d = x.shape[axis]
        if sizes is None:
            if d % num:
                raise ValueError(f"dimension {axis % x.ndim} of shape {x.shape} is not divisible "
                                 f"into {num} equal splits")
            return _one_or_tuple(_pieces(x, axis, [d // num] * num))
        parts = list(sizes)
        rest = sum(s for s in parts if s != -1)
        if -1 in parts:
            parts[parts.index(-1)] = d - rest
        if sum(parts) != d or min(parts) < 0:
            raise ValueError(f"size_splits {sizes} do not add up to dimension {axis % x.ndim} of "
                             f"shape {x.shape}")
        return _one_or_tuple(_pieces(x, axis, parts))
    return split


def _pieces(x, axis, sizes):
    """Views of `x` cut along `axis` into pieces of `sizes` (what np.split gives, without its
    per-call work: a recurrent cell splits its gates every step)."""
    index = [slice(None)] * x.ndim
    pieces, start = [], 0
    for size in sizes:
        index[axis] = slice(start, start + size)
        pieces.append(x[tuple(index)])
        start += size
    return tuple(pieces)


# ---------------------------------------------------------------- one_hot, tile, pad, reverse
@cpu_kernel("OneHot")
def _one_hot(node):
    static, axis = node.attrs["depth"], node.attrs["axis"]

    def one_hot(indices, on, off, run_time_depth=None):  # 4th input: a depth fed at run time
        depth = static if run_time_depth is None else int(run_time_depth)
        if depth < 0:
            raise ValueError(f"depth must be non-negative, got {depth}")
        hot = indices[..., None] == np.arange(depth)
        out = np.where(hot, on, off)
        if axis != -1:
            out = np.moveaxis(out, -1, axis)
        return out
    return one_hot


def _check_multiples(x, multiples):
    m = _dims(multiples)
    if len(m) != x.ndim or min(m, default=0) < 0:
        raise ValueError(f"multiples {list(m)} must have one non-negative entry per dimension of "
                         f"shape {x.shape}")
    return m


@cpu_kernel("Tile")
def _tile(node):
    return lambda x, multiples: np.tile(x, _check_multiples(x, multiples))


@cpu_kernel("TileGrad")
def _tile_grad(node):
    def tile_grad(grad, multiples):
        m = _check_multiples(grad, multiples)
        split = []
        for d, k in zip(grad.shape, m):
            split.extend([k, d // k if k else 0])
        return grad.reshape(split).sum(axis=tuple(range(0, 2 * grad.ndim, 2)))
    return tile_grad


def _paddings(paddings, x):
    p = np.asarray(paddings).reshape(-1, 2).tolist() if np.size(paddings) else []
    if len(p) != x.ndim or any(a < 0 or b < 0 for a, b in p):
        raise ValueError(f"paddings {p} must have one non-negative [before, after] row per "
                         f"dimension of shape {x.shape}")
    return p


@cpu_kernel("Pad")
def _pad(node):
    def pad(x, paddings, constant_values):
        return np.pad(x, _paddings(paddings, x), mode="constant",
                      constant_values=constant_values)
    return pad


@cpu_kernel("MirrorPad")
def _mirror_pad(node):
    mode = node.attrs["mode"].lower()

    def mirror_pad(x, paddings):
        p = _paddings(paddings, x)
        for i, (before, after) in enumerate(p):
            limit = x.shape[i] - (1 if mode == "reflect" else 0)
            if max(before, after) > limit:
                raise ValueError(f"{mode.upper()} paddings {before, after} of dimension {i} "
                                 f"must be at most {limit} for shape {x.shape}")
        return np.pad(x, p, mode=mode)
    return mirror_pad


@cpu_kernel("MirrorPadGrad")
def _mirror_pad_grad(node):
    mode = node.attrs["mode"].lower()

    def mirror_pad_grad(grad, paddings):
        out = grad
        for axis, (before, after) in enumerate(_paddings(paddings, grad)):
            if not before and not after:
                continue
            d = out.shape[axis] - before - after
            source = np.pad(np.arange(d), (before, after), mode=mode)  # padded pos -> source pos
            folded = np.zeros(out.shape[:axis] + (d,) + out.shape[axis + 1:], dtype=grad.dtype)
            np.add.at(np.moveaxis(folded, axis, 0), source, np.moveaxis(out, axis, 0))
            out = folded
        return out if out is not grad else np.array(grad)
    return mirror_pad_grad


@cpu_kernel("ReverseV2")
def _reverse(node):
    axes = tuple(node.attrs["axis"])
    return lambda x: np.flip(x, axis=axes) if axes else x
