"""Where one step's time goes: the per-op timeline (`RunOptions(trace_level=FULL_TRACE)`) of a
graphflow workload, medians over traced steps, largest first.

    python benchmarks/bench_step_profile.py small            # bench_vs_tf1's small CNN step
    python benchmarks/bench_step_profile.py cifar|mlp|resnet|resnet-layers
    python benchmarks/bench_step_profile.py onnx-cnn --batch 256   # bench_onnx's imported CNN
    python benchmarks/bench_step_profile.py onnx-cnn-exported --batch 1   # ... and its own graph

    python benchmarks/bench_step_profile.py cifar --tf1      # the same step in TF1 (tf.compat.v1)
    python benchmarks/bench_step_profile.py resnet-layers --tf1 --overlap   # what ran at once
    python benchmarks/bench_step_profile.py resnet-layers --compare   # graphflow and TF1 per layer

Prints the untraced step's median and, per op, the median of its traced duration. TF1 runs
independent ops at the same time on its inter-op threads, so its traced ops can sum to more than
its step; graphflow runs a plan's ops one after another. `--compare` profiles both frameworks, TF1
on one inter-op thread (its ops one after another too, so each traced duration is the op's own), and
prints per layer (an op's first name scope, forward and gradient apart) the sums of each op's
fastest traced duration, and both steps untraced (TF1 on its default inter-op threads and on one).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_onnx  # noqa: E402
import bench_vs_tf1  # noqa: E402
from common import tensorflow_v1  # noqa: E402

import graphflow as tf  # noqa: E402
from graphflow.interop import onnx as gf_onnx  # noqa: E402

ROWS = {"small": bench_vs_tf1.small_cnn, "cifar": bench_vs_tf1.cifar_cnn,
        "mlp": bench_vs_tf1.mlp_adam, "resnet": bench_vs_tf1.resnet_bn,
        "resnet-layers": bench_vs_tf1.resnet_layers}


def _workload(name, batch, tmp, tf1=None, config=None):
    """(session, fetches, feed) of the named workload."""
    if name.startswith("onnx-cnn"):
        feed = np.random.default_rng(0).random((batch, 64), dtype=np.float32)
        if name == "onnx-cnn-exported":
            graph = tf.Graph()
            with graph.as_default():
                tf.set_random_seed(0)
                x = tf.placeholder(tf.float32, [None, 64], name="x")
                probs = bench_onnx.digits_cnn(x)
                sess = tf.Session(graph=graph)
                sess.run(tf.global_variables_initializer())
            return sess, probs, {x: feed}
        _, path = bench_onnx.export_model(bench_onnx.digits_cnn, os.path.join(tmp, "cnn.onnx"))
        model = gf_onnx.import_model(path)
        return model.session, model.outputs["probs"], {model.inputs["x"]: feed}
    framework = tf1 or tf
    framework.reset_default_graph()
    fetches, feed, _, _ = ROWS[name](framework, np.random.default_rng(0))
    sess = framework.Session(config=config)
    sess.run(framework.global_variables_initializer())
    return sess, fetches, feed


def _traced(framework, sess, fetches, feed, steps):
    """{op name: [traced durations, us]} and [(start, duration, is a convolution)] per step."""
    per_op, spans_per_step = {}, []
    options = framework.RunOptions(trace_level=framework.RunOptions.FULL_TRACE)
    for _ in range(steps):
        metadata = framework.RunMetadata()
        sess.run(fetches, feed, options=options, run_metadata=metadata)
        spans = []
        for device in metadata.step_stats.dev_stats:
            for node in device.node_stats:
                per_op.setdefault(node.node_name, []).append(node.all_end_rel_micros)
                spans.append((node.all_start_micros, node.all_end_rel_micros,
                              "Conv2D" in node.node_name))
        spans_per_step.append(spans)
    return per_op, spans_per_step


def _untraced_ms(sess, fetches, feed, steps):
    for _ in range(10):
        sess.run(fetches, feed)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        sess.run(fetches, feed)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _layer(name):
    """An op's layer: its first name scope ("conv2d_3", "Relu_2", ...), " grad" for its gradient."""
    grad = name.startswith("gradients/")
    scope = (name[len("gradients/"):] if grad else name).split("/")[0]
    return scope.removesuffix("_grad") + (" grad" if grad else "")


def compare(workload, steps):
    """Per layer, graphflow's ops against TF1's run one after another (see the module doc)."""
    tf1 = tensorflow_v1()
    serial = tf1.ConfigProto(inter_op_parallelism_threads=1)
    sums, steps_ms = {}, {}
    for label, framework, config in (("graphflow", tf, None), ("TF1", tf1, serial)):
        sess, fetches, feed = _workload(workload, 0, None, framework if label == "TF1" else None,
                                        config)
        steps_ms[label] = _untraced_ms(sess, fetches, feed, steps)
        per_op = _traced(framework, sess, fetches, feed, steps)[0]
        for name, durations in per_op.items():
            layer = sums.setdefault(_layer(name), {})
            layer[label] = layer.get(label, 0.0) + min(durations) / 1e3
    sess, fetches, feed = _workload(workload, 0, None, tf1)
    steps_ms["TF1 default"] = _untraced_ms(sess, fetches, feed, steps)
    print(f"{workload}: step medians untraced, ms: graphflow {steps_ms['graphflow']:.2f}, TF1 on "
          f"one inter-op thread {steps_ms['TF1']:.2f}, TF1 default {steps_ms['TF1 default']:.2f}")
    print(f"{'layer':28s} {'graphflow':>10s} {'TF1':>8s} {'diff':>8s}   (sums of fastest traced ops, ms)")
    total = {"graphflow": 0.0, "TF1": 0.0}
    for layer, ms in sorted(sums.items(), key=lambda kv: -abs(kv[1].get("graphflow", 0)
                                                              - kv[1].get("TF1", 0))):
        gf_ms, tf_ms = ms.get("graphflow", 0.0), ms.get("TF1", 0.0)
        total["graphflow"] += gf_ms
        total["TF1"] += tf_ms
        print(f"{layer:28s} {gf_ms:10.3f} {tf_ms:8.3f} {gf_ms - tf_ms:+8.3f}")
    print(f"{'all ops':28s} {total['graphflow']:10.3f} {total['TF1']:8.3f} "
          f"{total['graphflow'] - total['TF1']:+8.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=[*ROWS, "onnx-cnn", "onnx-cnn-exported"])
    parser.add_argument("--batch", type=int, default=256, help="onnx-cnn(-exported) only")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--tf1", action="store_true",
                        help="profile the step in TensorFlow's tf.compat.v1 instead (training rows)")
    parser.add_argument("--overlap", action="store_true",
                        help="also split each traced step's wall time by what ran in it: "
                             "convolutions alone (two at once), other ops alone, both")
    parser.add_argument("--compare", action="store_true",
                        help="graphflow against TF1 on one inter-op thread, per layer")
    args = parser.parse_args(argv)
    if args.compare:
        if tensorflow_v1() is None or args.workload not in ROWS:
            parser.error("--compare needs TensorFlow installed and a training workload")
        return compare(args.workload, args.steps)
    framework = tf
    if args.tf1:
        framework = tensorflow_v1()
        if framework is None or args.workload not in ROWS:
            parser.error("--tf1 needs TensorFlow installed and a training workload")
    with tempfile.TemporaryDirectory() as tmp:
        sess, fetches, feed = _workload(args.workload, args.batch, tmp,
                                        framework if args.tf1 else None)
        step_ms = _untraced_ms(sess, fetches, feed, args.steps)
        per_op, spans_per_step = _traced(framework, sess, fetches, feed, args.steps)
        overlaps = [_overlap(spans) for spans in spans_per_step]
    rows = sorted(((statistics.median(v) / 1e3, k) for k, v in per_op.items()), reverse=True)
    print(f"{args.workload}: step median {step_ms:.3f} ms untraced; "
          f"traced ops sum to {sum(t for t, _ in rows):.3f} ms")
    for t, name in rows[:args.top]:
        print(f"  {t:7.3f} ms  {name}")
    if args.overlap:
        wall, alone, two, other, both = (statistics.median(o[k] for o in overlaps) for k in range(5))
        idle = wall - alone - other - both
        print(f"traced step {wall:.1f} ms: convolutions alone {alone:.1f} (two at once {two:.1f}), "
              f"other ops alone {other:.1f}, both at once {both:.1f}, nothing {idle:.1f}")


def _overlap(spans, resolution=10):
    """(wall, convolution ops alone, two convolutions at once, other ops alone, both) in ms of one
    traced step's (start, duration, is a convolution) spans in microseconds, in `resolution` us
    bins."""
    spans = [s for s in spans if s[1] > 0]
    t0 = min(s[0] for s in spans)
    bins = int((max(s[0] + s[1] for s in spans) - t0) / resolution) + 1
    conv, other = np.zeros(bins), np.zeros(bins)
    for start, duration, is_conv in spans:
        lo = int((start - t0) / resolution)
        (conv if is_conv else other)[lo:int((start + duration - t0) / resolution) + 1] += 1
    ms = resolution / 1e3
    return (bins * ms, ((conv > 0) & (other == 0)).sum() * ms, (conv >= 2).sum() * ms,
            ((conv == 0) & (other > 0)).sum() * ms, ((conv > 0) & (other > 0)).sum() * ms)


if __name__ == "__main__":
    main()
