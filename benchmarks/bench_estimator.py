"""Training-loop machinery, streaming metrics and sampled losses: graphflow against hand-written
numpy and TF1 (`tf.compat.v1` graph mode) in the same run.

    python benchmarks/bench_estimator.py [--quick] [--json out.json]

1. ms per training step of a 64-256-10 ReLU MLP (batch 64, SGD): a plain `Session.run` loop with
   feed_dict; a `MonitoredTrainingSession` with StopAtStepHook + LoggingTensorHook (every 100);
   graphflow's `Estimator.train` fed by `numpy_input_fn` (graph building, session creation and the
   two checkpoints included, spread over the steps).
2. ms per update of streaming metrics (accuracy, auc with 200 thresholds, mean) over a batch of
   4096 predictions, against the same counts in numpy.
3. ms per training step of word2vec-sized nce_loss (vocabulary 20000, dim 64, batch 128,
   64 samples).
Medians over repeats. The TF1 figures come from the TensorFlow interpreter named by
GRAPHFLOW_TF_PYTHON (a Python with tensorflow-cpu), run as a child process on the same
machine; without it they are left out.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from common import median_ms as _median_ms


def _mlp_data():
    rng = np.random.RandomState(0)
    x = rng.randn(1024, 64).astype(np.float32)
    y = rng.randint(0, 10, 1024).astype(np.int32)
    w1 = (rng.randn(64, 256) * 0.1).astype(np.float32)
    w2 = (rng.randn(256, 10) * 0.1).astype(np.float32)
    return x, y, w1, w2


def _mlp(tf, x, w1, w2):
    h = tf.nn.relu(tf.matmul(x, tf.Variable(w1)))
    return tf.matmul(h, tf.Variable(w2))


def bench_loops(tf, steps):
    x_data, y_data, w1, w2 = _mlp_data()
    results = {}
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int32, [None])
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=_mlp(tf, x, w1, w2)))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        batches = [(x_data[i:i + 64], y_data[i:i + 64]) for i in range(0, 1024, 64)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            counter = iter(range(10 ** 9))

            def plain():
                bx, by = batches[next(counter) % len(batches)]
                sess.run([train, loss], {x: bx, y: by})
            results["session_loop_ms"] = _median_ms(plain, steps)
        hooks = [tf.train.StopAtStepHook(last_step=10 ** 9),
                 tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=100)]
        with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
            def monitored():
                bx, by = batches[next(counter) % len(batches)]
                sess.run([train, loss], {x: bx, y: by})
            results["monitored_session_ms"] = _median_ms(monitored, steps)
    if hasattr(tf, "estimator") and hasattr(tf.estimator, "Estimator"):
        try:
            results["estimator_train_ms"] = _bench_estimator(tf, steps)
        except Exception:  # TF 2.16+ ships no tf.estimator
            pass
    return results


def _bench_estimator(tf, steps):
    x_data, y_data, w1, w2 = _mlp_data()

    def model_fn(features, labels, mode):
        logits = _mlp(tf, features, w1, w2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                             logits=logits))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

    with tempfile.TemporaryDirectory() as model_dir:
        est = tf.estimator.Estimator(model_fn, model_dir=model_dir)
        input_fn = tf.estimator.inputs.numpy_input_fn(x_data, y_data, batch_size=64,
                                                      num_epochs=None, shuffle=False)
        t0 = time.perf_counter()
        est.train(input_fn, steps=steps)
        return (time.perf_counter() - t0) * 1e3 / steps


def bench_metrics(tf, repeat):
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 2, 4096).astype(np.int64)
    scores = rng.rand(4096).astype(np.float32)
    results = {}
    with tf.Graph().as_default():
        y = tf.placeholder(tf.int64, [None])
        p = tf.placeholder(tf.float32, [None])
        pairs = [tf.metrics.accuracy(y, tf.cast(p > 0.5, tf.int64)), tf.metrics.auc(y, p),
                 tf.metrics.mean(p)]
        updates = [u for _, u in pairs]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            results["metrics_update_ms"] = _median_ms(
                lambda: sess.run(updates, {y: labels, p: scores}), repeat)
    return results


def numpy_metrics(repeat):
    rng = np.random.RandomState(1)
    labels = rng.randint(0, 2, 4096).astype(bool)
    scores = rng.rand(4096).astype(np.float32)
    thresholds = np.array([-1e-7] + [(i + 1) / 199 for i in range(198)] + [1 + 1e-7], np.float32)

    def update():
        above = scores[None, :] > thresholds[:, None]
        tp = (above & labels).sum(1)
        fp = (above & ~labels).sum(1)
        fn = labels.sum() - tp
        tn = (~labels).sum() - fp
        return tp, fp, fn, tn, np.mean((scores > 0.5) == labels), scores.mean()
    return {"metrics_update_ms": _median_ms(update, repeat)}


def bench_nce(tf, repeat):
    rng = np.random.RandomState(2)
    vocabulary, dim, batch = 20000, 64, 128
    inputs = rng.randint(0, vocabulary, (64, batch)).astype(np.int32)
    labels = rng.randint(0, vocabulary, (64, batch, 1)).astype(np.int64)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [batch])
        y = tf.placeholder(tf.int64, [batch, 1])
        embeddings = tf.Variable(rng.uniform(-1, 1, (vocabulary, dim)).astype(np.float32))
        weights = tf.Variable((rng.randn(vocabulary, dim) / 8).astype(np.float32))
        biases = tf.Variable(np.zeros(vocabulary, np.float32))
        loss = tf.reduce_mean(tf.nn.nce_loss(weights, biases, y,
                                             tf.nn.embedding_lookup(embeddings, x), 64,
                                             vocabulary))
        train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            counter = iter(range(10 ** 9))

            def step():
                i = next(counter) % 64
                sess.run([train, loss], {x: inputs[i], y: labels[i]})
            return {"nce_step_ms": _median_ms(step, repeat)}


def run_all(tf, quick):
    steps = 100 if quick else 300
    results = bench_loops(tf, steps)
    results.update(bench_metrics(tf, 20 if quick else 50))
    results.update(bench_nce(tf, 20 if quick else 50))
    return results


def _tensorflow_results(quick):
    python = os.environ.get("GRAPHFLOW_TF_PYTHON", "")
    if not os.path.isfile(python):
        return None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["CUDA_VISIBLE_DEVICES"] = ""
    args = [python, os.path.abspath(__file__), "--as-tensorflow"] + (["--quick"] if quick else [])
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-2000:])
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--as-tensorflow", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.as_tensorflow:
        import tensorflow.compat.v1 as tf1
        tf1.disable_v2_behavior()
        print(json.dumps(run_all(tf1, args.quick)))
        return
    import graphflow
    ours = run_all(graphflow, args.quick)
    reference = {"numpy": numpy_metrics(20 if args.quick else 50),
                 "tensorflow": _tensorflow_results(args.quick)}
    print(f"{'measure':26s} {'graphflow':>10s} {'TF1':>10s} {'numpy':>10s} {'gf/TF1':>8s}")
    for key, value in ours.items():
        tf_value = (reference["tensorflow"] or {}).get(key)
        np_value = reference["numpy"].get(key)
        def cell(v):
            return f"{v:10.3f}" if v else f"{'-':>10s}"
        ratio = f"{value / tf_value:8.2f}" if tf_value else f"{'-':>8s}"
        print(f"{key:26s} {cell(value)} {cell(tf_value)} {cell(np_value)} {ratio}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"graphflow": ours, **reference}, f, indent=1)


if __name__ == "__main__":
    main()
