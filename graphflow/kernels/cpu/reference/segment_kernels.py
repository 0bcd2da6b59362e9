"""numpy kernels for the segment reductions (sorted SegmentSum/Mean/Max/Min, UnsortedSegmentMax/
Min) and Bincount. UnsortedSegmentSum is in array_kernels.py.

NaN in the max and min reductions follows TF's CPU kernels, which fold each row into the running
value in row order with `running > x ? running : x` (max; `<` for min): a NaN row replaces the
running value, and the next row replaces a NaN. So a segment's result is NaN when its last row is
NaN, else the extreme of the rows after its last NaN (TF 2.21: unsorted_segment_max([1, nan, 3]) = 3,
([2, nan]) = nan, ([5, nan, 3]) = 3). The running value starts at the dtype's lowest value
(highest for min) in the unsorted ops, so a segment of -inf alone gives that value as in TF; the
sorted ops start from -inf (+inf). (TF's sorted ops reduce 8 columns at a time with SIMD max,
which skips a NaN, and the other columns with this rule; graphflow applies this rule to every
column.)
"""

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


def _extremum_into(ufunc, data, ids, num, start):
    """out[k] = the max (`ufunc` np.maximum) or min of the rows with id k in TF's NaN rule (the
    module's doc): `start` folded with those rows where none is NaN; NaN where the last is NaN;
    else the extreme of the rows after the last NaN. `ids` is a vector, one id per row."""
    out = np.full((num,) + data.shape[1:], start, dtype=data.dtype)
    ufunc.at(out, ids, data)
    if data.dtype.kind != "f" or not data.size:
        return out
    nan = np.isnan(data)
    if not nan.any():
        return out
    order = np.arange(data.shape[0]).reshape((-1,) + (1,) * (data.ndim - 1))
    last_nan = np.full(out.shape, -1, np.int64)  # per segment and element: the last NaN row
    np.maximum.at(last_nan, ids, np.where(nan, order, -1))
    last_row = np.full(num, -1, np.int64)
    np.maximum.at(last_row, ids, np.arange(data.shape[0]))
    after = order > last_nan[ids]  # rows after their segment's last NaN
    tail = np.full(out.shape, np.inf if ufunc is np.minimum else -np.inf, data.dtype)
    ufunc.at(tail, ids, np.where(after, data, tail.flat[0]))
    restarted = last_nan >= 0
    out[restarted] = tail[restarted]
    out[restarted & (last_nan == last_row.reshape((-1,) + (1,) * (out.ndim - 1)))] = np.nan
    return out


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
            num = _sorted_ids(data, ids)
            out = _extremum_into(ufunc, data, ids, num, start(data.dtype))
            counts = np.bincount(ids, minlength=num)
            return np.where(_empty_rows(counts, out), np.zeros((), data.dtype), out)
        return segment_extremum
    return build


def _below_all(dtype):  # the sorted max starts below every value: -inf for floats (TF: max(-inf) = -inf)
    return -np.inf if dtype.kind == "f" else _lowest(dtype)


def _above_all(dtype):
    return np.inf if dtype.kind == "f" else _highest(dtype)


cpu_kernel("SegmentMax")(_sorted_extremum(np.maximum, _below_all))
cpu_kernel("SegmentMin")(_sorted_extremum(np.minimum, _above_all))


def _unsorted_extremum(ufunc, start):
    def build(node):
        def unsorted_segment_extremum(data, ids, num):
            num = check_unsorted_segments(data, ids, num)
            flat = ids.reshape(-1)
            keep = flat >= 0
            rows = data.reshape((-1,) + data.shape[ids.ndim:])
            return _extremum_into(ufunc, rows[keep], flat[keep], num, start(data.dtype))
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
