"""Cases for the array ops (shape queries, reshape, fill, broadcast, concat/stack, gather, slicing,
tile, pad, reverse, split, one_hot...)."""

import numpy as np

import graphflow as tf
from graphflow.ops.array_ops import gather_grad, mirror_pad_grad, tile_grad
from graphflow.ops.slice_ops import strided_slice_grad
from tests.op_cases import OpCase, rand

i32 = np.int32


def ints(*shape, low=0, high=5, seed=0):
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(i32)


def _scatter_add(grad, indices, shape, axis):
    out = np.zeros(shape)
    moved = np.moveaxis(out, axis, 0)
    g = np.moveaxis(grad.reshape(shape[:axis] + (indices.size,) + shape[axis + 1:]), axis, 0)
    for k, i in enumerate(indices.reshape(-1)):
        moved[i] += g[k]
    return out


def _strided_grad_ref(dy):
    out = np.zeros((4, 3))
    out[1:4:2, 2:0:-1] = dy
    return out


def _mirror_grad_ref(g, before, after, mode):
    """Fold the padded gradient back by brute force over the mirror map."""
    d = g.shape[-1] - before - after
    source = np.pad(np.arange(d), (before, after), mode=mode)
    out = np.zeros(g.shape[:-1] + (d,))
    for pos, src in enumerate(source):
        out[..., src] += g[..., pos]
    return out


SHAPE_CASES = [
    OpCase("Shape", tf.shape, [rand(2, 3, 4)], lambda x: np.array(x.shape, i32), grad=False),
    OpCase("Shape", lambda x: tf.shape(x, out_type=tf.int64), [rand(0, 3)],
           lambda x: np.array(x.shape, np.int64), grad=False),
    OpCase("Size", tf.size, [rand(2, 5)], lambda x: np.array(10, i32), grad=False),
    OpCase("Rank", tf.rank, [rand(2, 1, 3)], lambda x: np.array(3, i32), grad=False),
    OpCase("Reshape", lambda x: tf.reshape(x, [3, -1]), [rand(2, 3, 2)],
           lambda x: x.reshape(3, -1)),
    OpCase("Reshape", lambda x: tf.reshape(x, []), [rand(1, 1)], lambda x: x.reshape(())),
    OpCase("Reshape", lambda x, y: tf.reshape(x, tf.shape(y)), [rand(6), rand(2, 3)],
           lambda x, y: x.reshape(2, 3), grad_inputs=[0]),
    OpCase("Reshape", lambda x: tf.reshape(x, [tf.shape(x)[0], 2, -1]), [rand(3, 4)],
           lambda x: x.reshape(3, 2, 2)),
    OpCase("Fill", lambda v: tf.fill([2, 3], v), [np.array(1.5)], lambda v: np.full((2, 3), v)),
    OpCase("Fill", lambda x: tf.zeros(tf.shape(x), tf.int32), [rand(3, 2)],
           lambda x: np.zeros((3, 2), i32), grad=False),
    OpCase("Fill", lambda x: x + tf.ones([tf.shape(x)[0], 2], tf.float64), [rand(4, 2)],
           lambda x: x + 1),
    OpCase("ZerosLike", tf.zeros_like, [rand(2, 3)], np.zeros_like, grad=False),
    OpCase("OnesLike", tf.ones_like, [ints(4)], np.ones_like, grad=False),
    OpCase("BroadcastTo", lambda x: tf.broadcast_to(x, [4, 2, 3]), [rand(2, 1)],
           lambda x: np.broadcast_to(x, (4, 2, 3))),
    OpCase("BroadcastTo", lambda x, y: tf.broadcast_to(x, tf.shape(y)), [rand(3), rand(2, 3)],
           lambda x, y: np.broadcast_to(x, (2, 3)), grad_inputs=[0]),
    OpCase("ExpandDims", lambda x: tf.expand_dims(x, 1), [rand(2, 3)], lambda x: x[:, None]),
    OpCase("ExpandDims", lambda x: tf.expand_dims(x, -1), [rand(2, 3)], lambda x: x[..., None]),
    OpCase("Squeeze", tf.squeeze, [rand(1, 3, 1)], np.squeeze),
    OpCase("Squeeze", lambda x: tf.squeeze(x, axis=[-1]), [rand(1, 3, 1)],
           lambda x: x[..., 0]),
    OpCase("ConcatV2", lambda a, b: tf.concat([a, b], 0), [rand(2, 3), rand(1, 3)],
           lambda a, b: np.concatenate([a, b], 0)),
    OpCase("ConcatV2", lambda a, b, c: tf.concat([a, b, c], axis=-1),
           [rand(2, 1), rand(2, 3), rand(2, 2)], lambda a, b, c: np.concatenate([a, b, c], -1)),
    OpCase("Pack", lambda a, b: tf.stack([a, b]), [rand(2, 3), rand(2, 3, seed=1)],
           lambda a, b: np.stack([a, b])),
    OpCase("Pack", lambda a, b: tf.stack([a, b], axis=-1), [rand(3), rand(3, seed=2)],
           lambda a, b: np.stack([a, b], -1)),
    OpCase("Pack", lambda a: tf.convert_to_tensor([[a, 1.0], [2.0, a * 2.0]]), [np.array(3.0)],
           lambda a: np.array([[a, 1.0], [2.0, 2 * a]])),
    OpCase("Unpack", lambda x: tuple(tf.unstack(x, num=3, axis=1)), [rand(2, 3)],
           lambda x: tuple(x[:, i] for i in range(3))),
    OpCase("Unpack", lambda x: tf.unstack(x, num=1, axis=1)[0], [rand(2, 1)], lambda x: x[:, 0],
           name="Unpack[one output]"),
    OpCase("Range", lambda: tf.range(2, 11, 3), [], lambda: np.arange(2, 11, 3, dtype=i32),
           grad=False),
    OpCase("Range", tf.range, [np.array(5, i32), np.array(-4, i32), np.array(-2, i32)],
           lambda a, b, c: np.arange(a, b, c, dtype=i32), grad=False),
    OpCase("Range", lambda: tf.range(1.0, 2.0, 0.25), [],
           lambda: np.arange(1.0, 2.0, 0.25, dtype=np.float32), grad=False),
]

INDEX_CASES = [
    OpCase("Transpose", tf.transpose, [rand(2, 3, 4)], np.transpose),
    OpCase("Transpose", lambda x: tf.transpose(x, [1, 2, 0]), [rand(2, 3, 4)],
           lambda x: np.transpose(x, (1, 2, 0))),
    OpCase("GatherV2", tf.gather, [rand(5, 3), ints(4, high=5)],
           lambda p, i: np.take(p, i, axis=0)),
    OpCase("GatherV2", lambda p, i: tf.gather(p, i, axis=1), [rand(2, 4, 3), ints(2, 3, high=4)],
           lambda p, i: np.take(p, i, axis=1)),
    OpCase("GatherV2", lambda p, i: tf.gather(p, i, axis=-1), [rand(3, 4), ints(5, high=4)],
           lambda p, i: np.take(p, i, axis=-1)),
    OpCase("GatherV2", lambda p, i: tf.gather(p, i, axis=1, batch_dims=1),
           [rand(2, 4, 3), ints(2, 5, high=4, seed=3)],
           lambda p, i: np.stack([np.take(p[b], i[b], axis=0) for b in range(2)])),
    OpCase("GatherGrad", lambda g, i: gather_grad(g, i, [3, 4, 2], axis=1),
           [rand(3, 5, 2), np.array([0, 3, 3, 1, 3], i32)],
           lambda g, i: _scatter_add(g, i, (3, 4, 2), 1)),
    OpCase("UnsortedSegmentSum", lambda d, s: tf.unsorted_segment_sum(d, s, 4),
           [rand(5, 2), np.array([0, 3, -1, 3, 1], i32)],
           lambda d, s: np.stack([d[s == k].sum(0) for k in range(4)])),
]

SLICE_CASES = [
    OpCase("Slice", lambda x: tf.slice(x, [1, 0, 2], [2, -1, 1]), [rand(3, 2, 4)],
           lambda x: x[1:3, :, 2:3]),
    OpCase("Slice", lambda x: tf.slice(x, tf.constant([0, 1]), [-1, 0]), [rand(2, 3)],
           lambda x: x[:, 1:1]),
    OpCase("Slice", lambda x, b, s: tf.slice(x, b, s),
           [rand(3, 4), np.array([1, 0], i32), np.array([-1, 3], i32)],
           lambda x, b, s: x[1:, :3], grad_inputs=[0], shape_from_values=True,
           name="Slice[begin and size fed at run time]"),
    OpCase("StridedSlice", lambda x: x[1], [rand(3, 4)], lambda x: x[1]),
    OpCase("StridedSlice", lambda x: x[:, ::-2], [rand(3, 5)], lambda x: x[:, ::-2]),
    OpCase("StridedSlice", lambda x: x[-1, ..., None, 1:3], [rand(2, 3, 4)],
           lambda x: x[-1, ..., None, 1:3]),
    OpCase("StridedSlice", lambda x: x[::-1, 3:0:-1, -1], [rand(3, 5, 2)],
           lambda x: x[::-1, 3:0:-1, -1]),
    OpCase("StridedSlice", lambda x: x[tf.shape(x)[0] - 2:, tf.constant(1)], [rand(4, 3)],
           lambda x: x[2:, 1]),
    OpCase("StridedSlice", lambda x: tf.strided_slice(x, [0, 1], [3, 0], [2, -1], end_mask=1),
           [rand(5, 3)], lambda x: x[0::2, 1:0:-1]),
    OpCase("StridedSliceGrad", lambda dy: strided_slice_grad([4, 3], [1, 2], [4, 0], [2, -1], dy),
           [rand(2, 2)], _strided_grad_ref),
    OpCase("StridedSliceGrad", lambda dy: strided_slice_grad([3, 4], [1, 0], [2, 0], [1, 1], dy,
                                                            end_mask=2, shrink_axis_mask=1),
           [rand(4)], lambda dy: np.stack([np.zeros(4), dy, np.zeros(4)])),
    OpCase("Split", lambda x: tuple(tf.split(x, 3, axis=1)), [rand(2, 6)],
           lambda x: tuple(np.split(x, 3, axis=1))),
    OpCase("Split", lambda x: tuple(tf.split(x, [1, -1, 2], axis=-1)), [rand(3, 6)],
           lambda x: (x[:, :1], x[:, 1:4], x[:, 4:])),
    OpCase("Split", lambda x: tf.split(x, 1, axis=1)[0], [rand(2, 3)], lambda x: x,
           name="Split[one output]"),
    OpCase("Split", lambda x: tf.split(x, [-1], axis=0)[0], [rand(2, 3)], lambda x: x,
           name="Split[one size]"),
    OpCase("Split", lambda x, s: tuple(tf.split(x, s, axis=1)),
           [rand(2, 6), np.array([1, -1, 2], i32)],
           lambda x, s: tuple(np.split(x, [1, 4], axis=1)), grad_inputs=[0],
           shape_from_values=True, unknown_shapes=False,  # (the sizes need a known length)
           name="Split[sizes fed at run time]"),
]

ARRAY_CASES = [
    OpCase("OneHot", lambda i: tf.one_hot(i, 4), [np.array([0, 3, -1, 5, 2], i32)],
           lambda i: np.eye(4, dtype=np.float32)[np.clip(i, 0, 3)] * ((i >= 0) & (i < 4))[:, None],
           grad=False),
    OpCase("OneHot", lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
           [np.array([[0, 2], [1, 1]], i32)],
           lambda i: np.where(np.arange(3)[:, None, None] == i[None], 5, -1).astype(i32),
           grad=False),
    OpCase("OneHot", lambda i, d: tf.one_hot(i, d, on_value=2.0, off_value=-1.0, axis=0),
           [np.array([[0, 2], [4, -1]], i32), np.array(3, i32)],
           lambda i, d: np.where(np.arange(3)[:, None, None] == i[None], 2.0, -1.0).astype(
               np.float32), grad=False, shape_from_values=True, name="OneHot[depth fed at run time]"),
    OpCase("Tile", lambda x: tf.tile(x, [2, 1, 3]), [rand(2, 3, 1)],
           lambda x: np.tile(x, (2, 1, 3))),
    OpCase("Tile", lambda x, y: tf.tile(x, tf.shape(y)), [rand(2, 2), rand(3, 1)],
           lambda x, y: np.tile(x, (3, 1)), grad_inputs=[0]),
    OpCase("TileGrad", lambda g: tile_grad(g, [2, 3]), [rand(4, 6)],
           lambda g: g.reshape(2, 2, 3, 2).sum(axis=(0, 2))),
    OpCase("Pad", lambda x: tf.pad(x, [[1, 0], [2, 3]]), [rand(2, 3)],
           lambda x: np.pad(x, [[1, 0], [2, 3]])),
    OpCase("Pad", lambda x, c: tf.pad(x, [[0, 2]], constant_values=c), [rand(3), np.array(1.5)],
           lambda x, c: np.pad(x, [[0, 2]], constant_values=c)),
    OpCase("Pad", lambda x, p: tf.pad(x, p), [rand(2, 3), np.array([[0, 1], [2, 0]], i32)],
           lambda x, p: np.pad(x, p), grad_inputs=[0], shape_from_values=True,
           name="Pad[paddings fed at run time]"),
    OpCase("MirrorPad", lambda x, p: tf.pad(x, p, mode="REFLECT"),
           [rand(3, 4), np.array([[1, 0], [2, 3]], np.int64)],
           lambda x, p: np.pad(x, p, mode="reflect"), grad_inputs=[0], shape_from_values=True,
           name="MirrorPad[paddings fed at run time]"),
    OpCase("MirrorPad", lambda x: tf.pad(x, [[1, 2], [2, 2]], mode="REFLECT"), [rand(3, 4)],
           lambda x: np.pad(x, [[1, 2], [2, 2]], mode="reflect")),
    OpCase("MirrorPad", lambda x: tf.pad(x, [[2, 3], [0, 1]], mode="symmetric"), [rand(3, 2)],
           lambda x: np.pad(x, [[2, 3], [0, 1]], mode="symmetric")),
    OpCase("MirrorPadGrad", lambda g: mirror_pad_grad(g, [[1, 2]], "REFLECT"), [rand(6)],
           lambda g: _mirror_grad_ref(g, 1, 2, "reflect")),
    OpCase("MirrorPadGrad", lambda g: mirror_pad_grad(g, [[0, 0], [3, 1]], "SYMMETRIC"),
           [rand(2, 7)], lambda g: _mirror_grad_ref(g, 3, 1, "symmetric")),
    OpCase("ReverseV2", lambda x: tf.reverse(x, [0, -1]), [rand(2, 3, 4)],
           lambda x: x[::-1, :, ::-1]),
]


CASES = SHAPE_CASES + INDEX_CASES + SLICE_CASES + ARRAY_CASES
