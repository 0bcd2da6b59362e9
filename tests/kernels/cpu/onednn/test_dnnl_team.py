"""graphflow.kernels.cpu.onednn.dnnl_team: the convolutions' blocks of images run by the OpenMP team give
the same bits as on the intra-op pool and on one thread (the filter gradient, and the filter and
input gradients together, with the bias sums and the ReLU mask of `conv_dy_pass` run inside the
team's loop), with a short last block (two primitives), strides, 1x1 filters, the filter read as
HWIO or reordered; they run there only while the chooser runs products as a team, with the bias
sums or the ReLU mask only where numba compiles their pass, and not while another thread runs
tasks there.
Skipped where oneDNN or numba's `omp` threading layer is missing."""

import threading

import numpy as np
import pytest

from graphflow.kernels.cpu.numba import conv_dy_pass
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads, dnnl_team
from graphflow.kernels.cpu.reference import conv_geometry
from graphflow.kernels.cpu.threads import omp_team
from tests.tooling import required

pytestmark = pytest.mark.skipif(
    dnnl.library() is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")

# (images, size, in channels, out channels, kernel, stride): 8 blocks; a short last block; stride
# 2; a 1x1 stride-2 projection; channels that are not a multiple of oneDNN's blocks
GEOMETRIES = [(16, 12, 8, 16, 3, 1), (7, 9, 5, 6, 3, 1), (10, 16, 16, 32, 3, 2),
              (12, 16, 16, 32, 1, 2), (9, 11, 3, 10, 3, 1)]


@pytest.fixture(autouse=True)
def _blocks_of_one_image(monkeypatch):
    """Small convolutions cut into blocks (one image of work each) and run on threads."""
    if not omp_team.usable():
        pytest.skip("numba with its omp threading layer is needed for the team")
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 0)


@pytest.fixture
def team_runs(monkeypatch):
    """The task counts of the runs on the team (`.ran`: what each run returned)."""
    runs = _Runs()
    real = dnnl_team.run

    def run(tasks, threads):
        runs.append(len(tasks))
        runs.ran.append(real(tasks, threads))
        return runs.ran[-1]
    monkeypatch.setattr(dnnl_team, "run", run)
    return runs


class _Runs(list):
    def __init__(self):
        super().__init__()
        self.ran = []


def _inputs(n, size, c, oc, k, stride, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, size, size, c)).astype(np.float32)
    f = rng.standard_normal((k, k, c, oc)).astype(np.float32)
    geo = conv_geometry.Geometry(size, size, k, k, stride, stride, 1, 1, "SAME")
    g = rng.standard_normal((n, geo.oh, geo.ow, oc)).astype(np.float32)
    return x, f, g, geo


def _gradients(x, f, g, geo, threads):
    alone = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, threads)
    both = dnnl_conv_grads.conv2d_backprop_input_filter(g, f, x, geo, threads, bias=False)
    return [alone, *both]


def _filter_gradient(x, g, geo, f_shape):
    """The filter gradient in float64 numpy: each tap's window of the padded input times dy."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (geo.pt, geo.pb), (geo.pl, geo.pr), (0, 0)))
    out = np.empty(f_shape)
    for i in range(f_shape[0]):
        for j in range(f_shape[1]):
            window = xp[:, i:i + geo.sh * geo.oh:geo.sh, j:j + geo.sw * geo.ow:geo.sw]
            out[i, j] = np.einsum("nyxc,nyxo->co", window, g)
    return out


def _same_bits(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("weights_any", [True, False])
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_team_gives_the_pools_and_one_threads_bits(geometry, weights_any, monkeypatch, team_runs):
    monkeypatch.setattr(dnnl_conv, "WEIGHTS_ANY", weights_any)  # reordered, or HWIO as it lies
    x, f, g, geo = _inputs(*geometry)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    on_team = _gradients(x, f, g, geo, 2)
    n_blocks = -(-geometry[0] // dnnl_conv.image_blocks(geometry[0], 1 << 40))
    assert team_runs == [n_blocks, 2 * n_blocks]  # the filter blocks, then with the input's
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "blocks")
    on_pool = _gradients(x, f, g, geo, 2)
    one_thread = _gradients(x, f, g, geo, 1)
    assert team_runs == [n_blocks, 2 * n_blocks]  # not on the team while the chooser has blocks
    _same_bits(on_team, on_pool)
    _same_bits(on_team, one_thread)
    np.testing.assert_allclose(on_team[0], _filter_gradient(x, g, geo, f.shape), rtol=1e-4,
                               atol=1e-3)


def _biased(x, f, g, y, geo, threads):
    """The filter gradient with the bias sums, with the ReLU mask too, and the input, filter and
    bias gradients together."""
    with_bias = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, threads, bias=True)
    masked = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, threads, bias=True,
                                                    relu_output=y)
    both = dnnl_conv_grads.conv2d_backprop_input_filter(g, f, x, geo, threads, bias=True)
    return [*with_bias, *masked, *both]


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_bias_sums_and_relu_mask_on_the_team_give_the_pools_bits(geometry, monkeypatch, team_runs):
    """The blocks' pass over dy (`conv_dy_pass`: the bias sums, the ReLU mask) runs inside the
    team's loop, before each block's primitive; the same bits as on the pool and on one thread,
    the filter gradient the unmasked op's of the masked dy, the bias gradient the float64 sums."""
    x, f, g, geo = _inputs(*geometry)
    y = np.random.default_rng(1).standard_normal(g.shape).astype(np.float32)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    on_team = _biased(x, f, g, y, geo, 2)
    n_blocks = -(-geometry[0] // dnnl_conv.image_blocks(geometry[0], 1 << 40))
    assert team_runs == [n_blocks, n_blocks, 2 * n_blocks]
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "blocks")
    on_pool = _biased(x, f, g, y, geo, 2)
    one_thread = _biased(x, f, g, y, geo, 1)
    assert team_runs == [n_blocks, n_blocks, 2 * n_blocks]
    _same_bits(on_team, on_pool)
    _same_bits(on_team, one_thread)
    masked_g = np.where(y > 0, g, np.float32(0))
    plain = dnnl_conv_grads.conv2d_backprop_filter(x, masked_g, geo, f.shape, 2)
    _same_bits([on_team[2]], [plain])
    for got, dy in ((on_team[1], g), (on_team[3], masked_g), (on_team[6], g)):
        exact = dy.astype(np.float64).sum(axis=(0, 1, 2))
        np.testing.assert_allclose(got, exact, rtol=0,
                                   atol=5e-7 * np.abs(dy).sum(axis=(0, 1, 2)).max())


def test_without_numbas_pass_bias_and_mask_stay_on_the_pool(monkeypatch, team_runs):
    """Without the compiled pass (no numba), the bias sums (BLAS) and the mask (numpy) run on the
    pool only; the filter gradient is the same bits."""
    monkeypatch.setattr(conv_dy_pass.loops, "compiled", False)
    x, f, g, geo = _inputs(16, 12, 8, 16, 3, 1)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    with_bias = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, 2, bias=True)
    masked = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, 2, relu_output=g)
    assert team_runs == []
    plain = dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, 2)
    assert team_runs == [8]  # MAX_BLOCKS blocks of two images
    _same_bits([with_bias[0]], [plain])
    want = dnnl_conv_grads.conv2d_backprop_filter(x, np.where(g > 0, g, 0), geo, f.shape, 2)
    _same_bits([masked], [want])
    np.testing.assert_allclose(with_bias[1], g.astype(np.float64).sum(axis=(0, 1, 2)), rtol=1e-5,
                               atol=1e-4)


def test_a_second_thread_runs_its_tasks_on_the_pool(monkeypatch, team_runs):
    """The workers' memory objects, streams and scratchpads are one set: while one thread runs
    tasks on the team, another's run returns False and its blocks run on the pool."""
    x, f, g, geo = _inputs(16, 12, 8, 16, 3, 1)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    want = _gradients(x, f, g, geo, 2)
    assert dnnl_team._run_lock.acquire()
    try:
        got = []
        thread = threading.Thread(target=lambda: got.append(_gradients(x, f, g, geo, 2)))
        thread.start()
        thread.join()
    finally:
        dnnl_team._run_lock.release()
    assert team_runs == [8, 16, 8, 16]  # tried; the last two returned False
    assert team_runs.ran == [True, True, False, False]
    _same_bits(got[0], want)


def test_switched_off(monkeypatch, team_runs):
    monkeypatch.setattr(dnnl_team, "ENABLED", False)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    x, f, g, geo = _inputs(16, 12, 8, 16, 3, 1)
    _gradients(x, f, g, geo, 2)
    assert team_runs == []
