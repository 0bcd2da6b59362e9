"""Converters for graphflow's shape and indexing ops (reshape, pack/unpack, split, gather, tile,
pad, slice, strided slice, reverse, one-hot, where, unique, depth <-> space, roll, space <-> batch,
searchsorted): the same named `converter` registry and conventions as `export_ops.py` (Transpose
and ConcatV2 are one ONNX node each: their records say so). Bounds ONNX wants as inputs are
constants when graphflow knows them when the graph is built."""

import numpy as np

from graphflow.interop.onnx.export_ops import INT64_MAX, INT64_MIN, _ins, _out, converter
from graphflow.ops import static_value


# ---------------------------------------------------------------- shapes
@converter("reshape")
def _reshape(ctx, op):
    x, shape = op.inputs
    ctx.one("Reshape", [ctx.name(x), ctx.int64(shape)], _out(ctx, op))


@converter("expand_dims")
def _expand_dims(ctx, op):
    ctx.one("Unsqueeze", [ctx.name(op.inputs[0]),
                          ctx.const(np.array([op.attrs["axis"]], np.int64), "axes")], _out(ctx, op))


@converter("squeeze")
def _squeeze(ctx, op):
    axis = op.attrs.get("axis")
    inputs = [ctx.name(op.inputs[0])]
    if axis:
        inputs.append(ctx.const(np.array(list(np.atleast_1d(axis)), np.int64), "axes"))
    ctx.one("Squeeze", inputs, _out(ctx, op))


@converter("shape")
def _shape(ctx, op):
    y = ctx.one(op.type, [ctx.name(op.inputs[0])])
    ctx.one("Cast", [y], _out(ctx, op), to=ctx.elem_type(op.outputs[0].dtype))


@converter("rank")
def _rank(ctx, op):
    n = ctx.one("Size", [ctx.one("Shape", [ctx.name(op.inputs[0])])])
    ctx.one("Cast", [n], _out(ctx, op), to=ctx.elem_type(op.outputs[0].dtype))


@converter("pack")
def _pack(ctx, op):
    axes = ctx.const(np.array([op.attrs["axis"]], np.int64), "axes")
    parts = [ctx.one("Unsqueeze", [name, axes]) for name in _ins(ctx, op)]
    ctx.one("Concat", parts, _out(ctx, op), axis=int(op.attrs["axis"]))


@converter("unpack")
def _unpack(ctx, op):
    axis = int(op.attrs["axis"])
    parts = ctx.node("Split", [ctx.name(op.inputs[0])], [ctx.fresh("part") for _ in op.outputs],
                     axis=axis, **({"num_outputs": len(op.outputs)} if ctx.opset >= 18 else {}))
    axes = ctx.const(np.array([axis], np.int64), "axes")
    for index, part in enumerate(parts):
        ctx.one("Squeeze", [part, axes], _out(ctx, op, index))


@converter("split")
def _split(ctx, op):
    sizes = op.attrs.get("size_splits")
    x = op.inputs[0]
    axis = int(op.attrs["axis"])
    if len(op.inputs) == 2:  # sizes fed at run time; a -1 among them is what the others leave
        fed = ctx.int64(op.inputs[1])
        dim = ctx.one("Gather", [ctx.one("Shape", [ctx.name(x)]),
                                 ctx.const(np.array([axis], np.int64))], axis=0)
        rest = ctx.one("Sub", [dim, ctx.one("Add", [ctx.one("ReduceSum", [fed], keepdims=1),
                                                    ctx.const(np.array([1], np.int64))])])
        minus = ctx.one("Equal", [fed, ctx.const(np.array(-1, np.int64))])
        ctx.node("Split", [ctx.name(x), ctx.one("Where", [minus, rest, fed])],
                 [_out(ctx, op, i) for i in range(len(op.outputs))], axis=axis)
        return
    length = x.shape.as_list()[axis] if x.shape.ndims is not None else None
    if sizes is None or -1 in list(sizes):
        if length is None:
            raise ValueError(f"Split '{op.name}': the split axis must have a known size to export it")
        if sizes is None:
            sizes = [length // len(op.outputs)] * len(op.outputs)
        else:  # one size -1: what the others leave
            sizes = [int(v) for v in sizes]
            sizes[sizes.index(-1)] = length - (sum(sizes) + 1)
    ctx.node("Split", [ctx.name(x), ctx.const(np.array(sizes, np.int64), "split")],
             [_out(ctx, op, i) for i in range(len(op.outputs))], axis=axis)


@converter("gather")
def _gather(ctx, op):
    if op.attrs.get("batch_dims", 0):
        raise ValueError(f"Gather '{op.name}' with batch_dims has no ONNX export")
    ctx.one("Gather", [ctx.name(op.inputs[0]), ctx.name(op.inputs[1])], _out(ctx, op),
            axis=int(op.attrs.get("axis", 0)))


@converter("tile")
def _tile(ctx, op):
    x, multiples = op.inputs
    ctx.one("Tile", [ctx.name(x), ctx.int64(multiples)], _out(ctx, op))


@converter("pad")
def _pad(ctx, op):  # paddings [[before, after], ...] -> ONNX [befores..., afters...]
    x, paddings = op.inputs[:2]
    inputs = [ctx.name(x), ctx.pads(paddings)]
    if len(op.inputs) > 2:
        inputs.append(ctx.name(op.inputs[2]))
    ctx.one("Pad", inputs, _out(ctx, op), mode="constant")


@converter("slice")
def _slice(ctx, op):  # TF's size -1 means "to the end"
    x, begin, size = op.inputs
    b, s = static_value.constant_value(begin), static_value.constant_value(size)
    if b is not None and s is not None:
        b, s = np.asarray(b, np.int64), np.asarray(s, np.int64)
        starts = ctx.const(b, "starts")
        ends = ctx.const(np.where(s == -1, INT64_MAX, b + s), "ends")
    else:  # bounds fed at run time: the same ends, computed by the model
        count = begin.shape.as_list()[0] if begin.shape.ndims == 1 else None
        if count is None:
            raise ValueError(f"the begin of Slice '{op.name}' needs a known length to export it")
        b = np.arange(count)
        starts, sizes = ctx.int64(begin), ctx.int64(size)
        to_end = ctx.one("Equal", [sizes, ctx.const(np.array(-1, np.int64))])
        ends = ctx.one("Where", [to_end, ctx.const(np.array(INT64_MAX, np.int64)),
                                 ctx.one("Add", [starts, sizes])])
    ctx.one("Slice", [ctx.name(x), starts, ends,
                      ctx.const(np.arange(len(b), dtype=np.int64), "axes")], _out(ctx, op))


@converter("strided_slice")
def _strided_slice(ctx, op):
    """Slice over the input dims the spec walks, Squeeze the shrunk ones, Unsqueeze new axes."""
    x, begin, end, strides = op.inputs
    if op.attrs.get("ellipsis_mask", 0):
        raise ValueError(f"StridedSlice '{op.name}' with an ellipsis has no ONNX export")
    b = ctx.known(begin, f"the begin of '{op.name}'").astype(np.int64)
    e = ctx.known(end, f"the end of '{op.name}'").astype(np.int64)
    s = ctx.known(strides, f"the strides of '{op.name}'").astype(np.int64)
    begin_mask, end_mask = op.attrs.get("begin_mask", 0), op.attrs.get("end_mask", 0)
    shrink, new_axis = op.attrs.get("shrink_axis_mask", 0), op.attrs.get("new_axis_mask", 0)
    starts, ends, steps, axes, squeezed, inserted = [], [], [], [], [], []
    in_dim = out_dim = 0
    for i in range(len(b)):
        if new_axis >> i & 1:
            inserted.append(out_dim)
            out_dim += 1
            continue
        lo, hi, step = int(b[i]), int(e[i]), int(s[i])
        if shrink >> i & 1:  # one element: [lo, lo + 1) (lo = -1 reads the last)
            hi, step = (lo + 1 if lo != -1 else INT64_MAX), 1
            squeezed.append(in_dim)
        else:
            if begin_mask >> i & 1:
                lo = 0 if step > 0 else INT64_MAX
            if end_mask >> i & 1:
                hi = INT64_MAX if step > 0 else INT64_MIN
            out_dim += 1
        starts.append(lo)
        ends.append(hi)
        steps.append(step)
        axes.append(in_dim)
        in_dim += 1
    y = ctx.name(x)
    if axes:
        y = ctx.one("Slice", [y, ctx.const(np.array(starts, np.int64), "starts"),
                              ctx.const(np.array(ends, np.int64), "ends"),
                              ctx.const(np.array(axes, np.int64), "axes"),
                              ctx.const(np.array(steps, np.int64), "steps")])
    if squeezed:
        y = ctx.one("Squeeze", [y, ctx.const(np.array(squeezed, np.int64), "axes")])
    if inserted:
        y = ctx.one("Unsqueeze", [y, ctx.const(np.array(inserted, np.int64), "axes")])
    ctx.one("Identity", [y], _out(ctx, op))


@converter("reverse")
def _reverse(ctx, op):  # Slice with step -1 over each axis
    axes = np.atleast_1d(np.asarray(op.attrs["axis"], np.int64))
    n = len(axes)
    ctx.one("Slice", [ctx.name(op.inputs[0]), ctx.const(np.full(n, -1, np.int64), "starts"),
                      ctx.const(np.full(n, INT64_MIN, np.int64), "ends"), ctx.const(axes, "axes"),
                      ctx.const(np.full(n, -1, np.int64), "steps")], _out(ctx, op))


@converter("one_hot")
def _one_hot(ctx, op):
    indices, on, off = op.inputs[:3]
    values = ctx.one("Concat", [ctx.one("Reshape", [ctx.name(t), ctx.const(np.array([1], np.int64))])
                                for t in (off, on)], axis=0)
    index = ctx.one("Cast", [ctx.name(indices)], to=ctx.onnx.TensorProto.INT64)  # what runtimes implement
    # TF: a negative index is all off; ONNX counts it from the end. Send negatives out of range.
    depth_value = (ctx.one("Cast", [ctx.name(op.inputs[3])], to=ctx.onnx.TensorProto.INT64)
                   if op.attrs["depth"] is None  # a depth fed at run time
                   else ctx.const(np.array(op.attrs["depth"], np.int64), "depth"))
    index = ctx.one("Where", [ctx.one("Less", [index, ctx.const(np.array(0, np.int64))]),
                              depth_value, index])
    ctx.one("OneHot", [index, depth_value, values], _out(ctx, op), axis=int(op.attrs.get("axis", -1)))


@converter("where_indices")
def _where_indices(ctx, op):  # TF's [n, rank] coordinates = transpose of ONNX NonZero's [rank, n]
    y = ctx.one("Transpose", [ctx.one("NonZero", [ctx.name(op.inputs[0])])], perm=[1, 0])
    ctx.one("Cast", [y], _out(ctx, op), to=ctx.elem_type(op.outputs[0].dtype))


# ---------------------------------------------------------------- unique, depth <-> space
@converter("unique")
def _unique(ctx, op):  # ONNX Unique with sorted=0 keeps the order of first occurrence, as TF
    outs = ctx.node("Unique", [ctx.name(op.inputs[0])],
                    [_out(ctx, op, 0), ctx.fresh("first"), ctx.fresh("idx"), ctx.fresh("count")],
                    sorted=0)
    to = ctx.elem_type(op.outputs[1].dtype)
    ctx.one("Cast", [outs[2]], _out(ctx, op, 1), to=to)
    if len(op.outputs) == 3:
        ctx.one("Cast", [outs[3]], _out(ctx, op, 2), to=to)


def _nhwc_around(ctx, op, onnx_type, **attrs):  # ONNX's depth <-> space ops are NCHW
    nchw = ctx.one("Transpose", [ctx.name(op.inputs[0])], perm=[0, 3, 1, 2])
    y = ctx.one(onnx_type, [nchw], blocksize=int(op.attrs["block_size"]), **attrs)
    ctx.one("Transpose", [y], _out(ctx, op), perm=[0, 2, 3, 1])


@converter("space_to_depth")
def _space_to_depth(ctx, op):
    _nhwc_around(ctx, op, "SpaceToDepth")


@converter("depth_to_space")
def _depth_to_space(ctx, op):  # the DCR mode is TF's element order
    _nhwc_around(ctx, op, "DepthToSpace", mode="DCR")


@converter("roll")
def _roll(ctx, op):
    """A Slice and Concat per rolled axis: shifts and axes must be constants, the rolled dims
    known (ONNX has no Roll)."""
    x, shift, axis = op.inputs
    shifts, axes = static_value.constant_value(shift), static_value.constant_value(axis)
    dims = x.shape.dims
    if shifts is None or axes is None or dims is None:
        raise ValueError(f"Roll '{op.name}': shift and axis must be constants to export it")
    total = {}
    for s, a in zip(np.atleast_1d(shifts).tolist(), np.atleast_1d(axes).tolist()):
        total[a % len(dims)] = total.get(a % len(dims), 0) + s
    y = ctx.name(x)
    for a, s in total.items():
        n = dims[a]
        if n is None:
            raise ValueError(f"Roll '{op.name}': the rolled dimension {a} must have a known size")
        s = s % n if n else 0
        if s:
            ax = ctx.const(np.array([a], np.int64))
            tail = ctx.one("Slice", [y, ctx.const(np.array([n - s], np.int64)),
                                     ctx.const(np.array([n], np.int64)), ax])
            head = ctx.one("Slice", [y, ctx.const(np.array([0], np.int64)),
                                     ctx.const(np.array([n - s], np.int64)), ax])
            y = ctx.one("Concat", [tail, head], axis=a)
    ctx.one("Identity", [y], _out(ctx, op))


def _block_layout(ctx, op, what):
    """(x, block sizes, the [M, 2] amounts, the known dims after the batch) of a
    SpaceToBatchND/BatchToSpaceND whose block shape and amounts are constants."""
    x, block_shape, amounts = op.inputs
    blocks = [int(b) for b in ctx.known(block_shape, f"the block_shape of '{op.name}'")]
    pads = ctx.known(amounts, f"the {what} of '{op.name}'").astype(np.int64).reshape(-1, 2)
    rest = list(x.shape.dims[1:]) if x.shape.dims is not None else None
    if rest is None or None in rest:
        raise ValueError(f"{op.type} '{op.name}': the dims after the batch must be known")
    return x, blocks, pads, rest


@converter("space_to_batch")
def _space_to_batch(ctx, op):  # Pad, split each spatial dim into (d / b, b), move the b's first
    x, blocks, pads, rest = _block_layout(ctx, op, "paddings")
    m, rank = len(blocks), len(rest) + 1
    full = np.zeros((rank, 2), np.int64)
    full[1:m + 1] = pads
    y = ctx.one("Pad", [ctx.name(x), ctx.const(np.concatenate([full[:, 0], full[:, 1]]))],
                mode="constant")
    padded = [d + int(p.sum()) for d, p in zip(rest[:m], pads)]
    split = [-1]
    for d, b in zip(padded, blocks):
        split += [d // b, b]
    y = ctx.one("Reshape", [y, ctx.const(np.array(split + rest[m:], np.int64))])
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] \
        + list(range(1 + 2 * m, 1 + 2 * m + rank - 1 - m))
    y = ctx.one("Transpose", [y], perm=perm)
    out = [-1] + [d // b for d, b in zip(padded, blocks)] + rest[m:]
    ctx.one("Reshape", [y, ctx.const(np.array(out, np.int64))], _out(ctx, op))


@converter("batch_to_space")
def _batch_to_space(ctx, op):  # the inverse: move the b's back beside their dims, then crop
    x, blocks, crops, rest = _block_layout(ctx, op, "crops")
    m, rank = len(blocks), len(rest) + 1
    y = ctx.one("Reshape", [ctx.name(x), ctx.const(np.array(blocks + [-1] + rest, np.int64))])
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, 2 * m + 1 + rank - 1 - m))
    y = ctx.one("Transpose", [y], perm=perm)
    full = [d * b for d, b in zip(rest[:m], blocks)]
    y = ctx.one("Reshape", [y, ctx.const(np.array([-1] + full + rest[m:], np.int64))])
    starts = np.array([int(c[0]) for c in crops], np.int64)
    ends = np.array([d - int(c[1]) for d, c in zip(full, crops)], np.int64)
    ctx.one("Slice", [y, ctx.const(starts), ctx.const(ends),
                      ctx.const(np.arange(1, m + 1, dtype=np.int64))], _out(ctx, op))


def _bound(ctx, op, compare):
    """Each value's count of entries in its row of the sorted sequence that are < (LowerBound) or
    <= (UpperBound) it: the insertion index (ONNX has no searchsorted)."""
    a, v = op.inputs
    rows = ctx.one("Unsqueeze", [ctx.name(a), ctx.const(np.array([-2], np.int64))])  # [..., 1, n]
    vals = ctx.one("Unsqueeze", [ctx.name(v), ctx.const(np.array([-1], np.int64))])  # [..., m, 1]
    hits = ctx.one("Cast", [ctx.one(compare, [rows, vals])], to=ctx.elem_type(op.outputs[0].dtype))
    ctx.one("ReduceSum", [hits, ctx.const(np.array([-1], np.int64))], _out(ctx, op), keepdims=0)


@converter("lower_bound")
def _lower_bound(ctx, op):
    _bound(ctx, op, "Less")


@converter("upper_bound")
def _upper_bound(ctx, op):
    _bound(ctx, op, "LessOrEqual")
