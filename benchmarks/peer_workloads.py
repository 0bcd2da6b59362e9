"""The workloads `bench_peers.py` times, each written once per framework a user would pick.

A workload is a `Workload(title, builders)`: `builders[framework](threads)` returns a callable
that runs one step and waits for its result, or raises `Unavailable(reason)`. graphflow and TF1
share one function written against the TF1 API (`tf` is either); PyTorch runs eagerly, JAX runs
`jax.jit` of the whole step (the gradient and the optimizer's update inside), onnxruntime runs
graphflow's own ONNX export of the inference graphs. Shapes, layers and optimizers are the same
in every framework; initial values are drawn per framework (a speed benchmark: the numbers need
not agree, the work must).
"""

import dataclasses
import os
import tempfile
from typing import Callable, Dict

import numpy as np
from peer_frameworks import graphflow_tf, module, tf1_tf
from peer_workloads_eager import BATCH, HIDDEN, SEQ, VOCAB, jax_builders, torch_builders


@dataclasses.dataclass
class Workload:
    title: str
    builders: Dict[str, Callable]
    kind: str = "step"  # "step": time a call; "build": time building a graph (one call each)


def _session(tf, threads, graph):
    config = tf.ConfigProto(intra_op_parallelism_threads=threads or 0,
                            inter_op_parallelism_threads=threads or 0)
    return tf.Session(graph=graph, config=config)


def tf1_api_step(model):
    """Builders for graphflow and TF1 of `model(tf, rng) -> (fetches, feed)`."""
    def builder(get_tf):
        def build(threads):
            tf = get_tf()
            graph = tf.Graph()
            with graph.as_default():
                fetches, feed = model(tf, np.random.default_rng(0))
                sess = _session(tf, threads, graph)
                sess.run(tf.global_variables_initializer())
            return lambda: sess.run(fetches, feed)
        return build
    return {"graphflow": builder(graphflow_tf), "tf1": builder(tf1_tf)}


def _onehot(rng, n, classes=10):
    return np.eye(classes, dtype=np.float32)[rng.integers(0, classes, n)]


# ----------------------------------------------------------------- TF1-API models (graphflow, TF1)
def _dense(tf, x, fan_in, fan_out, rng, act=True):
    w = tf.Variable((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(np.float32))
    b = tf.Variable(np.zeros(fan_out, np.float32))
    y = tf.matmul(x, w) + b
    return tf.nn.relu(y) if act else y


def _xent(tf, logits, labels):
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def _conv(tf, x, k, c_in, c_out, rng):
    w = tf.Variable((rng.standard_normal((k, k, c_in, c_out)) * np.sqrt(2 / (k * k * c_in)))
                    .astype(np.float32))
    b = tf.Variable(np.zeros(c_out, np.float32))
    return tf.nn.relu(tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME") + b)


def _pool(tf, x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")


def cs231n_tf(tf, rng, n=64, d_in=1000, h=100, d_out=10):
    x = tf.placeholder(tf.float32, [n, d_in])
    y = tf.placeholder(tf.float32, [n, d_out])
    w1 = tf.Variable(rng.standard_normal((d_in, h)).astype(np.float32))
    w2 = tf.Variable(rng.standard_normal((h, d_out)).astype(np.float32))
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2) - y))
    train = tf.train.GradientDescentOptimizer(1e-6).minimize(loss)
    return [loss, train], {x: rng.standard_normal((n, d_in)).astype(np.float32),
                           y: rng.standard_normal((n, d_out)).astype(np.float32)}


def mlp_tf(tf, rng, n=256):
    x = tf.placeholder(tf.float32, [n, 784])
    y = tf.placeholder(tf.float32, [n, 10])
    h = _dense(tf, _dense(tf, x, 784, 512, rng), 512, 512, rng)
    loss = _xent(tf, _dense(tf, h, 512, 10, rng, act=False), y)
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return [loss, train], {x: rng.standard_normal((n, 784)).astype(np.float32), y: _onehot(rng, n)}


def mnist_cnn_tf(tf, rng, n=64):
    x = tf.placeholder(tf.float32, [n, 28, 28, 1])
    y = tf.placeholder(tf.float32, [n, 10])
    h = _pool(tf, _conv(tf, x, 5, 1, 16, rng))
    logits = _dense(tf, tf.reshape(h, [n, 14 * 14 * 16]), 14 * 14 * 16, 10, rng, act=False)
    train = tf.train.AdamOptimizer(1e-3).minimize(_xent(tf, logits, y))
    return [train], {x: rng.standard_normal((n, 28, 28, 1)).astype(np.float32), y: _onehot(rng, n)}


def cifar_cnn_tf(tf, rng, n=64):
    x = tf.placeholder(tf.float32, [n, 32, 32, 3])
    y = tf.placeholder(tf.float32, [n, 10])
    h = _pool(tf, _conv(tf, _conv(tf, x, 3, 3, 32, rng), 3, 32, 32, rng))
    h = _pool(tf, _conv(tf, h, 3, 32, 64, rng))
    h = _dense(tf, tf.reshape(h, [n, 8 * 8 * 64]), 8 * 8 * 64, 512, rng)
    logits = _dense(tf, h, 512, 10, rng, act=False)
    train = tf.train.AdamOptimizer(1e-3).minimize(_xent(tf, logits, y))
    return [train], {x: rng.standard_normal((n, 32, 32, 3)).astype(np.float32), y: _onehot(rng, n)}


def _cells(tf):
    """TF1's rnn cells: graphflow's own, TensorFlow's from its bundled legacy Keras."""
    if tf.__name__.startswith("graphflow"):
        return tf.nn.rnn_cell
    from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl
    return rnn_cell_impl


def char_lstm_tf(tf, rng):
    ids = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1)).astype(np.int32)
    inputs = tf.placeholder(tf.int32, [BATCH, SEQ])
    targets = tf.placeholder(tf.int32, [BATCH, SEQ])
    outputs, _ = tf.nn.dynamic_rnn(_cells(tf).BasicLSTMCell(HIDDEN), tf.one_hot(inputs, VOCAB),
                                   dtype=tf.float32)
    w = tf.Variable((rng.standard_normal((HIDDEN, VOCAB)) * 0.1).astype(np.float32))
    b = tf.Variable(np.zeros(VOCAB, np.float32))
    logits = tf.matmul(tf.reshape(outputs, [-1, HIDDEN]), w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.reshape(targets, [-1]), logits=logits))
    train = tf.train.AdamOptimizer(0.002).minimize(loss)
    return [loss, train], {inputs: ids[:, :-1], targets: ids[:, 1:]}


def elementwise_tf(size):
    def model(tf, rng):
        x = tf.placeholder(tf.float32, [size])
        y = tf.tanh(x * 2.0 + 1.0) * tf.sigmoid(x) - x * x
        return [y], {x: rng.standard_normal(size).astype(np.float32)}
    return model


def deep_mnist_inference_tf(tf, rng, batch):
    """TF1's "Deep MNIST" classifier at inference: two 5x5 convolutions with pooling, a 1024-unit
    dense layer ([batch, 3136] @ [3136, 1024]) and the 10 logits' softmax."""
    x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="x")
    h = _pool(tf, _conv(tf, x, 5, 1, 32, rng))
    h = _pool(tf, _conv(tf, h, 5, 32, 64, rng))
    h = _dense(tf, tf.reshape(h, [-1, 7 * 7 * 64]), 7 * 7 * 64, 1024, rng)
    probs = tf.nn.softmax(_dense(tf, h, 1024, 10, rng, act=False), name="probs")
    return x, probs, rng.standard_normal((batch, 28, 28, 1)).astype(np.float32)


def inference_tf(batch):
    def model(tf, rng):
        x, probs, value = deep_mnist_inference_tf(tf, rng, batch)
        return [probs], {x: value}
    return model


def trivial_chain_tf(ops):
    """`ops` scalar-sized adds in a chain: the fixed cost of a `run` and of each op in it."""
    def model(tf, rng):
        x = tf.placeholder(tf.float32, [4])
        h = x
        for _ in range(ops):
            h = h + 1.0
        return [h], {x: np.ones(4, np.float32)}
    return model


def long_chain_tf(links):
    """A chain of 3*`links` elementwise ops and its gradient (about 10k ops for 2,500 links)."""
    def model(tf, rng):
        x = tf.placeholder(tf.float32, [64])
        h = x
        for _ in range(links):
            h = tf.tanh(h * 1.01 + 0.01)
        loss = tf.reduce_sum(h)
        return [loss, tf.gradients(loss, x)[0]], {x: rng.standard_normal(64).astype(np.float32)}
    return model


def deep_mlp_build(layers):
    """Builders timing the build of a `layers`-deep tiny MLP and Adam's `minimize` over its
    `layers` variables (one call is one whole build)."""
    def builder(get_tf):
        def build(threads):
            tf = get_tf()

            def once():
                graph = tf.Graph()
                with graph.as_default():
                    h = tf.placeholder(tf.float32, [None, 4])
                    for i in range(layers):
                        h = tf.tanh(tf.matmul(h, tf.Variable(tf.ones([4, 4]) * 0.1, name=f"w{i}")))
                    tf.train.AdamOptimizer(0.01).minimize(tf.reduce_sum(h))
            return once
        return build
    return {"graphflow": builder(graphflow_tf), "tf1": builder(tf1_tf)}


# ------------------------------------------------------------------------- onnxruntime (inference)
def onnxruntime_inference(batch):
    def build(threads):
        ort = module("onnxruntime")
        import graphflow as gf
        from graphflow.interop import onnx as gf_onnx
        graph = gf.Graph()
        with graph.as_default():
            x, probs, value = deep_mnist_inference_tf(gf, np.random.default_rng(0), batch)
            sess = gf.Session(graph=graph)
            sess.run(gf.global_variables_initializer())
            path = os.path.join(tempfile.mkdtemp(prefix="bench_peers_"), "deep_mnist.onnx")
            gf_onnx.export({"probs": probs}, path, inputs={"x": x}, session=sess)
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = threads
        runner = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        return lambda: runner.run(None, {"x": value})
    return build


def workloads(chain_links=2500, build_layers=10000):
    """The rows of bench_peers.py, in its table's order."""
    rows = [
        ("cs231n 2-layer SGD step (64x1000x100x10)", tf1_api_step(cs231n_tf), "cs231n"),
        ("MLP 784-512-512-10 Adam, batch 256", tf1_api_step(mlp_tf), "mlp"),
        ("MNIST CNN Adam, batch 64", tf1_api_step(mnist_cnn_tf), "mnist_cnn"),
        ("CIFAR-shaped CNN Adam, batch 64", tf1_api_step(cifar_cnn_tf), "cifar_cnn"),
        (f"char-LSTM h{HIDDEN} seq{SEQ} b{BATCH} Adam", tf1_api_step(char_lstm_tf), "char_lstm"),
        ("elementwise chain 1M", tf1_api_step(elementwise_tf(1 << 20)), "elementwise_1m"),
        ("elementwise chain 16M", tf1_api_step(elementwise_tf(1 << 24)), "elementwise_16m"),
        ("Deep MNIST inference, batch 1", tf1_api_step(inference_tf(1)), "infer_1"),
        ("Deep MNIST inference, batch 256", tf1_api_step(inference_tf(256)), "infer_256"),
        ("run: 1 trivial op", tf1_api_step(trivial_chain_tf(1)), "trivial_1"),
        ("run: 10 trivial ops", tf1_api_step(trivial_chain_tf(10)), "trivial_10"),
        ("run: 100 trivial ops", tf1_api_step(trivial_chain_tf(100)), "trivial_100"),
        (f"{3 * chain_links}-op chain + gradient, steady run", tf1_api_step(long_chain_tf(chain_links)),
         "long_chain"),
    ]
    out = []
    for title, builders, key in rows:
        builders = dict(builders)
        for framework, table in (("torch", torch_builders), ("jax", jax_builders)):
            if key in table:
                builders[framework] = table[key](chain_links) if key == "long_chain" else table[key]
        if key.startswith("infer_"):
            builders["onnxruntime"] = onnxruntime_inference(int(key.split("_")[1]))
        out.append(Workload(title, builders))
    out.append(Workload(f"build {build_layers}-layer MLP + Adam minimize", deep_mlp_build(build_layers),
                        kind="build"))
    return out
