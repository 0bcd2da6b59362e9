"""Variables: creation, naming, collections, initializers, assign ops, uninitialized errors."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework import errors


def test_variable_naming_and_collections():
    w = tf.Variable(np.ones((2, 3), np.float32), name="w")
    b = tf.Variable(0.0, name="b", trainable=False)
    w2 = tf.Variable(np.ones(2), name="w")
    assert w.name == "w:0" and w.op.name == "w" and w2.op.name == "w_1"
    assert w.shape.as_list() == [2, 3] and w.dtype == tf.float32
    assert w2.dtype == tf.float64  # numpy float64 data keeps its dtype (TF1)
    assert tf.global_variables() == [w, b, w2]
    assert tf.trainable_variables() == [w, w2]
    assert w.initializer.name == "w/Assign"


def test_initializers_and_reads():
    w = tf.Variable(tf.constant([1.0, 2.0]) * 3.0, name="w")
    c = tf.Variable(lambda: np.int32(7), name="c")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(w), [3.0, 6.0])
        assert sess.run(c) == 7
        assert w.eval() is not None


def test_uninitialized_read_names_variable():
    v = tf.Variable(1.0, name="weights")
    y = v * 2.0
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError, match="weights.*test_state_ops.py"):
            sess.run(y)
        sess.run(tf.variables_initializer([v]))
        assert sess.run(y) == 2.0
        assert sess.run(tf.is_variable_initialized(v))


def test_read_value_inside_control_dependencies_sees_update():
    v = tf.Variable(1.0)
    with tf.control_dependencies([v.assign_add(5.0)]):
        fresh = v.read_value()
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(fresh) == 6.0
        assert sess.run(fresh) == 11.0


def test_identity_of_a_variable_inside_control_dependencies_reads_it_when_it_runs():
    # TF1's idiom for reading a ref variable after an update (moving averages, custom optimizers)
    v = tf.Variable(1.0, name="v")
    assign = tf.assign(v, 5.0)
    with tf.control_dependencies([assign]):
        after = tf.identity(v)
        after_value = tf.identity(v.value())
        doubled = after * 2.0
    outside = tf.identity(v)  # outside a block: the plain value, no new read
    assert outside.op.inputs[0] is v.value()
    grad, = tf.gradients(doubled, [v])  # d/dv reaches the fresh read
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([after, after_value, doubled]) == [5.0, 5.0, 10.0]
        assert sess.run(grad) == 2.0
        sess.run(v.initializer)
        assert sess.run(outside) == 1.0


def test_assign_ops_and_tf_functions():
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v.assign([5.0, 6.0])), [5.0, 6.0])
        np.testing.assert_array_equal(sess.run(tf.assign_add(v, [1.0, 1.0])), [6.0, 7.0])
        np.testing.assert_array_equal(sess.run(tf.assign_sub(v, [2.0, 2.0])), [4.0, 5.0])
        np.testing.assert_array_equal(sess.run(tf.assign(v.value(), [0.0, 1.0])), [0.0, 1.0])
        np.testing.assert_array_equal(sess.run(v), [0.0, 1.0])
        v.load([9.0, 9.0], sess)
        np.testing.assert_array_equal(sess.run(v), [9.0, 9.0])


def test_assign_checks_dtype_and_shape():
    v = tf.Variable(np.zeros((2, 2), np.float32), name="v")
    with pytest.raises(ValueError, match="shape"):
        v.assign(np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError):
        v.assign(tf.constant(np.zeros((2, 2), np.float64)))


def test_variables_are_per_session():
    v = tf.Variable(1.0)
    inc = v.assign_add(1.0)
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(v.initializer)
        s2.run(v.initializer)
        s1.run(inc)
        assert s1.run(v) == 2.0 and s2.run(v) == 1.0


def test_variable_in_expressions_and_control_dependencies():
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    y = v * 2.0 + v
    with tf.control_dependencies([v.assign([10.0, 20.0])]):
        after = tf.identity(v.read_value() * 1.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])
        np.testing.assert_array_equal(sess.run(after), [10.0, 20.0])


def test_assign_of_a_differently_shaped_value_fails_at_run_time_and_changes_nothing():
    v = tf.Variable([1.0, 2.0], name="v")
    value = tf.placeholder(tf.float32, [None], name="value")
    a = tf.assign(v, value)
    delta = tf.placeholder(tf.float32, None, name="delta")  # unknown rank: checked at run time
    grow = tf.assign_add(v, delta)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="'Assign' \\(Assign\\) created at .*test_state_ops.py.*variable "
                                 "'v' has shape \\[2\\] but the value has shape \\[3\\]"):
            sess.run(a, {value: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="AssignAdd"):
            sess.run(grow, {delta: [[1.0, 1.0]]})
        assert sess.run(v).tolist() == [1.0, 2.0]
        sess.run(a, {value: [5.0, 6.0]})
        assert sess.run(v).tolist() == [5.0, 6.0]


def test_assign_with_validate_shape_false_changes_the_variables_shape():
    v = tf.Variable([1.0, 2.0], name="v", validate_shape=False)
    assert v.shape.dims is None
    value = tf.placeholder(tf.float32, [None])
    a = tf.assign(v, value, validate_shape=False)
    assert a.shape.as_list() == [None]
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(a, {value: [1.0, 2.0, 3.0]})
        assert sess.run(v.read_value()).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("build", ["assign_add", "assign_sub", "optimizer"])
def test_use_locking_serializes_read_modify_write_across_threads(build):
    import sys
    import threading

    counter = tf.Variable(0.0, name="counter")
    other = tf.Variable(0.0, name="other")
    if build == "assign_add":
        update = tf.group(tf.assign_add(counter, 1.0, use_locking=True),
                          tf.assign_add(other, 1.0, use_locking=True))
        expected = 1.0
    elif build == "assign_sub":
        update = tf.group(tf.assign_sub(other, 1.0, use_locking=True),
                          tf.assign_sub(counter, 1.0, use_locking=True))
        expected = -1.0
    else:  # d(-counter - other)/d(var) = -1: each step adds the learning rate 1.0 to both
        loss = -counter - other
        update = tf.train.GradientDescentOptimizer(1.0, use_locking=True).minimize(loss)
        expected = 1.0
    # work after the update keeps the read-to-commit window of each run open (lost updates
    # without the locks: typically a quarter of the increments survive)
    big = tf.constant(np.ones((64, 64), np.float32))
    with tf.control_dependencies([update]):
        step = tf.reduce_sum(tf.matmul(big, big))
    threads, steps = 4, 30
    switch = sys.getswitchinterval()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())

        def work():
            for _ in range(steps):
                sess.run(step)
        workers = [threading.Thread(target=work) for _ in range(threads)]
        sys.setswitchinterval(1e-5)
        try:
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        finally:
            sys.setswitchinterval(switch)
        assert sess.run(counter) == expected * threads * steps  # no lost increments
        assert sess.run(other) == expected * threads * steps
