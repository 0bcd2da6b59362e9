"""numpy kernels for DynamicPartition and DynamicStitch."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("DynamicPartition")
def _dynamic_partition(node):
    n = node.attrs["num_partitions"]

    def dynamic_partition(data, partitions):
        if data.shape[:partitions.ndim] != partitions.shape:
            raise ValueError(f"partitions {partitions.shape} must be a prefix of the shape of "
                             f"data {data.shape}")
        bad = (partitions < 0) | (partitions >= n)
        if bad.any():
            raise ValueError(f"partitions[{np.argwhere(bad)[0].tolist()}] = "
                             f"{partitions[bad][0]} is not in [0, {n})")
        flat = data.reshape((-1,) + data.shape[partitions.ndim:])
        keys = partitions.reshape(-1)
        return tuple(flat[keys == i] for i in range(n))
    return dynamic_partition


@cpu_kernel("DynamicStitch")
def _dynamic_stitch(node):
    n = node.attrs["N"]

    def dynamic_stitch(*args):
        indices, data = args[:n], args[n:]
        constant = None
        for i, (ix, d) in enumerate(zip(indices, data)):
            if d.shape[:ix.ndim] != ix.shape:
                raise ValueError(f"data[{i}] {d.shape} must start with the shape of indices[{i}] "
                                 f"{ix.shape}")
            rest = d.shape[ix.ndim:]
            if constant is not None and rest != constant:
                raise ValueError(f"data[{i}] {d.shape} does not match the other data's trailing "
                                 f"shape {constant}")
            constant = rest
        sizes = [int(ix.max()) + 1 for ix in indices if ix.size]
        if any(ix.size and ix.min() < 0 for ix in indices):
            raise ValueError("dynamic_stitch indices must not be negative")
        out = np.zeros((max(sizes, default=0),) + constant, data[0].dtype)
        for ix, d in zip(indices, data):
            out[ix.reshape(-1)] = d.reshape((-1,) + constant)
        return out
    return dynamic_stitch
