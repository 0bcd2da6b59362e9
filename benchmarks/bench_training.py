"""One training step in graphflow against the same step written by hand in numpy (same process).

    python benchmarks/bench_training.py [--repeat 200] [--blas-threads 1]

1. The cs231n two-layer ReLU network (N=64, D_in=1000, H=100, D_out=10, loss = sum of squares),
   plain SGD (target: graphflow within 1.2x of hand-written numpy).
2. A 784-512-512-10 ReLU MLP, batch 256, mean softmax cross-entropy, Adam.
The numpy steps are what a careful numpy user writes (forward, backward, in-place updates). Runs
alternate between the contenders in rounds so drifting machine load hits both alike; medians of
many rounds after a warmup are printed with their ratio. With tensorflow installed, the same
steps in `tf.compat.v1` graph mode are measured too (skipped otherwise).
"""

import argparse
import statistics
import time

import numpy as np
from common import tensorflow_v1

import graphflow as gf


# ------------------------------------------------------------------ timing
def compare(contenders, repeat, inner, warmup=10):
    """{name: median seconds per call}, measured in interleaved rounds."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - t0) / inner)
    return {name: statistics.median(s) for name, s in samples.items()}


def _runners(tf, sess, fetches, feed):
    """(session, Session.run step, make_callable step or None for frameworks without it)."""
    run = lambda: sess.run(fetches, feed)  # noqa: E731
    if tf is not gf:
        return sess, run, None
    call = sess.make_callable(fetches, list(feed))
    values = list(feed.values())
    return sess, run, lambda: call(*values)


# ------------------------------------------------------------------ 1. cs231n net, SGD
def cs231n_data(dtype=np.float32):
    rng = np.random.default_rng(0)
    n, d_in, h, d_out = 64, 1000, 100, 10
    return [a.astype(dtype) for a in (rng.standard_normal((n, d_in)), rng.standard_normal((n, d_out)),
                                      rng.standard_normal((d_in, h)), rng.standard_normal((h, d_out)))]


def cs231n_numpy(lr=1e-6):
    x, y, *params = cs231n_data()
    lr = np.float32(lr)

    def step():
        w1, w2 = params
        h = x @ w1
        h_relu = np.maximum(h, 0)
        y_pred = h_relu @ w2
        diff = y_pred - y
        loss = np.square(diff).sum()
        grad_y_pred = 2.0 * diff
        grad_w2 = h_relu.T @ grad_y_pred
        grad_h = grad_y_pred @ w2.T
        grad_h[h < 0] = 0
        grad_w1 = x.T @ grad_h
        w1 -= lr * grad_w1  # in place: params keeps the updated arrays
        w2 -= lr * grad_w2
        return loss
    return step


def cs231n_graph(tf, lr=1e-6):
    x_v, y_v, w1_v, w2_v = cs231n_data()
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 1000])
        y = tf.placeholder(tf.float32, [None, 10])
        w1 = tf.Variable(w1_v)
        w2 = tf.Variable(w2_v)
        y_pred = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
        loss = tf.reduce_sum((y_pred - y) ** 2.0)
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    return _runners(tf, sess, [loss, train_op], {x: x_v, y: y_v})


# ------------------------------------------------------------------ 2. MLP, Adam
MLP_SIZES = (784, 512, 512, 10)
BATCH = 256


def mlp_data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((BATCH, MLP_SIZES[0])).astype(np.float32)
    labels = rng.integers(0, MLP_SIZES[-1], size=BATCH)
    weights = []
    for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        limit = np.sqrt(6 / (fan_in + fan_out))
        weights.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        weights.append(np.zeros(fan_out, np.float32))
    return x, labels, weights


def mlp_numpy(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    x, labels, params = mlp_data()
    one_hot = np.eye(MLP_SIZES[-1], dtype=np.float32)[labels]
    ms = [np.zeros_like(p) for p in params]
    vs = [np.zeros_like(p) for p in params]
    state = {"t": 0}

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h1 = np.maximum(x @ w1 + b1, 0)
        h2 = np.maximum(h1 @ w2 + b2, 0)
        logits = h2 @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total)[:, 0] - (shifted * one_hot).sum(axis=1))
        d_logits = (exp / total - one_hot) / BATCH
        d_h2 = d_logits @ w3.T
        d_h2[h2 <= 0] = 0
        d_h1 = d_h2 @ w2.T
        d_h1[h1 <= 0] = 0
        grads = [x.T @ d_h1, d_h1.sum(axis=0), h1.T @ d_h2, d_h2.sum(axis=0),
                 h2.T @ d_logits, d_logits.sum(axis=0)]
        state["t"] += 1
        t = state["t"]
        lr_t = np.float32(lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t))
        for p, g, m, v in zip(params, grads, ms, vs):
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            p -= lr_t * m / (np.sqrt(v) + eps)
        return loss
    return step


def mlp_graph(tf):
    x_v, labels_v, params = mlp_data()
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, MLP_SIZES[0]])
        labels = tf.placeholder(tf.int64, [None])
        variables = [tf.Variable(p) for p in params]
        h = x
        for i in range(0, len(variables), 2):
            h = tf.nn.bias_add(tf.matmul(h, variables[i]), variables[i + 1])
            if i + 2 < len(variables):
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                             logits=h))
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    return _runners(tf, sess, [loss, train_op], {x: x_v, labels: labels_v})


# ------------------------------------------------------------------ driver

def check_same_first_steps(numpy_step, graph_step, what, rtol):
    """The contenders compute the same thing: compare the losses of their first three steps."""
    for _ in range(3):
        a = float(numpy_step())
        b = float(graph_step()[0])
        if not np.isclose(a, b, rtol=rtol):
            raise AssertionError(f"{what}: numpy loss {a} differs from graphflow loss {b}")


def run_case(title, numpy_factory, graph_factory, repeat, inner, rtol):
    tf1 = tensorflow_v1()
    contenders = {"numpy by hand": numpy_factory()}
    sess, graph_step, callable_step = graph_factory(gf)
    check_same_first_steps(numpy_factory(), graph_factory(gf)[1], title, rtol)
    contenders["graphflow Session.run"] = graph_step
    contenders["graphflow make_callable"] = callable_step
    if tf1 is not None:
        contenders["tf.compat.v1 Session.run"] = graph_factory(tf1)[1]
    times = compare(contenders, repeat, inner)
    base = times["numpy by hand"]
    print(f"\n{title}")
    for name, t in times.items():
        print(f"  {name:<26} {t * 1e3:9.3f} ms   {t / base:5.2f}x")
    if tf1 is None:
        print("  (tensorflow not installed: tf.compat.v1 skipped)")
    sess.close()
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="rounds per contender")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads for every contender (default 1: repeatable figures; "
                        "multi-threaded BLAS on these small matrices swings wildly when the "
                        "machine is busy). 0 keeps the library default.")
    args = parser.parse_args(argv)
    limit = None
    if args.blas_threads:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(limits=args.blas_threads, user_api="blas")
    try:
        sgd = run_case("cs231n two-layer net (64x1000 -> 100 -> 10), SGD step, float32",
                       cs231n_numpy, cs231n_graph, args.repeat, 5, rtol=1e-4)
        adam = run_case(f"MLP {'-'.join(map(str, MLP_SIZES))}, batch {BATCH}, softmax xent, "
                        "Adam step, float32", mlp_numpy, mlp_graph, max(args.repeat // 4, 20), 2,
                        rtol=1e-4)
    finally:
        if limit is not None:
            limit.unregister()
    ratio = sgd["graphflow Session.run"] / sgd["numpy by hand"]
    print(f"\ncs231n SGD step: graphflow / numpy = {ratio:.2f}x (target <= 1.2x)")
    return sgd, adam


if __name__ == "__main__":
    main()
