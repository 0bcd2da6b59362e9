"""tf.py_func / tf.numpy_function: outputs and dtypes, several outputs, no gradient, errors in the
function naming the op, and saving a graph that holds one is refused naming the op."""

import numpy as np
import pytest

import graphflow as tf


def test_py_func_runs_python_on_arrays_each_time():
    calls = []

    def scaled(a, b):
        calls.append(1)
        return a * b

    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(scaled, [x, tf.constant(2.0)], tf.float32)
    assert y.dtype == tf.float32 and y.shape.dims is None
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3]}), [2, 4, 6])
        sess.run(y, {x: [1, 2, 3]})
    assert len(calls) == 2  # stateful: never cached or folded


def test_several_outputs_cast_to_tout_and_numpy_function():
    x = tf.constant([1.0, 2.0, 4.0])
    total, count = tf.py_func(lambda v: (v.sum(), len(v)), [x], [tf.float64, tf.int64])
    doubled = tf.numpy_function(lambda v: v * 2, [x], tf.float32)
    with tf.Session() as sess:
        t, c, d = sess.run([total, count, doubled])
    assert (t.dtype, c.dtype, t, c) == (np.float64, np.int64, 7.0, 3)
    np.testing.assert_array_equal(d, [2, 4, 8])


def test_py_func_has_no_gradient():
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(np.square, [x], tf.float32)
    assert tf.gradients(tf.reduce_sum(y), [x]) == [None]


def test_errors_in_the_function_and_wrong_results_name_the_op():
    def broken(v):
        raise ZeroDivisionError("boom")

    x = tf.constant([1.0])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="'PyFunc'.*ZeroDivisionError: boom"):
            sess.run(tf.py_func(broken, [x], tf.float32))
        with pytest.raises(tf.errors.InvalidArgumentError, match="returned 2 values, Tout declares 1"):
            sess.run(tf.py_func(lambda v: (v, v), [x], [tf.float32]))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="returned float32 for output 0, Tout declares int32"):
            sess.run(tf.py_func(lambda v: v, [x], tf.int32))


def test_saving_a_graph_with_a_py_func_is_refused_naming_the_op(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.py_func(np.tanh, [x], tf.float32, name="my_tanh")
    path = tmp_path / "model.gfz"
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="'my_tanh' \\(PyFunc\\).*cannot travel in a graph file"):
            tf.save(str(path), inputs={"x": x}, outputs={"y": y}, session=sess)
    assert not path.exists()
