"""graphflow.optimizer_passes.control_edges: a pure op's control inputs pass to its readers; ops
whose values depend on when they run (variable readers, stateful ops, fetched ops) keep theirs."""

import numpy as np

import graphflow as tf


def _op(graph, name):
    return graph.get_operation_by_name(name)


def test_a_pure_chain_under_a_control_block_is_freed_and_its_readers_wait():
    x = tf.placeholder(tf.float32, [4], name="x")
    counter = tf.Variable(0.0, name="counter")
    bump = tf.assign_add(counter, 1.0, name="bump")
    with tf.control_dependencies([bump]):
        y = tf.multiply(x, 2.0, name="y")
        z = tf.add(y, 1.0, name="z")
    w = tf.Variable(np.zeros(4, np.float32), name="w")
    update = tf.assign(w, z, name="update")
    graph, report = tf.optimize([update], [x], passes=["control_edges"])
    moved = {p.name: p.rewrites for p in report.passes}["control_edges"]
    assert moved == 4  # the constants 2 and 1 pass bump to y and z, y to z, z to the assign
    assert not _op(graph, "y").control_inputs and not _op(graph, "z").control_inputs
    assert [c.name for c in _op(graph, "update").control_inputs] == ["bump"]
    # and the session still runs the increment once per step, before the update
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(1, 4):
            sess.run(update, {x: np.arange(4, dtype=np.float32)})
            assert sess.run(counter) == step
        np.testing.assert_array_equal(sess.run(w), np.arange(4) * 2 + 1)


def test_readers_of_variables_and_fetched_ops_keep_their_control_inputs():
    v = tf.Variable(1.0, name="v")
    assign = tf.assign(v, 5.0, name="assign")
    with tf.control_dependencies([assign]):
        read = tf.identity(v, name="read")        # reads the variable: must see the assign
        scaled = tf.multiply(v, 3.0, name="scaled")  # reads it too
        fetched = tf.add(read, 1.0, name="fetched")  # pure, but fetched
    graph, _ = tf.optimize([scaled, fetched], passes=["control_edges"])
    for name in ("read", "scaled", "fetched"):
        assert [c.name for c in _op(graph, name).control_inputs] == ["assign"], name
    values = []
    for passes in ([], ["control_edges"]):  # the pass changes no value
        with tf.Session(passes=passes) as sess:
            sess.run(tf.global_variables_initializer())
            values.append(sess.run([scaled, fetched]))
    assert values[0] == values[1]


def test_a_view_of_a_variable_pins_its_readers():
    v = tf.Variable(np.arange(6, dtype=np.float32), name="v")
    view = tf.reshape(v, [2, 3], name="view")  # may be a view of the variable's buffer
    assign = tf.assign(v, np.full(6, 7, np.float32), name="assign")
    with tf.control_dependencies([assign]):
        doubled = tf.multiply(view, 2.0, name="doubled")
    out = tf.reduce_sum(doubled, name="out")
    graph, _ = tf.optimize([out], passes=["control_edges"])
    assert [c.name for c in _op(graph, "doubled").control_inputs] == ["assign"]
    values = []
    for passes in ([], None):  # the pipeline changes no value
        with tf.Session(passes=passes) as sess:
            sess.run(tf.global_variables_initializer())
            values.append(sess.run(out))
    assert values[0] == values[1]


def test_the_pass_lets_the_rules_simplify_a_backward_pass_built_under_update_ops():
    # TF1's batch norm idiom: minimize() inside control_dependencies(UPDATE_OPS); the ReLU
    # gradient's where(y > 0, g, zeros_like(g)) then fuses instead of running as a plain Select
    rng = np.random.default_rng(0)
    tf.set_random_seed(1)  # the same initial kernel in both sessions
    x = tf.placeholder(tf.float32, [8, 6, 6, 3])
    h = tf.layers.conv2d(x, 4, 3, padding="same", use_bias=False)
    h = tf.nn.relu(tf.layers.batch_normalization(h, training=True))
    loss = tf.reduce_mean(tf.square(h))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    graph, _ = tf.optimize([train, loss], [x])
    types = [op.type for op in graph.get_operations()]
    assert "Select" not in types and "ZerosLike" not in types
    feed = {x: rng.standard_normal((8, 6, 6, 3)).astype(np.float32)}
    results = []
    for optimize in (True, False):
        with tf.Session(optimize=optimize) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss], feed)[1] for _ in range(3)]
            moving = [sess.run(v) for v in tf.global_variables() if "moving" in v.name]
            results.append((losses, moving))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
