"""Tests for graphflow/tf1/factorization.py (`tf.contrib.factorization.KMeans`): the tuple of
`training_graph()`, full-batch and mini-batch steps with squared-euclidean and cosine distances
against TensorFlow's own KMeans (the class contrib exported; given initial centers make the runs
deterministic), the random and k-means++ initializations, and the errors."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import run_in_tensorflow, tf_python

KMeans = tf.contrib.factorization.KMeans
_CASES = [(False, "squared_euclidean"), (True, "squared_euclidean"), (False, "cosine"),
          (True, "cosine")]


def _blobs(np):
    rng = np.random.RandomState(0)
    centers = np.array([[0.0, 0.0, 1.0], [4.0, 4.0, 1.0], [0.0, 4.0, -2.0]], np.float32)
    data = (centers[rng.randint(0, 3, 60)] + rng.randn(60, 3) * 0.7).astype(np.float32)
    return data, data[[0, 1, 2, 3]] + np.float32(0.1)


def tf_kmeans_program(tf, np):
    """TensorFlow's KMeans (tensorflow.python.ops.clustering_ops, contrib's class) 3 steps, in
    sessions with one inter-op thread: TF's mini-batch step reads the cluster counts unordered
    with their update, so with more threads its numbers vary from run to run."""
    from tensorflow.python.ops import clustering_ops
    out = {}
    data, start = _blobs(np)
    for mini_batch, metric in [(False, "squared_euclidean"), (True, "squared_euclidean"),
                               (False, "cosine"), (True, "cosine")]:
        key = f"{int(mini_batch)}_{metric}"
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 3])
            graph = clustering_ops.KMeans(x, 4, initial_clusters=start, distance_metric=metric,
                                          use_mini_batch=mini_batch).training_graph()
            all_scores, idx, scores, initialized, init_op, train = graph
            config = tf.ConfigProto(inter_op_parallelism_threads=1)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(init_op, {x: data})
                for step in range(3):
                    out[f"{key}_scores{step}"] = sess.run(tf.reduce_mean(scores[0]), {x: data})
                    sess.run(train, {x: data})
                out[key + "_idx"] = sess.run(idx[0], {x: data})
                out[key + "_all"] = sess.run(all_scores[0], {x: data[:2]})
                out[key + "_centers"] = sess.run(
                    [v for v in tf.global_variables() if v.op.name == "clusters"][0])
    return out


def _graphflow_kmeans(mini_batch, metric):
    data, start = _blobs(np)
    x = tf.placeholder(tf.float32, [None, 3])
    graph = KMeans(x, 4, initial_clusters=start, distance_metric=metric,
                   use_mini_batch=mini_batch).training_graph()
    all_scores, idx, scores, initialized, centers, init_op, train = graph
    out = {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(initialized)
        sess.run(init_op, {x: data})
        assert sess.run(initialized)
        for step in range(3):
            out[f"scores{step}"] = sess.run(tf.reduce_mean(scores[0]), {x: data})
            sess.run(train, {x: data})
        out["idx"] = sess.run(idx[0], {x: data})
        out["all"] = sess.run(all_scores[0], {x: data[:2]})
        out["centers"] = sess.run(centers)
    return out


# Made by a Python with TensorFlow 2.21 running tf_kmeans_program (one inter-op thread): for each
# (mini-batch, metric), the mean score before each of 3 steps and the centers after them.
TF_RECORDED = {
    (False, "squared_euclidean"): (
        [7.0257478, 3.1488905, 1.3962876],
        [[-0.17152, 3.999345, -2.044795], [3.504547, 3.722126, 0.276996],
         [0.027482, -0.047936, 0.96392], [3.926675, 4.502267, 1.513056]]),
    (True, "squared_euclidean"): (
        [7.0257478, 3.2167811, 2.2550263],
        [[-0.030769, 2.797314, -1.301563], [3.136878, 4.098308, 0.633406],
         [-0.086715, -0.104911, 1.147212], [4.113289, 4.527478, 1.443542]]),
    (False, "cosine"): (
        [0.2224549, 0.0908496, 0.0592752],
        [[0.45133, -0.134195, 0.882209], [-0.010185, 0.865693, -0.500472],
         [-0.538774, -0.114996, 0.834565], [0.654436, 0.725017, 0.214628]]),
    (True, "cosine"): (
        [0.2224549, 0.0949951, 0.0694219],
        [[0.466344, -0.058557, 0.811458], [0.027037, 0.86684, -0.315684],
         [-0.385421, -0.134344, 0.783446], [0.597274, 0.669424, 0.111911]]),
}


@pytest.mark.parametrize("mini_batch,metric", _CASES)
def test_steps_match_recorded_tensorflow(mini_batch, metric):
    ours = _graphflow_kmeans(mini_batch, metric)
    scores, centers = TF_RECORDED[(mini_batch, metric)]
    np.testing.assert_allclose([ours[f"scores{i}"] for i in range(3)], scores, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ours["centers"], centers, rtol=1e-5, atol=1e-5)


def test_steps_match_tensorflow_live():
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    theirs = run_in_tensorflow([(None, _blobs, None), ("k", tf_kmeans_program, {})])["k"]
    # full batch only: TF's mini-batch step races its counts' read against their update (even
    # with one inter-op thread it now and then reads after), so its live numbers vary
    for mini_batch, metric in [c for c in _CASES if not c[0]]:
        with tf.Graph().as_default():
            ours = _graphflow_kmeans(mini_batch, metric)
        key = f"{int(mini_batch)}_{metric}"
        for name in ("idx", "all", "centers", "scores0", "scores1", "scores2"):
            np.testing.assert_allclose(ours[name], theirs[f"{key}_{name}"], rtol=1e-5,
                                       atol=1e-5, err_msg=f"{key} {name}")


@pytest.mark.parametrize("init", ["random", "kmeans_plus_plus"])
@pytest.mark.parametrize("mini_batch", [False, True])
def test_initializations_find_the_blobs(init, mini_batch):
    data, _ = _blobs(np)
    x = tf.placeholder(tf.float32, [None, 3])
    km = KMeans(inputs=x, num_clusters=3, initial_clusters=init, use_mini_batch=mini_batch,
                random_seed=3)
    (all_scores, idx, scores, initialized, centers, init_op, train) = km.training_graph()
    assert [v.op.name for v in tf.global_variables()][:2] == ["clusters", "initialized"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(init_op, {x: data})
        first = sess.run(centers)
        assert all((np.abs(data - c).sum(1) < 1e-6).any() for c in first)  # rows of the data
        sess.run(init_op, {x: data})  # initialized: keeps the centers
        np.testing.assert_array_equal(sess.run(centers), first)
        for _ in range(10):
            sess.run(train, {x: data})
        found = sess.run(centers)
    expected = np.array([[0.0, 0.0, 1.0], [4.0, 4.0, 1.0], [0.0, 4.0, -2.0]])
    # each true center has a found center near it
    assert np.abs(found[:, None] - expected[None]).sum(2).min(0).max() < 1.0, found


def test_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match="Unsupported distance metric"):
        KMeans(x, 2, distance_metric="manhattan")
    with pytest.raises(ValueError, match="Unsupported initialization"):
        KMeans(x, 2, initial_clusters="best")
    with pytest.raises(NotImplementedError, match="kmc2|KMC2"):
        KMeans(x, 2, initial_clusters=tf.contrib.factorization.KMC2_INIT)
    with pytest.raises(ValueError, match="known feature dimension"):
        KMeans(tf.placeholder(tf.float32, [None, None]), 2)
    km = KMeans(x, 5)
    init_op = km.training_graph()[5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="at least 5 input rows"):
            sess.run(init_op, {x: np.zeros((2, 3), np.float32)})


def test_mini_batch_step_is_sculleys_update():
    """Each center moves by (sum of its batch points - count * center) / (points seen so far,
    starting at 1, + count), computed here in numpy."""
    data, start = _blobs(np)
    centers, seen = start.astype(np.float64), np.ones(4)
    for _ in range(3):
        idx = ((data[:, None] - centers[None]) ** 2).sum(2).argmin(1)
        count = np.bincount(idx, minlength=4)
        sums = np.zeros_like(centers)
        np.add.at(sums, idx, data)
        centers = centers + (sums - count[:, None] * centers) / (seen + count)[:, None]
        seen += count
    np.testing.assert_allclose(_graphflow_kmeans(True, "squared_euclidean")["centers"], centers,
                               rtol=1e-5, atol=1e-5)
