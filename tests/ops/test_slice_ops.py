"""Indexing semantics: `Tensor.__getitem__`, `tf.strided_slice`, `tf.slice` and `tf.split` against
numpy, with static and unknown shapes, tensor indices, and the errors users see."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import InvalidArgumentError
from graphflow.ops.registry import OpBuildError

X = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)

KEYS = [
    1, -1, slice(None, None, -1), (slice(1, None), Ellipsis, None), (Ellipsis, 0),
    (None, Ellipsis, None), (slice(-2, None, -1), 2), (0, slice(3, 0, -2), None), (),
    Ellipsis, slice(10, -10, -1), (slice(-100, 100),), (slice(None), slice(None), slice(None, None, 2)),
    (-1, -1, -1), (Ellipsis, slice(4, None, -3)), (slice(None), None, 1, slice(1, 4)),
    (slice(0, 0),), (Ellipsis, None, slice(None, None, -1), None),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
@pytest.mark.parametrize("known", [True, False], ids=["static", "unknown"])
def test_getitem_matches_numpy(key, known):
    x = tf.placeholder(tf.float32, X.shape if known else None)
    y = x[key]
    want = X[key]
    with tf.Session() as sess:
        got = sess.run(y, {x: X})
    np.testing.assert_array_equal(got, want)
    assert got.shape == want.shape
    if known:
        assert y.shape.as_list() == list(want.shape)
    else:
        assert y.shape.is_compatible_with(want.shape)


def test_getitem_partial_shape_keeps_what_is_known():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    assert x[0].shape.as_list() == [3, 5]
    assert x[:, ::-1, None, 1:4].shape.as_list() == [None, 3, 1, 3]
    assert x[..., 2].shape.as_list() == [None, 3]
    assert x[1:].shape.as_list() == [None, 3, 5]


def test_tensor_indices():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    exprs = [x[i], x[:, i:], x[i, ::-1, i::2], x[-i], x[..., j]]
    assert exprs[0].shape.as_list() == [3, 5]
    assert exprs[2].shape.as_list() == [3, None]
    with tf.Session() as sess:
        got = sess.run(exprs, {x: X, i: 1, j: 4})
    for value, want in zip(got, [X[1], X[:, 1:], X[1, ::-1, 1::2], X[-1], X[..., 4]]):
        np.testing.assert_array_equal(value, want)


def test_shape_entries_index_statically():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    y = tf.reshape(x, [tf.shape(x)[0], tf.shape(x)[1] * tf.shape(x)[2]])
    assert y.shape.as_list() == [None, 15]
    with tf.Session() as sess:
        assert sess.run(y, {x: X}).shape == (2, 15)


def test_static_out_of_range_index_names_op_and_line():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(OpBuildError) as info:
        x[:, 3]  # the line the message must point at
    msg = str(info.value)
    assert "StridedSlice" in msg and "out of bounds" in msg
    assert "test_slice_ops.py" in msg and "x[:, 3]" in msg


def test_run_time_out_of_range_index_names_op():
    x = tf.placeholder(tf.float32, [2, 3])
    i = tf.placeholder(tf.int32, [])
    y = x[i]
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="StridedSlice.*out of bounds"):
            sess.run(y, {x: X[:, :, 0], i: 2})
        np.testing.assert_array_equal(sess.run(y, {x: X[:, :, 0], i: -2}), X[0, :, 0])


@pytest.mark.parametrize("key", [[0, 1], 1.5, True, np.array([0, 1])])
def test_bad_index_types(key):
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(TypeError, match="valid indices"):
        x[key]


def test_bad_index_tensors_and_specs():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(TypeError, match="dtype float32"):
        x[tf.constant(1.0)]
    with pytest.raises(TypeError, match="tf.gather"):
        x[tf.constant([0, 1])]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(OpBuildError, match="too many indices"):
        x[0, 0, 0]


def test_strided_slice_masks():
    x = tf.constant(X)
    y = tf.strided_slice(x, [0, 0, 1], [1, 0, 4], [1, 1, 2], begin_mask=0b010, end_mask=0b010,
                         shrink_axis_mask=0b001)
    z = tf.strided_slice(x, [0, 0], [0, 2], [1, 1], ellipsis_mask=0b01, new_axis_mask=0)
    w = tf.strided_slice(x, [0, 1], [0, 2], [1, 1], new_axis_mask=0b01)
    with tf.Session() as sess:
        got = sess.run([y, z, w])
    np.testing.assert_array_equal(got[0], X[0, :, 1:4:2])
    np.testing.assert_array_equal(got[1], X[..., 0:2])
    np.testing.assert_array_equal(got[2], X[None, 1:2])
    assert y.shape.as_list() == [3, 2] and z.shape.as_list() == [2, 3, 2]


def test_slice_with_minus_one_and_tensor_begin():
    x = tf.placeholder(tf.float32, [None, 3, 5])
    b = tf.placeholder(tf.int32, [3])
    y = tf.slice(x, [0, 1, 2], [-1, 2, -1])
    z = tf.slice(x, b, [1, 1, 2])
    assert y.shape.as_list() == [None, 2, 3]
    assert z.shape.as_list() == [1, 1, 2]
    with tf.Session() as sess:
        got_y, got_z = sess.run([y, z], {x: X, b: [1, 2, 3]})
    np.testing.assert_array_equal(got_y, X[:, 1:3, 2:])
    np.testing.assert_array_equal(got_z, X[1:2, 2:3, 3:5])


def test_slice_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(OpBuildError, match="Slice.*out of bounds"):
        tf.slice(x, [1, 1], [2, 1])
    with pytest.raises(OpBuildError, match="one entry per dimension"):
        tf.slice(x, [0], [1])
    y = tf.slice(tf.placeholder(tf.float32, None, name="u"), [1, 0], [2, 1])
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="Slice.*out of bounds"):
            sess.run(y, {"u:0": np.zeros((2, 3))})


def test_split_forms_and_errors():
    x = tf.placeholder(tf.float32, [None, 6])
    a, b, c = tf.split(x, 3, axis=1)
    p, q = tf.split(x, [4, -1], axis=-1)
    assert a.shape.as_list() == [None, 2] and q.shape.as_list() == [None, 2]
    v = np.arange(12.0).reshape(2, 6)
    with tf.Session() as sess:
        got = sess.run([a, b, c, p, q], {x: v})
    for value, want in zip(got, np.split(v, 3, axis=1) + [v[:, :4], v[:, 4:]]):
        np.testing.assert_array_equal(value, want)
    with pytest.raises(OpBuildError, match="not divisible"):
        tf.split(x, 4, axis=1)
    with pytest.raises(OpBuildError, match="must add up"):
        tf.split(x, [2, 2], axis=1)
    u = tf.placeholder(tf.float32, [None, None])
    parts = tf.split(u, 4, axis=1)
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="Split"):
            sess.run(parts[0], {u: v})


def test_split_with_sizes_fed_at_run_time():
    x = tf.placeholder(tf.float32, [None, 6])
    sizes = tf.placeholder(tf.int32, [3])
    parts = tf.split(x, sizes, axis=1)
    assert len(parts) == 3 and parts[0].shape.as_list() == [None, None]
    assert parts[0].op.inputs[1] is sizes and parts[0].op.attrs["size_splits"] is None
    grad = tf.gradients(tf.reduce_sum(parts[0]) + 2.0 * tf.reduce_sum(parts[2]), x)[0]
    v = np.arange(12.0).reshape(2, 6)
    with tf.Session() as sess:
        for fed, cuts in (([1, 2, 3], [1, 3]), ([4, -1, 0], [4, 6])):
            got, g = sess.run([parts, grad], {x: v, sizes: fed})
            for value, want in zip(got, np.split(v, cuts, axis=1)):
                np.testing.assert_array_equal(value, want)
            weights = np.zeros(6)
            weights[:cuts[0]], weights[cuts[1]:] = 1.0, 2.0
            np.testing.assert_array_equal(g, np.broadcast_to(weights, v.shape))
        with pytest.raises(InvalidArgumentError, match="Split"):
            sess.run(parts[0], {x: v, sizes: [1, 1, 1]})
    with pytest.raises(ValueError, match="known length"):
        tf.split(x, tf.placeholder(tf.int32, [None]), axis=1)
