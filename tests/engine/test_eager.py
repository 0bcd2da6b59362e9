"""Eager mode (graphflow/engine/eager.py): ops run as they are built, on the graph mode's kernels,
with TF's errors for graph-only calls; switching the mode on and off."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import eager as eager_mode
from graphflow.framework.eager_tensor import EagerTensor


def test_eager_is_off_unless_enabled():
    assert not tf.executing_eagerly()
    assert type(tf.constant(1.0)) is not EagerTensor


def test_enable_after_graph_ops_is_an_error():
    tf.constant(1.0)
    with pytest.raises(ValueError, match="program startup"):
        tf.enable_eager_execution()


def test_ops_return_values(eager):
    assert tf.executing_eagerly()
    a = tf.constant([1.0, 2.0, 3.0])
    b = a * 2 + 1
    assert isinstance(b, EagerTensor)
    np.testing.assert_array_equal(b.numpy(), [3.0, 5.0, 7.0])
    assert b.shape.as_list() == [3] and b.dtype == tf.float32
    m = tf.matmul(tf.ones([2, 3]), tf.ones([3, 4]))
    np.testing.assert_array_equal(m.numpy(), np.full((2, 4), 3.0, np.float32))
    assert float(tf.reduce_sum(b)) == 15.0


def test_graph_scopes_inside_eager_mode_build_graphs(eager):
    with tf.Graph().as_default():
        assert not tf.executing_eagerly()
        x = tf.placeholder(tf.float32, [2])
        with tf.Session() as sess:
            assert sess.run(x * 2, {x: [1.0, 2.0]}).tolist() == [2.0, 4.0]
    assert tf.executing_eagerly()


def test_graph_only_calls_raise_tf_errors(eager):
    with pytest.raises(RuntimeError, match="placeholder\\(\\) is not compatible with eager"):
        tf.placeholder(tf.float32)
    with pytest.raises(RuntimeError, match="Session is not compatible with eager"):
        tf.Session()
    x = tf.constant(1.0)
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager"):
        tf.gradients(x * x, [x])
    with pytest.raises(NotImplementedError, match="eval is not supported"):
        x.eval()


def test_errors_name_the_op_and_the_users_line(eager):
    with pytest.raises(ValueError, match=r"Add op .*test_eager.py:\d+.*cannot be broadcast"):
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="same dtype"):
        tf.add(tf.constant([1.0]), tf.constant([1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"test_eager.py:\d+"):
        tf.gather(tf.constant([1.0, 2.0]), tf.constant([5]))


def test_disable_returns_to_graph_mode(eager):
    tf.disable_eager_execution()
    assert not tf.executing_eagerly()
    assert type(tf.constant(1.0)) is not EagerTensor


def test_kernels_are_kept_per_signature_and_reshape_rules_rerun(eager):
    graph = eager_mode.eager_graph()
    a = tf.constant(np.ones(3, np.float32))
    a + a
    kept = len(graph._kernels)
    a + a
    assert len(graph._kernels) == kept  # the same op, attrs, dtypes and shapes: nothing new
    x = tf.range(6)
    assert tf.reshape(x, [2, 3]).shape.as_list() == [2, 3]
    assert tf.reshape(x, [3, 2]).shape.as_list() == [3, 2]  # the rule read the shape's value
    with pytest.raises(ValueError, match="Cannot reshape"):
        tf.reshape(x, [4, 4])


def test_variables_assign_and_read(eager):
    v = tf.Variable(3.0, name="w")
    assert v.name == "w:0" and v.numpy() == 3.0
    v.assign_add(2.0)
    assert v.numpy() == 5.0
    v.assign(tf.constant(1.5))
    assert (v * 2).numpy() == 3.0
    assert "numpy=1.5" in repr(v)
    g = tf.get_variable("g", [2], initializer=tf.ones_initializer())
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    with pytest.raises(NotImplementedError, match="eval is not supported"):
        v.eval()


def test_control_flow_runs_its_kernels(eager):
    r = tf.cond(tf.constant(True), lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    assert r.numpy() == 1.0
    i = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    assert int(i) == 10


def test_seeded_random_ops_repeat_in_a_fresh_eager_mode():
    def draw():
        tf.enable_eager_execution()
        try:
            return tf.random_normal([3], seed=7).numpy(), tf.random_normal([3], seed=7).numpy()
        finally:
            tf.disable_eager_execution()
    first, second = draw(), draw()
    np.testing.assert_array_equal(first[0], second[0])
    assert not np.array_equal(first[0], first[1])  # the op's stream goes on between calls


def test_a_training_loop_keeps_no_names_or_collected_values(eager):
    x = tf.constant(np.ones((4, 3), np.float32))
    y = tf.constant(np.zeros(4, np.int32))
    dense = tf.layers.Dense(2)
    opt = tf.train.AdamOptimizer(0.1)
    graph = eager_mode.eager_graph()

    def step():
        with tf.GradientTape() as tape:
            loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=dense(x))
        opt.apply_gradients(zip(tape.gradient(loss, dense.variables), dense.variables))

    step()
    names, collected = len(graph._names_in_use), graph.get_all_collection_keys()
    for _ in range(20):
        step()
    assert len(graph._names_in_use) == names and graph.get_all_collection_keys() == collected
    assert tf.get_collection(tf.GraphKeys.LOSSES) == []
    first, second = tf.Variable(1.0, name="w"), tf.Variable(2.0, name="w")
    assert (first.name, second.name) == ("w:0", "w_1:0")  # variables keep distinct names
