"""Inter-op overlap (graphflow/engine/overlap.py): which steps a plan pairs, and that pairs run side
by side compute exactly what the plan computes one step after another."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import config, overlap
from graphflow.framework.errors import InvalidArgumentError
from graphflow.kernels.cpu import intra_op


@pytest.fixture
def always_side_by_side(monkeypatch):
    """Pairs run side by side whatever their size (the tests' tensors are small)."""
    monkeypatch.setattr(overlap, "MIN_OVERLAP_WORK", 0)


def _plan(sess):
    """The session's largest plan (a training step's, not the initializer's)."""
    plans = list(sess._plans.values())
    assert plans
    return max(plans, key=lambda p: len(p.step_list.steps))


def _paired_ops(sess):
    plan = _plan(sess)
    steps = plan.step_list.steps
    return [(steps[i].op.name, steps[j].op.name) for i, j in plan.pairs]


def _cnn_training(inter_op, steps=3):
    """Variables and losses after `steps` Adam steps of a small CNN (conv, pool, conv, dense)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(3)
        rng = np.random.default_rng(0)
        x = tf.placeholder(tf.float32, [8, 12, 12, 3])
        y = tf.placeholder(tf.int64, [8])
        h = tf.layers.conv2d(x, 8, 3, padding="same", activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.conv2d(h, 16, 3, padding="same", activation=tf.nn.relu)
        h = tf.layers.dense(tf.layers.flatten(h), 32, activation=tf.nn.relu)
        logits = tf.layers.dense(h, 5)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        sess = tf.Session(graph=graph,
                          config=tf.ConfigProto(inter_op_parallelism_threads=inter_op))
        sess.run(tf.global_variables_initializer())
        feed = {x: rng.standard_normal((8, 12, 12, 3)).astype(np.float32),
                y: rng.integers(0, 5, 8)}
        losses = [sess.run([loss, train], feed)[0] for _ in range(steps)]
        values = sess.run(tf.trainable_variables())
        return sess, losses, values


def test_cnn_training_pairs_gradients_and_matches_one_step_at_a_time(always_side_by_side,
                                                                     monkeypatch):
    side_by_side = []
    run_beside = intra_op.POOL.run_beside
    monkeypatch.setattr(intra_op.POOL, "run_beside",
                        lambda *a, **k: side_by_side.append(1) or run_beside(*a, **k))
    sess, losses, values = _cnn_training(inter_op=0)
    assert side_by_side
    paired = _paired_ops(sess)
    # each layer's input and weight gradients run side by side (the conv pairs hoist the
    # gradient's Shape constant from between them)
    assert any("Conv2DBackpropInput" in a and "Conv2DBackpropFilter" in b for a, b in paired), paired
    assert any("MatMul_grad/MatMul" in a and "MatMul_grad/MatMul_1" in b for a, b in paired), paired
    assert "_beside(" in _plan(sess).source
    side_by_side.clear()
    sequential, seq_losses, seq_values = _cnn_training(inter_op=1)
    assert _plan(sequential).pairs == []
    assert "_beside(" not in _plan(sequential).source
    np.testing.assert_array_equal(losses, seq_losses)  # the same bits, step after step
    for a, b in zip(values, seq_values):
        np.testing.assert_array_equal(a, b)
    assert not side_by_side


def test_independent_products_pair_and_dependent_ones_do_not():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 6])
        w1 = tf.constant(np.ones((6, 5), np.float32))
        w2 = tf.constant(np.full((6, 3), 2, np.float32))
        a = tf.matmul(x, w1)
        b = tf.matmul(x, w2)            # independent of a: paired with it
        c = tf.matmul(a, tf.ones([5, 2]))  # reads a: never beside it
        sess = tf.Session(optimize=False)
        feed = {x: np.arange(24, dtype=np.float32).reshape(4, 6)}
        out = sess.run([a, b, c], feed)
        assert _paired_ops(sess) == [(a.op.name, b.op.name)]
        np.testing.assert_array_equal(out[1], feed[x] @ np.full((6, 3), 2, np.float32))
        np.testing.assert_array_equal(out[2], (feed[x] @ np.ones((6, 5), np.float32)) @ np.ones((5, 2)))


def test_no_pair_across_a_variable_update():
    """A step is never moved up over a stateful step: it would read the variable's old value."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        v = tf.Variable(np.ones((3, 3), np.float32))
        a = tf.matmul(x, tf.ones([3, 3]))
        update = tf.assign(v, np.full((3, 3), 5, np.float32))
        with tf.control_dependencies([update]):
            b = tf.matmul(x, v.read_value())
        sess = tf.Session(optimize=False)
        sess.run(v.initializer)
        out = sess.run([a, b], {x: np.ones((2, 3), np.float32)})
        assert _plan(sess).pairs == []
        np.testing.assert_array_equal(out[1], np.full((2, 3), 15, np.float32))


@pytest.mark.parametrize("how", ["inter_op", "intra_op", "process"])
def test_one_thread_settings_pair_nothing(how):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 6])
        a = tf.matmul(x, tf.ones([6, 5]))
        b = tf.matmul(x, tf.ones([6, 3]))
        if how == "process":
            config.set_inter_op_parallelism_threads(1)
            try:
                sess = tf.Session(optimize=False)
            finally:
                config.set_inter_op_parallelism_threads(0)
        else:
            sess = tf.Session(optimize=False, config=tf.ConfigProto(
                **{f"{how}_parallelism_threads": 1}))
        sess.run([a, b], {x: np.ones((4, 6), np.float32)})
        assert _plan(sess).pairs == []


@pytest.mark.parametrize("failing", [0, 1])
def test_a_failure_in_a_pair_names_its_own_op(always_side_by_side, failing):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None])
        w1 = tf.placeholder(tf.float32, [None, None], name="w_first")
        w2 = tf.placeholder(tf.float32, [None, None], name="w_second")
        a = tf.matmul(x, w1, name="first_product")
        b = tf.matmul(x, w2, name="second_product")
        sess = tf.Session(optimize=False)
        good, bad = np.ones((3, 2), np.float32), np.ones((5, 2), np.float32)
        feed = {x: np.ones((4, 3), np.float32), w1: bad if failing == 0 else good,
                w2: bad if failing == 1 else good}
        with pytest.raises(InvalidArgumentError) as info:
            sess.run([a, b], feed)
        assert _paired_ops(sess) == [("first_product", "second_product")]
        assert info.value.op.name == ("first_product", "second_product")[failing]
        assert "test_overlap.py" in str(info.value)  # the user's line that made the op


def test_traced_run_records_both_steps_of_a_pair(always_side_by_side):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [16, 32])
        a = tf.matmul(x, tf.ones([32, 8]), name="left")
        b = tf.matmul(x, tf.ones([32, 4]), name="right")
        sess = tf.Session(optimize=False)
        metadata = tf.RunMetadata()
        out = sess.run([a, b], {x: np.ones((16, 32), np.float32)},
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=metadata)
        names = {n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats}
        assert {"left", "right"} <= names
        np.testing.assert_array_equal(out[0], np.full((16, 8), 32, np.float32))
        np.testing.assert_array_equal(out[1], np.full((16, 4), 32, np.float32))


def _kernel(fn, work):
    """A stand-in kernel doing `work` multiply-adds."""
    def kernel(*args):
        return fn(*args)
    kernel.overlap_work = lambda *args: work
    return kernel


def test_small_pairs_run_one_after_the_other(monkeypatch):
    calls = []
    monkeypatch.setattr(intra_op.POOL, "run_beside", lambda *a, **k: calls.append(a) or [1, 2])
    x = np.ones(10, np.float32)
    big, small = overlap.MIN_OVERLAP_WORK, overlap.MIN_OVERLAP_WORK - 1
    assert overlap.run_pair(_kernel(np.negative, big), (x,), _kernel(np.abs, small), (x,))[1][0] == 1
    assert overlap.run_pair(np.negative, (x,), np.abs, (x,))[0][0] == -1  # no work known: small
    assert calls == []
    assert overlap.run_pair(_kernel(np.negative, big), (x,), _kernel(np.abs, big), (x,)) == [1, 2]
    assert len(calls) == 1


def test_larger_call_runs_on_the_calling_thread(always_side_by_side):
    import threading
    where = {}

    def record(name):
        def kernel(x):
            where[name] = threading.current_thread() is threading.main_thread()
            return name
        return kernel
    x = np.ones(4)
    for _ in range(20):  # whichever call a worker takes, the larger one starts on this thread
        assert overlap.run_pair(_kernel(record("a"), 10), (x,),
                                _kernel(record("b"), 1000), (x,)) == ("a", "b")
        assert where["b"]


def test_each_step_is_in_at_most_one_pair():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 6])
        products = [tf.matmul(x, tf.constant(np.full((6, k), k, np.float32)), name=f"p{k}")
                    for k in range(1, 6)]
        sess = tf.Session(optimize=False)
        out = sess.run(products, {x: np.ones((4, 6), np.float32)})
        paired = _paired_ops(sess)
        assert paired == [("p1", "p2"), ("p3", "p4")]  # p5 has no partner left
        for k, value in enumerate(out, start=1):
            np.testing.assert_array_equal(value, np.full((4, k), 6.0 * k, np.float32))
