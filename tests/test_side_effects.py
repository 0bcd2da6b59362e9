"""A library changes nothing in its user's process that it was not asked to change.

A fresh process imports graphflow, then builds and runs a small CNN's training steps on two
intra-op threads, and checks:
- no file in /dev/shm or the temporary directory (TMPDIR is a fresh empty folder; /tmp and
  /dev/shm get no new entry naming graphflow or the process);
- the process's CPU affinity, and every thread's, is what it was (also while a step runs);
- glibc's malloc thresholds are its own (a 40 MB block is still served by mmap: graphflow does not
  call mallopt);
- no thread after `import graphflow` (Python threads, and the process's native threads: the
  same count as after `import numpy`; scipy, whose BLAS starts a thread when it loads, is imported
  on first use);
- after the session closes, the only Python threads left are the intra-op pool's workers
  (`graphflow-intra-op-N`, daemon threads started on the first multi-threaded kernel call and
  reused by every later session; oneDNN's OpenMP team threads are native threads of libgomp);
- numpy's BLAS thread count is the one it had (graphflow holds it to one thread only while a
  session that has run is open: `kernels/cpu/threads/blas.py`).
"""

import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(r"""
    import ctypes, json, os, platform, sys, threading, time

    def tasks():
        return sorted(int(t) for t in os.listdir("/proc/self/task"))

    def affinities():
        return {t: sorted(os.sched_getaffinity(t)) for t in tasks()}

    def listing(folder):
        try:
            return set(os.listdir(folder))
        except OSError:
            return set()

    def blas_threads():
        try:
            import threadpoolctl
        except ImportError:
            return None
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]

    GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

    def large_block_is_mmapped():
        # with glibc's own thresholds (the dynamic mmap threshold stops at 32 MB), a 40 MB
        # block is mmapped; mallopt(M_MMAP_THRESHOLD, 128 MB) would serve it from the heap
        if not GLIBC:
            return None
        libc = ctypes.CDLL(None)
        info = getattr(libc, "mallinfo2", None) or libc.mallinfo
        fields = [(n, ctypes.c_size_t if info is getattr(libc, "mallinfo2", None) else ctypes.c_int)
                  for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                            "fsmblks", "uordblks", "fordblks", "keepcost")]
        Info = type("Info", (ctypes.Structure,), {"_fields_": fields})
        info.restype = Info
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        libc.free.argtypes = [ctypes.c_void_p]
        before = info().hblks
        p = libc.malloc(40 << 20)
        mmapped = info().hblks == before + 1
        libc.free(p)
        return mmapped

    started = time.time()
    shm, tmp = listing("/dev/shm"), listing("/tmp")
    import numpy as np
    report = {"pid": os.getpid(), "affinity": sorted(os.sched_getaffinity(0)),
              "tasks_numpy": len(tasks()), "affinities_numpy": affinities(),
              "blas_numpy": blas_threads()}

    import graphflow as tf
    report["tasks_import"] = len(tasks())
    report["threads_import"] = [t.name for t in threading.enumerate()]
    report["affinities_import"] = affinities()
    report["mmapped_import"] = large_block_is_mmapped()
    report["blas_import"] = blas_threads()

    rng = np.random.default_rng(0)
    x = tf.placeholder(tf.float32, [16, 16, 16, 8])
    y = tf.placeholder(tf.float32, [16, 10])
    w1 = tf.Variable(rng.standard_normal((3, 3, 8, 16)).astype(np.float32) * 0.1)
    h = tf.nn.relu(tf.nn.conv2d(x, w1, strides=[1, 1, 1, 1], padding="SAME"))
    h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    w2 = tf.Variable(rng.standard_normal((8 * 8 * 16, 10)).astype(np.float32) * 0.01)
    logits = tf.matmul(tf.reshape(h, [16, 8 * 8 * 16]), w2)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    during = {}

    def look():  # runs inside a step
        during["affinities"] = affinities()
        return np.float32(0)
    probe = tf.numpy_function(look, [], tf.float32)
    feed = {x: rng.standard_normal((16, 16, 16, 8)).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)]}
    config = tf.ConfigProto(intra_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run([train, loss], feed)
        sess.run([train, probe], feed)
    report["affinities_during"] = {int(k): v for k, v in during["affinities"].items()}
    report["threads_closed"] = [(t.name, t.daemon) for t in threading.enumerate()
                                if t is not threading.main_thread()]
    report["affinities_closed"] = affinities()
    report["affinity_closed"] = sorted(os.sched_getaffinity(0))
    report["mmapped_closed"] = large_block_is_mmapped()
    report["blas_closed"] = blas_threads()
    mine = (str(os.getpid()), "graphflow")

    def new(folder, before):
        out = []
        for name in listing(folder) - before:
            try:
                recent = os.stat(os.path.join(folder, name)).st_mtime >= started - 1
            except OSError:
                continue
            if recent and any(m in name.lower() for m in mine):
                out.append(name)
        return out
    report["new_shm"] = new("/dev/shm", shm)
    report["new_tmp"] = new("/tmp", tmp)
    report["tmpdir"] = sorted(os.listdir(os.environ["TMPDIR"]))
    print(json.dumps(report, default=str))
""")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/task (Linux)")
    tmpdir = tmp_path_factory.mktemp("child_tmp")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHFLOW_")}
    env["TMPDIR"] = str(tmpdir)
    env["OPENBLAS_NUM_THREADS"] = "2"  # BLAS starts with two threads even on a one-core machine
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_starts_no_thread(report):
    assert report["threads_import"] == ["MainThread"]
    assert report["tasks_import"] == report["tasks_numpy"]  # no native thread either


def test_no_files_in_shared_memory_or_temporary_folders(report):
    assert report["new_shm"] == []
    assert report["new_tmp"] == []
    assert report["tmpdir"] == []


def test_cpu_affinity_is_left_alone(report):
    assert report["affinity_closed"] == report["affinity"]
    for when in ("affinities_import", "affinities_during", "affinities_closed"):
        assert set(map(tuple, report[when].values())) == {tuple(report["affinity"])}, when


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc")
def test_malloc_thresholds_are_glibcs_own(report):
    assert report["mmapped_import"] is True
    assert report["mmapped_closed"] is True


def test_only_the_intra_op_pool_outlives_a_session(report):
    names = [name for name, _ in report["threads_closed"]]
    assert all(name.startswith("graphflow-intra-op-") for name in names), names
    assert all(daemon for _, daemon in report["threads_closed"])
    assert len(names) <= 1  # two intra-op threads: the calling thread and one worker


def test_blas_thread_count_is_given_back(report):
    if report["blas_numpy"] is None:
        pytest.skip("threadpoolctl is not installed")
    assert report["blas_import"] == report["blas_numpy"]
    assert set(report["blas_closed"]) == set(report["blas_numpy"])  # (any library loaded since too)
