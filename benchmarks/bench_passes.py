"""What the graph optimization passes buy, measured in one run.

    python benchmarks/bench_passes.py [--repeat 30] [--sizes 1048576,4194304] [--blas-threads 1]

1. Elementwise fusion: `tanh(x*1.5 + 0.25)*0.5 + relu(x) - exp(-x*x)` over float32 vectors (1M
   elements by default): hand-written numpy vs graphflow unoptimized (one kernel per op) vs
   graphflow with the passes (one FusedElementwise op, evaluated in cache-sized chunks), on one
   thread (`ConfigProto(intra_op_parallelism_threads=1)`) and on the default intra-op thread count.
2. Training steps with and without the passes: the 784-512-512-10 ReLU MLP with Adam (batch 256)
   and the same net with a plain SGD step built from tf.gradients: ops in the plan before/after,
   compile time of the plan, and the median step time.
3. Memory: for each workload, the memory plan's planned peak (plan-owned buffers, from static
   shapes) against the peak traced by tracemalloc during one run (numpy reports its allocations to
   tracemalloc; this also counts kernel temporaries, which the plan does not see).

Timings alternate between contenders in rounds, so drifting machine load hits all alike; medians.
"""

import argparse
import statistics
import time
import tracemalloc

import numpy as np

import graphflow as tf


def compare(contenders, repeat, warmup=3):
    """{name: median seconds per call}, measured in interleaved rounds."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(s) for name, s in samples.items()}


def traced_peak(fn):
    """Bytes allocated at the peak of one call, above what was allocated before it."""
    fn()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def mib(n):
    return "-" if n is None else f"{n / 2**20:8.2f} MiB"


def plan_of(sess):
    return list(sess._plans.values())[-1]


# ------------------------------------------------------------------ 1. the fused expression
def expression(x):
    return tf.tanh(x * 1.5 + 0.25) * 0.5 + tf.nn.relu(x) - tf.exp(-x * x)


def numpy_expression(x):
    return np.tanh(x * 1.5 + 0.25) * 0.5 + np.maximum(x, 0) - np.exp(-x * x)


def bench_expression(n, repeat):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [n], name="x")
        y = expression(x)
    xv = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    unfused = tf.Session(graph=graph, optimize=False)
    fused_1 = tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=1))
    fused = tf.Session(graph=graph)
    threads = tf.config.default_intra_op_threads()
    run_unfused = unfused.make_callable(y, [x])
    run_fused_1 = fused_1.make_callable(y, [x])
    run_fused = fused.make_callable(y, [x])
    np.testing.assert_allclose(run_fused(xv), numpy_expression(xv), rtol=2e-6, atol=1e-6)
    np.testing.assert_array_equal(run_fused(xv), run_fused_1(xv))  # threads change no bit
    times = compare({"numpy": lambda: numpy_expression(xv), "unfused": lambda: run_unfused(xv),
                     "fused/1": lambda: run_fused_1(xv), f"fused/{threads}": lambda: run_fused(xv)},
                    repeat)
    print(f"\n1. tanh(x*1.5+0.25)*0.5 + relu(x) - exp(-x*x), {n:,} float32 elements "
          f"(median of {repeat}; fused/N: N intra-op threads)")
    for name, t in times.items():
        print(f"   {name:8s} {t * 1e3:8.3f} ms   numpy/this = {times['numpy'] / t:5.2f}x")
    print(f"   fused/1 vs unfused graphflow: {times['unfused'] / times['fused/1']:.2f}x faster; "
          f"fused/{threads} vs fused/1: {times['fused/1'] / times[f'fused/{threads}']:.2f}x")
    steps = (plan_of(unfused).num_steps, plan_of(fused).num_steps)
    print(f"   plan steps: {steps[0]} unfused -> {steps[1]} fused")
    memory_rows("   ", [("numpy", None, lambda: numpy_expression(xv)),
                        ("unfused", plan_of(unfused), lambda: run_unfused(xv)),
                        ("fused", plan_of(fused), lambda: run_fused(xv))], [x, y])
    return times


def memory_rows(indent, rows, preserve):
    """rows: (name, plan or None, run function); preserve: the fetched and fed tensors."""
    print(f"{indent}memory: planned peak of the plan's buffers  vs  peak traced during one run")
    for name, plan, fn in rows:
        planned = "" if plan is None else f"planned {mib(planned_peak(plan, preserve))}"
        print(f"{indent}  {name:12s} {planned:20s}   traced {mib(traced_peak(fn))}")


def planned_peak(plan, preserve):
    """The plan's memory plan's peak (every plan has one, optimized or not)."""
    return plan.memory_plan.peak_bytes


# ------------------------------------------------------------------ 2. training steps
def mlp(batch, optimizer):
    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [batch, 784], name="x")
    labels = tf.placeholder(tf.float32, [batch, 10], name="labels")
    h = x
    sizes = [784, 512, 512, 10]
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        w = tf.Variable(rng.normal(0, np.sqrt(2 / a), (a, b)).astype(np.float32), name=f"w{i}")
        h = tf.matmul(h, w) + tf.Variable(np.zeros(b, np.float32), name=f"b{i}")
        if i < 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=h))
    if optimizer == "adam":
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    else:
        params = tf.trainable_variables()
        grads = tf.gradients(loss, params)
        train = tf.group(*[tf.assign_sub(p, 0.1 * g) for p, g in zip(params, grads)])
    return x, labels, loss, train


def bench_training(optimizer, batch, repeat):
    graph = tf.Graph()
    with graph.as_default():
        x, labels, loss, train = mlp(batch, optimizer)
        init = tf.global_variables_initializer()
        plain_graph, _ = tf.optimize([loss, train], [x, labels], passes=[])
        _, report = tf.optimize([loss, train], [x, labels])
    rng = np.random.default_rng(1)
    xs = rng.uniform(0, 1, (batch, 784)).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    steps, sessions, compile_s = {}, {}, {}
    for name, optimize in (("unoptimized", False), ("optimized", True)):
        sess = tf.Session(graph=graph, optimize=optimize)
        sess.run(init)
        t0 = time.perf_counter()
        call = sess.make_callable([loss, train], [x, labels])
        compile_s[name] = time.perf_counter() - t0
        steps[name] = (lambda c: lambda: c(xs, ys))(call)
        sessions[name] = sess
    times = compare(steps, repeat)
    title = "Adam" if optimizer == "adam" else "SGD from tf.gradients"
    print(f"\n2. 784-512-512-10 MLP, {title}, batch {batch} (median of {repeat})")
    print(f"   ops in the plan's graph: {plain_graph.num_ops()} -> {report.ops_after} "
          f"({1 - report.ops_after / plain_graph.num_ops():.0%} fewer)")
    for p in report.passes:
        print(f"     {p.name:17s} {p.ops_before:4d} -> {p.ops_after:4d}  rewrites {p.rewrites:3d}  "
              f"{p.seconds * 1e3:7.2f} ms")
    for name, t in times.items():
        plan = plan_of(sessions[name])
        print(f"   {name:12s} step {t * 1e3:8.3f} ms   {plan.num_steps:3d} steps   plan compile "
              f"{compile_s[name] * 1e3:7.1f} ms   in-place steps {plan.inplace_steps}")
    print(f"   optimized vs unoptimized: {times['unoptimized'] / times['optimized']:.2f}x")
    memory_rows("   ", [(name, plan_of(sessions[name]), steps[name]) for name in steps],
                [x, labels, loss])
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--sizes", default="1048576", help="comma-separated vector lengths")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: multi-threaded BLAS on these matrices swings "
                        "wildly when the machine is busy); 0 keeps the library default")
    args = parser.parse_args()
    limit = None
    if args.blas_threads:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(limits=args.blas_threads, user_api="blas")
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            bench_expression(n, args.repeat * 3)
        bench_training("adam", args.batch, args.repeat)
        bench_training("sgd", args.batch, args.repeat)
    finally:
        if limit is not None:
            limit.unregister()


if __name__ == "__main__":
    main()
