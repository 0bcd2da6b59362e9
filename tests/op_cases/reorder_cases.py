"""Cases for the reorder ops (Roll, SpaceToDepth, DepthToSpace, SpaceToBatchND, BatchToSpaceND).
References are element-by-element loops over TF1's definitions."""

import itertools

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand

i32 = np.int32


def _roll_ref(x, shifts, axes):
    out = np.empty_like(x)
    for idx in itertools.product(*map(range, x.shape)):
        target = list(idx)
        for s, a in zip(np.atleast_1d(shifts), np.atleast_1d(axes)):
            target[a] = (target[a] + s) % x.shape[a]
        out[tuple(target)] = x[idx]
    return out


def _space_to_depth_ref(x, bs):
    b, h, w, c = x.shape
    out = np.empty((b, h // bs, w // bs, c * bs * bs), x.dtype)
    for n, i, j, di, dj, k in itertools.product(range(b), range(h // bs), range(w // bs),
                                                range(bs), range(bs), range(c)):
        out[n, i, j, (di * bs + dj) * c + k] = x[n, i * bs + di, j * bs + dj, k]
    return out


def _depth_to_space_ref(x, bs):
    b, h, w, c = x.shape
    c_out = c // (bs * bs)
    out = np.empty((b, h * bs, w * bs, c_out), x.dtype)
    for n, i, j, di, dj, k in itertools.product(range(b), range(h), range(w), range(bs),
                                                range(bs), range(c_out)):
        out[n, i * bs + di, j * bs + dj, k] = x[n, i, j, (di * bs + dj) * c_out + k]
    return out


def _space_to_batch_ref(x, blocks, pads):
    m = len(blocks)
    padded = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - m - 1))
    batch = x.shape[0]
    out_spatial = [padded.shape[i + 1] // b for i, b in enumerate(blocks)]
    out = np.empty([batch * int(np.prod(blocks))] + out_spatial + list(x.shape[m + 1:]), x.dtype)
    for offsets in itertools.product(*map(range, blocks)):
        block_index = 0
        for o, b in zip(offsets, blocks):
            block_index = block_index * b + o
        for n in range(batch):
            for pos in itertools.product(*map(range, out_spatial)):
                src = tuple(p * b + o for p, b, o in zip(pos, blocks, offsets))
                out[(block_index * batch + n,) + pos] = padded[(n,) + src]
    return out


def _batch_to_space_ref(x, blocks, crops):
    m = len(blocks)
    prod = int(np.prod(blocks))
    batch = x.shape[0] // prod
    full = [d * b for d, b in zip(x.shape[1:m + 1], blocks)]
    out = np.empty([batch] + full + list(x.shape[m + 1:]), x.dtype)
    for offsets in itertools.product(*map(range, blocks)):
        block_index = 0
        for o, b in zip(offsets, blocks):
            block_index = block_index * b + o
        for n in range(batch):
            for pos in itertools.product(*map(range, x.shape[1:m + 1])):
                dst = tuple(p * b + o for p, b, o in zip(pos, blocks, offsets))
                out[(n,) + dst] = x[(block_index * batch + n,) + pos]
    index = (slice(None),) + tuple(slice(lo, d - hi) for d, (lo, hi) in zip(full, crops))
    return out[index]


_PADS = [[1, 0], [0, 2]]
_CROPS = [[0, 1], [2, 0]]

CASES = [
    OpCase("Roll", lambda x: tf.roll(x, 2, 1), [rand(3, 5)], lambda x: _roll_ref(x, 2, 1)),
    OpCase("Roll", lambda x: tf.roll(x, [-1, 3, 1], [0, 2, 0]), [rand(3, 2, 4)],
           lambda x: _roll_ref(x, [-1, 3, 1], [0, 2, 0]), name="Roll[vectors, repeated axis]"),
    OpCase("Roll", lambda x, s: tf.roll(x, s, -1), [np.arange(6, dtype=i32), np.array(-8, i32)],
           lambda x, s: _roll_ref(x, s, 0), name="Roll[int32, fed shift]"),
    OpCase("SpaceToDepth", lambda x: tf.space_to_depth(x, 2), [rand(2, 4, 6, 3)],
           lambda x: _space_to_depth_ref(x, 2)),
    OpCase("DepthToSpace", lambda x: tf.depth_to_space(x, 2), [rand(2, 2, 3, 8)],
           lambda x: _depth_to_space_ref(x, 2)),
    OpCase("SpaceToBatchND", lambda x: tf.space_to_batch_nd(x, [2, 3], _PADS), [rand(2, 3, 4, 2)],
           lambda x: _space_to_batch_ref(x, [2, 3], _PADS)),
    OpCase("SpaceToBatchND", lambda x: tf.space_to_batch(x, [[0, 0], [1, 1]], 2),
           [rand(1, 4, 2, 1)], lambda x: _space_to_batch_ref(x, [2, 2], [[0, 0], [1, 1]]),
           name="SpaceToBatchND[space_to_batch]"),
    OpCase("BatchToSpaceND", lambda x: tf.batch_to_space_nd(x, [2, 3], _CROPS),
           [rand(12, 2, 2, 3)], lambda x: _batch_to_space_ref(x, [2, 3], _CROPS)),
    OpCase("BatchToSpaceND", lambda x: tf.batch_to_space_nd(x, [3], [[1, 1]]),
           [np.arange(12, dtype=i32).reshape(6, 2)],
           lambda x: _batch_to_space_ref(x, [3], [[1, 1]]), name="BatchToSpaceND[1-D, int32]"),
]
