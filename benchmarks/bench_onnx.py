"""Inference time of graphflow against onnxruntime on the same ONNX models, same inputs, same run.

    python benchmarks/bench_onnx.py [--rounds 7] [--inner 20]

Models: the digits CNN of examples/train_digits.py (8x8x1 images, 3 convolutions, 2 pools, 2
dense layers; weights as initialized, which does not change the time, biases drawn nonzero: the
imported graph's `x + 0` would be simplified away) run by graphflow on its own graph ("exported")
and on the graph imported back from the ONNX file ("imported"), and the digits MLP imported from
its ONNX file. onnxruntime runs the same ONNX file. Batch 1 and 256.
The two runners alternate: each of `--rounds` rounds times graphflow then onnxruntime
(`common.median_ms` over `--inner` calls each, after untimed calls for at least `--round-warmup`
seconds), and the printed figure is the median of the rounds; the ratio is graphflow / onnxruntime
(goal: at most 1.5). Each runner is first warmed up for a second. Why a warm-up in every round:
onnxruntime's threads keep spinning for a while after its calls, and this machine's cores come
back slow after idling, so a runner's first calls after the other's are slow (graphflow's CNN at
batch 256: its first ~10 calls after onnxruntime's 3-5 ms, then 2.3-2.4; after 0.3 s asleep the
first ~15 calls 3.4-4.7 ms): with two warm-up calls those slow calls fell inside the timed ones.
`--round-warmup 0` times as before. onnxruntime's spinning also takes a core from graphflow's
rounds; `--no-ort-spinning` sets its `session.intra_op.allow_spinning` to 0 to show how much
(onnxruntime itself is then slower).
`--ort-profile` prints onnxruntime's own per-node times (its profiler, medians over 200 runs) for
the CNN at each batch size, to set beside `bench_step_profile.py onnx-cnn`.
"""

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import median_ms, warm_up  # noqa: E402

import graphflow as tf  # noqa: E402
from graphflow.interop import onnx as gf_onnx  # noqa: E402

BIAS = tf.random_normal_initializer(stddev=0.1)


def digits_cnn(x):
    images = tf.reshape(x, [-1, 8, 8, 1])
    h = tf.layers.conv2d(images, 32, 3, padding="same", activation=tf.nn.relu, bias_initializer=BIAS)
    h = tf.layers.conv2d(h, 32, 3, padding="same", activation=tf.nn.relu, bias_initializer=BIAS)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 3, padding="same", activation=tf.nn.relu, bias_initializer=BIAS)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 128, activation=tf.nn.relu, bias_initializer=BIAS)
    return tf.nn.softmax(tf.layers.dense(h, 10, bias_initializer=BIAS))


def digits_mlp(x):
    h = tf.layers.dense(x, 256, activation=tf.nn.relu, bias_initializer=BIAS)
    h = tf.layers.dense(h, 128, activation=tf.nn.relu, bias_initializer=BIAS)
    return tf.nn.softmax(tf.layers.dense(h, 10, bias_initializer=BIAS))


def export_model(build, path):
    """(graphflow runner on the original graph, path of the exported ONNX file)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        probs = build(x)
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
        gf_onnx.export({"probs": probs}, path, inputs={"x": x}, session=sess)
    return (lambda feed: sess.run(probs, {x: feed})), path


def interleaved(gf_run, ort_run, rounds, inner, round_warmup):
    for run in (gf_run, ort_run):
        warm_up(run, 1.0, calls=2)
    gf_ms, ort_ms = [], []
    for _ in range(rounds):
        warm_up(gf_run, round_warmup, calls=2)
        gf_ms.append(median_ms(gf_run, inner, warmup=0))
        warm_up(ort_run, round_warmup, calls=2)
        ort_ms.append(median_ms(ort_run, inner, warmup=0))
    return statistics.median(gf_ms), statistics.median(ort_ms)


def ort_node_times(ort, path, feed, tmp, runs=200):
    """onnxruntime's profiler on `runs` runs of the model: median microseconds per node, largest
    first, and of the whole run."""
    import json
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tmp, "ort_profile")
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for _ in range(runs):
        session.run(None, {"x": feed})
    with open(session.end_profiling()) as f:
        events = json.load(f)
    nodes, whole = {}, []
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            nodes.setdefault(e["name"][:-len("_kernel_time")], []).append(e["dur"])
        elif e.get("name") == "model_run":
            whole.append(e["dur"])
    print(f"onnxruntime, digits CNN, batch {feed.shape[0]}: a run {statistics.median(whole):.0f} us")
    for name, times in sorted(nodes.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"  {statistics.median(times):8.1f} us  {name}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--inner", type=int, default=20)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 256])
    parser.add_argument("--round-warmup", type=float, default=0.1,
                        help="seconds of untimed calls before each runner's timed calls in a round")
    parser.add_argument("--no-ort-spinning", action="store_true",
                        help="onnxruntime's intra-op threads sleep between its calls")
    parser.add_argument("--ort-profile", action="store_true",
                        help="print onnxruntime's per-node times for the CNN instead")
    args = parser.parse_args(argv)
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    rows = []
    if args.ort_profile:
        with tempfile.TemporaryDirectory() as tmp:
            _, path = export_model(digits_cnn, os.path.join(tmp, "cnn.onnx"))
            for batch in args.batches:
                ort_node_times(ort, path, rng.random((batch, 64), dtype=np.float32), tmp)
        return
    with tempfile.TemporaryDirectory() as tmp:
        cnn_run, cnn_path = export_model(digits_cnn, os.path.join(tmp, "cnn.onnx"))
        _, mlp_path = export_model(digits_mlp, os.path.join(tmp, "mlp.onnx"))
        cases = [("digits CNN, exported", cnn_path, cnn_run)]
        for label, path in (("digits CNN, imported", cnn_path), ("digits MLP, imported", mlp_path)):
            imported = gf_onnx.import_model(path)
            cases.append((label, path, lambda feed, m=imported: m.run({"x": feed})["probs"]))
        for label, path, gf_run in cases:
            options = ort.SessionOptions()
            if args.no_ort_spinning:
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            runner = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            for batch in args.batches:
                feed = rng.random((batch, 64), dtype=np.float32)
                np.testing.assert_allclose(gf_run(feed), runner.run(None, {"x": feed})[0],
                                           rtol=1e-4, atol=1e-6)
                gf_ms, ort_ms = interleaved(lambda f=feed, g=gf_run: g(f),
                                            lambda f=feed, r=runner: r.run(None, {"x": f}),
                                            args.rounds, args.inner, args.round_warmup)
                rows.append((label, batch, gf_ms, ort_ms))
    print(f"{'model':<24} {'batch':>5} {'graphflow ms':>13} {'onnxruntime ms':>15} {'ratio':>6}")
    for label, batch, gf_ms, ort_ms in rows:
        print(f"{label:<24} {batch:>5} {gf_ms:>13.3f} {ort_ms:>15.3f} {gf_ms / ort_ms:>6.2f}")


if __name__ == "__main__":
    main()
