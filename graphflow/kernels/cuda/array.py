"""Array ops on the GPU (array.cu): views, shape queries, strided copies, gather/scatter, one_hot.

Reshape, ExpandDims and Squeeze return views (device arrays are never written in place, so a view
is as good as a copy). Everything that moves data (transpose, slice, strided slice, reverse,
broadcast_to, tile, concat, stack, split, unstack, pad, strided-slice gradient) is one strided copy
kernel: the source and destination windows are found by applying the numpy index of the op to a
*layout proxy* (a zero-cost numpy view whose addresses are element offsets), so slicing semantics
are numpy's own; the copy then collapses contiguous dims and launches once per window.
Shape vectors (a Reshape's shape, a Slice's begin/size ...) are host inputs; Shape/Size/Rank return
host arrays, so shape arithmetic never waits for the device.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from graphflow.kernels.cuda import ALL_DTYPES, codegen, cuda_kernel, runtime
from graphflow.kernels.cuda.launch import SUFFIX, fill, fill_from, launch_1d, ptr

_SIZES = {1, 2, 4, 8}
_INDEX = frozenset({np.dtype(np.int32), np.dtype(np.int64)})  # index dtypes of gather/scatter


# ---------------------------------------------------------------- layout proxies
def contiguous_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(int(d), 1)
    return tuple(reversed(strides))


_BASE = np.zeros(1, np.uint8)
_BASE_ADDR = _BASE.__array_interface__["data"][0]


def proxy(shape):
    """A numpy view of `shape` whose element addresses are row-major offsets (nothing is read)."""
    shape = tuple(int(d) for d in shape)
    return as_strided(_BASE, shape=shape, strides=contiguous_strides(shape), writeable=False)


def index_view(p, index):
    """`p[index]` as a view even when every dim is indexed by an int (numpy would return a scalar,
    whose address says nothing about the offset): a trailing Ellipsis keeps a 0-d view."""
    index = tuple(index) if isinstance(index, (tuple, list)) else (index,)
    if not any(i is Ellipsis for i in index):
        index += (Ellipsis,)
    return p[index]


def window(view):
    """(element offset, element strides) of a proxy view."""
    return view.__array_interface__["data"][0] - _BASE_ADDR, view.strides


# ---------------------------------------------------------------- kernels used by many ops
def copy_window(rt, src, src_view, dst, dst_view):
    """dst[dst_view] = src[src_view] for proxy views of the same shape (of src's / dst's shape)."""
    shape = src_view.shape
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return
    src_off, src_st = window(src_view)
    dst_off, dst_st = window(dst_view)
    cshape, (src_st, dst_st) = codegen.collapse(list(shape), [list(src_st), list(dst_st)])
    if len(cshape) > codegen.MAX_DIMS:
        raise ValueError(f"a copy over {len(cshape)} non-contiguous dims exceeds the "
                         f"{codegen.MAX_DIMS} the kernels index")
    size = src.dtype.itemsize
    fn = rt.kernel("array.cu", f"gf_copy_{size}", "q72sPq64sPq64s")
    launch_1d(rt, fn, n, np.int64(n), codegen.pack_shape(cshape), int(src.gpudata), np.int64(src_off),
              codegen.pack_strides(src_st), int(dst.gpudata), np.int64(dst_off),
              codegen.pack_strides(dst_st))


def copy_view(rt, x, view_of):
    """A new contiguous array holding `view_of(proxy(x.shape))` of x (a numpy basic index op)."""
    view = view_of(proxy(x.shape))
    out = rt.empty(view.shape, x.dtype)
    copy_window(rt, x, view, out, proxy(out.shape))
    return out


def _dims(shape_array):
    return tuple(int(d) for d in np.asarray(shape_array).reshape(-1))


def _sized(in_dtypes, out_dtypes, attrs):
    for dt in tuple(in_dtypes[:1]) + tuple(out_dtypes):
        if dt.itemsize not in _SIZES:
            return f"no CUDA copy kernel for dtype {dt.name}"
    return None


# ---------------------------------------------------------------- views and shape queries
def reshape_dims(size, dims):
    dims = list(dims)
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in dims):
        raise ValueError(f"invalid new shape {dims}")
    if unknown:
        known = int(np.prod([d for d in dims if d != -1]))
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {dims}")
        dims[unknown[0]] = size // known
    if int(np.prod(dims)) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {dims}")
    return tuple(dims)


@cuda_kernel("Reshape", host_inputs=(1,))
def _reshape(node):
    rt = runtime()
    return lambda x, shape: rt.reshape(x, reshape_dims(x.size, _dims(shape)))


@cuda_kernel("ExpandDims")
def _expand_dims(node):
    rt, axis = runtime(), node.attrs["axis"]
    return lambda x: rt.reshape(x, np.expand_dims(proxy(x.shape), axis).shape)


@cuda_kernel("Squeeze")
def _squeeze(node):
    rt, axes = runtime(), tuple(node.attrs["axis"] or ())

    def squeeze(x):
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"cannot squeeze dimension {a % len(x.shape)} of shape {x.shape}: "
                                 "expected a dimension of 1")
        return rt.reshape(x, np.squeeze(proxy(x.shape), axis=axes or None).shape)
    return squeeze


_SHAPE_QUERIES = {"Shape": lambda x: x.shape, "Size": lambda x: x.size}


@cuda_kernel(*_SHAPE_QUERIES, host_outputs=(0,))
def _shape(node):
    out, query = node.out_dtypes[0], _SHAPE_QUERIES[node.type]
    return lambda x: np.array(query(x), dtype=out)


@cuda_kernel("Rank", host_outputs=(0,))
def _rank(node):
    return lambda x: np.array(len(x.shape), dtype=np.int32)


# ---------------------------------------------------------------- strided copies
@cuda_kernel("Transpose", supports=_sized)
def _transpose(node):
    rt, perm = runtime(), node.attrs.get("perm")
    perm = None if perm is None else tuple(perm)
    return lambda x: copy_view(rt, x, lambda p: np.transpose(p, perm))


@cuda_kernel("ReverseV2", supports=_sized)
def _reverse(node):
    rt, axes = runtime(), tuple(node.attrs["axis"])
    if not axes:
        return lambda x: x
    return lambda x: copy_view(rt, x, lambda p: np.flip(p, axis=axes))


@cuda_kernel("Slice", supports=_sized, host_inputs=(1, 2))
def _slice(node):
    rt = runtime()

    def slice_(x, begin, size):
        index = []
        begin, size = begin.tolist(), size.tolist()
        if len(begin) != len(x.shape) or len(size) != len(x.shape):
            raise ValueError(f"begin and size need {len(x.shape)} entries, got {len(begin)}")
        for d, (b, s) in enumerate(zip(begin, size)):
            stop = x.shape[d] if s == -1 else b + s
            if b < 0 or s < -1 or stop > x.shape[d]:
                raise ValueError(f"slice of dimension {d} (begin {b}, size {s}) is out of bounds "
                                 f"for shape {x.shape}")
            index.append(slice(b, stop))
        return copy_view(rt, x, lambda p: index_view(p, index))
    return slice_


def _strided_index(rank, begin, end, strides, attrs):
    from graphflow.framework.strided_slice import strided_slice_index
    index, _ = strided_slice_index(rank, begin.tolist(), end.tolist(), strides.tolist(), attrs)
    return index


@cuda_kernel("StridedSlice", supports=_sized, host_inputs=(1, 2, 3))
def _strided_slice(node):
    rt, attrs = runtime(), node.attrs

    def strided_slice(x, begin, end, strides):
        index = _strided_index(len(x.shape), begin, end, strides, attrs)
        return copy_view(rt, x, lambda p: index_view(p, index))
    return strided_slice


def _sized_last(in_dtypes, out_dtypes, attrs):
    return _sized(in_dtypes[-1:], out_dtypes, attrs)


@cuda_kernel("StridedSliceGrad", supports=_sized_last, host_inputs=(0, 1, 2, 3))
def _strided_slice_grad(node):
    rt, attrs = runtime(), node.attrs

    def strided_slice_grad(shape, begin, end, strides, dy):
        out = fill(rt, rt.empty(_dims(shape), dy.dtype), 0)
        index = _strided_index(len(out.shape), begin, end, strides, attrs)
        dst = index_view(proxy(out.shape), index)
        if dst.shape != dy.shape:
            raise ValueError(f"dy of shape {dy.shape} does not match the slice shape {dst.shape}")
        copy_window(rt, dy, proxy(dy.shape), out, dst)
        return out
    return strided_slice_grad


@cuda_kernel("BroadcastTo", supports=_sized, host_inputs=(1,))
def _broadcast_to(node):
    rt = runtime()

    def broadcast_to(x, shape):
        target = _dims(shape)
        src = np.broadcast_to(proxy(x.shape), target)
        out = rt.empty(target, x.dtype)
        copy_window(rt, x, src, out, proxy(target))
        return out
    return broadcast_to


@cuda_kernel("Tile", supports=_sized, host_inputs=(1,))
def _tile(node):
    rt = runtime()

    def tile(x, multiples):
        m = _dims(multiples)
        if len(m) != len(x.shape) or any(k < 0 for k in m):
            raise ValueError(f"multiples {list(m)} must have one non-negative entry per "
                             f"dimension of shape {x.shape}")
        # out viewed as [m0, d0, m1, d1, ...] reads x with stride 0 along each repeat axis
        inner = proxy(x.shape)
        shape, strides = [], []
        for k, d, s in zip(m, x.shape, inner.strides):
            shape += [k, d]
            strides += [0, s]
        src = as_strided(_BASE, shape=shape, strides=strides, writeable=False)
        out = rt.empty(tuple(k * d for k, d in zip(m, x.shape)), x.dtype)
        copy_window(rt, x, src, out, proxy(shape))
        return out
    return tile


_STACKS = {"ConcatV2": False, "Pack": True}  # Pack stacks: a new axis per input


@cuda_kernel(*_STACKS, supports=_sized)
def _concat(node):
    rt, axis, stack = runtime(), node.attrs["axis"], _STACKS[node.type]

    def concat(*xs):
        parts = [proxy(x.shape) for x in xs]
        if stack:
            parts = [np.expand_dims(p, axis) for p in parts]
        rank = len(parts[0].shape)
        ax = axis % rank if rank else 0
        for p in parts[1:]:
            if len(p.shape) != rank or any(a != b for i, (a, b) in enumerate(zip(p.shape, parts[0].shape))
                                           if i != ax):
                raise ValueError(f"all inputs must have the same shape except in dimension {ax}, "
                                 f"got {[x.shape for x in xs]}")
        shape = list(parts[0].shape)
        shape[ax] = sum(p.shape[ax] for p in parts)
        out = rt.empty(shape, xs[0].dtype)
        dst, start = proxy(shape), 0
        for x, p in zip(xs, parts):
            stop = start + p.shape[ax]
            copy_window(rt, x, p, out, index_view(dst, (slice(None),) * ax + (slice(start, stop),)))
            start = stop
        return out
    return concat


_UNSTACKS = {"Split": False, "Unpack": True}  # Unpack drops the split axis


@cuda_kernel(*_UNSTACKS, supports=_sized, host_inputs=(1,))
def _split(node):
    rt = runtime()
    axis = node.attrs["axis"]
    unpack = _UNSTACKS[node.type]
    num = node.attrs["num"] if unpack else node.attrs["num_split"]
    static = None if unpack else node.attrs.get("size_splits")

    def split(x, run_time_sizes=None):  # Split's sizes fed at run time arrive on the host
        sizes = static if run_time_sizes is None else [int(v) for v in run_time_sizes]
        ax = axis % len(x.shape)
        d = x.shape[ax]
        if unpack:
            if d != num:
                raise ValueError(f"cannot unstack dimension {axis} of shape {x.shape} into {num} "
                                 "tensors")
            bounds = [(i, None) for i in range(num)]
        else:
            if sizes is None:
                if d % num:
                    raise ValueError(f"dimension {ax} of shape {x.shape} is not divisible into "
                                     f"{num} equal splits")
                parts = [d // num] * num
            else:
                parts = list(sizes)
                if -1 in parts:
                    parts[parts.index(-1)] = d - sum(s for s in parts if s != -1)
                if sum(parts) != d or any(s < 0 for s in parts):
                    raise ValueError(f"size_splits {list(sizes)} do not sum to dimension {ax} "
                                     f"({d}) of shape {x.shape}")
            starts = np.cumsum([0] + parts[:-1]).tolist()
            bounds = [(s, s + k) for s, k in zip(starts, parts)]
        outs = []
        for start, stop in bounds:
            index = (slice(None),) * ax + ((start,) if stop is None else (slice(start, stop),))
            outs.append(copy_view(rt, x, lambda p, index=index: index_view(p, index)))
        return outs[0] if len(outs) == 1 else tuple(outs)  # one output: the value itself
    return split


@cuda_kernel("Pad", supports=_sized, host_inputs=(1,))
def _pad(node):
    rt = runtime()

    def pad(x, paddings, constant_values):
        p = np.asarray(paddings).reshape(-1, 2).tolist() if np.size(paddings) else []
        if len(p) != len(x.shape) or any(a < 0 or b < 0 for a, b in p):
            raise ValueError(f"paddings {p} must have one non-negative [before, after] row per "
                             f"dimension of shape {x.shape}")
        shape = tuple(d + a + b for d, (a, b) in zip(x.shape, p))
        out = fill_from(rt, rt.empty(shape, x.dtype), constant_values)
        index = tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, p))
        copy_window(rt, x, proxy(x.shape), out, index_view(proxy(shape), index))
        return out
    return pad


# ---------------------------------------------------------------- fill, gather, scatter, one_hot
@cuda_kernel("Fill", supports=_sized_last, host_inputs=(0,))
def _fill(node):
    rt = runtime()

    def fill_(dims, value):
        if len(value.shape):
            raise ValueError(f"value must be a scalar, got shape {value.shape}")
        dims = _dims(dims)
        if any(d < 0 for d in dims):
            raise ValueError(f"dims {list(dims)} has a negative dimension")
        return fill_from(rt, rt.empty(dims, value.dtype), value)
    return fill_


def _gather_supported(in_dtypes, out_dtypes, attrs):
    if attrs.get("batch_dims", 0):
        return "gather with batch_dims runs on the CPU"
    if in_dtypes[1] not in _INDEX:
        return f"no CUDA gather for indices of dtype {in_dtypes[1].name}"
    return _sized(in_dtypes[:1], out_dtypes, attrs)


@cuda_kernel("GatherV2", supports=_gather_supported)
def _gather(node):
    rt, axis = runtime(), node.attrs["axis"]
    iname = SUFFIX[np.dtype(node.in_dtypes[1])]

    def gather(params, indices):
        ax = axis % len(params.shape)
        shape = params.shape[:ax] + indices.shape + params.shape[ax + 1:]
        out = rt.empty(shape, params.dtype)
        if out.size:
            inner = int(np.prod(params.shape[ax + 1:]))
            fn = rt.kernel("array.cu", f"gf_gather_{params.dtype.itemsize}_{iname}", "qPPPqqq")
            launch_1d(rt, fn, out.size, np.int64(out.size), int(params.gpudata), int(indices.gpudata),
                      int(out.gpudata), np.int64(params.shape[ax]), np.int64(indices.size),
                      np.int64(inner))
        return out
    return gather


_SCATTER = frozenset({np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32),
                      np.dtype(np.int64)})  # value dtypes of scatter_add


def scatter_add(rt, grad, indices, shape, axis):
    """zeros(shape) with grad's slices added along `axis` at `indices` (repeats accumulate)."""
    out = fill(rt, rt.empty(shape, grad.dtype), 0)
    if grad.size:
        inner = int(np.prod(shape[axis + 1:]))
        name = f"gf_scatter_add_{SUFFIX[grad.dtype]}_{SUFFIX[indices.dtype]}"
        fn = rt.kernel("array.cu", name, "qPPPqqq")
        launch_1d(rt, fn, grad.size, np.int64(grad.size), int(grad.gpudata), int(indices.gpudata),
                  int(out.gpudata), np.int64(shape[axis]), np.int64(indices.size), np.int64(inner))
    return out


def _scatter_supported(in_dtypes, out_dtypes, attrs):
    if attrs.get("batch_dims", 0):
        return "scatter with batch_dims runs on the CPU"
    if in_dtypes[0] not in _SCATTER or in_dtypes[1] not in _INDEX:
        return f"no CUDA scatter-add for {in_dtypes[0].name} values, {in_dtypes[1].name} indices"
    return None


@cuda_kernel("GatherGrad", supports=_scatter_supported, host_inputs=(2,))
def _gather_grad(node):
    rt, axis = runtime(), node.attrs["axis"]

    def gather_grad(grad, indices, params_shape):
        shape = _dims(params_shape)
        return scatter_add(rt, grad, indices, shape, axis % len(shape))
    return gather_grad


@cuda_kernel("UnsortedSegmentSum", supports=_scatter_supported, host_inputs=(2,))
def _segment_sum(node):
    rt = runtime()

    def segment_sum(data, ids, num):
        if data.shape[:len(ids.shape)] != ids.shape:
            raise ValueError(f"segment_ids shape {ids.shape} is not a prefix of data shape "
                             f"{data.shape}")
        shape = (int(num),) + data.shape[len(ids.shape):]
        flat = rt.reshape(data, (1, ids.size) + data.shape[len(ids.shape):])
        return rt.reshape(scatter_add(rt, flat, ids, (1,) + shape, 1), shape)
    return segment_sum


def _one_hot_supported(in_dtypes, out_dtypes, attrs):
    if in_dtypes[0] not in (*_INDEX, np.dtype(np.uint8)) or out_dtypes[0].itemsize not in (1, 4, 8):
        return f"no CUDA one_hot for {in_dtypes[0].name} indices, {out_dtypes[0].name} values"
    return None


@cuda_kernel("OneHot", dtypes=ALL_DTYPES, supports=_one_hot_supported, host_inputs=(3,))
def _one_hot(node):
    rt, static, axis = runtime(), node.attrs["depth"], node.attrs["axis"]
    iname = SUFFIX[np.dtype(node.in_dtypes[0])]

    def one_hot(indices, on, off, run_time_depth=None):  # a depth fed at run time, on the host
        depth = static if run_time_depth is None else int(run_time_depth)
        if depth < 0:
            raise ValueError(f"depth must be non-negative, got {depth}")
        ax = len(indices.shape) if axis == -1 else axis % (len(indices.shape) + 1)
        shape = indices.shape[:ax] + (depth,) + indices.shape[ax:]
        out = rt.empty(shape, on.dtype)
        if out.size:
            inner = int(np.prod(indices.shape[ax:]))
            fn = rt.kernel("array.cu", f"gf_one_hot_{on.dtype.itemsize}_{iname}", "qPPPPqq")
            launch_1d(rt, fn, out.size, np.int64(out.size), int(indices.gpudata), int(on.gpudata),
                      int(off.gpudata), int(out.gpudata), np.int64(depth), np.int64(inner))
        return out
    return one_hot


__all__ = ["fill", "fill_from", "copy_window", "copy_view", "proxy", "scatter_add", "ptr"]
