"""graphflow.kernels.cpu.reference.segment_kernels: segment max and min with NaN as TF's CPU kernels
give them (a NaN row replaces the running value, the next row replaces a NaN), with TF 2.21's
numbers as literals; sums and means of segments holding NaN are NaN."""

import numpy as np
import pytest

import graphflow as tf

nan, inf = np.nan, np.inf
_LOWEST = float(np.finfo(np.float32).min)

# (data, sorted ids) -> TF 2.21 (tf.compat.v1) segment_max == unsorted_segment_max, and _min
_CASES = [
    ([1, nan, 3, 2, nan, 5, nan, nan, -1], [0, 0, 0, 1, 1, 2, 3, 3, 4],
     [3, nan, 5, nan, -1], [3, nan, 5, nan, -1]),
    ([nan, 1, 3, nan, 2], [0, 0, 0, 1, 1], [3, 2], [1, 2]),
    ([5, nan, 3], [0, 0, 0], [3], [3]),
    ([2, 3, nan, 5, 1], [0] * 5, [5], [1]),
    ([2, 3, nan, 1, 1, 1], [0] * 6, [1], [1]),
    ([nan], [0], [nan], [nan]),
    ([inf, nan, 2], [0, 0, 0], [2], [2]),
]


@pytest.mark.parametrize("data,ids,want_max,want_min", _CASES)
def test_segment_max_and_min_with_nan_as_tf(data, ids, want_max, want_min):
    data = np.array(data, np.float32)
    ids = np.array(ids, np.int32)
    n = int(ids.max()) + 1
    with tf.Session() as sess:
        got = sess.run([tf.segment_max(data, ids), tf.unsorted_segment_max(data, ids, n),
                        tf.segment_min(data, ids), tf.unsorted_segment_min(data, ids, n)])
    for value, want in zip(got, [want_max, want_max, want_min, want_min]):
        np.testing.assert_array_equal(value, np.array(want, np.float32))


def test_unsorted_segments_fold_rows_in_row_order_as_tf():
    # TF 2.21: segment 0 is rows 1 (nan), 4 (2), 5 (7); segment 1 rows 0 (3), 2 (1), 3 (nan)
    data = np.array([3, nan, 1, nan, 2, 7], np.float32)
    ids = np.array([1, 0, 1, 1, 0, 0], np.int32)
    # ids of rank 2 flatten in row-major order: segment 0 is 1, nan, 3
    data2 = np.array([[1, nan], [2, 3]], np.float32)
    ids2 = np.array([[0, 0], [1, 0]], np.int32)
    # a 2-D segment: each column on its own
    data3 = np.array([[1, nan], [nan, 2], [3, 4]], np.float32)
    with tf.Session() as sess:
        hi, lo, hi2, hi3, lo3 = sess.run([
            tf.unsorted_segment_max(data, ids, 2), tf.unsorted_segment_min(data, ids, 2),
            tf.unsorted_segment_max(data2, ids2, 2), tf.unsorted_segment_max(data3, [0, 0, 1], 2),
            tf.segment_min(data3, [0, 0, 1])])
    np.testing.assert_array_equal(hi, [7, nan])
    np.testing.assert_array_equal(lo, [2, nan])
    np.testing.assert_array_equal(hi2, [3, 2])
    np.testing.assert_array_equal(hi3, [[nan, 2], [3, 4]])
    np.testing.assert_array_equal(lo3, [[nan, 2], [3, 4]])


def test_infinite_segments_start_as_tf():
    # TF 2.21: the unsorted ops start from the lowest finite value (max) / highest (min), so a
    # segment of -inf alone gives it; after a NaN the next row is taken as it is; the sorted ops
    # start from -inf (+inf)
    with tf.Session() as sess:
        for data, u_max, s_max in (([-inf], _LOWEST, -inf), ([-inf, -inf], _LOWEST, -inf),
                                   ([nan, -inf], -inf, -inf), ([-inf, nan, -inf], -inf, -inf)):
            x = np.array(data, np.float32)
            ids = np.zeros(len(data), np.int32)
            got = sess.run([tf.unsorted_segment_max(x, ids, 1), tf.segment_max(x, ids),
                            tf.unsorted_segment_min(-x, ids, 1), tf.segment_min(-x, ids)])
            assert [float(v[0]) for v in got] == [u_max, s_max, -u_max, -s_max], data


def test_segment_sums_and_means_of_nan_are_nan():
    data = np.array([1, nan, 3, 2, nan, 5, nan, nan, -1], np.float32)
    ids = np.array([0, 0, 0, 1, 1, 2, 3, 3, 4], np.int32)
    with tf.Session() as sess:
        for op in (tf.segment_sum, tf.segment_mean):
            np.testing.assert_array_equal(sess.run(op(data, ids)), [nan, nan, 5, nan, -1])


def test_random_segments_follow_the_row_order_rule():
    rng = np.random.RandomState(3)
    for _ in range(20):
        rows, n = rng.randint(1, 60), rng.randint(1, 5)
        data = rng.randn(rows, 3).astype(np.float32)
        data[rng.rand(rows, 3) < 0.3] = nan
        ids = rng.randint(0, n, rows).astype(np.int32)
        want_max = np.full((n, 3), _LOWEST, np.float32)
        want_min = np.full((n, 3), -_LOWEST, np.float32)
        for row, j in zip(data, ids):  # TF: running = running > x ? running : x (max)
            want_max[j] = np.where(want_max[j] > row, want_max[j], row)
            want_min[j] = np.where(want_min[j] < row, want_min[j], row)
        with tf.Session() as sess:
            hi, lo = sess.run([tf.unsorted_segment_max(data, ids, n),
                               tf.unsorted_segment_min(data, ids, n)])
        np.testing.assert_array_equal(hi, want_max)
        np.testing.assert_array_equal(lo, want_min)
