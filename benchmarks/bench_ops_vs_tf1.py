"""Convolution and pooling ops one at a time, graphflow against TensorFlow's `tf.compat.v1`, in one
process: each row is one op on the CNN rows' layer shapes (float32, batch 64), forward alone and
forward + the gradients a training step takes (input and filter), NHWC and NCHW. Inputs are fed each run (a
constant input would let constant folding compute the forward pass once).

    python benchmarks/bench_ops_vs_tf1.py
    python benchmarks/bench_ops_vs_tf1.py --rows pool --rounds 9

Each row's graph is written once against the TF1 API (`tf` is graphflow or tensorflow.compat.v1)
and timed in interleaved rounds (`bench_vs_tf1.measure`: graphflow, TF1, graphflow, ...); medians
in milliseconds and the ratio graphflow/TF1 (below 1: graphflow is faster). TensorFlow's CPU build
runs NCHW convolutions and pools through its oneDNN kernels (its Eigen kernels take NHWC only).
Without TensorFlow only graphflow's column is printed.
"""

import argparse

import numpy as np
from bench_vs_tf1 import measure
from common import tensorflow_v1

NHWC = {"conv": [(64, 28, 28, 1), (5, 5, 1, 16)], "conv32": [(64, 32, 32, 32), (3, 3, 32, 32)],
        "to1": [(64, 28, 28, 16), (5, 5, 16, 1)], "res16": [(64, 32, 32, 16), (3, 3, 16, 16)],
        "pool": [(64, 32, 32, 32)]}


def _nchw(shape):
    return (shape[0], shape[3], shape[1], shape[2])


def _conv_row(layer, data_format, backward):
    x_shape, f_shape = NHWC[layer]
    strides = [1, 1, 1, 1]

    def model(tf, rng):
        shape = x_shape if data_format == "NHWC" else _nchw(x_shape)
        x = tf.placeholder(tf.float32, shape)
        feed = {x: rng.standard_normal(shape).astype(np.float32)}
        f = tf.Variable(rng.standard_normal(f_shape).astype(np.float32) * 0.1)
        y = tf.nn.conv2d(x, f, strides, "SAME", data_format=data_format)
        return (tf.gradients(tf.reduce_sum(y * y), [x, f]) if backward else y), feed
    return model


def _transpose_row():
    """conv2d_transpose from [64, 16, 16, 64] to a [64, 32, 32, 3] image, 5x5, stride 2 (a DCGAN
    generator's last layer), with the gradients of its input and filter."""
    def model(tf, rng):
        x = tf.placeholder(tf.float32, (64, 16, 16, 64))
        feed = {x: rng.standard_normal((64, 16, 16, 64)).astype(np.float32)}
        f = tf.Variable(rng.standard_normal((5, 5, 3, 64)).astype(np.float32) * 0.1)
        y = tf.nn.conv2d_transpose(x, f, [64, 32, 32, 3], [1, 2, 2, 1], "SAME")
        return [y, *tf.gradients(tf.reduce_sum(y * y), [x, f])], feed
    return model


def _pool_row(kind, data_format, backward):
    (x_shape,) = NHWC["pool"]
    window = [1, 2, 2, 1] if data_format == "NHWC" else [1, 1, 2, 2]

    def model(tf, rng):
        shape = x_shape if data_format == "NHWC" else _nchw(x_shape)
        x = tf.placeholder(tf.float32, shape)
        feed = {x: rng.standard_normal(shape).astype(np.float32)}
        pool = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
        y = pool(x, window, window, "VALID", data_format=data_format)
        return (tf.gradients(tf.reduce_sum(y * y), [x]) if backward else y), feed
    return model


def rows():
    out = []
    for fmt in ("NHWC", "NCHW"):
        for layer, title in (("conv", "conv 64x28x28x1 -> 16, 5x5"),
                             ("conv32", "conv 64x32x32x32 -> 32, 3x3"),
                             ("res16", "conv 64x32x32x16 -> 16, 3x3 (ResNet rows)")):
            out.append((f"{title} {fmt}, forward", _conv_row(layer, fmt, False)))
            out.append((f"{title} {fmt}, + input & filter grads", _conv_row(layer, fmt, True)))
        if fmt == "NHWC":
            title = "conv 64x28x28x16 -> 1, 5x5 NHWC"
            out.append((f"{title}, forward", _conv_row("to1", fmt, False)))
            out.append((f"{title}, + input & filter grads", _conv_row("to1", fmt, True)))
            out.append(("conv2d_transpose 64x16x16x64 -> 32x32x3, 5x5 s2, + grads",
                        _transpose_row()))
        for kind in ("max", "avg"):
            out.append((f"{kind} pool 2x2 64x32x32x32 {fmt}, forward", _pool_row(kind, fmt, False)))
            out.append((f"{kind} pool 2x2 64x32x32x32 {fmt}, + grad", _pool_row(kind, fmt, True)))
    return out


def _step(framework, model):
    framework.reset_default_graph()
    graph = framework.get_default_graph()
    with graph.as_default():
        fetches, feed = model(framework, np.random.default_rng(0))
        sess = framework.Session(graph=graph)
        sess.run(framework.global_variables_initializer())
    return lambda: sess.run(fetches, feed)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", nargs="+", metavar="TEXT",
                        help="only the rows whose title contains one of these (case-insensitive)")
    args = parser.parse_args(argv)
    import graphflow as gf
    tf1 = tensorflow_v1()
    print(f"{'op':58s} {'graphflow':>11s} {'TF1':>11s} {'gf/TF1':>7s}")
    for title, model in rows():
        if args.rows and not any(r.lower() in title.lower() for r in args.rows):
            continue
        contenders = {"gf": _step(gf, model)}
        if tf1 is not None:
            contenders["tf1"] = _step(tf1, model)
        t = measure(contenders, args.rounds)
        tf_text = f"{t['tf1'] * 1e3:9.3f}ms {t['gf'] / t['tf1']:7.2f}" if "tf1" in t else ""
        print(f"{title:58s} {t['gf'] * 1e3:9.3f}ms {tf_text}", flush=True)


if __name__ == "__main__":
    main()
