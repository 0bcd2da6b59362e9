"""Eager execution: graphflow's per-op dispatch and an eager training step against PyTorch eager
and TensorFlow 2's eager mode, in one process; a traced (`tf.function`) step against the same
graph built by hand and run with `Session.run`.

    python benchmarks/bench_eager.py [--rounds 5]

Run it with a Python that has torch and tensorflow to get their columns (e.g. a virtualenv with
both and `PYTHONPATH` naming this checkout); a framework that is not installed is skipped with the
reason. Rows:
  add 10 float32     one `a + b` of two 10-element float32 tensors (per op, microseconds)
  MLP step eager     one training step of a 784-128-10 MLP on a batch of 64 (GradientTape +
                     SGD; torch: backward + optim.SGD), milliseconds
  MLP step traced    graphflow's `tf.function` step and the same step as a hand-built graph run
                     by `Session.run` (and TF's `tf.function`), milliseconds
Each number is the median of `--rounds` rounds, the contenders interleaved round by round.
"""

import argparse
import statistics
import time

import numpy as np

import graphflow as gf

BATCH, D_IN, HIDDEN, D_OUT, LR = 64, 784, 128, 10, 0.01


def per_call(fn, inner):
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, D_IN)).astype(np.float32)
    y = rng.integers(0, D_OUT, BATCH).astype(np.int32)
    w1 = (rng.standard_normal((D_IN, HIDDEN)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, D_OUT)) * 0.05).astype(np.float32)
    return x, y, w1, w2


# ------------------------------------------------------------------ graphflow
def graphflow_rows():
    gf.enable_eager_execution()
    a = gf.constant(np.ones(10, np.float32))
    b = gf.constant(np.ones(10, np.float32))
    x, y, w1, w2 = _data()
    x, y = gf.constant(x), gf.constant(y)
    v1, v2 = gf.Variable(w1), gf.Variable(w2)
    opt = gf.train.GradientDescentOptimizer(LR)

    def loss_of(bx, by):
        logits = gf.matmul(gf.nn.relu(gf.matmul(bx, v1)), v2)
        return gf.reduce_mean(gf.nn.sparse_softmax_cross_entropy_with_logits(labels=by,
                                                                             logits=logits))

    def step():
        with gf.GradientTape() as tape:
            loss = loss_of(x, y)
        opt.apply_gradients(zip(tape.gradient(loss, [v1, v2]), [v1, v2]))
        return loss

    traced = gf.function(step)

    graph = gf.Graph()
    with graph.as_default():
        px = gf.placeholder(gf.float32, [BATCH, D_IN])
        py = gf.placeholder(gf.int32, [BATCH])
        g1, g2 = gf.Variable(w1), gf.Variable(w2)
        logits = gf.matmul(gf.nn.relu(gf.matmul(px, g1)), g2)
        loss = gf.reduce_mean(gf.nn.sparse_softmax_cross_entropy_with_logits(labels=py,
                                                                             logits=logits))
        train = gf.train.GradientDescentOptimizer(LR).minimize(loss)
        sess = gf.Session(graph=graph)
        sess.run(gf.global_variables_initializer())
    feed = {px: x.numpy(), py: y.numpy()}
    return {
        "add 10 float32": (lambda: a + b, 2000, 1e6),
        "MLP step eager": (step, 20, 1e3),
        "MLP step traced": (traced, 50, 1e3),
        "MLP step graph (Session.run)": (lambda: sess.run([loss, train], feed), 50, 1e3),
    }


# ------------------------------------------------------------------ PyTorch
def torch_rows(threads):
    import torch
    torch.set_num_threads(threads)
    a, b = torch.ones(10), torch.ones(10)
    x, y, w1, w2 = _data()
    x, y = torch.from_numpy(x), torch.from_numpy(y).long()
    p1 = torch.nn.Parameter(torch.from_numpy(w1.copy()))
    p2 = torch.nn.Parameter(torch.from_numpy(w2.copy()))
    opt = torch.optim.SGD([p1, p2], lr=LR)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(torch.relu(x @ p1) @ p2, y)
        loss.backward()
        opt.step()
        return loss

    return {"add 10 float32": (lambda: a + b, 2000, 1e6), "MLP step eager": (step, 20, 1e3)}


# ------------------------------------------------------------------ TensorFlow 2 (eager)
def tensorflow_rows():
    import tensorflow as tf2
    tf = tf2.compat.v1
    a, b = tf.constant(np.ones(10, np.float32)), tf.constant(np.ones(10, np.float32))
    x, y, w1, w2 = _data()
    v1, v2 = tf.Variable(w1), tf.Variable(w2)
    opt = tf.train.GradientDescentOptimizer(LR)

    def step():
        with tf.GradientTape() as tape:
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, v1)), v2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                                 logits=logits))
        opt.apply_gradients(zip(tape.gradient(loss, [v1, v2]), [v1, v2]))
        return loss

    return {"add 10 float32": (lambda: a + b, 2000, 1e6), "MLP step eager": (step, 20, 1e3),
            "MLP step traced": (tf2.function(step), 50, 1e3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="PyTorch's intra-op threads (its OpenMP threads spin while they wait: "
                             "on a busy machine two of them took 31 ms for the MLP step that one "
                             "thread takes in 2 ms)")
    args = parser.parse_args()
    contenders = {"graphflow": graphflow_rows()}
    skipped = {}
    for name, make in (("PyTorch", lambda: torch_rows(args.torch_threads)),
                       ("TF 2 eager", tensorflow_rows)):
        try:
            contenders[name] = make()
        except ImportError as exc:
            skipped[name] = f"not installed ({exc})"
    times = {(c, r): [] for c, rows in contenders.items() for r in rows}
    for rows in contenders.values():  # warm up: kernels built, traces made, caches filled
        for fn, inner, _ in rows.values():
            per_call(fn, max(3, inner // 10))
    for _ in range(args.rounds):
        for c, rows in contenders.items():
            for r, (fn, inner, scale) in rows.items():
                times[(c, r)].append(per_call(fn, inner) * scale)
    names = list(contenders)
    row_names = list(contenders["graphflow"])
    print("| row | unit | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for r in row_names:
        unit = "us/op" if r.startswith("add") else "ms/step"
        cells = []
        for c in names:
            samples = times.get((c, r))
            cells.append(f"{statistics.median(samples):.2f}" if samples else "-")
        print(f"| {r} | {unit} | " + " | ".join(cells) + " |")
    for name, why in skipped.items():
        print(f"{name}: skipped, {why}")


if __name__ == "__main__":
    main()
