"""Shape ops beyond the generic harness: reshape with -1 and unknown batch dims, shape tensors built
by the graph, fill/zeros/ones forms, convert_to_tensor packing, and the errors users see."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import InvalidArgumentError
from graphflow.ops.registry import OpBuildError


def test_reshape_minus_one_static():
    x = tf.placeholder(tf.float32, [4, 6])
    assert tf.reshape(x, [-1]).shape.as_list() == [24]
    assert tf.reshape(x, [3, -1, 2]).shape.as_list() == [3, 4, 2]
    assert tf.reshape(x, tf.constant([2, 12])).shape.as_list() == [2, 12]


def test_reshape_unknown_batch_runs_with_any_batch():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.reshape(x, [-1, 2, 2])
    z = tf.reshape(x, [tf.shape(x)[0], 2, -1])
    assert y.shape.as_list() == [None, 2, 2]
    assert z.shape.as_list() == [None, 2, 2]
    with tf.Session() as sess:
        for batch in (1, 3, 5):
            v = np.arange(batch * 4, dtype=np.float32).reshape(batch, 4)
            got_y, got_z = sess.run([y, z], {x: v})
            np.testing.assert_array_equal(got_y, v.reshape(-1, 2, 2))
            np.testing.assert_array_equal(got_z, v.reshape(batch, 2, 2))


def test_reshape_to_shape_of_another_tensor():
    x = tf.placeholder(tf.float32, [None, 6])
    y = tf.placeholder(tf.float32, [None, 2, 3])
    r = tf.reshape(x, tf.shape(y))
    assert r.shape.as_list() == [None, 2, 3]
    with tf.Session() as sess:
        v = np.arange(12.0).reshape(2, 6)
        np.testing.assert_array_equal(sess.run(r, {x: v, y: np.zeros((2, 2, 3))}),
                                      v.reshape(2, 2, 3))


def test_reshape_errors_name_op_and_line():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(OpBuildError) as info:
        tf.reshape(x, [4, 2], name="bad")  # the line the message must point at
    msg = str(info.value)
    assert "Reshape op 'bad'" in msg and "6 elements" in msg and "[4, 2]" in msg
    assert "test_shape_ops.py" in msg and 'tf.reshape(x, [4, 2], name="bad")' in msg
    with pytest.raises(OpBuildError, match="only one -1|one dimension"):
        tf.reshape(x, [-1, -1])
    with pytest.raises(OpBuildError, match="not a multiple of 4"):
        tf.reshape(x, [-1, 4])
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.reshape(x, tf.constant([2.0, 3.0]))


def test_reshape_run_time_error_names_op():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reshape(x, [-1, 2])
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="Reshape.*test_shape_ops.py"):
            sess.run(y, {x: np.zeros((3, 3))})


def test_shape_size_rank_at_run_time():
    x = tf.placeholder(tf.float32, [None, None, 3])
    s, n, r = tf.shape(x), tf.size(x), tf.rank(x)
    s64 = tf.shape(x, out_type=tf.int64)
    assert s.shape.as_list() == [3] and s.dtype == tf.int32 and s64.dtype == tf.int64
    assert n.shape.as_list() == [] and r.dtype == tf.int32
    with tf.Session() as sess:
        got = sess.run([s, n, r, s64], {x: np.zeros((2, 5, 3))})
    assert got[0].tolist() == [2, 5, 3] and got[1] == 30 and got[2] == 3
    assert got[3].dtype == np.int64


def test_zeros_ones_fill_forms():
    x = tf.placeholder(tf.float32, [None, 3])
    a = tf.zeros(tf.shape(x))
    b = tf.ones([tf.shape(x)[0], 2], dtype=tf.int64)
    c = tf.zeros((2,), tf.bool)
    d = tf.fill([2, 2], 7)
    e = tf.zeros_like(x, dtype=tf.int32)
    f = tf.ones(tf.TensorShape([1, 2]))
    assert a.shape.as_list() == [None, 3] and b.shape.as_list() == [None, 2]
    assert d.dtype == tf.int32 and e.dtype == tf.int32 and e.shape.as_list() == [None, 3]
    with tf.Session() as sess:
        got = sess.run([a, b, c, d, e, f], {x: np.ones((4, 3))})
    assert got[0].shape == (4, 3) and not got[0].any()
    assert got[1].dtype == np.int64 and got[1].shape == (4, 2) and (got[1] == 1).all()
    assert got[2].dtype == np.bool_ and not got[2].any()
    assert (got[3] == 7).all() and got[4].shape == (4, 3) and got[5].shape == (1, 2)
    with pytest.raises(ValueError, match="not fully defined"):
        tf.zeros(tf.TensorShape([None, 2]))
    with pytest.raises(OpBuildError, match="negative"):
        tf.zeros([2, -3])


def test_convert_to_tensor_packs_nested_lists():
    a = tf.placeholder(tf.float32, [])
    t = tf.convert_to_tensor([[a, 1.0], [2, a]])
    i = tf.placeholder(tf.int32, [])
    s = tf.convert_to_tensor([i, 3])
    assert t.shape.as_list() == [2, 2] and t.dtype == tf.float32
    assert s.dtype == tf.int32 and s.op.type == "Pack"
    with tf.Session() as sess:
        got_t, got_s = sess.run([t, s], {a: 5.0, i: 4})
    np.testing.assert_array_equal(got_t, [[5, 1], [2, 5]])
    assert got_s.tolist() == [4, 3]


def test_shape_op_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(OpBuildError, match="cannot broadcast"):
        tf.broadcast_to(x, [3, 3])
    with pytest.raises(OpBuildError, match="out of range"):
        tf.expand_dims(x, 3)
    with pytest.raises(OpBuildError, match="expected a dimension of 1, got 3"):
        tf.squeeze(x, [1])
    with pytest.raises(OpBuildError, match="dimension 1 of the inputs must match"):
        tf.concat([x, tf.zeros([2, 4])], 0)
    with pytest.raises(OpBuildError, match="same rank"):
        tf.concat([x, tf.zeros([2])], 0)
    with pytest.raises(TypeError, match="same dtype"):
        tf.concat([x, tf.zeros([2, 3], tf.float64)], 0)
    with pytest.raises(OpBuildError, match="same shape"):
        tf.stack([x, tf.zeros([3, 2])])
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(tf.placeholder(tf.float32, [None, 2]))
    with pytest.raises(TypeError, match="static integer"):
        tf.expand_dims(x, tf.placeholder(tf.int32, []))


def test_squeeze_expand_and_concat_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 1, 3])
    assert tf.squeeze(x, [1]).shape.as_list() == [None, 3]
    assert tf.squeeze(x).shape.dims is None  # an unknown dim might be 1
    assert tf.expand_dims(x, -1).shape.as_list() == [None, 1, 3, 1]
    y = tf.concat([x, tf.placeholder(tf.float32, [2, None, 3])], axis=1)
    assert y.shape.as_list() == [2, None, 3]
    with tf.Session() as sess:
        v = np.arange(6.0).reshape(2, 1, 3)
        np.testing.assert_array_equal(sess.run(tf.squeeze(x), {x: v}), v.reshape(2, 3))


def test_range_forms():
    n = tf.placeholder(tf.int32, [])
    r = tf.range(n)
    assert r.shape.as_list() == [None] and r.dtype == tf.int32
    assert tf.range(1, 10, 4).shape.as_list() == [3]
    assert tf.range(5, 1, -1).shape.as_list() == [4]
    assert tf.range(3.0).dtype == tf.float32
    assert tf.range(0, 5, dtype=tf.float64).dtype == tf.float64
    with tf.Session() as sess:
        assert sess.run(r, {n: 4}).tolist() == [0, 1, 2, 3]
        assert sess.run(tf.range(5, 1, -1)).tolist() == [5, 4, 3, 2]
    with pytest.raises(OpBuildError, match="delta must not be 0"):
        tf.range(0, 4, 0)


def test_fetched_views_do_not_alias_constants():
    c = tf.constant(np.arange(6.0).reshape(2, 3))
    views = [tf.reshape(c, [3, 2]), tf.transpose(c), c[::-1], tf.expand_dims(c, 0)]
    with tf.Session() as sess:
        first = sess.run(views)
        for v in first:
            assert v.flags.writeable
            v[...] = -1
        second = sess.run(views)
    assert all((v >= 0).all() for v in second)
