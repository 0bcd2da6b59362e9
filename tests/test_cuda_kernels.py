"""CUDA kernels against the CPU kernels. Two layers:
1. Host side, everywhere (this file): every op case of tests/op_cases runs through the *real* CUDA
   launchers with a recording runtime instead of PyCUDA. Each launch is checked against the
   kernel's parameter list in the PTX that nvcc produced (names, count and size of every argument,
   grid/block limits, no empty buffers passed), and every output's shape and dtype against the CPU
   kernel's output (tests/cuda_recording.py). The memory pool and module cache in steady state
   need the real device (skipped elsewhere, with the reason).
2. Values (tests/test_cuda_kernels_values.py): the same cases compared value by value with the CPU
   kernels, odd sizes, broadcasting, empty tensors, gradients computed on the GPU vs the CPU,
   device-resident variables — on the GPU when there is one, otherwise on the CPU emulation of the
   very same kernel sources (tests/cuda_emulator.py: each CUDA thread a fiber, barriers and warp
   shuffles emulated).
"""

import re

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import placement
from graphflow.kernels import cuda as cuda_table
from graphflow.kernels.cuda import sources
from graphflow.ops import registry
from tests.cuda_recording import GENERATED, RecordingBackend, RecordingRuntime
from tests.op_cases import all_cases
from tests.test_cuda_compile import check_compiles
from tests.tooling import needs_program

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
    "Conv2DBackpropInputFilter[(1, 3, 5, 4)x(3, 3, 3, 2) s=(1, 1) SAME NCHW Sum float64]":
        {"Conv2DBackpropInputFilter": _NHWC_ONLY},
    "Conv2DBackpropInputFilter[(4, 16, 16, 16)x(3, 3, 16, 32) s=(1, 1) SAME NCHW BiasAddGrad "
    "float32]": {"Conv2DBackpropInputFilter": _NHWC_ONLY},
    "Conv2DBackpropInputFilter[(1, 3, 5, 4)x(3, 3, 3, 2) s=(1, 1) SAME NCHW no-bias float64]":
        {"Conv2DBackpropInputFilter": _NHWC_ONLY},
    "Conv2DBackpropInputFilter[(4, 16, 16, 16)x(3, 3, 16, 32) s=(1, 1) SAME NCHW no-bias "
    "float32]": {"Conv2DBackpropInputFilter": _NHWC_ONLY},
    "MaxPool[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"MaxPool": _NHWC_ONLY},
    "AvgPool[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"AvgPool": _NHWC_ONLY},
    "MaxPoolGrad[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"MaxPool": _NHWC_ONLY,
                                                             "MaxPoolGrad": _NHWC_ONLY},
    "MaxPoolGradGrad[(1, 2, 5, 3) k=(2, 2) s=(2, 2) SAME NCHW]": {"MaxPool": _NHWC_ONLY},
    "Conv2DBackpropFilterBiasReluMask[(1, 3, 5, 4)x(3, 3, 3, 2) NCHW float64]":
        {"Conv2DBackpropFilterBiasReluMask": _NHWC_ONLY},
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
    "ResizeBicubicGrad[[2, 6, 8, 2]x[2, 3, 4, 2]]", "CropAndResize[[2, 5, 6, 3]x[3, 4]]",
    "CropAndResize[nearest]",
    "CheckNumerics[[2, 4]]", "Conv2D[conv1d NCW]", "MatrixDiag[tf.diag rank 2]",
    "MaxPoolGradGrad[(2, 4, 4, 2) k=(2, 2) s=(2, 2) VALID NHWC]",
    "MaxPoolGradGrad[(1, 5, 7, 2) k=(2, 2) s=(2, 2) VALID NHWC]",
    "MaxPoolGradGrad[(1, 5, 5, 2) k=(3, 3) s=(2, 2) SAME NHWC]",
    "MaxPoolGradGrad[(2, 4, 5, 1) k=(2, 3) s=(1, 2) SAME NHWC]",
    "CTCLoss[batch-major float32]",  # the logits' transpose runs on the device, CTCLoss on the host
    "GatherV2[repeat counts fed]", "GatherV2[repeat scalar fed]",
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
    """A conv layer's training step, fusion on (FusedConv2D, and its ReLU gradient, filter and
    bias gradients as one Conv2DBackpropFilterBiasReluMask), goes through the launchers: the
    mask's generated kernel, the filter gradient's GEMMs and the bias gradient's reduction."""
    x = tf.placeholder(tf.float32, [4, 8, 8, 3])
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    loss = tf.reduce_mean(tf.square(h))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session(device="/gpu:0") as sess:
        sess.run(tf.global_variables_initializer())
        meta = _Meta()
        sess.run([loss, train], {x: np.ones((4, 8, 8, 3), np.float32)}, run_metadata=meta)
    assert [op.type for op in meta.plan.ops].count("Conv2DBackpropFilterBiasReluMask") == 1
    assert not meta.plan.placement.fallbacks, meta.plan.placement.report()
    launched = set(recording.launches)
    assert any(n.startswith("gf_reduce_") for n in launched)
    assert any(n.startswith("gf_ew_") for n in launched), sorted(launched)
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


@needs_gpu
def test_a_traced_run_on_the_device_gives_the_untraced_values_and_step_stats():
    x = tf.placeholder(tf.float32, [8, 16], name="x")
    w = tf.Variable(np.full((16, 4), 0.5, np.float32), name="w")
    y = tf.nn.relu(tf.matmul(x, w), name="y")
    xv = np.arange(128, dtype=np.float32).reshape(8, 16) / 64 - 1
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session(device="/gpu:0") as sess:
        sess.run(w.initializer)
        want = sess.run(y, {x: xv})
        meta = tf.RunMetadata()
        got = sess.run(y, {x: xv}, options=options, run_metadata=meta)
    np.testing.assert_array_equal(got, want)
    names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
    assert "y" in names, names


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
