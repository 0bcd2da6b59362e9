"""Ops that move entries without changing them: Roll, SpaceToDepth, DepthToSpace, SpaceToBatchND,
BatchToSpaceND (TF1's `tf.roll`, `tf.space_to_depth`, `tf.depth_to_space`,
`tf.space_to_batch_nd`, `tf.batch_to_space_nd`, `tf.space_to_batch`, `tf.batch_to_space`).

Roll(input, shift, axis): entries move `shift[i]` places along `axis[i]`, wrapping around (shifts
of a repeated axis add up). SpaceToDepth(input, block_size) on NHWC: each block_size x block_size
spatial block becomes depth, out[b, i, j, (di * bs + dj) * C + c] = in[b, i * bs + di, j * bs + dj,
c]; DepthToSpace is its inverse. SpaceToBatchND(input, block_shape, paddings): the M spatial
dimensions after the batch are zero-padded, then split into blocks that go to the batch
dimension, out[(bi_0 ... bi_M-1) * B + b, i_0, ..., rest] = padded[b, i_0 * bs_0 + bi_0, ...];
BatchToSpaceND(input, block_shape, crops) is its inverse, cropping at the end.
"""

from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.core_ops import consumer_scope, convert_to_tensor
from graphflow.ops.registry import define, make_tensor, require_dtype
from graphflow.ops.shape_ops import INT_INDEX
from graphflow.ops.static_value import constant_value


# ---------------------------------------------------------------- Roll
def _roll_infer(inputs, attrs):
    x, shift, axis = inputs
    require_dtype(shift, INT_INDEX, "shift")
    require_dtype(axis, INT_INDEX, "axis")
    for t, what in ((shift, "shift"), (axis, "axis")):
        if t.shape.ndims not in (None, 0, 1):
            raise ValueError(f"{what} must be a scalar or a vector, got shape {t.shape}")
    if not shift.shape.is_compatible_with(axis.shape):
        raise ValueError(f"shift {shift.shape} and axis {axis.shape} must have the same shape")
    axes = constant_value(axis)
    if axes is not None and x.shape.ndims is not None:
        rank = x.shape.ndims
        for a in axes.reshape(-1):
            if not -rank <= a < rank:
                raise ValueError(f"axis {a} is out of range for input of rank {rank}")
    return [(x.dtype, x.shape)]


define("Roll", _roll_infer, onnx={"converter": "roll"})


def roll(input, shift, axis, name=None):  # noqa: A002 - TF1 names
    """`tf.roll`: shift entries `shift` places along `axis` (both ints or int vectors), wrapping
    around; a negative shift moves towards lower indices."""
    x = convert_to_tensor(input)
    with consumer_scope(name, "Roll", (x,)) as op_name:
        shift = convert_to_tensor(shift)
        axis = convert_to_tensor(axis)
        return make_tensor("Roll", (x, shift, axis), name=op_name)


# ---------------------------------------------------------------- SpaceToDepth, DepthToSpace
def _depth_infer(to_depth):
    def infer(inputs, attrs):
        (x,) = inputs
        bs = attrs["block_size"]
        if bs < 2:
            raise ValueError(f"block_size must be at least 2, got {bs}")
        if attrs.get("data_format", "NHWC") != "NHWC":
            raise ValueError("graphflow supports data_format='NHWC' only")
        if x.shape.ndims not in (None, 4):
            raise ValueError(f"input must be 4-D (NHWC), got shape {x.shape}")
        if x.shape.ndims is None:
            return [(x.dtype, TensorShape([None] * 4))]
        b, h, w, c = x.shape.as_list()
        if to_depth:
            for d, what in ((h, "height"), (w, "width")):
                if d is not None and d % bs:
                    raise ValueError(f"the {what} {d} is not divisible by block_size {bs}")
            out = [b, None if h is None else h // bs, None if w is None else w // bs,
                   None if c is None else c * bs * bs]
        else:
            if c is not None and c % (bs * bs):
                raise ValueError(f"the depth {c} is not divisible by block_size^2 = {bs * bs}")
            out = [b, None if h is None else h * bs, None if w is None else w * bs,
                   None if c is None else c // (bs * bs)]
        return [(x.dtype, TensorShape(out))]
    return infer


define("SpaceToDepth", _depth_infer(True), attrs="block_size:int data_format:string",
       onnx={"converter": "space_to_depth"})
define("DepthToSpace", _depth_infer(False), attrs="block_size:int data_format:string",
       onnx={"converter": "depth_to_space"})


def _depth_op(op_type, input, block_size, name, data_format):
    x = convert_to_tensor(input)
    with consumer_scope(name, op_type, (x,)) as op_name:
        return make_tensor(op_type, (x,), {"block_size": int(block_size),
                                           "data_format": data_format}, name=op_name)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """`tf.space_to_depth`: move block_size x block_size spatial blocks into the depth."""
    return _depth_op("SpaceToDepth", input, block_size, name, data_format)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """`tf.depth_to_space`: the inverse of `space_to_depth`."""
    return _depth_op("DepthToSpace", input, block_size, name, data_format)


# ---------------------------------------------------------------- SpaceToBatchND, BatchToSpaceND
def _batch_infer(to_batch):
    amounts = "paddings" if to_batch else "crops"

    def infer(inputs, attrs):
        x, block_shape, pads = inputs
        require_dtype(block_shape, INT_INDEX, "block_shape")
        require_dtype(pads, INT_INDEX, amounts)
        if block_shape.shape.ndims not in (None, 1):
            raise ValueError(f"block_shape must be a vector, got shape {block_shape.shape}")
        if pads.shape.ndims not in (None, 2):
            raise ValueError(f"{amounts} must be a matrix [M, 2], got shape {pads.shape}")
        blocks, pad = constant_value(block_shape), constant_value(pads)
        m = block_shape.shape[0] if block_shape.shape.ndims == 1 else None
        if m is None and blocks is not None:
            m = len(blocks)
        if x.shape.ndims is None or m is None:
            return [(x.dtype, TensorShape(None))]
        dims = x.shape.as_list()
        if len(dims) < m + 1:
            raise ValueError(f"input of rank {len(dims)} has fewer than {m} spatial dimensions")
        if blocks is None or pad is None:
            return [(x.dtype, TensorShape([None] * (m + 1) + dims[m + 1:]))]
        blocks, pad = [int(b) for b in blocks], pad.reshape(m, 2).astype(int)
        if any(b < 1 for b in blocks) or (pad < 0).any():
            raise ValueError(f"block_shape {blocks} must be positive, {amounts} non-negative")
        prod = 1
        for b in blocks:
            prod *= b
        out = []
        for i, b in enumerate(blocks):
            d = dims[i + 1]
            if d is None:
                out.append(None)
            elif to_batch:
                if (d + pad[i].sum()) % b:
                    raise ValueError(f"padded dimension {i + 1} ({d} + {list(pad[i])}) is not "
                                     f"divisible by block size {b}")
                out.append((d + int(pad[i].sum())) // b)
            else:
                if d * b < pad[i].sum():
                    raise ValueError(f"crops {list(pad[i])} exceed dimension {i + 1} "
                                     f"({d} * {b})")
                out.append(d * b - int(pad[i].sum()))
        batch = dims[0]
        if batch is not None:
            if to_batch:
                batch *= prod
            elif batch % prod:
                raise ValueError(f"the batch {batch} is not divisible by the block count {prod}")
            else:
                batch //= prod
        return [(x.dtype, TensorShape([batch] + out + dims[m + 1:]))]
    return infer


define("SpaceToBatchND", _batch_infer(True), onnx={"converter": "space_to_batch"})
define("BatchToSpaceND", _batch_infer(False), onnx={"converter": "batch_to_space"})


def _batch_op(op_type, input, block_shape, amounts, name):
    x = convert_to_tensor(input)
    with consumer_scope(name, op_type, (x,)) as op_name:
        block_shape, amounts = convert_to_tensor(block_shape), convert_to_tensor(amounts)
        return make_tensor(op_type, (x, block_shape, amounts), name=op_name)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """`tf.space_to_batch_nd`: zero-pad the spatial dimensions, move blocks into the batch."""
    return _batch_op("SpaceToBatchND", input, block_shape, paddings, name)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """`tf.batch_to_space_nd`: the inverse of `space_to_batch_nd`, cropping at the end."""
    return _batch_op("BatchToSpaceND", input, block_shape, crops, name)


def space_to_batch(input, paddings, block_size, name=None):  # noqa: A002
    """`tf.space_to_batch`: `space_to_batch_nd` of a 4-D input with a square block."""
    return space_to_batch_nd(input, [block_size, block_size], paddings, name=name)


def batch_to_space(input, crops, block_size, name=None):  # noqa: A002
    """`tf.batch_to_space`: `batch_to_space_nd` of a 4-D input with a square block."""
    return batch_to_space_nd(input, [block_size, block_size], crops, name=name)


__all__ = ["roll", "space_to_depth", "depth_to_space", "space_to_batch_nd", "batch_to_space_nd",
           "space_to_batch", "batch_to_space"]
