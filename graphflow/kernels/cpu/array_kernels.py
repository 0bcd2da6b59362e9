"""numpy kernels for the array ops: shape queries, reshape, fill, broadcast, expand/squeeze, concat,
stack/unstack, range, transpose, gather (+ its scatter-add gradient), segment sums, one_hot, tile,
pad, reverse, split, slice and strided slice.

Kernels that return views of input 0 (reshape, transpose, slicing) have `may_alias_input` set on
their OpDef, so the session copies their value before handing it out when the base is shared.
"""

import numpy as np

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
    def reshape(x, shape):
        dims = _dims(shape)
        if sum(1 for d in dims if d == -1) > 1 or any(d < -1 for d in dims):
            raise ValueError(f"invalid new shape {list(dims)}")
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
    return lambda x: np.zeros_like(x)


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
        return tuple(np.moveaxis(x, axis, 0))
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


@cpu_kernel("UnsortedSegmentSum")
def _unsorted_segment_sum(node):
    def segment_sum(data, ids, num):
        num = int(num)
        if data.shape[:ids.ndim] != ids.shape:
            raise ValueError(f"segment_ids shape {ids.shape} is not a prefix of data shape "
                             f"{data.shape}")
        if ids.size and ids.max() >= num:
            raise IndexError(f"segment id {ids.max()} is not in [0, {num})")
        out = np.zeros((num,) + data.shape[ids.ndim:], dtype=data.dtype)
        flat_ids = ids.reshape(-1)
        keep = flat_ids >= 0
        rows = data.reshape((-1,) + data.shape[ids.ndim:])
        np.add.at(out, flat_ids[keep], rows[keep])
        return out
    return segment_sum
