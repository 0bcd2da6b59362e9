"""Cases for the segment reductions (sorted and unsorted max/min, sum, mean, with empty segments
and dropped negative ids) and Bincount; references are loops over the segments in numpy."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand

i32 = np.int32
_SORTED = np.array([0, 0, 2, 2, 2, 3], i32)  # segment 1 is empty


def _segments(reduce, data, ids, num, empty):
    rows = [reduce(data[ids == k], axis=0) if np.any(ids == k) else np.full(data.shape[ids.ndim:],
                                                                              empty)
            for k in range(num)]
    return np.stack(rows).astype(data.dtype)


CASES = [
    OpCase("SegmentSum", tf.segment_sum, [rand(6, 2), _SORTED],
           lambda d, s: _segments(np.sum, d, s, 4, 0)),
    OpCase("SegmentMean", tf.math.segment_mean, [rand(6, 2, 2), _SORTED],
           lambda d, s: _segments(np.mean, d, s, 4, 0)),
    OpCase("SegmentMean", tf.segment_mean, [np.array([1, 2, 4, -3, -4, 7], i32), _SORTED],
           lambda d, s: np.array([1, 0, -1, 7], i32), name="SegmentMean[int32]"),
    OpCase("SegmentMax", tf.segment_max, [rand(6, 3), _SORTED],
           lambda d, s: _segments(np.max, d, s, 4, 0)),
    OpCase("SegmentMin", tf.math.segment_min, [rand(6), _SORTED.astype(np.int64)],
           lambda d, s: _segments(np.min, d, s, 4, 0)),
    OpCase("UnsortedSegmentMax", lambda d, s: tf.unsorted_segment_max(d, s, 2),
           [rand(5, 2), np.array([1, 0, -1, 1, 0], i32)],
           lambda d, s: _segments(np.max, d, s, 2, 0)),
    OpCase("UnsortedSegmentMin", lambda d, s: tf.math.unsorted_segment_min(d, s, 3),
           [rand(2, 3, 2), np.array([[2, 0, 2], [0, -1, 1]], i32)],
           lambda d, s: _segments(np.min, d, s, 3, 0)),
    # an empty segment gives the lowest / highest value (not differentiable by finite differences)
    OpCase("UnsortedSegmentMax", lambda d, s: tf.unsorted_segment_max(d, s, 4),
           [rand(5, 2), np.array([3, 0, -1, 3, 0], i32)],
           lambda d, s: _segments(np.max, d, s, 4, np.finfo(np.float64).min), grad=False,
           name="UnsortedSegmentMax[empty segments]"),
    OpCase("UnsortedSegmentMin", lambda d, s: tf.unsorted_segment_min(d, s, 3),
           [np.array([4, -2, 9], i32), np.array([2, 2, 0], i32)],
           lambda d, s: np.array([9, np.iinfo(i32).max, -2], i32),
           name="UnsortedSegmentMin[int32, empty segment]"),
    OpCase("Bincount", tf.bincount, [np.array([1, 4, 1, 0, 4, 4], i32)],
           lambda a: np.bincount(a).astype(i32)),
    OpCase("Bincount", lambda a, w: tf.math.bincount(a, weights=w, minlength=7),
           [np.array([[1, 3], [1, 2]], i32), rand(2, 2)],
           lambda a, w: np.bincount(a.ravel(), w.ravel(), minlength=7), grad=False,
           name="Bincount[weights, minlength]"),
    OpCase("Bincount", lambda a: tf.bincount(a, maxlength=2, dtype=tf.float32),
           [np.array([0, 3, 1, 1], i32)], lambda a: np.array([1, 2], np.float32),
           name="Bincount[maxlength]"),
    OpCase("Bincount", tf.bincount, [np.zeros([0], i32)], lambda a: np.zeros([0], i32),
           name="Bincount[empty]"),
]
