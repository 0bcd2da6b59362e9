"""graphflow.kernels.cpu.numba.jit_batch_norm: the compiled FusedBatchNorm / FusedBatchNormGrad against the
numpy kernels of nn_norm_kernels.py (the reference), NHWC and NCHW (rows and planes loops), float32
and float64, training and inference, on odd shapes: float64 to 1e-12; float32 to 2e-6 of the
exact values (the reference in float64 on the same inputs; the float32 reference itself sums in
float32 and is further off on large inputs) and close to the float32 reference; the elementwise
outputs the reference's bits where the statistics are given. The bits do not depend on the thread
count. Sessions run the loops where the plan chose them (`batch_norm_kernels.py`) and the numpy
reference otherwise (float16, small inputs, `TABLE.restricted_to()`, GRAPHFLOW_NO_JIT=1)."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import batch_norm_kernels, jit_batch_norm
from graphflow.kernels.cpu.reference import nn_norm_kernels
from graphflow.kernels.cpu.threads import intra_op, omp_team
from graphflow.ops import nn_norm_ops
from tests.op_cases import nn_norm_cases, run_build

pytestmark = pytest.mark.skipif(jit_batch_norm.loops() is None,
                                reason="numba is not installed (or GRAPHFLOW_NO_JIT=1)")

EPS = 1e-3
SHAPES = [(3, 5, 7, 11), (64, 32, 32, 16), (2, 4, 4, 1), (3, 7, 33, 19)]
CASES = [(s, f, d) for s in SHAPES for f in ("NHWC", "NCHW") for d in (np.float32, np.float64)]
IDS = [f"{'x'.join(map(str, s))}-{f}-{np.dtype(d).name}" for s, f, d in CASES]


def _inputs(shape, fmt, dtype, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[1] if fmt == "NCHW" else shape[3]
    x = (rng.standard_normal(shape) * 2 + rng.uniform(-3, 3, c).reshape(
        (1, -1, 1, 1) if fmt == "NCHW" else (1, 1, 1, -1))).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    scale = rng.uniform(0.5, 2, c).astype(dtype)
    offset = rng.standard_normal(c).astype(dtype)
    mean = rng.standard_normal(c).astype(dtype)
    variance = rng.uniform(0.5, 2, c).astype(dtype)
    return x, dy, scale, offset, mean, variance


def _forward(x, scale, offset, mean, variance, fmt, training, threads=1):
    return jit_batch_norm.fused_batch_norm(x, scale, offset, mean, variance, EPS, fmt == "NCHW",
                                           training, threads)


def _grad(dy, x, scale, mean, variance, fmt, training, threads=1):
    return jit_batch_norm.fused_batch_norm_grad(dy, x, scale, mean, variance, EPS, fmt == "NCHW",
                                                training, threads)


def _close(got, want, rtol):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * float(np.max(np.abs(w))))


def _f64(*arrays):
    return [a.astype(np.float64) for a in arrays]


def _check_like_reference(got, reference, exact, dtype):
    """float64: the reference to 1e-12; float32: the exact values to 2e-6, the reference to 5e-5."""
    if dtype == np.float64:
        _close(got, reference, 1e-12)
    else:
        _close([g.astype(np.float64) for g in got], exact, 2e-6)
        _close(got, reference, 5e-5)


@pytest.mark.parametrize("shape,fmt,dtype", CASES, ids=IDS)
def test_forward_matches_the_reference(shape, fmt, dtype):
    x, _, scale, offset, mean, variance = _inputs(shape, fmt, dtype)
    empty = np.empty(0, dtype)
    # training: the statistics in float64 are closer to the exact ones than the float32 reference's
    got = _forward(x, scale, offset, empty, empty, fmt, True)
    ref = nn_norm_kernels.fused_batch_norm_reference(x, scale, offset, empty, empty, EPS, fmt, True)
    exact = nn_norm_kernels.fused_batch_norm_reference(*_f64(x, scale, offset, empty, empty), EPS,
                                                       fmt, True)
    _check_like_reference(got, ref, exact, dtype)
    assert got[1] is not got[3]
    # inference: the reference's formula in its order, the same bits
    got = _forward(x, scale, offset, mean, variance, fmt, False)
    ref = nn_norm_kernels.fused_batch_norm_reference(x, scale, offset, mean, variance, EPS, fmt,
                                                     False)
    for g, r in zip(got, ref):
        assert g.dtype == r.dtype and g.tobytes() == r.tobytes()


@pytest.mark.parametrize("shape,fmt,dtype", CASES, ids=IDS)
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_gradient_matches_the_reference(shape, fmt, dtype, training):
    x, dy, scale, offset, _, _ = _inputs(shape, fmt, dtype)
    empty = np.empty(0, dtype)
    _, _, _, mean, variance = nn_norm_kernels.fused_batch_norm_reference(x, scale, offset, empty,
                                                                         empty, EPS, fmt, True)
    got = _grad(dy, x, scale, mean, variance, fmt, training)
    ref = nn_norm_kernels.fused_batch_norm_grad_reference(dy, x, scale, mean, variance, EPS, fmt,
                                                          training)
    exact = nn_norm_kernels.fused_batch_norm_grad_reference(*_f64(dy, x, scale, mean, variance),
                                                            EPS, fmt, training)
    _check_like_reference(got, ref, exact, dtype)
    if not training:  # dx = dy * gain: the reference's bits
        assert got[0].tobytes() == ref[0].tobytes()


@pytest.mark.parametrize("way", ["pool", "team"])
@pytest.mark.parametrize("shape,fmt,dtype", CASES, ids=IDS)
def test_bits_do_not_depend_on_the_thread_count(shape, fmt, dtype, way, monkeypatch):
    """On the intra-op pool, or on the OpenMP team (`omp_team.py`, while products run as a team),
    the blocks give the one-thread bits."""
    if way == "team" and not omp_team.usable():
        pytest.skip("needs numba (omp threading layer) and oneDNN")
    x, dy, scale, offset, mean, variance = _inputs(shape, fmt, dtype, seed=1)
    empty = np.empty(0, dtype)
    size = x.size
    monkeypatch.setattr(jit_batch_norm, "BLOCK_ELEMENTS", max(8, size // 16))  # many blocks
    monkeypatch.setattr(jit_batch_norm, "PARALLEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(jit_batch_norm, "TEAM_MIN_ELEMENTS", 0)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team" if way == "team" else "blocks")
    shared = []
    if way == "pool":
        real = intra_op.POOL.run_shared
        monkeypatch.setattr(intra_op.POOL, "run_shared",
                            lambda work, threads: shared.append(threads) or real(work, threads))
    else:
        real = omp_team.run
        monkeypatch.setattr(omp_team, "run", lambda *a: shared.append(a[3]) or real(*a))

    def outputs(threads):
        fwd = _forward(x, scale, offset, empty, empty, fmt, True, threads)
        inf = _forward(x, scale, offset, mean, variance, fmt, False, threads)
        grads = [_grad(dy, x, scale, fwd[3], fwd[4], fmt, training, threads)
                 for training in (True, False)]
        return [a for out in (fwd, inf, *grads) for a in out]

    one = outputs(1)
    assert not shared
    two = outputs(2)
    assert shared and set(shared) == {2}  # the blocks went to the pool or the team
    assert [a.tobytes() for a in one] == [a.tobytes() for a in two]
    monkeypatch.setattr(jit_batch_norm, "PARALLEL_MIN_ELEMENTS", 1 << 40)
    assert [a.tobytes() for a in outputs(2)] == [a.tobytes() for a in one]


def test_non_contiguous_inputs_are_copied():
    x, dy, scale, offset, _, _ = _inputs((4, 6, 6, 8), "NHWC", np.float32)
    xt, dyt = x.transpose(0, 2, 1, 3), dy.transpose(0, 2, 1, 3)
    empty = np.empty(0, np.float32)
    got = _forward(xt, scale, offset, empty, empty, "NHWC", True)
    want = _forward(np.ascontiguousarray(xt), scale, offset, empty, empty, "NHWC", True)
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]
    got = _grad(dyt, xt, scale, want[3], want[4], "NHWC", True)
    want = _grad(np.ascontiguousarray(dyt), np.ascontiguousarray(xt), scale, want[3], want[4],
                 "NHWC", True)
    assert [a.tobytes() for a in got] == [a.tobytes() for a in want]


def _graph(fmt, training):
    def build(x, dy, scale, offset, mean, variance):
        if training:
            y, _, _ = nn_norm_ops.fused_batch_norm(x, scale, offset, epsilon=EPS, data_format=fmt)
            op = y.op
            grads = nn_norm_ops.fused_batch_norm_grad(dy, x, scale, op.outputs[3], op.outputs[4],
                                                      EPS, fmt, True)
        else:
            op = nn_norm_ops.fused_batch_norm(x, scale, offset, mean, variance, epsilon=EPS,
                                              data_format=fmt, is_training=False)[0].op
            grads = nn_norm_ops.fused_batch_norm_grad(dy, x, scale, mean, variance, EPS, fmt, False)
        return list(op.outputs) + list(grads)
    return build


def _spied(monkeypatch):
    """The compiled entry points called (a session's optimizer splits a training batch norm into
    its statistics, `batch_statistics`, and elementwise ops: fusion_batch_norm.py)."""
    calls = []
    for name in ("fused_batch_norm", "fused_batch_norm_grad", "batch_statistics"):
        real = getattr(jit_batch_norm, name)
        monkeypatch.setattr(jit_batch_norm, name,
                            lambda *a, real=real, name=name, **kw: calls.append(name) or real(*a, **kw))
    return calls


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_the_kernels_take_the_loops_where_they_apply(fmt, training, monkeypatch):
    inputs = _inputs((3, 5, 7, 11), fmt, np.float32)
    calls = _spied(monkeypatch)
    got = run_build(_graph(fmt, training), inputs, threads=2)
    assert calls == ["fused_batch_norm", "fused_batch_norm_grad"]  # (statistics fetched: whole)
    with TABLE.restricted_to():  # the numpy reference
        want = run_build(_graph(fmt, training), inputs)
    assert len(calls) == 2
    _close(got, want, 1e-5)
    if not training:
        assert got[0].tobytes() == want[0].tobytes()


@pytest.mark.parametrize("case", nn_norm_cases.CASES, ids=[c.name for c in nn_norm_cases.CASES])
def test_the_op_cases_match_with_the_loops(case, monkeypatch):
    monkeypatch.setattr(batch_norm_kernels, "MIN_ELEMENTS", 0)  # the plans choose the loops
    calls = _spied(monkeypatch)
    got = run_build(case.build, case.inputs)
    assert calls
    with TABLE.restricted_to():
        want = run_build(case.build, case.inputs)
    got, want = (list(v) if isinstance(v, (list, tuple)) else [v] for v in (got, want))
    _close(got, want, 1e-5 if want[0].dtype == np.float32 else 1e-12)


def test_float16_and_small_inputs_keep_the_numpy_kernels(monkeypatch):
    calls = _spied(monkeypatch)
    inputs = _inputs((3, 5, 7, 11), "NHWC", np.float16)
    got = run_build(_graph("NHWC", True), inputs)
    assert not calls and got[0].dtype == np.float16
    assert batch_norm_kernels.MIN_ELEMENTS == 1 << 10
    run_build(_graph("NHWC", True), _inputs((2, 4, 4, 1), "NHWC", np.float32))
    assert not calls
    run_build(_graph("NHWC", True), _inputs((2, 8, 8, 8), "NHWC", np.float32))
    assert calls == ["fused_batch_norm", "fused_batch_norm_grad"]


def test_graphflow_no_jit_runs_the_numpy_kernels():
    code = (
        "import numpy as np\n"
        "from graphflow.kernels.cpu.numba import jit_batch_norm\n"
        "from graphflow.kernels.cpu.reference import nn_norm_kernels\n"
        "from tests.kernels.cpu.numba.test_jit_batch_norm import _graph, _inputs\n"
        "from tests.op_cases import run_build\n"
        "from graphflow.kernels.cpu import TABLE\n"
        "assert jit_batch_norm.loops() is None and not TABLE.feature('numba')\n"
        "inputs = _inputs((3, 5, 7, 11), 'NCHW', np.float32)\n"
        "x, dy, s, o, m, v = inputs\n"
        "got = run_build(_graph('NCHW', True), inputs)\n"
        "e = np.empty(0, np.float32)\n"
        "want = nn_norm_kernels.fused_batch_norm_reference(x, s, o, e, e, 1e-3, 'NCHW', True)\n"
        "want += nn_norm_kernels.fused_batch_norm_grad_reference(dy, x, s, want[3], want[4], 1e-3,"
        " 'NCHW', True)\n"
        "assert [a.tobytes() for a in got] == [a.tobytes() for a in want]\n"
        "print('ok')\n")
    root = str(pathlib.Path(__file__).resolve().parents[4])  # the repository
    env = dict(os.environ, GRAPHFLOW_NO_JIT="1")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
