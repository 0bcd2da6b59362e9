"""numpy kernels for the segment reductions (sorted SegmentSum/Mean/Max/Min, UnsortedSegmentMax/
Min) and Bincount. UnsortedSegmentSum is in array_kernels.py."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.array_kernels import check_unsorted_segments


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max


def _sorted_ids(data, ids):
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise ValueError(f"segment_ids of shape {ids.shape} must be a vector with one id per row "
                         f"of data {data.shape}")
    if ids.size and ids[0] < 0:
        raise ValueError(f"segment ids must be non-negative, got {ids[0]}")
    if ids.size > 1 and np.any(ids[1:] < ids[:-1]):
        raise ValueError("segment ids are not increasing (segment_* ops need sorted ids; "
                         "use unsorted_segment_*)")
    return int(ids[-1]) + 1 if ids.size else 0


def _reduce_into(ufunc, data, ids, num, start):
    """out[k] = ufunc.reduce of the rows with id k, `start` where there are none; (out, counts)."""
    out = np.full((num,) + data.shape[1:], start, dtype=data.dtype)
    ufunc.at(out, ids, data)
    return out, np.bincount(ids, minlength=num)


def _empty_rows(counts, out):
    return (counts == 0).reshape((-1,) + (1,) * (out.ndim - 1))


@cpu_kernel("SegmentSum")
def _segment_sum(node):
    def segment_sum(data, ids):
        return _reduce_into(np.add, data, ids, _sorted_ids(data, ids), 0)[0]
    return segment_sum


@cpu_kernel("SegmentMean")
def _segment_mean(node):
    def segment_mean(data, ids):
        total, counts = _reduce_into(np.add, data, ids, _sorted_ids(data, ids), 0)
        divisor = np.maximum(counts, 1).reshape((-1,) + (1,) * (total.ndim - 1))
        if data.dtype.kind == "f":
            return (total / divisor).astype(data.dtype, copy=False)
        return (np.trunc(total / divisor)).astype(data.dtype)  # C's integer division
    return segment_mean


def _sorted_extremum(ufunc, start):
    def build(node):
        def segment_extremum(data, ids):
            out, counts = _reduce_into(ufunc, data, ids, _sorted_ids(data, ids), start(data.dtype))
            return np.where(_empty_rows(counts, out), np.zeros((), data.dtype), out)
        return segment_extremum
    return build


cpu_kernel("SegmentMax")(_sorted_extremum(np.maximum, _lowest))
cpu_kernel("SegmentMin")(_sorted_extremum(np.minimum, _highest))


def _unsorted_extremum(ufunc, start):
    def build(node):
        def unsorted_segment_extremum(data, ids, num):
            num = check_unsorted_segments(data, ids, num)
            flat = ids.reshape(-1)
            keep = flat >= 0
            rows = data.reshape((-1,) + data.shape[ids.ndim:])
            out = np.full((num,) + data.shape[ids.ndim:], start(data.dtype), dtype=data.dtype)
            ufunc.at(out, flat[keep], rows[keep])
            return out
        return unsorted_segment_extremum
    return build


cpu_kernel("UnsortedSegmentMax")(_unsorted_extremum(np.maximum, _lowest))
cpu_kernel("UnsortedSegmentMin")(_unsorted_extremum(np.minimum, _highest))


@cpu_kernel("Bincount")
def _bincount(node):
    out_dtype = node.out_dtypes[0]
    low, high = node.attrs["minlength"], node.attrs["maxlength"]

    def bincount(arr, weights):
        flat = arr.reshape(-1)
        if flat.size and flat.min() < 0:
            raise ValueError(f"bincount: values must be non-negative, got {flat.min()}")
        size = int(flat.max()) + 1 if flat.size else 0
        size = max(size, low)
        if high >= 0:
            size = min(size, high)
        keep = flat < size
        if weights.size:
            if weights.shape != arr.shape:
                raise ValueError(f"bincount: weights of shape {weights.shape} must have arr's "
                                 f"shape {arr.shape}")
            counts = np.bincount(flat[keep], weights=weights.reshape(-1)[keep], minlength=size)
        else:
            counts = np.bincount(flat[keep], minlength=size)
        return counts[:size].astype(out_dtype)
    return bincount
