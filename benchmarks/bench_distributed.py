"""Distributed training figures: allreduce throughput and the MLP step with 1 and 2 processes.

    python benchmarks/bench_distributed.py            # launches mpirun -np 1 and -np 2 itself
    python benchmarks/bench_distributed.py --quick    # fewer sizes and repetitions
    python benchmarks/bench_distributed.py --sizes 1,4 --repeat 41 --allreduce-only
                                                      # chosen sizes (MB), repetitions, no MLP

1. Allreduce of float32 buffers from 1 MB to 256 MB, 2 processes, algorithm bandwidth (bytes /
   time), against mpi4py's own blocking `Allreduce` (and its `Iallreduce` tested until complete,
   which graphflow's kernels use) on numpy arrays with a reused output buffer, measured
   interleaved in the same processes (one repetition of each in turn, medians; so `Iallreduce`
   runs the algorithm graphflow asks Open MPI for, ring for 2 processes, see mpi_runtime.py):
   - fed: a fed placeholder -> `hvd.allreduce` -> fetched (Session.run's feed and fetch included);
   - variable: a variable -> allreduce -> assigned to a variable (a training step's pattern);
   - fused: four variables -> DistributedOptimizer's fused start/wait ops -> assigned back.
2. The 784-512-512-10 Adam MLP step at a global batch of 256: one process (batch 256) against two
   (128 each, gradients averaged by DistributedOptimizer) with the reduction overlapped with the
   backward pass and not (interleaved in the same processes), median step times.
3. A projection for N machines from the fastest measured compute time and allreduce bandwidth with
   the ring allreduce cost model (each process sends and receives 2 (N-1)/N of the gradient bytes),
   stated as a model, not a measurement.
On a machine with few cores the two processes share them, so (2) shows the overhead of the
distributed step, not a speedup.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES_MB = [1, 4, 16, 64, 256]
QUICK_SIZES_MB = [1, 16, 64]
MLP_BUCKET_BYTES = 1 << 20  # the overlapped variant's bucket size (gradients: 2.6 MB)


def _interleaved(fns, repeat, barrier, waited=None, best=None):
    """Median seconds of each fn, timing one call of each in turn `repeat` times; with `waited`
    (a dict), also the median seconds per call spent waiting for split allreduces; with `best`,
    the fastest call of each."""
    from graphflow.kernels.cpu.reference import mpi_runtime

    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    waits = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            barrier()
            w0 = mpi_runtime.wait_stats["seconds"]
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            waits[name].append(mpi_runtime.wait_stats["seconds"] - w0)
    if waited is not None:
        waited.update((name, statistics.median(w)) for name, w in waits.items())
    if best is not None:
        best.update((name, min(t)) for name, t in times.items())
    return {name: statistics.median(t) for name, t in times.items()}


def _poll(request):
    while not request.Test():
        pass


def _allreduce_rows(tf, hvd, comm, MPI, sizes, repeat=None):
    from graphflow.ops import collective_ops

    rows = []
    for mb in sizes:
        n = mb * (1 << 20) // 4
        send = np.ones(n, np.float32)
        recv = np.empty_like(send)
        tf.reset_default_graph()
        x = tf.placeholder(tf.float32, [n])
        fed = hvd.allreduce(x, average=False)
        v = tf.Variable(np.ones(n, np.float32))
        out = tf.Variable(np.zeros(n, np.float32))
        assign = tf.assign(out, hvd.allreduce(v.value(), average=True)).op
        parts = [tf.Variable(np.ones(n // 4, np.float32)) for _ in range(4)]
        reduced = collective_ops.fused_allreduce([p.value() for p in parts], average=True)
        fused = tf.group(*[tf.assign(p, r) for p, r in zip(parts, reduced)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            run_fed = sess.make_callable(fed, [x])
            fns = {"raw": lambda s=send, r=recv: comm.Allreduce(s, r, op=MPI.SUM),
                   "raw_nb": lambda s=send, r=recv: _poll(comm.Iallreduce(s, r, op=MPI.SUM)),
                   "fed": lambda f=run_fed, s=send: f(s),
                   "variable": sess.make_callable(assign),
                   "fused": sess.make_callable(fused)}
            fastest = {}
            med = _interleaved(fns, repeat or (7 if mb >= 64 else 21), comm.Barrier,
                               best=fastest)
        rows.append({"mb": mb, **{k: mb / 1024 / t for k, t in med.items()},
                     **{"best_" + k: mb / 1024 / t for k, t in fastest.items()}})
    return rows


def _mlp(tf, hvd, procs, overlap, bucket_bytes=MLP_BUCKET_BYTES):
    rng = np.random.default_rng(hvd.rank())
    batch = 256 // procs
    xs = rng.standard_normal((batch, 784)).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, 784])
        y = tf.placeholder(tf.float32, [batch, 10])
        h = tf.layers.dense(tf.layers.dense(x, 512, tf.nn.relu), 512, tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        opt = tf.train.AdamOptimizer(1e-3)
        if procs > 1:
            opt = hvd.DistributedOptimizer(opt, overlap=overlap,
                                           fusion_threshold_bytes=bucket_bytes if overlap
                                           else hvd.DEFAULT_FUSION_THRESHOLD_BYTES)
        step = opt.minimize(loss)
        grads_bytes = sum(v.shape.num_elements() * 4 for v in tf.trainable_variables())
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
        run = sess.make_callable(step, [x, y])
    return (lambda: run(xs, ys)), grads_bytes


def child(procs, quick, sizes=None, repeat=None, mlp=True):
    import graphflow as tf
    from graphflow import horovod as hvd
    from graphflow.kernels.cpu.reference import mpi_runtime

    hvd.init()
    comm = mpi_runtime.comm()
    MPI = mpi_runtime.mpi()
    result = {"procs": procs, "allreduce": []}
    if procs > 1:
        result["allreduce"] = _allreduce_rows(
            tf, hvd, comm, MPI, sizes or (QUICK_SIZES_MB if quick else SIZES_MB), repeat)
    if not mlp:
        if hvd.rank() == 0:
            print("RESULT " + json.dumps(result), flush=True)
        return
    if procs == 1:
        step, result["gradient_bytes"] = _mlp(tf, hvd, 1, False)
        steps = {"single": step}
    else:
        on, result["gradient_bytes"] = _mlp(tf, hvd, procs, True)
        off, _ = _mlp(tf, hvd, procs, False)
        steps = {"overlap": on, "no_overlap": off}
    result["waited"], result["mlp_best"] = {}, {}
    result["mlp"] = _interleaved(steps, 15 if quick else 40, comm.Barrier, result["waited"],
                                 result["mlp_best"])
    if hvd.rank() == 0:
        print("RESULT " + json.dumps(result), flush=True)


def _threads(procs):
    """BLAS threads per process: the machine's cores shared among the processes."""
    return str(max(1, (os.cpu_count() or 1) // procs))


def launch(procs, args):
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, _threads(procs))
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = ["mpirun", "-np", str(procs), sys.executable, __file__, "--child", str(procs)]
    out = subprocess.run(cmd + args, capture_output=True, text=True, env=env, check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _option(name, convert):
    return convert(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else None


def main():
    quick = "--quick" in sys.argv
    sizes = _option("--sizes", lambda text: [int(mb) for mb in text.split(",")])
    repeat = _option("--repeat", int)
    mlp = "--allreduce-only" not in sys.argv
    if "--child" in sys.argv:
        child(_option("--child", int), quick, sizes, repeat, mlp)
        return
    args = [a for a in sys.argv[1:]]
    two = launch(2, args)
    one = launch(1, args) if mlp else None
    print("1. allreduce, 2 processes, float32, GB/s (algorithm bandwidth, interleaved)")
    for label, prefix in (("median", ""), ("fastest repetition", "best_")):
        print(f"   {label}:")
        print(f"   {'size':>7s} {'Allreduce':>9s} {'Iallreduce':>10s} {'fed':>13s} "
              f"{'variable':>13s} {'fused x4':>13s}")
        for row in two["allreduce"]:
            raw = row[prefix + "raw"]
            cells = " ".join(f"{row[prefix + k]:6.2f} ({row[prefix + k] / raw:4.2f}x)"
                             for k in ("fed", "variable", "fused"))
            print(f"   {row['mb']:>5d}MB {raw:9.2f} {row[prefix + 'raw_nb']:10.2f} {cells}")
    print("   (mpi4py's blocking Allreduce and polled Iallreduce on numpy arrays with a reused output;"
          "\n   in parentheses: graphflow's ratio to the blocking Allreduce)")
    if not mlp:
        return
    single = one["mlp"]["single"]
    on, off = two["mlp"]["overlap"], two["mlp"]["no_overlap"]
    best = dict(one["mlp_best"], **two["mlp_best"])
    mb = two["gradient_bytes"] / 2**20
    wait_on, wait_off = two["waited"]["overlap"], two["waited"]["no_overlap"]
    print(f"2. 784-512-512-10 Adam step, global batch 256 (medians; BLAS threads per process: "
          f"{_threads(1)} for 1 process, {_threads(2)} for 2)")
    print(f"   1 process:                              {single * 1e3:7.2f} ms")
    print(f"   2 processes, no overlap (1 bucket):     {off * 1e3:7.2f} ms  "
          f"({single / off:.2f}x the 1-process throughput), waiting for the allreduce "
          f"{wait_off * 1e3:.2f} ms")
    print(f"   2 processes, overlapped ({MLP_BUCKET_BYTES >> 20} MiB buckets): {on * 1e3:7.2f} ms  "
          f"({single / on:.2f}x; {off / on:.2f}x the step without overlap), waiting "
          f"{wait_on * 1e3:.2f} ms")
    print(f"   fastest steps: 1 process {best['single'] * 1e3:.2f} ms, 2 processes "
          f"{best['no_overlap'] * 1e3:.2f} ms without overlap, {best['overlap'] * 1e3:.2f} ms with")
    print("   (the two 2-process variants interleaved in the same processes)")
    # the least disturbed figures: graphflow's best allreduce bandwidth and the fastest step
    bandwidth = max(r["best_fed"] for r in two["allreduce"]) * 2**30  # bytes/s
    compute = best["single"]
    print(f"3. projection (ring allreduce model, not measured): step(N) = compute/N + "
          f"2(N-1)/N * {mb:.2f} MB / bandwidth, with compute = {compute * 1e3:.2f} ms (fastest "
          f"1-process step) and bandwidth = {bandwidth / 2**30:.2f} GB/s (graphflow's best "
          "allreduce here; between machines, the network's), no overlap assumed")
    for n in (2, 4, 8, 16):
        comm_time = 2 * (n - 1) / n * two["gradient_bytes"] / bandwidth
        step = compute / n + comm_time
        print(f"   N={n:<3d} step {step * 1e3:6.2f} ms (compute {compute / n * 1e3:.2f} + allreduce "
              f"{comm_time * 1e3:.2f}), speedup {compute / step:.2f}x over one machine")


if __name__ == "__main__":
    main()
