"""TensorFlow's training graphs made on the spot by TensorFlow itself, over activations and
optimizers, imported with `tf.train.import_meta_graph` and trained to TensorFlow's losses; and
TensorFlow's gradient helper kernels against the graphflow ops an imported GraphDef builds for
them. Runs where GRAPHFLOW_TF_PYTHON names a Python with TensorFlow (tests/tf_reference.py)."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import tf_protos as pb
from tests import tf_reference

pytestmark = pytest.mark.skipif(tf_reference.tf_python() is None,
                                reason="TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON)")

ACTIVATIONS = ("relu", "tanh", "sigmoid", "elu", "softplus", "leaky_relu", "relu6", "selu",
               "softsign")
OPTIMIZERS = ("adam", "momentum", "rmsprop", "adagrad", "sgd")
MATRIX = [(a, "adam") for a in ACTIVATIONS] + [("relu", o) for o in OPTIMIZERS if o != "adam"]


def tf_train_mlp(tf, np, prefix, activation, optimizer, steps):
    """An MLP trained in TensorFlow: saved, restored from its .meta, `steps` steps recorded."""
    acts = {"relu": tf.nn.relu, "tanh": tf.nn.tanh, "sigmoid": tf.nn.sigmoid, "elu": tf.nn.elu,
            "softplus": tf.nn.softplus, "leaky_relu": tf.nn.leaky_relu, "relu6": tf.nn.relu6,
            "selu": tf.nn.selu, "softsign": tf.nn.softsign}
    opts = {"adam": lambda: tf.train.AdamOptimizer(0.01),
            "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
            "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01),
            "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
            "sgd": lambda: tf.train.GradientDescentOptimizer(0.1)}
    rng = np.random.RandomState(3)
    x_data = rng.randn(10, 6).astype(np.float32)
    y_data = rng.randint(0, 3, 10).astype(np.int64)
    ids_data = rng.randint(0, 12, (10, 2)).astype(np.int32)
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        ids = tf.placeholder(tf.int32, [None, 2], name="ids")
        table = tf.get_variable("table", [12, 6])
        h = x + tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
        for i in range(2):
            w = tf.get_variable(f"w{i}", [6, 6])
            b = tf.get_variable(f"b{i}", [6], initializer=tf.constant_initializer(0.1))
            h = acts[activation](tf.matmul(h, w) + b)
        h = h + tf.sqrt(tf.square(h) + 1.0) + tf.rsqrt(tf.square(h) + 1.0)
        logits = tf.matmul(h, tf.get_variable("w_out", [6, 3]))
        loss = tf.identity(tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits)), name="loss")
        train_op = opts[optimizer]().minimize(loss)
        tf.add_to_collection("train_op", train_op)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, prefix, write_state=False)
            feed = {x: x_data, y: y_data, ids: ids_data}
            losses = []
            for _ in range(steps):
                losses.append(sess.run(loss, feed))
                sess.run(train_op, feed)
            losses.append(sess.run(loss, feed))
    return {"x": x_data, "y": y_data, "ids": ids_data, "losses": np.array(losses)}


@pytest.mark.parametrize("activation,optimizer", MATRIX)
def test_tensorflow_mlp_training_graph(tmp_path, activation, optimizer):
    prefix = str(tmp_path / "model")
    got = tf_reference.run_in_tensorflow([("m", tf_train_mlp, {
        "prefix": prefix, "activation": activation, "optimizer": optimizer, "steps": 5})])["m"]
    feed = {"x:0": got["x"], "y:0": got["y"], "ids:0": got["ids"]}
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        saver.restore(sess, prefix)
        train_op = tf.get_collection("train_op")[0]
        losses = []
        for _ in range(5):
            losses.append(sess.run("loss:0", feed))
            sess.run(train_op, feed)
        losses.append(sess.run("loss:0", feed))
    np.testing.assert_allclose(losses, got["losses"], rtol=1e-5)


def tf_gradient_kernels(tf, np, path):
    """TensorFlow's gradient helper kernels on fixed data; the GraphDef written to `path`."""
    from tensorflow.python.ops import gen_array_ops, gen_math_ops, gen_nn_ops
    rng = np.random.RandomState(4)
    a = (rng.randn(3, 4) * 2).astype(np.float32)
    a[0, :2] = [0.0, 6.0]
    g = rng.randn(3, 4).astype(np.float32)
    pos = np.abs(a) + 0.5
    y = np.tanh(a)
    with tf.Graph().as_default() as graph:
        outs = {
            "relu": gen_nn_ops.relu_grad(g, a), "relu6": gen_nn_ops.relu6_grad(g, a),
            "leaky": gen_nn_ops.leaky_relu_grad(g, a, alpha=0.3),
            "elu": gen_nn_ops.elu_grad(g, tf.nn.elu(a)), "selu": gen_nn_ops.selu_grad(g, tf.nn.selu(a)),
            "softplus": gen_nn_ops.softplus_grad(g, a), "softsign": gen_nn_ops.softsign_grad(g, a),
            "tanh": gen_math_ops.tanh_grad(y, g), "sigmoid": gen_math_ops.sigmoid_grad(y, g),
            "sqrt": gen_math_ops.sqrt_grad(pos, g), "rsqrt": gen_math_ops.rsqrt_grad(pos, g),
            "reciprocal": gen_math_ops.reciprocal_grad(pos, g), "inv": gen_math_ops.inv_grad(pos, g),
        }
        r0, r1 = gen_array_ops.broadcast_gradient_args([2, 1, 3], [3])
        outs["bga0"], outs["bga1"] = r0, r1
        offsets = gen_array_ops.concat_offset(1, [[2, 3, 4], [2, 5, 4], [2, 1, 4]])
        outs.update({f"offset{i}": o for i, o in enumerate(offsets)})
        shapes = gen_array_ops.shape_n([a, g[:, :2]], out_type=tf.int64)
        outs.update({f"shape{i}": s for i, s in enumerate(shapes)})
        xb = rng.randn(2, 3, 3, 4).astype(np.float32)
        dyb = rng.randn(2, 3, 3, 4).astype(np.float32)
        scale = rng.rand(4).astype(np.float32) + 0.5
        for training in (True, False):
            bn = tf.raw_ops.FusedBatchNormV3(x=xb, scale=scale, offset=np.zeros(4, np.float32),
                                             mean=xb.mean((0, 1, 2)) if not training else [],
                                             variance=xb.var((0, 1, 2)) if not training else [],
                                             is_training=training)
            # as TensorFlow's gradient: the population statistics when not training
            stats = (bn.reserve_space_1, bn.reserve_space_2) if training else (
                xb.mean((0, 1, 2)), xb.var((0, 1, 2)))
            grads = tf.raw_ops.FusedBatchNormGradV3(
                y_backprop=dyb, x=xb, scale=scale, reserve_space_1=stats[0],
                reserve_space_2=stats[1], reserve_space_3=bn.reserve_space_3,
                is_training=training)
            for i in range(3):
                outs[f"bn{int(training)}_{i}"] = grads[i]
        names = {k: tf.identity(v, name="out_" + k).name for k, v in outs.items()}
        with open(path, "wb") as f:
            f.write(graph.as_graph_def().SerializeToString())
        with tf.Session() as sess:
            return sess.run(names)


def test_tensorflow_gradient_kernels_against_the_imported_ops(tmp_path):
    path = str(tmp_path / "grads.pb")
    want = tf_reference.run_in_tensorflow([("k", tf_gradient_kernels, {"path": path})])["k"]
    graph_def = pb.GraphDef.FromString(open(path, "rb").read())
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.import_graph_def(graph_def, name="")
        got = sess.run({k: f"out_{k}:0" for k in want})
    for key, value in want.items():
        if value.dtype.kind == "f":
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got[key], value, err_msg=key)
