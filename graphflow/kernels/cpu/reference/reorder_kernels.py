"""numpy kernels for the reorder ops: Roll, SpaceToDepth, DepthToSpace, SpaceToBatchND,
BatchToSpaceND (each a reshape/transpose of its input, copied into a fresh array)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("Roll")
def _roll(node):
    def roll(x, shift, axis):
        shift, axis = np.atleast_1d(shift), np.atleast_1d(axis)
        if shift.shape != axis.shape:
            raise ValueError(f"shift {shift.shape} and axis {axis.shape} must have the same shape")
        for a in axis:
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"axis {a} is out of range for input of rank {x.ndim}")
        if x.size == 0 or axis.size == 0:
            return x.copy()
        return np.roll(x, tuple(int(s) for s in shift), tuple(int(a) for a in axis))
    return roll


@cpu_kernel("SpaceToDepth")
def _space_to_depth(node):
    bs = node.attrs["block_size"]

    def space_to_depth(x):
        b, h, w, c = x.shape
        if h % bs or w % bs:
            raise ValueError(f"input {x.shape}: height and width must be divisible by block_size "
                             f"{bs}")
        blocks = x.reshape(b, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
        return np.ascontiguousarray(blocks).reshape(b, h // bs, w // bs, bs * bs * c)
    return space_to_depth


@cpu_kernel("DepthToSpace")
def _depth_to_space(node):
    bs = node.attrs["block_size"]

    def depth_to_space(x):
        b, h, w, c = x.shape
        if c % (bs * bs):
            raise ValueError(f"input {x.shape}: depth must be divisible by block_size^2 = "
                             f"{bs * bs}")
        blocks = x.reshape(b, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
        return np.ascontiguousarray(blocks).reshape(b, h * bs, w * bs, c // (bs * bs))
    return depth_to_space


def _blocks(block_shape, amounts, x, what):
    blocks = [int(b) for b in np.asarray(block_shape).reshape(-1)]
    amounts = np.asarray(amounts).reshape(-1, 2).astype(np.int64)
    m = len(blocks)
    if amounts.shape[0] != m:
        raise ValueError(f"{what} has {amounts.shape[0]} rows for {m} block dimensions")
    if x.ndim < m + 1:
        raise ValueError(f"input of rank {x.ndim} has fewer than {m} spatial dimensions")
    if any(b < 1 for b in blocks) or (amounts < 0).any():
        raise ValueError(f"block_shape {blocks} must be positive, {what} non-negative")
    return blocks, amounts, m


@cpu_kernel("SpaceToBatchND")
def _space_to_batch(node):
    def space_to_batch(x, block_shape, paddings):
        blocks, pads, m = _blocks(block_shape, paddings, x, "paddings")
        padded = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - m - 1))
        batch, rest = x.shape[0], padded.shape[m + 1:]
        split = [batch]
        for i, b in enumerate(blocks):
            d = padded.shape[i + 1]
            if d % b:
                raise ValueError(f"padded dimension {i + 1} ({d}) is not divisible by block "
                                 f"size {b}")
            split += [d // b, b]
        y = padded.reshape(split + list(rest))
        # [batch, d0, b0, d1, b1, ..., rest] -> [b0, b1, ..., batch, d0, d1, ..., rest]
        order = ([2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
                 + list(range(1 + 2 * m, y.ndim)))
        out_shape = [batch * int(np.prod(blocks))] + split[1::2] + list(rest)
        return np.ascontiguousarray(y.transpose(order)).reshape(out_shape)
    return space_to_batch


@cpu_kernel("BatchToSpaceND")
def _batch_to_space(node):
    def batch_to_space(x, block_shape, crops):
        blocks, crops, m = _blocks(block_shape, crops, x, "crops")
        prod = int(np.prod(blocks))
        if x.shape[0] % prod:
            raise ValueError(f"the batch {x.shape[0]} is not divisible by the block count {prod}")
        batch, spatial, rest = x.shape[0] // prod, list(x.shape[1:m + 1]), list(x.shape[m + 1:])
        y = x.reshape(blocks + [batch] + spatial + rest)
        # [b0, ..., batch, d0, ..., rest] -> [batch, d0, b0, d1, b1, ..., rest]
        order = [m]
        for i in range(m):
            order += [m + 1 + i, i]
        order += list(range(2 * m + 1, y.ndim))
        full = [d * b for d, b in zip(spatial, blocks)]
        y = np.ascontiguousarray(y.transpose(order)).reshape([batch] + full + rest)
        index = [slice(None)]
        for d, (lo, hi) in zip(full, crops):
            if lo + hi > d:
                raise ValueError(f"crops {[int(lo), int(hi)]} exceed a dimension of size {d}")
            index.append(slice(int(lo), d - int(hi)))
        return np.ascontiguousarray(y[tuple(index)])
    return batch_to_space
