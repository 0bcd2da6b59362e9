"""Training graphs go to TensorFlow: graphflow's gradient helpers and losses are written as
TensorFlow ops (export_lowerings.py), summaries as TensorFlow's (summaries.py), and variable
reads are ordered before the updates of the same run (export_ordering.py).

Without TensorFlow: each lowering's GraphDef imports back into graphflow and computes the same
values; the read-before-write edges are there. With TensorFlow (GRAPHFLOW_TF_PYTHON): TensorFlow
imports graphflow's `.meta`, restores its checkpoint and trains on to graphflow's losses.
"""

import numpy as np
import pytest

import graphflow as tf
from graphflow.interop.tensorflow import op_table
from tests import tf_reference

RNG_SEED = 0


def _mlp(rng):
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.layers.dense(x, 16, activation=tf.nn.relu)
    h = tf.layers.dense(h, 16, activation=tf.nn.tanh) + tf.layers.dense(h, 16,
                                                                       activation=tf.nn.sigmoid)
    loss = tf.losses.sparse_softmax_cross_entropy(y, tf.layers.dense(h, 3))
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
    return loss, train, {"x": rng.randn(6, 8).astype(np.float32), "y": rng.randint(0, 3, 6)}


def _cnn(rng):
    x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.batch_normalization(h, training=True)
    logits = tf.layers.dense(tf.layers.flatten(tf.layers.max_pooling2d(h, 2, 2)), 3)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    return loss, train, {"x": rng.randn(5, 8, 8, 1).astype(np.float32),
                         "y": np.eye(3, dtype=np.float32)[rng.randint(0, 3, 5)]}


def _embedding(rng):
    ids = tf.placeholder(tf.int32, [None, 5], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    table = tf.get_variable("emb", [20, 4])
    mean = tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
    logits = tf.layers.dense(mean, 1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("emb", table)
    tf.summary.merge_all()
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return loss, train, {"x": rng.randint(0, 20, (6, 5)).astype(np.int32),
                         "y": rng.randint(0, 2, (6, 1)).astype(np.float32)}


def _broadcasting(rng):
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    y = tf.placeholder(tf.float32, [None, 8], name="y")  # fed with one row: broadcast
    w = tf.Variable(tf.random_normal([8, 8], seed=1))
    z = tf.nn.l2_normalize(tf.tanh(tf.matmul(x, w)), 1) * tf.sigmoid(x) + y
    loss = tf.reduce_mean(tf.square(z)) + 0.01 * tf.nn.l2_loss(w) + tf.reduce_mean(
        tf.abs(tf.reduce_max(z, 1, keepdims=True) - z))
    train = tf.train.AdagradOptimizer(0.1).minimize(loss)
    return loss, train, {"x": rng.randn(4, 8).astype(np.float32),
                         "y": rng.randn(1, 8).astype(np.float32)}


MODELS = {"mlp": _mlp, "cnn": _cnn, "embedding": _embedding, "broadcasting": _broadcasting}


def _train_and_save(build, directory, steps=3):
    """Build, train one step, save; then graphflow's losses over `steps` more steps."""
    rng = np.random.RandomState(RNG_SEED)
    graph = tf.Graph()
    with graph.as_default():
        loss, train, feed = build(rng)
        tf.add_to_collection("train_op", train)
        tf.add_to_collection("loss", loss)
        feed_dict = {f"{k}:0": v for k, v in feed.items()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, feed_dict)
            prefix = tf.train.Saver().save(sess, f"{directory}/model")
            losses = []
            for _ in range(steps):
                sess.run(train, feed_dict)
                losses.append(float(sess.run(loss, feed_dict)))
    return graph, prefix, feed, losses


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_graphs_export_whole(name):
    graph = tf.Graph()
    with graph.as_default():
        MODELS[name](np.random.RandomState(0))
        types = {op.type for op in graph.get_operations()}
        graph_def = graph.as_graph_def()
    assert types & set(op_table.LOWERINGS) or name == "cnn"
    exported = {node.op for node in graph_def.node}
    assert not exported & (set(op_table.LOWERINGS) - {"LogicalXor"}), exported


@pytest.mark.parametrize("name", ["mlp", "embedding", "broadcasting"])
def test_exported_training_graph_trains_the_same_in_graphflow(name, tmp_path):
    graph, prefix, feed, losses = _train_and_save(MODELS[name], tmp_path)
    graph_def = graph.as_graph_def()
    with tf.Graph().as_default() as again:
        tf.import_graph_def(graph_def, name="")
        variables = {op.name: op.outputs[0] for op in again.get_operations()
                     if op.type == "VariableV2"}
        loss = again.get_tensor_by_name(graph.get_collection("loss")[0].name)
        train = again.get_operation_by_name(graph.get_collection("train_op")[0].name)
        feed_dict = {f"{k}:0": v for k, v in feed.items()}
        with tf.Session() as sess:
            tf.train.Saver(variables).restore(sess, prefix)
            got = []
            for _ in range(len(losses)):
                sess.run(train, feed_dict)
                got.append(float(sess.run(loss, feed_dict)))
    np.testing.assert_allclose(got, losses, rtol=1e-5)


def test_lowerings_compute_what_the_graphflow_ops_compute():
    rng = np.random.RandomState(3)
    x_value = rng.randn(3, 4, 5).astype(np.float32)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 4, 5], name="x")
        target = tf.placeholder(tf.int32, [3], name="target")  # unknown values: computed axes
        from graphflow.ops import gradient_ops
        from graphflow.ops.array_ops import gather_grad
        outputs = {
            "sum_static": gradient_ops.sum_to_shape(x, tf.constant([1, 5])),
            "sum_dynamic": gradient_ops.sum_to_shape(x, target),
            "reduced_static": gradient_ops.reduced_shape(tf.shape(x), [1, -1]),
            "reduced_all": gradient_ops.reduced_shape(tf.shape(x), None),
            "reduced_tensor": gradient_ops.reduced_shape(tf.shape(x), tf.constant([0])),
            "gather_grad": gather_grad(x, tf.constant([0, 2, 0]), tf.constant([4, 4, 5])),
            "sigmoid_xent": tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.sigmoid(x),
                                                                   logits=x * 30.0),
            "xor": tf.logical_xor(x > 0, x > 0.5),
        }
        fetches = {k: tf.identity(v, name=k) for k, v in outputs.items()}
        with tf.Session() as sess:
            expected = sess.run(fetches, {x: x_value, target: [1, 4, 1]})
        graph_def = graph.as_graph_def()
    for key in outputs:
        assert any(n.name == key for n in graph_def.node)
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            got = sess.run({k: f"{k}:0" for k in outputs},
                           {"x:0": x_value, "target:0": [1, 4, 1]})
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-6, atol=1e-6, err_msg=key)


def test_summaries_round_trip_with_their_tags():
    with tf.Graph().as_default() as graph:
        value = tf.placeholder(tf.float32, [], name="value")
        tf.summary.scalar("loss", value)
        tf.summary.histogram("weights", value)
        tf.summary.merge_all()
        graph_def = graph.as_graph_def()
    by_name = {n.name: n for n in graph_def.node}
    assert by_name["loss"].op == "ScalarSummary"
    assert by_name[by_name["loss"].input[0]].op == "Const"
    with tf.Graph().as_default() as again:
        tf.import_graph_def(graph_def, name="")
        assert again.get_operation_by_name("loss").attrs["tag"] == "loss"
        assert again.get_operation_by_name("weights").attrs["tag"] == "weights"


def test_updates_wait_for_the_reads_before_them():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(tf.ones([3, 2]), name="w")
        loss = tf.reduce_sum(tf.matmul(x, w))
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        graph_def = graph.as_graph_def()
    readers = {op.name for op in graph.get_operations()
               if any(t.op.name == "w" for t in op.inputs)}
    (update,) = [n for n in graph_def.node if n.op == "ApplyGradientDescent"]
    assert readers - {update.name} <= {c[1:] for c in update.input if c.startswith("^")}


def tf_continue_training(tf, np, directory, names, steps):
    losses = {}
    for name in names:
        with tf.Graph().as_default(), tf.Session() as sess:
            saver = tf.train.import_meta_graph(f"{directory}/{name}/model.meta")
            saver.restore(sess, f"{directory}/{name}/model")
            data = np.load(f"{directory}/{name}/feed.npz")
            feed = {f"{k}:0": data[k] for k in data.files}
            train = tf.get_collection("train_op")[0]
            loss = tf.get_collection("loss")[0]
            out = []
            for _ in range(steps):
                sess.run(train, feed)
                out.append(sess.run(loss, feed))
            losses[name] = np.asarray(out)
    return losses


@pytest.mark.skipif(tf_reference.tf_python() is None,
                    reason="TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON)")
def test_tensorflow_continues_training_graphflow_models(tmp_path):
    expected = {}
    for name, build in MODELS.items():
        _, _, feed, losses = _train_and_save(build, tmp_path / name)
        np.savez(tmp_path / name / "feed.npz", **feed)
        expected[name] = losses
    got = tf_reference.run_in_tensorflow(
        [("run", tf_continue_training, {"directory": str(tmp_path), "names": sorted(MODELS),
                                        "steps": 3})])["run"]
    for name, losses in expected.items():
        np.testing.assert_allclose(got[name], losses, rtol=1e-5, err_msg=name)
