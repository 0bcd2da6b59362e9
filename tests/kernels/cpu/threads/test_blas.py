"""graphflow.kernels.cpu.threads.blas: products split over the intra-op pool give numpy's values,
BLAS is pinned to one thread inside a run, and the conv kernels computed in blocks on several threads
match one thread."""

import os
import subprocess
import sys

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.threads import blas


@pytest.mark.parametrize("shape", [(512, 300, 256), (64, 1000, 700), (700, 64, 100), (3, 5, 7)])
def test_split_matmul_matches_numpy(shape, rng):
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(blas.matmul(a, b, threads=3), a @ b, rtol=1e-5, atol=1e-4)
    # strided (transposed) operands, as MatMul(transpose_a/b) hands them over
    np.testing.assert_allclose(blas.matmul(b.T, a.T, threads=2), (a @ b).T, rtol=1e-5, atol=1e-4)


def test_blas_is_held_to_one_thread_inside_a_run_only():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert blas.owns_blas_threads()
    before = blas_threads()
    with blas.run_scope():
        with blas.run_scope():  # runs in progress at once share one hold
            assert blas_threads() and all(n == 1 for n in blas_threads())
        assert all(n == 1 for n in blas_threads())
    assert blas_threads() == before


@pytest.mark.parametrize("fetch", ["tf.matmul(x, w)", "tf.reduce_sum(x, 0)"])
def test_a_run_holds_blas_to_one_thread_and_gives_it_back(fetch):
    """Inside a run (a step whose large products run in oneDNN and whose BLAS calls are all small:
    the 512x10 layer of a batch-128 MLP, a sum computed as ones @ X) numpy's BLAS is on one thread:
    left at its own thread count, its idle thread spins beside graphflow's. Importing graphflow,
    building the graph and the session leave it alone, and the run gives it back. In a fresh
    process, whose BLAS starts with two threads."""
    pytest.importorskip("threadpoolctl")
    code = (
        "import numpy as np, threadpoolctl\n"
        "def blas_threads():\n"
        "    return max(i['num_threads'] for i in threadpoolctl.threadpool_info()\n"
        "               if i['user_api'] == 'blas')\n"
        "before = blas_threads()\n"
        "import graphflow as tf\n"
        "imported = blas_threads()\n"
        "x = tf.placeholder(tf.float32, [128, 512])\n"
        "w = tf.constant(np.ones((512, 10), np.float32))\n"
        "seen = tf.numpy_function(lambda: np.int64(blas_threads()), [], tf.int64)\n"
        "with tf.Session() as sess:\n"
        f"    _, inside = sess.run([{fetch}, seen], {{x: np.ones((128, 512), np.float32)}})\n"
        "print(before, imported, inside, blas_threads())\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("GRAPHFLOW_KEEP_BLAS_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                        "MKL_NUM_THREADS")}
    env["OPENBLAS_NUM_THREADS"] = "2"  # BLAS starts with two threads even on a one-core machine
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    before, imported, inside, after = done.stdout.split()
    assert int(before) >= 2 and imported == before and inside == "1" and after == before


def _conv_step(threads, rng, stride):
    x = rng.standard_normal((16, 20, 20, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 32)).astype(np.float32)
    xs = tf.placeholder(tf.float32, x.shape)
    ws = tf.constant(w)
    y = tf.nn.conv2d(xs, ws, strides=[1, stride, stride, 1], padding="SAME")
    loss = tf.reduce_sum(y * y)
    gx, gw = tf.gradients(loss, [xs, ws])
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        return sess.run([y, gx, gw], {xs: x})


@pytest.mark.parametrize("stride", [1, 2])  # 1: flipped-filter input gradient, 2: col2im
def test_conv_on_several_threads_matches_one_thread(stride):
    one = _conv_step(1, np.random.default_rng(1), stride)
    tf.reset_default_graph()
    many = _conv_step(4, np.random.default_rng(1), stride)
    for a, b in zip(one, many):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)
