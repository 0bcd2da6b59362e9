"""CUDA kernels against the CPU kernels.

Two layers:
1. Host side, everywhere: every op case of tests/op_cases runs through the *real* CUDA launchers with
   a recording runtime instead of PyCUDA. Each launch is checked against the kernel's parameter list
   in the PTX that nvcc produced (names, count and size of every argument, grid/block limits, no
   empty buffers passed), and every output's shape and dtype against the CPU kernel's output
   (tests/cuda_recording.py).
2. Values: the same cases compared value by value with the CPU kernels, odd sizes, broadcasting,
   empty tensors, gradients computed on the GPU vs the CPU, device-resident variables — on the GPU
   when there is one, otherwise on the CPU emulation of the very same kernel sources
   (tests/cuda_emulator.py: each CUDA thread a fiber, barriers and warp shuffles emulated).
   The memory pool and module cache in steady state need the real device (skipped elsewhere, with
   the reason).
"""

import itertools
import re

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import placement
from graphflow.kernels import cuda as cuda_table
from graphflow.kernels.cuda import sources
from graphflow.ops import registry
from tests import cuda_emulator
from tests.cuda_recording import GENERATED, RecordingBackend, RecordingRuntime
from tests.op_cases import all_cases
from tests.test_cuda_compile import check_compiles
from tests.tooling import needs_program, skip_unless_program

CASES = all_cases()
GPU_OK, GPU_REASON = cuda_table.availability()
needs_gpu = pytest.mark.skipif(not GPU_OK, reason=f"no CUDA device: {GPU_REASON}")


# Op cases whose op type has CUDA kernels, but not for this case: {case name: {op type: reason}}.
# The reason is the placement's own (`Placement.fallbacks`). Any other fallback of an op type that
# has CUDA kernels fails the tests below; op types without any CUDA kernel fall back by design.
_NHWC_ONLY = "the CUDA kernels take NHWC data (data_format NCHW runs on the CPU)"
EXPECTED_FALLBACKS = {
    "MatMul[[3, 4]x[4, 2]]": {"MatMul": "no CUDA kernel for dtype int32"},
    "MaxPool[int32]": {"MaxPool": "no CUDA kernel for dtype int32"},
    "GatherV2[[2, 4, 3]x[2, 5]]": {"GatherV2": "gather with batch_dims runs on the CPU"},
    "Conv2D[(2, 2, 5, 4)x(3, 3, 2, 2) s=(1, 2) SAME d=(1, 1) NCHW]": {"Conv2D": _NHWC_ONLY},
    "Conv2D[(2, 8, 4, 5)x(3, 3, 8, 2) s=(1, 1) SAME d=(1, 1) NCHW]": {"Conv2D": _NHWC_ONLY},
    "Conv2D[conv1d NCW]": {"Conv2D": _NHWC_ONLY},
    "FusedConv2D[(1, 3, 5, 4)x(3, 3, 3, 2) Relu6 s=(1, 1) SAME NCHW float64]":
        {"FusedConv2D": _NHWC_ONLY},
    "FusedConv2D[(2, 32, 16, 16)x(3, 3, 32, 16) Relu6 s=(1, 1) SAME NCHW float32]":
        {"FusedConv2D": _NHWC_ONLY},
    "Conv2DBackpropFilterBias[(1, 3, 5, 4)x(3, 3, 3, 2) s=(1, 1) SAME NCHW Sum float64]":
        {"Conv2DBackpropFilterBias": _NHWC_ONLY},
    "Conv2DBackpropFilterBias[(4, 16, 16, 16)x(3, 3, 16, 32) s=(1, 1) SAME NCHW BiasAddGrad "
    "float32]": {"Conv2DBackpropFilterBias": _NHWC_ONLY},
    "MaxPool[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"MaxPool": _NHWC_ONLY},
    "AvgPool[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"AvgPool": _NHWC_ONLY},
    "MaxPoolGrad[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"MaxPool": _NHWC_ONLY,
                                                             "MaxPoolGrad": _NHWC_ONLY},
    "MaxPoolGradGrad[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"MaxPool": _NHWC_ONLY},
    "FusedMaxPoolGradReluMask[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW float64]":
        {"MaxPool": _NHWC_ONLY, "FusedMaxPoolGradReluMask": _NHWC_ONLY},
    "AvgPoolGrad[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"AvgPoolGrad": _NHWC_ONLY},
    # strings live on the host
    **{f"{op}[strings x {other}]": {op: "no CUDA kernel for dtype object"}
       for op in ("Equal", "NotEqual") for other in ("strings", "scalar string")},
    # scaling the float16 uniform draws to [minval, maxval): no float16 elementwise kernels
    "RandomUniform[float16]": {op: "no CUDA kernel for dtype float16" for op in ("Sub", "Mul", "Add")},
}


def _check_fallbacks(case, pl):
    """The plan's fallbacks to the CPU are exactly the expected ones: op types without CUDA
    kernels, and the fallbacks EXPECTED_FALLBACKS lists for this case (which must happen)."""
    expected = EXPECTED_FALLBACKS.get(case.name, {})
    seen, unexpected = set(), []
    for op, _, reason in pl.fallbacks:
        if cuda_table.spec(op.type) is None:
            if not reason.startswith(f"no CUDA kernel for op type '{op.type}'"):
                unexpected.append((op.type, reason))
        elif expected.get(op.type) is not None and reason.startswith(expected[op.type]):
            seen.add(op.type)
        else:
            unexpected.append((op.type, reason))
    assert not unexpected, f"{case.name}: unexpected fallbacks to the CPU {unexpected}"
    assert seen == set(expected), f"{case.name}: expected fallbacks {expected} did not happen"


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class _Meta:
    plan = None


# ================================================================ 1. host side, recording runtime
@pytest.fixture
def recording(monkeypatch):
    rt = RecordingRuntime()
    monkeypatch.setattr(cuda_table, "_runtime", rt)
    with placement.use_backend(RecordingBackend(rt)):
        yield rt


# With integer shape arithmetic on the GPU too, these cases compute a value on the device that a
# host-side op then reads: the recording runtime computes no device values, so they run only
# with host_int here (their values on the device are compared in
# test_op_cases_on_the_gpu_match_the_cpu, on the GPU or its emulation).
HOST_INPUT_FROM_DEVICE = frozenset([
    "Reshape[[3, 4]]", "Fill[[4, 2]]", "StridedSlice[[4, 3]]", "If[true]", "If[false]",
    "TensorArrayV3[[3, 2]]", "TensorArrayUnstack[[4]]", "TensorArrayStack[[2, 2, 2]]",
    "TensorArrayWriteV3[[3]]", "TensorArrayReadV3[[2, 2]]", "TensorArrayConcatV3[[2, 2]]",
    "WhileGrad[[2, 3]]", "TensorArrayGradOfRead[[2, 3]]", "TensorArrayGradRead[[2]]",
    "TensorArrayGradOfStack[[2, 2]]", "TensorArrayGradStack[[2, 1]]",
    "TensorArrayAddGradients[[2, 4]]", "TensorArrayGradOfGather[[3, 2]]",
    "TensorArrayGradGather[[3]]", "TensorArrayGradOfConcat[[2, 2]]",
    "TensorArrayZeroGradient[[2, 3]]", "ResizeBilinearGrad[[2, 5, 3, 2]x[2, 3, 4, 2]]",
    "CheckNumerics[[2, 4]]", "Conv2D[conv1d NCW]", "MatrixDiag[tf.diag rank 2]",
    "MaxPoolGradGrad[(2, 4, 4, 2) k=(2, 2) s=(2, 2) VALID NHWC]",
    "MaxPoolGradGrad[(1, 5, 7, 2) k=(2, 2) s=(2, 2) VALID NHWC]",
    "MaxPoolGradGrad[(1, 5, 5, 2) k=(3, 3) s=(2, 2) SAME NHWC]",
    "MaxPoolGradGrad[(2, 4, 5, 1) k=(2, 3) s=(1, 2) SAME NHWC]",
])
_LAUNCH_MODES = [pytest.param(case, all_gpu, id=f"{case.name}-{'all_gpu' if all_gpu else 'host_int'}")
                 for case in CASES for all_gpu in (False, True)
                 if not (all_gpu and case.name in HOST_INPUT_FROM_DEVICE)]


def _host_input_from_device(placement_):
    return any(c is not None and to == "host" for _, _, to, c in placement_.copies)


@pytest.mark.parametrize("case,all_on_gpu", _LAUNCH_MODES)
def test_launchers_match_kernel_signatures_and_output_shapes(case, all_on_gpu, recording,
                                                             monkeypatch):
    """all_gpu also puts integer shape arithmetic on the GPU, so integer kernels launch too."""
    monkeypatch.setattr(placement.Placement, "host_int_arithmetic", not all_on_gpu)
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape, name=f"in{i}")
                    for i, x in enumerate(case.inputs)]
    outs = _as_list(case.build(*placeholders))
    with tf.Session(optimize=False) as sess:
        want = sess.run(outs, dict(zip(placeholders, case.inputs)))
    with tf.Session(device="/gpu:0", optimize=False) as sess:
        plan = sess._plan_for(outs, placeholders)
        pl = plan.placement
        assert not (all_on_gpu and _host_input_from_device(pl)), \
            f"{case.name}: a host input is computed on the device; list it in HOST_INPUT_FROM_DEVICE"
        got = plan.run(tuple(case.inputs))
    for g, w in zip(got, want):
        if isinstance(w, bytes):  # a scalar tf.string is fetched as bytes, as in TF1
            assert g == w, case.name
            continue
        assert g.shape == np.shape(w) and g.dtype == np.asarray(w).dtype, case.name
    on_gpu = {op.type for op, d in pl.device_of.items() if d == "/gpu:0"}
    _check_fallbacks(case, pl)
    if cuda_table.spec(case.op_type) is not None and case.op_type != "Const":
        elsewhere = {op.type for op, _, _ in pl.fallbacks} | {op.type for op, _ in pl.kept_on_host}
        assert case.op_type in on_gpu | elsewhere, f"{case.op_type} was not placed on the GPU"


def test_the_cases_listed_compute_a_host_input_on_the_device(recording, monkeypatch):
    """HOST_INPUT_FROM_DEVICE is exact for the cases it names (the others are checked above)."""
    monkeypatch.setattr(placement.Placement, "host_int_arithmetic", False)
    listed = [c for c in CASES if c.name in HOST_INPUT_FROM_DEVICE]
    assert len(listed) == len(HOST_INPUT_FROM_DEVICE)
    for case in listed:
        tf.reset_default_graph()
        ph = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape) for x in case.inputs]
        with tf.Session(device="/gpu:0", optimize=False) as sess:
            plan = sess._plan_for(_as_list(case.build(*ph)), ph)
        assert _host_input_from_device(plan.placement), case.name


@needs_program("nvcc", "the launch checks read nvcc's parameter lists")
def test_kernels_generated_by_the_launchers_compile(recording):
    """The generated kernels the op cases asked for (their layouts and ranks) compile with nvcc."""
    if len(GENERATED) < 20:  # run on its own: produce them
        for case in CASES[:120]:
            tf.reset_default_graph()
            ph = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape) for x in case.inputs]
            with tf.Session(device="/gpu:0", optimize=False) as sess:
                sess.run(_as_list(case.build(*ph)), dict(zip(ph, case.inputs)))
    from graphflow.kernels.cuda import codegen
    header = sources.expand(codegen.HEADER)
    bodies = [text[len(header):] for text in GENERATED.values()]
    assert len(bodies) >= 20 and all(t.startswith(header) for t in GENERATED.values())
    ptx = check_compiles(header + "\n".join(bodies), "sm_90", tag="launcher_generated")
    assert set(re.findall(r"\.entry\s+(\w+)", ptx)) == set(GENERATED)


def test_every_table_entry_is_a_registered_op_type():
    unknown = set(cuda_table.registered_types()) - set(registry.registered_types())
    assert not unknown, f"CUDA kernels for op types nobody registered: {sorted(unknown)}"


def test_optimized_training_step_launches(recording):
    """A whole Adam training step of an MLP (fusion on) goes through the launchers."""
    x = tf.placeholder(tf.float32, [None, 20])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.dense(x, 16, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 4)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    with tf.Session(device="/gpu:0") as sess:
        sess.run(tf.global_variables_initializer())
        meta = _Meta()
        sess.run([loss, train], {x: np.ones((8, 20), np.float32), y: np.zeros(8, np.int64)},
                 run_metadata=meta)
    launched = set(recording.launches)
    assert {"gf_apply_adam_f32", "gf_sparse_xent_warp_f32_i64"} <= launched
    assert any(n.startswith("gf_gemm_f32s_") for n in launched)
    assert not meta.plan.placement.fallbacks, meta.plan.placement.report()


def test_optimized_conv_training_step_launches(recording):
    """A conv layer's training step, fusion on (FusedConv2D, Conv2DBackpropFilterBias), goes
    through the launchers: the filter gradient's GEMMs and the bias gradient's reduction."""
    x = tf.placeholder(tf.float32, [4, 8, 8, 3])
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    loss = tf.reduce_mean(tf.square(h))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session(device="/gpu:0") as sess:
        sess.run(tf.global_variables_initializer())
        meta = _Meta()
        sess.run([loss, train], {x: np.ones((4, 8, 8, 3), np.float32)}, run_metadata=meta)
    assert [op.type for op in meta.plan.ops].count("Conv2DBackpropFilterBias") == 1
    assert not meta.plan.placement.fallbacks, meta.plan.placement.report()
    launched = set(recording.launches)
    assert any(n.startswith("gf_reduce_") for n in launched)
    assert "gf_im2col_f32" in launched


def test_module_cache_compiles_each_source_once():
    compiled = []

    def compile_fn(text):
        compiled.append(text)
        return type("Module", (), {"get_function": staticmethod(lambda name: name)})()
    cache = sources.ModuleCache(compile_fn)
    text = sources.load("reduce.cu")
    assert cache.function(text, "a") == "a" and cache.function(text, "b") == "b"
    cache.get(sources.load("matmul.cu"))
    assert len(compiled) == 2 and cache.compiles == 2 and len(cache) == 2


# ================================================================ 2. values, on a GPU or emulated
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
    grads = [g for g in tf.gradients(total, xs) if g is not None]
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


@needs_gpu
def test_steady_state_runs_allocate_nothing_new_and_compile_nothing():
    rt = cuda_table.runtime()
    x = tf.placeholder(tf.float32, [256, 128])
    w = tf.Variable(np.ones((128, 64), np.float32) * 0.01)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    xv = np.ones((256, 128), np.float32)
    with tf.Session(device="/gpu:0") as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {x: xv})
        stats = rt.pool_stats()
        compiles = rt.modules.compiles
        blocks = stats["active_blocks"] + stats["held_blocks"]
        for _ in range(20):
            sess.run(train, {x: xv})
        after = rt.pool_stats()
        assert after["active_blocks"] + after["held_blocks"] == blocks, (stats, after)
        assert rt.modules.compiles == compiles


@pytest.mark.skipif(GPU_OK, reason="a CUDA device is available: the benchmark would run")
def test_benchmark_explains_why_it_cannot_run():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "bench_cuda.py")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert f"no CUDA device available: {GPU_REASON}" in proc.stderr
