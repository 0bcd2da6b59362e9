"""Distributed training figures: allreduce throughput and the MLP step with 1 and 2 processes.

    python benchmarks/bench_distributed.py            # launches mpirun -np 1 and -np 2 itself

1. Allreduce of float32 buffers from 1 MB to 256 MB: graphflow's allreduce op inside Session.run
   (fed from a placeholder, fetched back: what a training step pays) against mpi4py's own blocking
   `Allreduce` on the same numpy arrays, in the same processes. Algorithm bandwidth = bytes / time.
2. The 784-512-512-10 Adam MLP step at a global batch of 256: one process (batch 256) against two
   (128 each, gradients averaged through DistributedOptimizer), median step times.
3. A projection for N machines from the measured compute time and allreduce bandwidth with the ring
   allreduce cost model (each process sends and receives 2 (N-1)/N of the gradient bytes), stated as a
   model, not a measurement.
On this 2-core machine two processes share the cores, so (2) shows the overhead of the distributed
step, not a speedup.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES_MB = [1, 4, 16, 64, 256]


def _median_time(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def child(procs):
    import graphflow as tf
    from graphflow import horovod as hvd
    from graphflow.kernels.cpu import mpi_runtime

    hvd.init()
    comm = mpi_runtime.comm()
    MPI = mpi_runtime.mpi()
    result = {"procs": procs, "allreduce": [], "mlp": None}
    if procs > 1:
        for mb in SIZES_MB:
            n = mb * (1 << 20) // 4
            send = np.ones(n, np.float32)
            recv = np.empty_like(send)
            repeat = 5 if mb >= 64 else 15
            comm.Barrier()
            raw = _median_time(lambda s=send, r=recv: comm.Allreduce(s, r, op=MPI.SUM), repeat)
            tf.reset_default_graph()
            x = tf.placeholder(tf.float32, [n])
            total = hvd.allreduce(x, average=False)
            with tf.Session() as sess:
                run = sess.make_callable(total, [x])
                comm.Barrier()
                graph = _median_time(lambda f=run, s=send: f(s), repeat)
            result["allreduce"].append({"mb": mb, "raw_gbs": mb / 1024 / raw,
                                        "graphflow_gbs": mb / 1024 / graph})
    tf.reset_default_graph()
    rng = np.random.default_rng(hvd.rank())
    batch = 256 // procs
    xs = rng.standard_normal((batch, 784)).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    x = tf.placeholder(tf.float32, [batch, 784])
    y = tf.placeholder(tf.float32, [batch, 10])
    h = tf.layers.dense(tf.layers.dense(x, 512, tf.nn.relu), 512, tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    opt = tf.train.AdamOptimizer(1e-3)
    if procs > 1:
        opt = hvd.DistributedOptimizer(opt)
    step = opt.minimize(loss)
    grads_bytes = sum(v.shape.num_elements() * 4 for v in tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        run = sess.make_callable(step, [x, y])
        comm.Barrier()
        result["mlp"] = _median_time(lambda: run(xs, ys), 30)
    result["gradient_bytes"] = grads_bytes
    if hvd.rank() == 0:
        print("RESULT " + json.dumps(result), flush=True)


def launch(procs):
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(["mpirun", "-np", str(procs), sys.executable, __file__, "--child", str(procs)],
                         capture_output=True, text=True, env=env, check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main():
    if "--child" in sys.argv:
        child(int(sys.argv[sys.argv.index("--child") + 1]))
        return
    one, two = launch(1), launch(2)
    print("1. allreduce, 2 processes, float32 (median; algorithm bandwidth)")
    print(f"   {'size':>7s} {'mpi4py Allreduce':>18s} {'graphflow op':>14s} {'ratio':>6s}")
    for row in two["allreduce"]:
        print(f"   {row['mb']:>5d}MB {row['raw_gbs']:>14.2f}GB/s {row['graphflow_gbs']:>10.2f}GB/s "
              f"{row['graphflow_gbs'] / row['raw_gbs']:>6.2f}")
    print("2. 784-512-512-10 Adam step, global batch 256 (median of 30)")
    print(f"   1 process:  {one['mlp'] * 1e3:.2f} ms")
    print(f"   2 processes (128 each, one fused allreduce of {two['gradient_bytes'] / 2**20:.2f} MB): "
          f"{two['mlp'] * 1e3:.2f} ms  ({one['mlp'] / two['mlp']:.2f}x the 1-process throughput)")
    bandwidth = max(r["raw_gbs"] for r in two["allreduce"]) * 2**30  # bytes/s, best measured
    compute = one["mlp"]
    print("3. projection (ring allreduce model, not measured): step(N) = compute/N + "
          "2(N-1)/N * gradient bytes / bandwidth")
    for n in (2, 4, 8, 16):
        comm_time = 2 * (n - 1) / n * two["gradient_bytes"] / bandwidth
        step = compute / n + comm_time
        print(f"   N={n:<3d} step {step * 1e3:6.2f} ms (compute {compute / n * 1e3:.2f} + allreduce "
              f"{comm_time * 1e3:.2f}), speedup {compute / step:.2f}x over one machine")


if __name__ == "__main__":
    main()
