"""Conv2D + bias + ReLU fused into one FusedConv2D (the fusion pass) against the unfused plan.

    python benchmarks/bench_conv_fusion.py                 # kernels and both CNN steps
    python benchmarks/bench_conv_fusion.py --rounds 31 --steps cifar

1. Kernels, one thread, on the layers of bench_vs_tf1's CNN rows (float32, NHWC, SAME, batch 64):
   oneDNN's forward convolution alone, followed by numpy's bias add and ReLU (what the unfused
   plan runs), and as one primitive with the bias argument and a ReLU post-op (FusedConv2D), with
   the implementation oneDNN picked for each.
2. Training steps of bench_vs_tf1's small and CIFAR-shaped CNNs, one session planned with
   convolution fusion and one without (`fusion.FUSE_CONV`), in the same process, interleaved.

Times are medians of interleaved rounds, in milliseconds. Without the oneDNN library
(`onednn-cpu-gomp`, installed with graphflow on Linux x86-64) part 1 is skipped.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_conv_kernels  # noqa: E402
import bench_vs_tf1  # noqa: E402

import graphflow as tf  # noqa: E402
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv
from graphflow.optimizer_passes import fusion  # noqa: E402

RELU = ((dnnl.ELTWISE_RELU, 0.0, 0.0),)
STEPS = {"small": bench_vs_tf1.small_cnn, "cifar": bench_vs_tf1.cifar_cnn}


def _medians(fns, rounds, inner=1):
    for fn in fns.values():
        fn()
    samples = {name: [] for name in fns}
    for r in range(rounds):
        order = list(fns.items()) if r % 2 == 0 else list(fns.items())[::-1]
        for name, fn in order:
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - t0) / inner * 1e3)
    return {name: statistics.median(s) for name, s in samples.items()}


def _layer(x, f, b, geo):
    """(conv alone, conv then numpy bias + relu, fused primitive) for one layer."""
    def unfused():
        y = dnnl_conv.conv2d(x, f, geo, 1)
        np.add(y, b, out=y)
        np.maximum(y, 0, out=y)
    return {"conv": lambda: dnnl_conv.conv2d(x, f, geo, 1), "unfused": unfused,
            "fused": lambda: dnnl_conv.conv2d(x, f, geo, 1, b, RELU)}


def kernels(rounds):
    print("kernels, one thread (ms): conv alone | conv, numpy bias + relu | fused primitive")
    rng = np.random.default_rng(0)
    for name, geo, x, f, _ in bench_conv_kernels.layer_arrays(rng):
        n, c, oc = x.shape[0], f.shape[2], f.shape[3]
        b = rng.standard_normal(oc).astype(np.float32)
        t = _medians(_layer(x, f, b, geo), rounds, 3)
        nb = dnnl_conv.image_blocks(n, n * geo.oh * geo.ow * f.size)
        impl = dnnl_conv._plan("forward", geo, nb, c, oc, True, RELU).implementation
        print(f"  {name:32s} {t['conv']:7.3f} {t['unfused']:7.3f} {t['fused']:7.3f}   {impl}")


def _session(model, switch, fuse):
    """A session running `model`'s step with the fusion module's `switch` (a rule's flag) set to
    `fuse` while its plan is built (on the first run)."""
    graph = tf.Graph()
    with graph.as_default():
        fetches, feed, _, _ = model(tf, np.random.default_rng(0))
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
    setattr(fusion, switch, fuse)
    try:
        sess.run(fetches, feed)
    finally:
        setattr(fusion, switch, True)
    return lambda: sess.run(fetches, feed)


def steps(names, rounds, switch="FUSE_CONV"):
    """Each named training step with and without the rule `switch` turns on, interleaved."""
    print("training steps (ms): unfused | fused | fused/unfused")
    for name in names:
        t = _medians({"unfused": _session(STEPS[name], switch, False),
                      "fused": _session(STEPS[name], switch, True)},
                     rounds, 20 if name == "small" else 5)
        print(f"  {name:8s} {t['unfused']:8.3f} {t['fused']:8.3f} {t['fused'] / t['unfused']:6.3f}")


def main(argv=None, description=None, kernels=kernels, switch="FUSE_CONV"):
    """The command line; `bench_conv_bias_grad.py` runs it with its own kernels and rule switch."""
    parser = argparse.ArgumentParser(description=description or __doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", nargs="*", choices=list(STEPS), default=list(STEPS))
    parser.add_argument("--no-kernels", action="store_true")
    args = parser.parse_args(argv)
    if not args.no_kernels and dnnl.library() is not None:
        kernels(args.rounds)
    steps(args.steps, args.rounds, switch)
    with open("/proc/loadavg") as f:
        print("load average:", " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
