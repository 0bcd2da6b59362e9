"""Training-mode batch normalization on the CPU: forward + backward (dx, dscale, doffset) of
FusedBatchNorm on a [32, 28, 28, 64] float32 NHWC batch (the incoming gradient `u` given as
grad_ys), as a graphflow session step, against
hand-written numpy and TF1 (`tf.compat.v1` graph mode) in the same run when TensorFlow is
importable:

    PYTHONPATH=. python benchmarks/bench_batch_norm.py [--repeat 20]

Medians of `repeat` timed runs after warmups; the ratios are graphflow / other.
"""

import argparse

import numpy as np
from common import median_ms as _median_ms

import graphflow as gf

SHAPE = (32, 28, 28, 64)
EPS = 1e-3



def numpy_step(x, scale, offset, u):
    mean = x.mean(axis=(0, 1, 2))
    centered = x - mean
    var = np.mean(centered * centered, axis=(0, 1, 2))
    inv = 1.0 / np.sqrt(var + EPS)
    x_hat = centered * inv
    y = x_hat * scale + offset
    n = x.size // x.shape[-1]
    d_offset = u.sum(axis=(0, 1, 2))
    d_scale = (u * x_hat).sum(axis=(0, 1, 2))
    dx = (scale * inv / n) * (n * u - d_offset - x_hat * d_scale)
    return y, dx, d_scale, d_offset


def graphflow_step(x, scale, offset, u):
    g = gf.Graph()
    with g.as_default():
        xs = gf.placeholder(gf.float32, x.shape)
        s, o = gf.constant(scale), gf.constant(offset)
        y, _, _ = gf.nn.fused_batch_norm(xs, s, o, epsilon=EPS)
        grads = gf.gradients(y, [xs, s, o], grad_ys=gf.constant(u))
    sess = gf.Session(graph=g)
    fetch = sess.make_callable([y] + grads, [xs])
    return lambda: fetch(x)


def tensorflow_step(x, scale, offset, u):
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    g = tf.Graph()
    with g.as_default():
        xs = tf.placeholder(tf.float32, x.shape)
        s, o = tf.constant(scale), tf.constant(offset)
        y, _, _ = tf.nn.fused_batch_norm(xs, s, o, epsilon=EPS)
        grads = tf.gradients(y, [xs, s, o], grad_ys=tf.constant(u))
    sess = tf.Session(graph=g)
    fetches = [y] + grads
    return lambda: sess.run(fetches, {xs: x})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    scale = rng.uniform(0.5, 2, SHAPE[-1]).astype(np.float32)
    offset = rng.standard_normal(SHAPE[-1]).astype(np.float32)
    u = rng.standard_normal(SHAPE).astype(np.float32)
    ours = graphflow_step(x, scale, offset, u)
    want = numpy_step(x, scale, offset, u)
    for got, ref in zip(ours(), want):
        np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-3)
    results = {"graphflow": _median_ms(ours, args.repeat),
               "numpy": _median_ms(lambda: numpy_step(x, scale, offset, u), args.repeat)}
    try:
        theirs = tensorflow_step(x, scale, offset, u)
    except ImportError:
        theirs = None
    if theirs is not None:
        results["tf.compat.v1"] = _median_ms(theirs, args.repeat)
    print(f"fused batch norm forward + backward, {list(SHAPE)} float32 NHWC, training mode "
          f"(median of {args.repeat})")
    for name, ms in results.items():
        ratio = "" if name == "graphflow" else f"   graphflow / {name}: {results['graphflow'] / ms:.2f}x"
        print(f"  {name:>13}: {ms:8.2f} ms{ratio}")


if __name__ == "__main__":
    main()
