"""graphflow against TensorFlow's `tf.compat.v1` graph mode on the workloads users train, in one process.

    python benchmarks/bench_vs_tf1.py                 # all three settings, one child process each
    python benchmarks/bench_vs_tf1.py --setting default --rounds 7
    python benchmarks/bench_vs_tf1.py --rows CNN      # only the rows whose title contains "CNN"
    python benchmarks/bench_vs_tf1.py --no-dnnl-column  # graphflow also without its oneDNN kernels
    python benchmarks/bench_vs_tf1.py --matmul-columns  # ... with its products' threads one way each

Settings (each runs in a fresh child process, since BLAS reads its thread count when it loads):
  default       default threads for both frameworks
  blas1         OPENBLAS_NUM_THREADS=1 / OMP_NUM_THREADS=1 in the environment
  busy          default threads while another process keeps one core busy (a CPU-burning loop)

Each row builds the same model in both frameworks from one function written against the TF1 API
(`tf` is graphflow or tensorflow.compat.v1), runs a warmup (at least 3 steps and `WARMUP_SECONDS`
of them each, so both frameworks reach their steady state: graphflow's threading chooser times its
parallel calls both ways over their first ~70 calls, ~10 CIFAR-shaped steps), then times the step
in interleaved rounds (graphflow, TF1, graphflow, ...), each contender's timed calls in a round
(at least `MIN_CALLS_PER_ROUND`) after `--round-warmup` seconds (default 0.1) of untimed ones,
and prints the medians, the ratio graphflow/TF1 (below 1: graphflow is faster) with, in brackets,
the 25th-75th percentiles of the per-round ratios (graphflow's round over TF1's round right after
it: how much the machine's noise moves the ratio), and the achieved
GFLOP/s (matmul/conv rows) or GB/s (elementwise rows) next to the machine's own sgemm GFLOP/s and
copy GB/s, measured in the same process. With TensorFlow not installed the TF1 column is skipped.

Why a warm-up in every round: TF1's thread pool keeps spinning for a while after its step, so the
first graphflow steps after TF1's ran beside two spinning threads (the MLP Adam step: 4.4 ms alone,
up to 5.8 ms in rounds that began right after TF1's), and graphflow's threading chooser could time
its products in that window. `--round-warmup 0` times as before.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from common import tensorflow_v1, warm_up

BURN_ONE_CORE = "import time\nend = time.time() + 3600\nwhile time.time() < end:\n    pass"
SETTINGS = {
    "default": {},
    "blas1": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    "busy": {},
}


# ------------------------------------------------------------------ models (TF1 API, any `tf`)
def seed_tiny(tf, rng):
    x, y, z = (tf.placeholder(tf.float32, [3, 4]) for _ in range(3))
    c = tf.reduce_sum(x * y + z)
    fetches = [c] + tf.gradients(c, [x, y, z])
    feed = {p: rng.standard_normal((3, 4)).astype(np.float32) for p in (x, y, z)}
    return fetches, feed, 0.0, 0.0


def cs231n(tf, rng):
    n, d_in, h, d_out = 64, 1000, 100, 10
    x = tf.placeholder(tf.float32, [n, d_in])
    y = tf.placeholder(tf.float32, [n, d_out])
    w1 = tf.Variable(rng.standard_normal((d_in, h)).astype(np.float32))
    w2 = tf.Variable(rng.standard_normal((h, d_out)).astype(np.float32))
    out = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
    loss = tf.reduce_sum(tf.square(out - y))
    train = tf.train.GradientDescentOptimizer(1e-6).minimize(loss)
    feed = {x: rng.standard_normal((n, d_in)).astype(np.float32),
            y: rng.standard_normal((n, d_out)).astype(np.float32)}
    flops = 3 * 2 * n * (d_in * h + h * d_out)
    return [loss, train], feed, flops, 0.0


def _dense(tf, x, fan_in, fan_out, rng, act=True):
    w = tf.Variable((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(np.float32))
    b = tf.Variable(np.zeros(fan_out, np.float32))
    y = tf.matmul(x, w) + b
    return tf.nn.relu(y) if act else y


def _softmax_loss(tf, logits, labels):
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def mlp_adam(tf, rng):
    n = 256
    x = tf.placeholder(tf.float32, [n, 784])
    y = tf.placeholder(tf.float32, [n, 10])
    h = _dense(tf, _dense(tf, x, 784, 512, rng), 512, 512, rng)
    loss = _softmax_loss(tf, _dense(tf, h, 512, 10, rng, act=False), y)
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    feed = {x: rng.standard_normal((n, 784)).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]}
    return [loss, train], feed, 3 * 2 * n * (784 * 512 + 512 * 512 + 512 * 10), 0.0


def mlp_dropout(tf, rng):
    """The MNIST MLP of TF1's tutorials: dropout after each hidden layer, keep_prob fed."""
    n = 128
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.float32, [None, 10])
    keep_prob = tf.placeholder(tf.float32)
    h = tf.nn.dropout(_dense(tf, x, 784, 512, rng), keep_prob)
    h = tf.nn.dropout(_dense(tf, h, 512, 512, rng), keep_prob)
    loss = _softmax_loss(tf, _dense(tf, h, 512, 10, rng, act=False), y)
    train = tf.train.AdamOptimizer(1e-4).minimize(loss)
    feed = {x: rng.random((n, 784), dtype=np.float32),
            y: np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)], keep_prob: 0.5}
    return [loss, train], feed, 3 * 2 * n * (784 * 512 + 512 * 512 + 512 * 10), 0.0


def elementwise(tf, rng, size=1 << 20):
    x = tf.placeholder(tf.float32, [size])
    y = tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x) - x * x
    feed = {x: rng.standard_normal(size).astype(np.float32)}
    return [y], feed, 0.0, 2 * 4 * size  # read x, write y


def elementwise_16m(tf, rng):
    # the size of the copy measured in `machine_limits`: GB/s comparable with copy GB/s
    return elementwise(tf, rng, 1 << 24)


def _conv(tf, x, k, c_in, c_out, rng):
    w = tf.Variable((rng.standard_normal((k, k, c_in, c_out)) * np.sqrt(2 / (k * k * c_in)))
                    .astype(np.float32))
    b = tf.Variable(np.zeros(c_out, np.float32))
    return tf.nn.relu(tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME") + b)


def _pool(tf, x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")


def small_cnn(tf, rng):
    n = 64
    x = tf.placeholder(tf.float32, [n, 28, 28, 1])
    y = tf.placeholder(tf.float32, [n, 10])
    h = _pool(tf, _conv(tf, x, 5, 1, 16, rng))
    logits = _dense(tf, tf.reshape(h, [n, 14 * 14 * 16]), 14 * 14 * 16, 10, rng, act=False)
    train = tf.train.AdamOptimizer(1e-3).minimize(_softmax_loss(tf, logits, y))
    feed = {x: rng.standard_normal((n, 28, 28, 1)).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]}
    flops = 3 * 2 * n * (28 * 28 * 25 * 16 + 14 * 14 * 16 * 10)
    return [train], feed, flops, 0.0


def cifar_cnn(tf, rng):
    n = 64
    x = tf.placeholder(tf.float32, [n, 32, 32, 3])
    y = tf.placeholder(tf.float32, [n, 10])
    h = _pool(tf, _conv(tf, _conv(tf, x, 3, 3, 32, rng), 3, 32, 32, rng))
    h = _pool(tf, _conv(tf, h, 3, 32, 64, rng))
    h = _dense(tf, tf.reshape(h, [n, 8 * 8 * 64]), 8 * 8 * 64, 512, rng)
    logits = _dense(tf, h, 512, 10, rng, act=False)
    train = tf.train.AdamOptimizer(1e-3).minimize(_softmax_loss(tf, logits, y))
    feed = {x: rng.standard_normal((n, 32, 32, 3)).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]}
    macs = 32 * 32 * (27 * 32 + 288 * 32) + 16 * 16 * 288 * 64 + 8 * 8 * 64 * 512 + 512 * 10
    return [train], feed, 3 * 2 * n * macs, 0.0


def _conv_bn(tf, x, c_in, c_out, rng, stride=1, relu=True, k=3):
    """conv2d without bias, then a batch norm the way TF1 code wrote it (tf.nn.moments and
    tf.nn.batch_normalization), then ReLU."""
    w = tf.Variable((rng.standard_normal((k, k, c_in, c_out)) * np.sqrt(2 / (k * k * c_in)))
                    .astype(np.float32))
    h = tf.nn.conv2d(x, w, strides=[1, stride, stride, 1], padding="SAME")
    mean, variance = tf.nn.moments(h, [0, 1, 2])
    gamma = tf.Variable(np.ones(c_out, np.float32))
    beta = tf.Variable(np.zeros(c_out, np.float32))
    h = tf.nn.batch_normalization(h, mean, variance, beta, gamma, 1e-3)
    return tf.nn.relu(h) if relu else h


def resnet_bn(tf, rng):
    """A small ResNet on CIFAR-shaped images: a stem, three residual blocks (16, 32, 64 channels,
    the last two with stride 2 and a 1x1 projection), global average pooling, Momentum."""
    n = 64
    x = tf.placeholder(tf.float32, [n, 32, 32, 3])
    y = tf.placeholder(tf.int64, [n])
    h = _conv_bn(tf, x, 3, 16, rng)
    c_in, macs, size = 16, 32 * 32 * 27 * 16, 32
    for c, stride in ((16, 1), (32, 2), (64, 2)):
        short, projected = h, stride != 1 or c != c_in
        if projected:
            w = tf.Variable((rng.standard_normal((1, 1, c_in, c)) * np.sqrt(2 / c_in))
                            .astype(np.float32))
            short = tf.nn.conv2d(h, w, strides=[1, stride, stride, 1], padding="SAME")
        out = size // stride
        r = _conv_bn(tf, h, c_in, c, rng, stride)
        r = _conv_bn(tf, r, c, c, rng, relu=False)
        h = tf.nn.relu(r + short)
        macs += out * out * (9 * c_in * c + 9 * c * c + (c_in * c if projected else 0))
        c_in, size = c, out
    w = tf.Variable((rng.standard_normal((64, 10)) * 0.1).astype(np.float32))
    logits = tf.matmul(tf.reduce_mean(h, axis=[1, 2]), w)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    feed = {x: rng.standard_normal((n, 32, 32, 3)).astype(np.float32),
            y: rng.integers(0, 10, n)}
    return [train], feed, 3 * 2 * n * macs, 0.0


def resnet_layers(tf, rng):
    """`resnet_bn`'s network as tf.layers programs wrote it: conv2d without bias,
    batch_normalization(training=flag) with a placeholder_with_default flag, the moving averages
    updated through UPDATE_OPS around minimize, a dense layer, tf.losses, Momentum."""
    n = 64
    tf.set_random_seed(int(rng.integers(1 << 30)))
    x = tf.placeholder(tf.float32, [n, 32, 32, 3])
    y = tf.placeholder(tf.int64, [n])
    training = tf.placeholder_with_default(True, [])

    def conv_bn(h, c, stride=1, relu=True):
        h = tf.layers.conv2d(h, c, 3, strides=stride, padding="same", use_bias=False)
        h = tf.layers.batch_normalization(h, training=training)
        return tf.nn.relu(h) if relu else h
    h, c_in, macs, size = conv_bn(x, 16), 16, 32 * 32 * 27 * 16, 32
    for c, stride in ((16, 1), (32, 2), (64, 2)):
        short, projected = h, stride != 1 or c != c_in
        if projected:
            short = tf.layers.conv2d(h, c, 1, strides=stride, padding="same", use_bias=False)
        out = size // stride
        r = conv_bn(conv_bn(h, c, stride), c, relu=False)
        h = tf.nn.relu(r + short)
        macs += out * out * (9 * c_in * c + 9 * c * c + (c_in * c if projected else 0))
        c_in, size = c, out
    logits = tf.layers.dense(tf.reduce_mean(h, axis=[1, 2]), 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    feed = {x: rng.standard_normal((n, 32, 32, 3)).astype(np.float32),
            y: rng.integers(0, 10, n)}
    return [train], feed, 3 * 2 * n * macs, 0.0


def keras_cnn(tf, rng):
    """A Keras Sequential CNN as Keras programs wrote it (Conv2D + ReLU, BatchNormalization,
    MaxPooling2D, Dense, Dropout, compile with Adam and sparse_categorical_crossentropy),
    trained with `model.train_on_batch` in the framework's Keras (TF1: tf.compat.v1.keras in
    graph mode). Returns the step itself, not fetches."""
    keras = tf.keras
    n = 64
    x = rng.standard_normal((n, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, n)
    graph = tf.get_default_graph()
    tf.set_random_seed(int(rng.integers(1 << 30)))
    model = keras.Sequential([
        keras.layers.Conv2D(32, 3, padding="same", activation="relu", input_shape=(32, 32, 3)),
        keras.layers.BatchNormalization(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dropout(0.5),
        keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

    def step():
        with graph.as_default():
            return model.train_on_batch(x, y)
    step()  # (builds the training function in this graph)
    macs = n * 32 * 32 * 9 * (3 * 32 + 32 * 32) + n * 16 * 16 * 9 * 32 * 64 + n * 8 * 8 * 64 * 128
    return step, None, 3 * 2 * macs, 0.0


ROWS = [("seed tiny graph + 3 grads", seed_tiny), ("cs231n 2-layer SGD (64x1000x100x10)", cs231n),
        ("784-512-512-10 Adam, batch 256", mlp_adam),
        ("784-512-512-10 dropout 0.5, Adam, batch 128", mlp_dropout),
        ("elementwise chain 1M float32", elementwise),
        ("elementwise chain 16M float32", elementwise_16m),
        ("small CNN (64x28x28, conv5x5x16, pool, dense)", small_cnn),
        ("CIFAR-shaped CNN, batch 64, Adam", cifar_cnn),
        ("ResNet-style CNN, batch norm by tf.nn.moments, batch 64", resnet_bn),
        ("ResNet-style CNN, tf.layers + UPDATE_OPS, batch 64", resnet_layers),
        ("Keras Sequential CNN + BatchNormalization, train_on_batch, batch 64", keras_cnn)]


# ------------------------------------------------------------------ machine limits, timing
def machine_limits(repeat=5):
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    src = np.ones(16 << 20, np.float32)
    dst = np.empty_like(src)
    sgemm = min(_time(lambda: a @ a) for _ in range(repeat))
    copy = min(_time(lambda: np.copyto(dst, src)) for _ in range(repeat))
    return 2 * 1024 ** 3 / sgemm / 1e9, 2 * src.nbytes / copy / 1e9


def _time(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def build(framework, model):
    framework.reset_default_graph()
    graph = framework.get_default_graph()
    with graph.as_default():
        fetches, feed, flops, nbytes = model(framework, np.random.default_rng(0))
        if callable(fetches):  # the row's own step (Keras's train_on_batch)
            return fetches, flops, nbytes
        sess = framework.Session(graph=graph)
        sess.run(framework.global_variables_initializer())
    return (lambda: sess.run(fetches, feed)), flops, nbytes


WARMUP_SECONDS = 1.0
# Each contender's round times at least this many calls: with one call per round (what a 0.25 s
# budget gave the 40 ms steps), a row's ratio moved 5-10% from run to run on this noisy 2-core
# machine, one slow call of either framework deciding a median.
MIN_CALLS_PER_ROUND = 5


def measure(contenders, rounds, budget=0.25, round_warmup=0.1, per_round=None):
    """{name: median seconds per call} of the contenders timed in interleaved rounds; with a dict
    `per_round`, also {name: [seconds per call in each round]} into it."""
    for fn in contenders.values():
        warm_up(fn, WARMUP_SECONDS, calls=3)
    inner = {name: max(MIN_CALLS_PER_ROUND, int(budget / max(_time(fn), 1e-6) / rounds))
             for name, fn in contenders.items()}
    samples = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            if round_warmup > 0:
                warm_up(fn, round_warmup)
            t0 = time.perf_counter()
            for _ in range(inner[name]):
                fn()
            samples[name].append((time.perf_counter() - t0) / inner[name])
    if per_round is not None:
        per_round.update(samples)
    return {name: statistics.median(s) for name, s in samples.items()}


def round_ratio_spread(per_round):
    """The 25th and 75th percentiles of graphflow's time over TF1's in the same round: how far
    the ratio moves from round to round (the machine's noise)."""
    ratios = sorted(g / t for g, t in zip(per_round["gf"], per_round["tf1"]))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    return quartiles[0], quartiles[2]



def _without_dnnl(step):
    """The step with graphflow's optional oneDNN kernels switched off (its numpy kernels run)."""
    from graphflow.kernels.cpu.onednn import dnnl
    loaded = dnnl.library()

    def run():
        dnnl._library = False
        try:
            step()
        finally:
            dnnl._library = loaded
    return run


def _matmul_way(step, way):
    """The step with oneDNN's matrix products (`dnnl_matmul.py`) on their threads one way: "team",
    "blocks" (plans of their own), or "numpy" (the products through numpy, convolutions still
    through oneDNN)."""
    import collections

    from graphflow.kernels.cpu.onednn import dnnl_matmul
    plans, real = collections.OrderedDict(), dnnl_matmul.matmul

    def run():
        saved = dnnl_matmul._plans, dnnl_matmul.fixed_mode, dnnl_matmul.matmul
        dnnl_matmul._plans, dnnl_matmul.fixed_mode = plans, (lambda: way)
        dnnl_matmul.matmul = (lambda *a, **k: None) if way == "numpy" else real
        try:
            step()
        finally:
            dnnl_matmul._plans, dnnl_matmul.fixed_mode, dnnl_matmul.matmul = saved
    return run


MATMUL_WAYS = ("team", "blocks", "numpy")


def run_setting(name, rounds, rows=None, no_dnnl_column=False, matmul_columns=False,
                round_warmup=0.1):
    import graphflow as gf
    tf1 = tensorflow_v1()
    gflops, gbs = machine_limits()
    from graphflow.kernels.cpu.numba import jit_updates
    loops = "numba loops" if jit_updates.loops() is not None else "numpy only (numba not installed)"
    print(f"== setting: {name}   machine: sgemm {gflops:.1f} GFLOP/s (1024^2, numpy's BLAS as "
          f"loaded), copy {gbs:.1f} GB/s (16M float32); graphflow: {loops}")
    from graphflow.kernels.cpu.onednn import dnnl
    no_dnnl_column = no_dnnl_column and dnnl.library() is not None
    extra = f" {'no oneDNN':>11s} {'/TF1':>6s}" if no_dnnl_column else ""
    matmul_columns = matmul_columns and dnnl.library() is not None
    if matmul_columns:
        extra += "".join(f" {'mm ' + w:>11s}" for w in MATMUL_WAYS)
    spread = f" {'(rounds)':>11s}" if tf1 is not None else ""
    print(f"{'workload':48s} {'graphflow':>11s} {'TF1':>11s} {'gf/TF1':>7s}{spread}{extra}  "
          "achieved (graphflow)")
    for title, model in ROWS:
        if rows and not any(r.lower() in title.lower() for r in rows):
            continue
        gf_step, flops, nbytes = build(gf, model)
        contenders = {"gf": gf_step}
        if tf1 is not None:
            contenders["tf1"] = build(tf1, model)[0]
        if no_dnnl_column:  # the same graphflow session, in the same interleaved rounds
            contenders["gf_numpy"] = _without_dnnl(gf_step)
        if matmul_columns:  # graphflow's session with its products' threads one way each
            contenders.update({f"mm_{w}": _matmul_way(gf_step, w) for w in MATMUL_WAYS})
        per_round = {}
        t = measure(contenders, rounds, round_warmup=round_warmup, per_round=per_round)
        tf_text = f"{t['tf1'] * 1e3:9.3f}ms" if "tf1" in t else f"{'-':>11s}"
        ratio = f"{t['gf'] / t['tf1']:7.2f}" if "tf1" in t else f"{'-':>7s}"
        if "tf1" in t:
            ratio += " ({:.2f}-{:.2f})".format(*round_ratio_spread(per_round))
        achieved = (f"{flops / t['gf'] / 1e9:.1f} GFLOP/s" if flops else
                    f"{nbytes / t['gf'] / 1e9:.1f} GB/s" if nbytes else "")
        if no_dnnl_column:
            numpy_ratio = f"{t['gf_numpy'] / t['tf1']:6.2f}" if "tf1" in t else f"{'-':>6s}"
            ratio += f" {t['gf_numpy'] * 1e3:9.3f}ms {numpy_ratio}"
        if matmul_columns:
            ratio += "".join(f" {t['mm_' + w] * 1e3:9.3f}ms" for w in MATMUL_WAYS)
        print(f"{title:48s} {t['gf'] * 1e3:9.3f}ms {tf_text} {ratio}  {achieved}"
              f"{_threading_state()}", flush=True)


def _threading_state():
    """After a row: the way graphflow's threading chooser keeps for products (an OpenMP team or
    blocks on the intra-op pool; not the way of a probe that may be running)."""
    from graphflow.kernels.cpu.onednn import dnnl, dnnl_matmul
    if dnnl.library() is None:
        return ""
    way = dnnl_matmul.fixed_mode() or dnnl_matmul.CHOOSER.kept or dnnl_matmul.current_way()
    return f"  [{way}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setting", choices=list(SETTINGS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", nargs="+", metavar="TEXT",
                        help="run only the rows whose title contains one of these (case-insensitive)")
    parser.add_argument("--no-dnnl-column", action="store_true",
                        help="also time graphflow with its optional oneDNN kernels off, in the same rounds")
    parser.add_argument("--matmul-columns", action="store_true",
                        help="graphflow also with its oneDNN matrix products' threads one way "
                             "(OpenMP team, blocks on the intra-op pool) and with numpy's products")
    parser.add_argument("--round-warmup", type=float, default=0.1,
                        help="seconds of untimed steps before each contender's timed steps in a round")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_setting(args.setting, args.rounds, args.rows, args.no_dnnl_column, args.matmul_columns,
                    args.round_warmup)
        return
    for setting in [args.setting] if args.setting else list(SETTINGS):
        env = dict(os.environ, **SETTINGS[setting])
        hog = None
        if setting == "busy":
            hog = subprocess.Popen([sys.executable, "-c", BURN_ONE_CORE])
        try:
            subprocess.run([sys.executable, __file__, "--child", "--setting", setting,
                            "--rounds", str(args.rounds), "--round-warmup", str(args.round_warmup)]
                           + (["--rows", *args.rows] if args.rows else [])
                           + (["--no-dnnl-column"] if args.no_dnnl_column else [])
                           + (["--matmul-columns"] if args.matmul_columns else []),
                           env=env, check=True)
        finally:
            if hog is not None:
                hog.kill()
                hog.wait()


if __name__ == "__main__":
    main()
