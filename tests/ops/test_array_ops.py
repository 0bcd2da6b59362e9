"""Array ops beyond the generic harness: transpose, gather (axis, batch_dims, bad indices), one_hot,
tile, pad modes, reverse and unsorted_segment_sum — semantics, static shapes and errors."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import InvalidArgumentError
from graphflow.ops.registry import OpBuildError


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_transpose_default_reverses_any_rank():
    x = tf.placeholder(tf.float32, None)
    y = tf.transpose(x)
    assert y.shape.dims is None
    v = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(y, {x: v}), v.T)
    p = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.transpose(p, [2, 0, 1]).shape.as_list() == [4, None, 3]
    assert tf.transpose(p).shape.as_list() == [4, 3, None]
    with pytest.raises(OpBuildError, match="not a permutation"):
        tf.transpose(p, [0, 0, 1])
    with pytest.raises(OpBuildError, match="rank 3"):
        tf.transpose(p, [1, 0])


def test_gather_axes_and_shapes():
    params = np.arange(24.0).reshape(2, 3, 4)
    p = tf.placeholder(tf.float64, [None, 3, 4])
    idx = np.array([[2, 0], [1, 1]], np.int64)
    g0 = tf.gather(p, [1, 0, 1])
    g1 = tf.gather(p, idx, axis=1)
    g2 = tf.gather(p, idx[0], axis=-1)
    assert g1.shape.as_list() == [None, 2, 2, 4]
    assert g2.shape.as_list() == [None, 3, 2]
    got = run([g0, g1, g2], {p: params})
    np.testing.assert_array_equal(got[0], params[[1, 0, 1]])
    np.testing.assert_array_equal(got[1], np.take(params, idx, axis=1))
    np.testing.assert_array_equal(got[2], params[..., [2, 0]])


def test_gather_batch_dims():
    params = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([[0, 2], [1, 1]], np.int32)
    y = tf.gather(tf.constant(params), tf.constant(idx), axis=2, batch_dims=1)
    assert y.shape.as_list() == [2, 3, 2]
    want = np.stack([params[b][:, idx[b]] for b in range(2)])
    np.testing.assert_array_equal(run(y), want)


def test_gather_bad_indices():
    p = tf.placeholder(tf.float32, [3, 2])
    i = tf.placeholder(tf.int32, [None])
    y = tf.gather(p, i)
    with pytest.raises(InvalidArgumentError, match=r"GatherV2.*contains 3, which is not in \[0, 3\)"):
        run(y, {p: np.zeros((3, 2)), i: [0, 3]})
    with pytest.raises(InvalidArgumentError, match="not in"):
        run(y, {p: np.zeros((3, 2)), i: [-1]})
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.gather(p, tf.constant([0.0]))
    with pytest.raises(OpBuildError, match="out of range"):
        tf.gather(p, [0], axis=2)


def test_one_hot_forms():
    i = tf.placeholder(tf.int32, [None])
    a = tf.one_hot(i, 3)
    b = tf.one_hot(i, 3, on_value=2.5, off_value=-1.0, axis=0, dtype=tf.float64)
    c = tf.one_hot(i, 4, on_value=True, off_value=False)
    assert a.shape.as_list() == [None, 3] and a.dtype == tf.float32
    assert b.shape.as_list() == [3, None] and b.dtype == tf.float64 and c.dtype == tf.bool
    got = run([a, b, c], {i: [2, -1, 0, 7]})
    np.testing.assert_array_equal(got[0], [[0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(got[1], np.where(got[0].T == 1, 2.5, -1.0))
    assert got[2].sum() == 2


def test_one_hot_depth_fed_at_run_time():
    i = tf.placeholder(tf.int64, [None])
    depth = tf.placeholder(tf.int32, [])
    y = tf.one_hot(i, depth, axis=0)
    assert y.op.attrs["depth"] is None and y.shape.as_list() == [None, None]
    for d in (2, 5):
        np.testing.assert_array_equal(run(y, {i: [1, 0, 4], depth: d}),
                                      (np.arange(d)[:, None] == [1, 0, 4]).astype(np.float32))
    assert tf.one_hot(i, tf.constant(3)).shape.as_list() == [None, 3]  # a constant stays an attr
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        run(y, {i: [0], depth: -1})
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.one_hot(i, tf.placeholder(tf.float32, []))


def test_tile_with_tensor_multiples_and_errors():
    x = tf.placeholder(tf.float32, [None, 2])
    m = tf.placeholder(tf.int32, [2])
    assert tf.tile(x, [3, 2]).shape.as_list() == [None, 4]
    y = tf.tile(x, m)
    assert y.shape.as_list() == [None, None]
    v = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(run(y, {x: v, m: [2, 3]}), np.tile(v, (2, 3)))
    with pytest.raises(OpBuildError, match="rank 2"):
        tf.tile(x, [2])


def test_pad_modes_and_errors():
    v = np.arange(6.0).reshape(2, 3)
    x = tf.placeholder(tf.float64, [None, 3])
    outs = [tf.pad(x, [[1, 1], [0, 2]]), tf.pad(x, [[0, 0], [2, 1]], constant_values=-5),
            tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"), tf.pad(x, [[2, 0], [3, 3]], "SYMMETRIC")]
    assert outs[0].shape.as_list() == [None, 5] and outs[2].shape.as_list() == [None, 7]
    got = run(outs, {x: v})
    np.testing.assert_array_equal(got[0], np.pad(v, [[1, 1], [0, 2]]))
    np.testing.assert_array_equal(got[1], np.pad(v, [[0, 0], [2, 1]], constant_values=-5))
    np.testing.assert_array_equal(got[2], np.pad(v, [[1, 1], [2, 2]], mode="reflect"))
    np.testing.assert_array_equal(got[3], np.pad(v, [[2, 0], [3, 3]], mode="symmetric"))
    with pytest.raises(OpBuildError, match="REFLECT paddings"):
        tf.pad(x, [[0, 0], [3, 0]], mode="REFLECT")
    with pytest.raises(OpBuildError, match="rows but the input has rank 2"):
        tf.pad(x, [[1, 1]])
    with pytest.raises(ValueError, match="CONSTANT, REFLECT or SYMMETRIC"):
        tf.pad(x, [[1, 1], [1, 1]], mode="EDGE")
    y = tf.pad(x, [[3, 0], [0, 0]], mode="REFLECT")  # dim 0 unknown: checked at run time
    with pytest.raises(InvalidArgumentError, match="MirrorPad"):
        run(y, {x: v})


def test_pad_with_tensor_paddings():
    x = tf.placeholder(tf.float32, [2, 2])
    n = tf.placeholder(tf.int32, [])
    y = tf.pad(x, [[n, 0], [0, n]])
    assert y.shape.as_list() == [None, None]
    v = np.ones((2, 2), np.float32)
    np.testing.assert_array_equal(run(y, {x: v, n: 2}), np.pad(v, [[2, 0], [0, 2]]))


def test_reverse_and_segment_sum():
    v = np.arange(24.0).reshape(2, 3, 4)
    x = tf.placeholder(tf.float64, [None, 3, 4])
    r = tf.reverse(x, [1, -1])
    assert r.shape.as_list() == [None, 3, 4]
    np.testing.assert_array_equal(run(r, {x: v}), v[:, ::-1, ::-1])
    with pytest.raises(OpBuildError, match="twice"):
        tf.reverse(x, [2, -1])
    s = tf.unsorted_segment_sum(x, [2, 0], num_segments=3)
    assert s.shape.as_list() == [3, 3, 4]
    np.testing.assert_array_equal(run(s, {x: v}), np.stack([v[1], np.zeros((3, 4)), v[0]]))
