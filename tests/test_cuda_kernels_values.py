"""CUDA kernels against the CPU kernels, value by value (the second layer of
tests/test_cuda_kernels.py's docstring): every op case, odd sizes, broadcasting, empty tensors,
gradients and an optimized training step computed on the GPU and on the CPU, on the GPU when there
is one, otherwise on the CPU emulation of the very same kernel sources (tests/cuda_emulator.py).
Slow (~100 s on the emulation): tests/conftest.py leaves the tests using the `gpu` fixture out of
the default run.
"""

import itertools

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import placement
from graphflow.kernels import cuda as cuda_table
from graphflow.ops import registry
from graphflow.ops.gradients import dense_gradients
from tests import cuda_emulator
from tests.cuda_recording import GENERATED, RecordingBackend, RecordingRuntime
from tests.test_cuda_kernels import CASES, GPU_OK, GPU_REASON, _as_list, _check_fallbacks, _Meta
from tests.tooling import skip_unless_program

_emulated = []


def _emulated_runtime():
    """One emulated runtime per process, built with every generated kernel the recording runs saw
    (one compile for all of them; others are compiled when first launched)."""
    if not _emulated:
        if len(GENERATED) < 50:
            _record_all_cases()
        _emulated.append(cuda_emulator.EmulatedRuntime(GENERATED.values()))
    return _emulated[0]


def _record_all_cases():
    rt = RecordingRuntime()
    saved, saved_int = cuda_table._runtime, placement.Placement.host_int_arithmetic
    cuda_table._runtime = rt
    placement.Placement.host_int_arithmetic = True  # recorded runs compute no device values
    try:
        with placement.use_backend(RecordingBackend(rt)):
            for case in CASES:
                tf.reset_default_graph()
                ph = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape) for x in case.inputs]
                with tf.Session(device="/gpu:0", optimize=False) as sess:
                    sess.run(_as_list(case.build(*ph)), dict(zip(ph, case.inputs)))
    finally:
        cuda_table._runtime = saved
        placement.Placement.host_int_arithmetic = saved_int
        tf.reset_default_graph()


@pytest.fixture
def gpu(monkeypatch):
    """The CUDA device when there is one, else the CPU emulation of the CUDA kernels."""
    if GPU_OK:
        monkeypatch.setattr(placement.Placement, "host_int_arithmetic", False)
        yield "device"
        return
    skip_unless_program("g++", f"no CUDA device ({GPU_REASON}); a C++ compiler emulates one",
                        cuda_emulator.CXX is not None)
    # every op with a kernel runs on the device, integer shape arithmetic included
    monkeypatch.setattr(placement.Placement, "host_int_arithmetic", False)
    rt = _emulated_runtime()
    monkeypatch.setattr(cuda_table, "_runtime", rt)
    with placement.use_backend(placement.CudaBackend("/gpu:0", rt, cuda_table)):
        yield "emulation"


def _compare(got, want, rtol, atol, name):
    if isinstance(want, bytes):  # a scalar tf.string is fetched as bytes, as in TF1
        assert got == want, name
        return
    want = np.asarray(want)  # (a CPU kernel may give a numpy scalar for a 0-d result)
    assert isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype == want.dtype, name
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def _run_both(fetches, feed, optimize=False):
    with tf.Session(optimize=optimize) as sess:
        want = sess.run(fetches, feed)
    with tf.Session(device="/gpu:0", optimize=optimize) as sess:
        meta = _Meta()
        got = sess.run(fetches, feed, run_metadata=meta)
    return got, want, meta.plan.placement


def _tolerances(case, dtype):
    if np.dtype(dtype) == np.float32:
        return max(case.rtol, 2e-5), max(case.atol, 1e-5)
    return case.rtol, case.atol


# random ops draw different numbers in another session (and run on the CPU): not compared
_DETERMINISTIC = [c for c in CASES if not registry.lookup(c.op_type).random]


@pytest.mark.parametrize("case", _DETERMINISTIC, ids=[c.name for c in _DETERMINISTIC])
def test_op_cases_on_the_gpu_match_the_cpu(case, gpu):
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape, name=f"in{i}")
                    for i, x in enumerate(case.inputs)]
    outs = _as_list(case.build(*placeholders))
    got, want, pl = _run_both(outs, dict(zip(placeholders, case.inputs)))
    for g, w in zip(got, want):
        _compare(g, w, *_tolerances(case, np.asarray(w).dtype), case.name)
    _check_fallbacks(case, pl)
    if cuda_table.spec(case.op_type) is not None and case.op_type != "Const":
        on_gpu = {op.type for op, d in pl.device_of.items() if d == "/gpu:0"}
        elsewhere = {op.type for op, _, _ in pl.fallbacks} | {op.type for op, _ in pl.kept_on_host}
        assert case.op_type in on_gpu | elsewhere


def _grad_positions(case):
    return case.grad_inputs if case.grad_inputs is not None else [
        i for i, x in enumerate(case.inputs) if x.dtype.kind == "f"]


def _has_floating_gradient(case):
    """A floating output and a floating input to differentiate (built in a throwaway graph)."""
    if not case.grad or not _grad_positions(case):
        return False
    with tf.Graph().as_default():
        ph = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape) for x in case.inputs]
        return any(o.dtype.is_floating for o in _as_list(case.build(*ph)))


_GRAD_CASES = [c for c in CASES if _has_floating_gradient(c)]


@pytest.mark.parametrize("case", _GRAD_CASES, ids=[c.name for c in _GRAD_CASES])
def test_gradients_on_the_gpu_match_the_cpu(case, gpu):
    """The backward graph of each differentiable case, run on the GPU, equals the CPU's (whose
    gradients tests/test_gradients.py checks against finite differences)."""
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape, name=f"in{i}")
                    for i, x in enumerate(case.inputs)]
    outs = [o for o in _as_list(case.build(*placeholders)) if o.dtype.is_floating]
    xs = [placeholders[i] for i in _grad_positions(case)]
    total = tf.add_n([tf.reduce_sum(o * (k + 1.0)) for k, o in enumerate(outs)])
    grads = [g for g in dense_gradients(total, xs) if g is not None]
    got, want, _ = _run_both(grads, dict(zip(placeholders, case.inputs)))
    for g, w in zip(got, want):
        _compare(g, w, *_tolerances(case, w.dtype), case.name)


def _rand(rng, shape, dtype=np.float32):
    return rng.uniform(-2, 2, size=shape).astype(dtype)


@pytest.mark.parametrize("shapes", [((3, 1, 5), (1, 4, 1)), ((7,), (2, 3, 7)), ((), (5, 3)),
                                    ((0, 3), (1, 3)), ((2, 1, 3, 1, 5), (3, 4, 1)),
                                    ((1000003,), (1,))])
def test_broadcasting_odd_and_empty_shapes(shapes, gpu):
    rng = np.random.default_rng(1)
    a, b = (_rand(rng, s) for s in shapes)
    pa, pb = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
    outs = [pa + pb, pa * pb - pb, tf.maximum(pa, pb), tf.where(pa > pb, pa, pb), tf.tanh(pa) * pb]
    got, want, _ = _run_both(outs, {pa: a, pb: b})
    for g, w in zip(got, want):
        _compare(g, w, 1e-5, 1e-6, str(shapes))


@pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value encountered")
@pytest.mark.parametrize("shape", [(5, 7, 9, 3), (1, 70000), (70001, 3), (3, 0, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reductions_over_every_axis_combination(shape, dtype, gpu):
    rng = np.random.default_rng(2)
    x = (rng.uniform(-3, 3, size=shape) * 10).astype(dtype)
    p = tf.placeholder(tf.as_dtype(dtype), shape)
    axes_list = [None] + [list(c) for r in range(1, len(shape) + 1)
                          for c in itertools.combinations(range(len(shape)), r)]
    outs = []
    for axes in axes_list:
        outs += [tf.reduce_sum(p, axes), tf.reduce_mean(p, axes, keepdims=True)]
        if x.size:
            outs += [tf.reduce_max(p, axes), tf.reduce_min(p, axes)]
    if x.size:
        outs += [tf.argmax(p, axis=a) for a in range(len(shape))]
    got, want, _ = _run_both(outs, {p: x})
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    for g, w in zip(got, want):
        _compare(g, w, rtol, 1e-3 if dtype == np.float32 else 1e-9, f"{shape} {dtype}")


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 13, 5), (129, 255, 67), (512, 10, 784),
                                   (64, 64, 0), (0, 4, 3), (300, 300, 300)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_odd_sizes_and_transposes(m, n, k, ta, tb, gpu):
    rng = np.random.default_rng(3)
    a = _rand(rng, (k, m) if ta else (m, k))
    b = _rand(rng, (n, k) if tb else (k, n))
    pa, pb = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
    got, want, _ = _run_both([tf.matmul(pa, pb, transpose_a=ta, transpose_b=tb)], {pa: a, pb: b})
    _compare(got[0], want[0], 1e-4, 1e-4, f"{m}x{n}x{k}")


def test_batched_matmul_with_broadcast_batch_dims(gpu):
    rng = np.random.default_rng(4)
    a, b = _rand(rng, (3, 1, 17, 9)), _rand(rng, (1, 4, 9, 33))
    pa, pb = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
    got, want, _ = _run_both([tf.matmul(pa, pb), tf.matmul(pb, pa, transpose_a=True,
                                                             transpose_b=True)], {pa: a, pb: b})
    for g, w in zip(got, want):
        _compare(g, w, 1e-4, 1e-4, "batched")


@pytest.mark.parametrize("ta,tb", [(True, False), (False, False), (False, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_split_along_a_long_k(ta, tb, dtype, gpu, monkeypatch):
    # few output tiles and K = 2100: three chunks of 576 rows summed in order, then the last 372
    # rows accumulated by one more GEMM (on the emulation, 64 SMs stand in for the device's)
    from graphflow.kernels.cuda import matmul
    rt = cuda_table.runtime()
    if gpu == "emulation":
        monkeypatch.setattr(rt, "sm_count", 64)
    family = matmul.variant(dtype, 5, 3, 1, rt.sm_count)
    assert matmul.split_k(5, 3, 2100, matmul._TILES[family], rt.sm_count) is not None
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2100, 5) if ta else (5, 2100)).astype(dtype)
    b = rng.standard_normal((3, 2100) if tb else (2100, 3)).astype(dtype)
    pa, pb = tf.placeholder(a.dtype, a.shape), tf.placeholder(b.dtype, b.shape)
    got, want, _ = _run_both([tf.matmul(pa, pb, transpose_a=ta, transpose_b=tb)], {pa: a, pb: b})
    tol = 1e-4 if dtype == np.float32 else 1e-10
    _compare(got[0], want[0], tol, tol, f"ta={ta} tb={tb}")


def test_conv_filter_gradient_split_along_the_images(gpu, monkeypatch):
    # the filter gradient's K is N*OH*OW = 2048: split into chunks as on a GPU with many SMs
    rt = cuda_table.runtime()
    if gpu == "emulation":
        monkeypatch.setattr(rt, "sm_count", 64)
    rng = np.random.default_rng(12)
    x, f = _rand(rng, (8, 16, 16, 3)), _rand(rng, (3, 3, 3, 4))
    px, pf = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, f.shape)
    y = tf.nn.conv2d(px, pf, strides=[1, 1, 1, 1], padding="SAME")
    got, want, _ = _run_both(tf.gradients(tf.reduce_sum(y * y), [pf]), {px: x, pf: f})
    _compare(got[0], want[0], 1e-4, 1e-3, "filter gradient")


@pytest.mark.parametrize("classes", [1, 10, 33, 1025, 5000])
def test_softmax_family_across_row_lengths(classes, gpu):
    rng = np.random.default_rng(5)
    x = _rand(rng, (37, classes)) * 5
    labels = rng.integers(0, classes, 37)
    dense = np.eye(classes, dtype=np.float32)[labels]
    px, pl = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.int64, [37])
    pd = tf.placeholder(tf.float32, x.shape)
    outs = [tf.nn.softmax(px), tf.nn.log_softmax(px), tf.nn.softmax(px, axis=0),
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=pl, logits=px),
            tf.nn.softmax_cross_entropy_with_logits(labels=pd, logits=px)]
    got, want, _ = _run_both(outs, {px: x, pl: labels, pd: dense})
    for g, w in zip(got, want):
        _compare(g, w, 1e-5, 1e-5, f"{classes} classes")


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride,dilation,ksize", [(1, 1, 3), (2, 1, 3), (1, 2, 3), (2, 1, 1)])
def test_conv_and_pool_forward_and_backward(padding, stride, dilation, ksize, gpu):
    rng = np.random.default_rng(6)
    x = _rand(rng, (3, 11, 10, 4))
    f = _rand(rng, (ksize, ksize, 4, 5))
    px, pf = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, f.shape)
    y = tf.nn.conv2d(px, pf, strides=[1, stride, stride, 1], padding=padding,
                     dilations=[1, dilation, dilation, 1])
    mp = tf.nn.max_pool(px, [1, 3, 3, 1], [1, stride, stride, 1], padding)
    ap = tf.nn.avg_pool(px, [1, 2, 3, 1], [1, stride, stride, 1], padding)
    loss = tf.reduce_sum(y * y) + tf.reduce_sum(mp * 3.0) + tf.reduce_sum(ap * ap)
    outs = [y, mp, ap] + tf.gradients(loss, [px, pf])
    got, want, pl_ = _run_both(outs, {px: x, pf: f})
    for g, w in zip(got, want):
        _compare(g, w, 1e-4, 1e-4, f"{padding} s{stride} d{dilation} k{ksize}")
    assert not pl_.fallbacks, pl_.report()


def test_array_ops_on_odd_and_empty_shapes(gpu):
    rng = np.random.default_rng(7)
    x = _rand(rng, (5, 0, 3))
    y = _rand(rng, (4, 7, 3))
    px, py = tf.placeholder(tf.float32, x.shape), tf.placeholder(tf.float32, y.shape)
    idx = tf.constant([3, 0, 0, 2], tf.int32)
    outs = [tf.transpose(py, [2, 0, 1]), py[1:, ::-2, None], tf.concat([py, py * 2.0], axis=1),
            tf.gather(py, idx, axis=1), tf.one_hot(idx, 5), tf.reverse(py, [0, 2]),
            tf.tile(py, [2, 1, 3]), tf.pad(py, [[1, 0], [0, 2], [1, 1]]), tf.stack([py, py], 1),
            tf.transpose(px), tf.concat([px, px], 0), tf.reduce_sum(px, 1)]
    got, want, _ = _run_both(outs, {px: x, py: y})
    for g, w in zip(got, want):
        _compare(g, w, 0, 0, "array ops")


def test_fused_programs_and_training_match_the_cpu_with_optimizations(gpu):
    rng = np.random.default_rng(8)
    xs, ys = _rand(rng, (64, 30)), rng.integers(0, 5, 64)
    results = {}
    for device in ("/cpu:0", "/gpu:0"):
        tf.reset_default_graph()
        tf.set_random_seed(1)
        x, y = tf.placeholder(tf.float32, [None, 30]), tf.placeholder(tf.int64, [None])
        h = tf.layers.dense(x, 32, activation=tf.nn.relu)
        h = tf.tanh(h * 0.5 + 0.1) * tf.sigmoid(h)  # an elementwise chain the fusion pass fuses
        logits = tf.layers.dense(h, 5)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                             logits=logits))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        with tf.Session(device=device) as sess:
            sess.run(tf.global_variables_initializer())
            meta = _Meta()
            losses = [sess.run([loss, train], {x: xs, y: ys}, run_metadata=meta)[0]
                      for _ in range(20)]
            stored = dict(sess._state.variables.values)
        results[device] = (losses, stored, meta.plan)
    np.testing.assert_allclose(results["/gpu:0"][0], results["/cpu:0"][0], rtol=1e-4)
    plan = results["/gpu:0"][2]
    assert any(op.type == "FusedElementwise" and d == "/gpu:0"
               for op, d in plan.placement.device_of.items())
    rt = cuda_table.runtime()
    assert all(isinstance(v, rt.array_type) for n, v in results["/gpu:0"][1].items()
               if v.dtype == np.float32)
