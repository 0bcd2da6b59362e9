"""Programs the distributed tests run under `mpirun -np N` (one scenario per call); each rank writes
its results as JSON to `$GRAPHFLOW_TEST_RESULTS/<rank>.json` for tests/interop/distribute/test_distribute.py.

    mpirun -np 2 python tests/interop/distribute/mpi_programs.py collectives
"""

import json
import os
import sys
import time

import numpy as np

import graphflow as tf
from graphflow import horovod as hvd
from graphflow.kernels.cpu.reference import collective_kernels
from graphflow.ops import collective_ops


def report(**values):
    path = os.path.join(os.environ["GRAPHFLOW_TEST_RESULTS"], f"{hvd.rank()}.json")
    with open(path, "w") as f:
        json.dump({"rank": hvd.rank(), **values}, f)


def collectives():
    r, n = hvd.rank(), hvd.size()
    x = tf.constant(np.full((2, 3), r + 1.0, np.float32))
    rows = tf.constant(np.full((r + 1, 2), float(r), np.float32))  # a different row count per rank
    with tf.Session() as sess:
        total, mean, gathered, bcast = sess.run([hvd.allreduce(x, average=False), hvd.allreduce(x),
                                                 hvd.allgather(rows),
                                                 hvd.broadcast(tf.constant([r, r * 10]), n - 1)])
        # the kernel reuses its output buffer only once nothing refers to it: values fetched
        # earlier and still held keep their values
        fed = tf.placeholder(tf.float32, [4])
        run = sess.make_callable(hvd.allreduce(fed, average=False), [fed])
        kept = [run(np.full(4, float(k), np.float32)) for k in range(3)]
        kept.append(run(np.full(4, 7.0, np.float32)).copy())
        kept.append(run(np.full(4, 8.0, np.float32)))  # (the buffer of the one just dropped)
    report(size=n, total=total.tolist(), mean=mean.tolist(), gathered=gathered.tolist(),
           bcast=bcast.tolist(), kept=[k.tolist() for k in kept])


def gradients():
    r = hvd.rank()
    x = tf.constant(np.arange(3, dtype=np.float64) + r)
    rows = tf.constant(np.full((r + 1, 2), float(r + 1)))
    y = tf.reduce_sum(hvd.allreduce(x * x, average=False))
    z = tf.reduce_sum(hvd.allgather(rows) * float(r + 1))  # each rank weighs the gathered rows
    gx, grows = tf.gradients([y, z], [x, rows])
    with tf.Session() as sess:
        report(gx=sess.run(gx).tolist(), grows=sess.run(grows).tolist())


def _model():
    x = tf.placeholder(tf.float64, [None, 4])
    y = tf.placeholder(tf.float64, [None, 1])
    w = tf.Variable(np.linspace(-1, 1, 8).reshape(4, 2))
    v = tf.Variable(np.linspace(0.5, -0.5, 2).reshape(2, 1))
    b = tf.Variable(np.zeros(1))
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, w)), v) + b - y))
    return x, y, loss, [w, v, b]


def _data():
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((12, 4))
    return xs, np.sin(xs.sum(axis=1, keepdims=True))


def train():
    """N processes on equal shards of each batch == one process on the whole batch."""
    r, n = hvd.rank(), hvd.size()
    compression = hvd.Compression.fp16 if "fp16" in sys.argv else hvd.Compression.none
    threshold = 64 if "small_buckets" in sys.argv else hvd.DEFAULT_FUSION_THRESHOLD_BYTES
    xs, ys = _data()
    x, y, loss, variables = _model()
    opt = hvd.DistributedOptimizer(tf.train.MomentumOptimizer(0.1, 0.9), compression=compression,
                                   fusion_threshold_bytes=threshold,
                                   overlap="no_overlap" not in sys.argv)
    step = opt.minimize(loss)
    shard = slice(r * len(xs) // n, (r + 1) * len(xs) // n)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hvd.broadcast_global_variables(0))
        for _ in range(5):
            sess.run(step, {x: xs[shard], y: ys[shard]})
        distributed = [a.tolist() for a in sess.run(variables)]
    allreduces = sum(1 for op in tf.get_default_graph().get_operations() if op.type == "MpiAllreduceStart")
    tf.reset_default_graph()
    x, y, loss, variables = _model()
    step = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(step, {x: xs, y: ys})
        single = [a.tolist() for a in sess.run(variables)]
    report(distributed=distributed, single=single, allreduces=allreduces)


def _mlp_step(overlap, threshold):
    """Three Adam steps of a 12-16-16-3 MLP on this rank's data; the variables, the reduced
    gradients (with their static shapes) and the plan's op types in run order."""
    tf.reset_default_graph()
    rng = np.random.default_rng(hvd.rank())
    xs = rng.standard_normal((8, 12)).astype(np.float32)
    ys = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
    x = tf.placeholder(tf.float32, [None, 12])
    y = tf.placeholder(tf.float32, [None, 3])
    init = tf.random_normal_initializer(seed=1)
    h = tf.layers.dense(x, 16, tf.nn.relu, kernel_initializer=init)
    h = tf.layers.dense(h, 16, tf.nn.relu, kernel_initializer=init)
    logits = tf.layers.dense(h, 3, kernel_initializer=init)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    opt = hvd.DistributedOptimizer(tf.train.AdamOptimizer(0.01), overlap=overlap,
                                   fusion_threshold_bytes=threshold)
    grads_and_vars = opt.compute_gradients(loss)
    step = opt.apply_gradients(grads_and_vars)
    grads = [g for g, _ in grads_and_vars]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(step, {x: xs, y: ys})
        values = sess.run(grads, {x: xs, y: ys})
        metadata = tf.RunMetadata()  # the plan this feed runs (one made for its shapes)
        sess.run(step, {x: xs, y: ys}, run_metadata=metadata)
        order = [op.type for op in metadata.plan.ops]
        variables = [v.tolist() for v in sess.run(tf.trainable_variables())]
    shapes_agree = all(list(v.shape) == g.shape.as_list() for v, g in zip(values, grads))
    return {"variables": variables, "grads": [v.tolist() for v in values], "order": order,
            "shapes_agree": shapes_agree}


def overlap():
    """The same steps with the reductions overlapped and not: identical values."""
    threshold = int(sys.argv[2])
    report(on=_mlp_step(True, threshold), off=_mlp_step(False, threshold))


def broadcast_start():
    """Variables initialized differently on each rank agree after broadcast_global_variables."""
    w = tf.Variable(np.full(3, float(hvd.rank())))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hvd.broadcast_global_variables(1))
        report(w=sess.run(w).tolist())


def straggler():
    """Rank 1 fails before the collective and never joins: rank 0 gets a clear timeout error and
    its variables stay as they were (a failed run changes nothing)."""
    w = tf.Variable(np.ones(2))
    update = tf.assign_add(w, hvd.allreduce(tf.constant(np.ones(2))))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if hvd.rank() == 1:
            time.sleep(float(os.environ["GRAPHFLOW_MPI_TIMEOUT"]) + 3)
            report(error=None, w=sess.run(w).tolist())
            return
        t0 = time.monotonic()
        try:
            sess.run(update)
            error = None
        except Exception as exc:  # the error the user sees
            error = f"{type(exc).__name__}: {exc}"
        report(error=error, seconds=time.monotonic() - t0, w=sess.run(w).tolist())


def adopted():
    """Variables assigned a reduction keep the reduced buffer itself (no copy; the kernels' pools
    alternate two buffers; the fused bucket's variables then lie back to back in one buffer and
    are sent from there, unpacked): values stay right run after run, values fetched earlier keep
    theirs, and a run that fails after the assignments changes no variable."""
    r, n = hvd.rank(), hvd.size()
    src = tf.Variable(np.zeros(6, np.float32))
    out = tf.Variable(np.zeros(6, np.float32))
    mean = tf.assign(out, hvd.allreduce(src.value(), average=True), name="store_mean")
    parts = [tf.Variable(np.zeros(k, np.float32)) for k in (2, 3)]
    fused = collective_ops.fused_allreduce([p.value() for p in parts], average=True)
    summed = tf.group(*[tf.assign(p, f, name=f"store_part{i}")
                        for i, (p, f) in enumerate(zip(parts, fused))])
    bad = tf.placeholder(tf.float32, [])
    with tf.control_dependencies([mean, summed]):
        checked = tf.check_numerics(bad, "bad step")
    history, parts_seen = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(4):
            src.load(np.arange(6, dtype=np.float32) * (r + 1) + step, sess)
            if step < 2:  # later steps reduce the values the previous step stored (unpacked)
                for p in parts:
                    p.load(np.full(p.shape.as_list(), step + r, np.float32), sess)
            sess.run([mean.op, summed])
            history.append(sess.run(out))          # copies kept across later runs
            parts_seen.append([sess.run(p).tolist() for p in parts])
        adopting = sorted(step.op.name for plan in sess._compiled_plans()
                          for step in plan.step_list.steps if step.adopt)
        stored = [sess._state.variables.read(p.op.attrs["shared_name"]) for p in parts]
        back_to_back = collective_kernels._back_to_back(stored, np.float32) is not None
        src.load(np.full(6, 100.0, np.float32), sess)
        try:
            sess.run(checked, {bad: np.nan})
            error = None
        except tf.errors.InvalidArgumentError as exc:
            error = str(exc)
        after = sess.run(out).tolist(), [sess.run(p).tolist() for p in parts]
        sess.run(checked, {bad: 1.0})
        recovered = sess.run(out).tolist()
    report(size=n, history=[h.tolist() for h in history], parts=parts_seen, adopting=adopting,
           back_to_back=back_to_back, error=error, after=after, recovered=recovered)


def dies():
    """Rank 1 exits in the middle of training: the job ends (no process hangs)."""
    step = hvd.allreduce(tf.constant([1.0]))
    with tf.Session() as sess:
        if hvd.rank() == 1:
            os._exit(3)
        for _ in range(1000):
            sess.run(step)


def saved():
    """A graph holding every collective saves, loads in each process and runs there."""
    directory = sys.argv[2]
    r = hvd.rank()
    rows = tf.placeholder(tf.float64, [None, 2], name="rows")
    gathered = hvd.allgather(rows)
    total = hvd.allreduce(tf.reduce_sum(gathered * gathered), average=False)
    grad = tf.gradients(total, rows)[0]  # MpiAllreduce and MpiAllgatherGrad
    start = hvd.broadcast(tf.constant([7.0]), 0)
    mean, pair = collective_ops.fused_allreduce(  # MpiAllreduceStart and MpiAllreduceWait
        [tf.reduce_sum(rows), tf.constant([1.0, 2.0], tf.float64)], average=True)
    path = os.path.join(directory, f"model{r}.gfz")
    tf.save(path, inputs={"rows": rows}, outputs={"total": total, "grad": grad, "start": start,
                                                  "mean": mean, "pair": pair})
    tf.reset_default_graph()
    # allow_io: the collectives talk to the other processes (OpDef.touches "network"), which a
    # loaded graph may do only when its loader allows it
    with tf.load(path, allow_io=True) as model:
        out = model.run({"rows": np.full((r + 1, 2), r + 1.0)})
    report(total=float(out["total"]), grad=out["grad"].tolist(), start=out["start"].tolist(),
           mean=float(out["mean"]), pair=out["pair"].tolist())


def checkpoint():
    """Rank 0 writes the checkpoint; every rank restores it."""
    directory = sys.argv[2]
    w = tf.Variable(np.zeros(2))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, [hvd.rank() + 1.0, 5.0]))
        if hvd.rank() == 0:
            saver.save(sess, os.path.join(directory, "model"), global_step=3)
        sess.run(hvd.allreduce(tf.constant(0.0)))  # a barrier: the file exists on every rank now
        saver.restore(sess, tf.train.latest_checkpoint(directory))
        report(w=sess.run(w).tolist())


def _mismatch(fetches_by_rank):
    """Run this rank's fetches, report the error (or the values)."""
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        try:
            for fetch in fetches_by_rank[hvd.rank()]:
                value = sess.run(fetch)
            report(error=None, value=np.asarray(value).tolist())
        except Exception as exc:  # the error the user sees
            report(error=f"{type(exc).__name__}: {exc}")


def mismatch_shape():
    """The same byte size, another shape: (2, 3) against (3, 2)."""
    a = hvd.allreduce(tf.constant(np.ones((2, 3), np.float32)), name="grads")
    b = hvd.allreduce(tf.constant(np.ones((3, 2), np.float32)), name="grads_")
    _mismatch([[a], [b]])


def mismatch_dtype():
    """The same byte size, another dtype: float32 against int32, under one name."""
    value = (tf.constant(np.ones(4, np.float32)) if hvd.rank() == 0
             else tf.constant(np.ones(4, np.int32)))
    _mismatch([[hvd.allreduce(value, average=False, name="sum")]] * hvd.size())


def mismatch_order():
    """Two allreduces of the same shape and dtype, run in opposite orders."""
    a = hvd.allreduce(tf.constant([1.0, 2.0]), name="first")
    b = hvd.allreduce(tf.constant([3.0, 4.0]), name="second")
    _mismatch([[a, b], [b, a]])


def mismatch_root():
    """A broadcast from rank 0 on one process and from rank 1 on the other."""
    x = tf.constant([float(hvd.rank())])
    _mismatch([[hvd.broadcast(x, hvd.rank(), name="sync")]] * hvd.size())


def mismatch_fused():
    """Fused gradients of the same total size, split differently: [2, 2] against [1, 3]."""
    sizes = [2, 2] if hvd.rank() == 0 else [1, 3]
    outs = collective_ops.fused_allreduce([tf.constant(np.ones(n)) for n in sizes], average=True,
                                          name="bucket")
    _mismatch([[outs]] * hvd.size())


def queued_then_blocking():
    """A plain allreduce and a broadcast run between a fused bucket's start and its wait (while
    its reduction may still be queued behind its negotiation): values right on every run; with
    "mismatch", the ranks' plain allreduces differ in shape and both raise the mismatch error."""
    r = hvd.rank()
    parts = [tf.constant(np.full(k, r + 1.0)) for k in (2, 3)]
    fused = collective_ops.fused_allreduce(parts, average=False, name="bucket")
    start = fused[0].op.inputs[0].op
    rows = 2 if "mismatch" in sys.argv and r == 1 else 1
    with tf.control_dependencies([start]):
        plain = hvd.allreduce(tf.constant(np.full(rows, float(r))), average=False, name="plain")
        root = hvd.broadcast(tf.constant(np.array([r], np.float64)), 0, name="root")
    out = [tf.reduce_sum(f) + plain[0] + root[0] for f in fused]  # the wait sinks to here
    with tf.Session() as sess:
        try:
            values = [np.asarray(sess.run(out)).tolist() for _ in range(3)]
            metadata = tf.RunMetadata()
            sess.run(out, run_metadata=metadata)
            order = [op.type for op in metadata.plan.ops if op.type.startswith("Mpi")]
            report(error=None, values=values, order=order)
        except Exception as exc:  # the error the user sees
            report(error=f"{type(exc).__name__}: {exc}")


def hangs():
    """Rank 1 hangs (far longer than the timeout) before the allreduce rank 0 waits in."""
    step = hvd.allreduce(tf.constant([1.0]), name="step")
    with tf.Session() as sess:
        if hvd.rank() == 1:
            time.sleep(600)
        sess.run(step)


if __name__ == "__main__":
    hvd.init()
    globals()[sys.argv[1]]()
