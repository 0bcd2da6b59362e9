"""Tests for graphflow/tf1/sparse_updates.py: each optimizer's update for an IndexedSlices
gradient gives TensorFlow's numbers (recorded from TF 2.21's tf.compat.v1, compared live when
GRAPHFLOW_TF_PYTHON names a Python with TensorFlow), and a training step leaves the rows it did
not touch bit-identical (word2vec's nce_loss included)."""

import os
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

KINDS = ["sgd", "momentum", "nesterov", "adagrad", "rmsprop", "centered_rmsprop", "adadelta",
         "adam", "ftrl"]


def sparse_training_program(tf, np, kind):
    """3 steps of `kind` on an embedding and a bias read through lookups with a repeated id."""
    graph = tf.Graph()
    with graph.as_default():
        emb = tf.Variable(np.linspace(-1.0, 1.0, 18).reshape(6, 3).astype(np.float32), name="emb")
        bias = tf.Variable(np.linspace(0.5, -0.5, 6).astype(np.float32), name="bias")
        ids = tf.constant([1, 3, 1, 5], dtype=tf.int32)
        rows = tf.nn.embedding_lookup(emb, ids)
        target = tf.constant(np.linspace(0.3, -0.9, 12).reshape(4, 3).astype(np.float32))
        loss = tf.reduce_sum(tf.square(rows - target)) + tf.reduce_sum(
            tf.square(tf.gather(bias, ids) - 0.25))
        optimizer = {
            "sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
            "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
            "nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
            "adagrad": lambda: tf.train.AdagradOptimizer(0.3),
            "rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5),
            "centered_rmsprop": lambda: tf.train.RMSPropOptimizer(0.05, momentum=0.5,
                                                                  centered=True),
            "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
            "adam": lambda: tf.train.AdamOptimizer(0.1),
            "ftrl": lambda: tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01,
                                                   l2_regularization_strength=0.02),
        }[kind]()
        grads_and_vars = optimizer.compute_gradients(loss, [emb, bias])
        train = optimizer.apply_gradients(grads_and_vars)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            grad = sess.run(grads_and_vars[0][0])
            for _ in range(3):
                sess.run(train)
            return {"emb": sess.run(emb), "bias": sess.run(bias), "grad_values": grad.values,
                    "grad_indices": grad.indices, "grad_dense_shape": grad.dense_shape,
                    "grad_type": np.array(type(grad).__name__)}


# tf.compat.v1 (TensorFlow 2.21) after 3 steps: the changed rows 1, 3, 5 of `emb` and of `bias`
# (rows 0, 2, 4 keep their initial values: checked bit for bit below)
RECORDED = {
    "sgd": ([[-0.16114652156829834, -0.22126202285289764, -0.28137752413749695],
             [0.016808558255434036, 0.023807484656572342, 0.030806414783000946],
             [0.058802127838134766, 0.06580103933811188, 0.07280002534389496]],
            [0.26080000400543213, 0.07080000638961792, -0.1339999884366989]),
    "momentum": ([[0.307411789894104, 0.07588236033916473, -0.15564705431461334],
                  [-0.021934760734438896, -0.11696790903806686, -0.21200108528137207],
                  [-0.5921337604522705, -0.6871669292449951, -0.7821999788284302]],
                 [0.22299998998641968, 0.22830000519752502, 0.20350000262260437]),
    "nesterov": ([[0.24127811193466187, 0.033942535519599915, -0.17339302599430084],
                  [-0.03660142421722412, -0.17025983333587646, -0.3039182722568512],
                  [-0.8385519981384277, -0.9722102880477905, -1.1058688163757324]],
                 [0.2283352017402649, 0.2879231572151184, 0.3312639594078064]),
    "adagrad": ([[-0.13573968410491943, -0.14380738139152527, -0.22857338190078735],
                 [-0.04625428095459938, -0.13533276319503784, -0.17788280546665192],
                 [0.142395481467247, 0.2500683665275574, 0.36041951179504395]],
                [0.17839781939983368, 0.24579274654388428, 0.04351315647363663]),
    "rmsprop": ([[-0.2971705198287964, -0.27154091000556946, -0.2901909053325653],
                 [0.022707222029566765, 0.04900078475475311, 0.08629368245601654],
                 [0.3660556972026825, 0.4592094123363495, 0.5576795339584351]],
                [0.2625401020050049, 0.04153522849082947, -0.23029263317584991]),
    "centered_rmsprop": ([[-0.28315451741218567, -0.26593679189682007, -0.2896072268486023],
                          [0.022689800709486008, 0.04824092984199524, 0.08304864168167114],
                          [0.3446160554885864, 0.4338642954826355, 0.5290023684501648]],
                         [0.26252302527427673, 0.04257328435778618, -0.2233165204524994]),
    "adadelta": ([[-0.6457024812698364, -0.5280557870864868, -0.4104098379611969],
                  [0.05747051537036896, 0.17511476576328278, 0.2927613854408264],
                  [0.7633492350578308, 0.8809962272644043, 0.9986432790756226]],
                 [0.2986498177051544, -0.09864406287670135, -0.49864354729652405]),
    "adam": ([[-0.3504127264022827, -0.2370646595954895, -0.16144651174545288],
              [-0.08912798762321472, -0.11136777698993683, -0.0016272589564323425],
              [0.4656544625759125, 0.5831363201141357, 0.7006660103797913]],
             [0.2428729236125946, 0.1903577446937561, -0.2024577558040619]),
    "ftrl": ([[-0.10118336230516434, -0.13581456243991852, -0.24173209071159363],
              [-0.024773793295025826, -0.13707545399665833, -0.20275938510894775],
              [0.07243723422288895, 0.1773594617843628, 0.2857637405395508]],
             [0.2362934947013855, 0.2476360946893692, 0.09829984605312347]),
}
# the embedding's gradient as tf.gradients returns it (TF1: an IndexedSlices, ids as they came)
RECORDED_GRAD = ([[-1.8941177129745483, -1.4406417608261108, -0.9871658086776733],
                  [0.1721925139427185, 0.625668466091156, 1.0791444778442383],
                  [-0.5850268006324768, -0.1315508484840393, 0.3219251036643982],
                  [2.8930482864379883, 3.346524238586426, 3.799999952316284]],
                 [1, 3, 1, 5], [6, 3])
_INITIAL_EMB = np.linspace(-1.0, 1.0, 18).reshape(6, 3).astype(np.float32)
_INITIAL_BIAS = np.linspace(0.5, -0.5, 6).astype(np.float32)


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_updates_give_tensorflows_numbers(kind):
    got = sparse_training_program(tf, np, kind)
    emb, bias = RECORDED[kind]
    np.testing.assert_allclose(got["emb"][[1, 3, 5]], emb, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(got["bias"][[1, 3, 5]], bias, rtol=2e-6, atol=1e-7)
    # rows no lookup named keep their exact bits
    np.testing.assert_array_equal(got["emb"][[0, 2, 4]], _INITIAL_EMB[[0, 2, 4]])
    np.testing.assert_array_equal(got["bias"][[0, 2, 4]], _INITIAL_BIAS[[0, 2, 4]])
    assert str(got["grad_type"]) == "IndexedSlicesValue"
    values, indices, dense_shape = RECORDED_GRAD
    np.testing.assert_allclose(got["grad_values"], values, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(got["grad_indices"], indices)
    np.testing.assert_array_equal(got["grad_dense_shape"], dense_shape)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                    "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_sparse_updates_against_tensorflow_live():
    want = run_in_tensorflow([(k, sparse_training_program, {"kind": k}) for k in KINDS])
    for kind in KINDS:
        got = sparse_training_program(tf, np, kind)
        for name in ("emb", "bias", "grad_values", "grad_indices", "grad_dense_shape"):
            np.testing.assert_allclose(got[name], want[kind][name], rtol=2e-6, atol=1e-7,
                                       err_msg=f"{kind}: {name}")
        assert str(want[kind]["grad_type"]) == "IndexedSlicesValue"


def _vocabulary_model(kind, vocab=2000, dim=8):
    emb = tf.Variable(tf.random_normal([vocab, dim], seed=1), name="emb")
    ids = tf.placeholder(tf.int32, [None])
    loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids) - 1.0))
    optimizer = {"sgd": tf.train.GradientDescentOptimizer(0.1),
                 "momentum": tf.train.MomentumOptimizer(0.1, 0.9),
                 "adagrad": tf.train.AdagradOptimizer(0.1),
                 "rmsprop": tf.train.RMSPropOptimizer(0.01, momentum=0.9, centered=True),
                 "adadelta": tf.train.AdadeltaOptimizer(1.0),
                 "adam": tf.train.AdamOptimizer(0.01),
                 "ftrl": tf.train.FtrlOptimizer(0.1)}[kind]
    return emb, ids, optimizer.minimize(loss)


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adagrad", "rmsprop", "adadelta", "adam",
                                  "ftrl"])
def test_training_steps_leave_untouched_rows_bit_identical(kind):
    emb, ids, train = _vocabulary_model(kind)
    batches = [np.array([5, 17, 5, 1999]), np.array([17, 300, 0])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(emb).copy()
        for batch in batches:
            sess.run(train, {ids: batch})
        after = sess.run(emb)
    touched = np.unique(np.concatenate(batches))
    untouched = np.setdiff1d(np.arange(before.shape[0]), touched)
    assert after[untouched].tobytes() == before[untouched].tobytes()
    assert np.all(after[touched] != before[touched])


def test_nce_training_step_changes_only_the_rows_it_used():
    vocab, dim, batch = 500, 16, 8
    rng = np.random.default_rng(3)
    embeddings = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0, seed=2))
    nce_w = tf.Variable(tf.truncated_normal([vocab, dim], stddev=0.25, seed=3))
    nce_b = tf.Variable(tf.zeros([vocab]))
    inputs = tf.placeholder(tf.int32, [batch])
    labels = tf.placeholder(tf.int64, [batch, 1])
    sampled = tf.placeholder(tf.int64, [4])
    expected = (tf.fill([batch, 1], 0.01), tf.fill([4], 0.01))
    loss = tf.reduce_mean(tf.nn.nce_loss(
        nce_w, nce_b, labels, tf.nn.embedding_lookup(embeddings, inputs), num_sampled=4,
        num_classes=vocab, sampled_values=(sampled, *expected)))
    grads_and_vars = tf.train.GradientDescentOptimizer(1.0).compute_gradients(loss)
    assert all(isinstance(g, tf.IndexedSlices) for g, _ in grads_and_vars)
    train = tf.train.GradientDescentOptimizer(1.0).apply_gradients(grads_and_vars)
    feed = {inputs: rng.choice(vocab, batch, replace=False),
            labels: rng.choice(vocab, (batch, 1), replace=False),
            sampled: rng.choice(vocab, 4, replace=False)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = [sess.run(v).copy() for v in (embeddings, nce_w, nce_b)]
        sess.run(train, feed)
        after = sess.run([embeddings, nce_w, nce_b])
    used = [feed[inputs], np.concatenate([feed[labels].ravel(), feed[sampled]])]
    for b, a, rows in zip(before, after, used + used[1:]):
        untouched = np.setdiff1d(np.arange(vocab), rows)
        assert a[untouched].tobytes() == b[untouched].tobytes()
        assert np.any(a[rows] != b[rows])


def test_optimizer_without_sparse_update_applies_the_densified_gradient():
    class PlainDescent(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "PlainDescent")

        def _apply_dense(self, grad, var):
            return tf.assign_sub(var, 0.5 * grad)

    v = tf.Variable(np.ones((4, 2), np.float32))
    loss = tf.reduce_sum(tf.gather(v, [1, 1, 3]))
    train = PlainDescent().minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_array_equal(sess.run(v), [[1, 1], [0, 0], [1, 1], [0.5, 0.5]])


def test_gate_graph_keeps_sparse_gradients_sparse():
    v = tf.Variable(np.ones((4, 2), np.float32))
    w = tf.Variable(2.0)
    loss = tf.reduce_sum(tf.gather(v, [1, 3]) * w)
    opt = tf.train.GradientDescentOptimizer(0.5)
    (gv, _), (gw, _) = opt.compute_gradients(loss, gate_gradients=opt.GATE_GRAPH)
    assert isinstance(gv, tf.IndexedSlices) and isinstance(gw, tf.Tensor)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(gv)
        np.testing.assert_array_equal(got.values, [[2, 2], [2, 2]])
        np.testing.assert_array_equal(got.indices, [1, 3])


def test_sparse_gradient_of_another_dtype_is_refused():
    v = tf.Variable(np.ones((4, 2), np.float32))
    bad = tf.IndexedSlices(tf.constant(np.ones((1, 2))), tf.constant([0]), tf.constant([4, 2]))
    with pytest.raises(TypeError, match="does not match variable"):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(bad, v)])
