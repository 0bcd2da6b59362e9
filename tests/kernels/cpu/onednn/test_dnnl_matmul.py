"""graphflow.kernels.cpu.onednn.dnnl_matmul: oneDNN's 2-D float32 products give numpy's values for every
transpose combination, odd shapes, rows or columns blocks, an OpenMP team or one thread,
non-contiguous operands, and FusedMatMul's bias and activations (post-ops) against graphflow's own
numpy activation kernels; MatMul and FusedMatMul graphs run through it and match oneDNN switched
off; other dtypes, batched products and unsupported biases keep the numpy path; the team/blocks
chooser keeps the faster way and switches when the kept one turns slow.
Skipped where the optional oneDNN library (onednn-cpu-gomp) is not installed."""

import collections
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.onednn import dnnl, dnnl_matmul
from graphflow.kernels.cpu.onednn.dnnl_fused_matmul import FusedActivation
from graphflow.kernels.cpu.reference.fused_instructions import instruction
from graphflow.ops.fused_ops import MATMUL_ACTIVATIONS
from tests.tooling import required

pytestmark = pytest.mark.skipif(
    dnnl.library() is None and not required("onednn"),
    reason="oneDNN is not installed (onednn-cpu-gomp) or GRAPHFLOW_NO_DNNL=1; CI provides it")

LIBRARY = dnnl.library()
SHAPES = [(2, 1, 2), (5, 7, 3), (33, 65, 17), (64, 1000, 100), (256, 96, 40), (40, 96, 256),
          (130, 129, 131)]


@pytest.fixture
def mode(request, monkeypatch):
    """Fresh plans, every product through oneDNN, threads used the way the test names."""
    monkeypatch.setattr(dnnl_matmul, "_plans", type(dnnl_matmul._plans)())
    monkeypatch.setattr(dnnl_matmul, "MIN_MACS", 0)
    monkeypatch.setattr(dnnl_matmul, "PARALLEL_MIN_MACS", 0)
    monkeypatch.setattr(dnnl_matmul, "BLOCKS_MIN_MACS", 0)
    monkeypatch.setattr(dnnl_matmul, "MIN_BLOCK", 4)
    monkeypatch.setattr(dnnl_matmul, "MIN_COLUMNS", 8)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", getattr(request, "param", "blocks"))
    return getattr(request, "param", "blocks")


def _operands(m, k, n, ta, tb, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    return (a.T if ta else a), (b.T if tb else b)


def _close(got, want):
    assert got.dtype == np.float32 and got.shape == want.shape and got.flags.c_contiguous
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6 * scale)


@pytest.mark.parametrize("mode", ["blocks", "team"], indirect=True)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("ta, tb", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_products_match_numpy_for_every_transpose(shape, ta, tb, threads, mode):
    a, b = _operands(*shape, ta, tb)
    for _ in range(2):  # the second call reuses the plan
        got = dnnl_matmul.matmul(a, b, threads)
        _close(got, a.astype(np.float64) @ b.astype(np.float64))


def test_blocks_split_columns_where_wide_enough_and_not_tall_else_rows(mode, monkeypatch):
    monkeypatch.setattr(dnnl_matmul, "MIN_COLUMNS", 16)
    for m, n, by_rows, blocks in ((256, 24, True, 2), (40, 256, False, 4), (40, 40, False, 2),
                                  (300, 100, True, 2), (4, 40, False, 2), (40, 4, True, 2)):
        a, b = _operands(m, 64, n, False, False, seed=3)
        dnnl_matmul.matmul(a, b, 2)
        (plan,) = [p for key, p in dnnl_matmul._plans.items() if key[:3] == (m, 64, n)]
        assert plan.parallel and plan.by_rows == by_rows and len(plan.bounds) == blocks + 1
        _close(dnnl_matmul.matmul(a, b, 2), a.astype(np.float64) @ b)


def test_blocks_below_their_minimum_run_on_the_calling_thread(mode, monkeypatch):
    monkeypatch.setattr(dnnl_matmul, "BLOCKS_MIN_MACS", 64 * 64 * 64 + 1)
    runs = []
    real = dnnl_matmul._run_blocks
    monkeypatch.setattr(dnnl_matmul, "_run_blocks", lambda *a: runs.append(1) or real(*a))
    a, b = _operands(64, 64, 64, False, False, seed=6)
    _close(dnnl_matmul.matmul(a, b, 2), a.astype(np.float64) @ b)
    assert not runs
    a, b = _operands(64, 65, 64, False, False, seed=6)
    _close(dnnl_matmul.matmul(a, b, 2), a.astype(np.float64) @ b)
    assert runs


@pytest.mark.parametrize("mode", ["blocks", "team"], indirect=True)
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("activation", MATMUL_ACTIVATIONS)
def test_fused_bias_and_activation_match_graphflows_kernels(activation, tb, mode):
    a, b = _operands(70, 45, 90, False, tb, seed=4)
    bias = np.random.default_rng(5).standard_normal(90).astype(np.float32)
    attrs = {"alpha": 0.3} if activation == "LeakyRelu" else {}
    fused = FusedActivation(activation, attrs, np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64) + bias
    if activation:
        fn, _ = instruction(activation, attrs, [np.float64], np.float64)
        want = fn(want)
    for threads, as_row in ((1, False), (2, False), (2, True)):
        row = bias.reshape(1, -1) if as_row else bias
        got = fused.finish(dnnl_matmul.matmul(a, b, threads, row, fused.post_ops), True)
        _close(got, want)
        # post-ops give the bits of the product + bias, then graphflow's float32 instruction
        plain = dnnl_matmul.matmul(a, b, threads, row, ())
        unfused = FusedActivation(activation, attrs, np.float32).finish(plain, False)
        np.testing.assert_array_equal(got, unfused)


def test_non_contiguous_operands(mode):
    rng = np.random.default_rng(6)
    wide = rng.standard_normal((50, 80)).astype(np.float32)
    b = rng.standard_normal((40, 30)).astype(np.float32)
    cases = [(wide[:, :40], b),                      # rows with a longer stride: read in place
             (wide[::2, 10:50], b),                  # every other row
             (wide[:40, ::2], b[:, :]),              # every other column: copied
             (wide[:30, :40], wide[10:50, 40:70]),   # two windows of one array
             (wide.T[:40, :40].T, b)]                # a transposed window
    for a, bb in cases:
        _close(dnnl_matmul.matmul(a, bb, 2), a.astype(np.float64) @ bb.astype(np.float64))


def test_transposed_operands_are_not_copied(mode, monkeypatch):
    copies = []
    real = np.ascontiguousarray
    monkeypatch.setattr(dnnl_matmul.np, "ascontiguousarray",
                        lambda x, *a, **k: copies.append(x.shape) or real(x, *a, **k))
    a, b = _operands(64, 48, 32, True, True)
    _close(dnnl_matmul.matmul(a, b, 2), a.astype(np.float64) @ b)
    assert copies == []


def test_what_oneDNN_does_not_take_keeps_the_numpy_path(mode):
    a, b = _operands(8, 6, 4, False, False)
    assert dnnl_matmul.matmul(a.astype(np.float64), b, 2) is None
    assert dnnl_matmul.matmul(a, b.astype(np.float16), 2) is None
    assert dnnl_matmul.matmul(np.stack([a, a]), np.stack([b, b]), 2) is None  # batched
    assert dnnl_matmul.matmul(a, b, 2, np.ones((8, 4), np.float32)) is None  # bias per element
    assert dnnl_matmul.matmul(a, b, 2, np.ones(4, np.float64)) is None
    assert dnnl_matmul.matmul(a, b, 2, None, None) is None  # an activation oneDNN does not apply
    assert dnnl.activation_post_ops("Softsign", {}) is None
    assert dnnl_matmul.matmul(np.zeros((0, 6), np.float32), b, 2) is None
    # a vector times a matrix: numpy's matrix-vector product reads the matrix once
    assert dnnl_matmul.matmul(a[:1], b, 2) is None
    assert dnnl_matmul.matmul(a, b[:, :1], 2) is None


def test_disabled_library_gives_none(monkeypatch):
    monkeypatch.setattr(dnnl, "_library", False)
    a, b = _operands(64, 64, 64, False, False)
    assert dnnl_matmul.matmul(a, b, 2) is None


def _graph(onednn, monkeypatch, threads=2):
    """A dense layer, its fused form and its gradients with every transpose, run twice."""
    monkeypatch.setattr(dnnl, "_library", LIBRARY if onednn else False)
    cpu_kernels.TABLE.forget_features()  # (asked again: plans choose oneDNN only where it loads)
    try:
        return _graph_runs(rng_seed=7, threads=threads)
    finally:
        monkeypatch.setattr(dnnl, "_library", LIBRARY)
        cpu_kernels.TABLE.forget_features()


def _graph_runs(rng_seed, threads):
    rng = np.random.default_rng(rng_seed)
    xv = rng.standard_normal((96, 50)).astype(np.float32)
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 50])
    w = tf.constant(rng.standard_normal((50, 70)).astype(np.float32))
    w2 = tf.constant(rng.standard_normal((40, 70)).astype(np.float32))
    b = tf.constant(rng.standard_normal(70).astype(np.float32))
    h = tf.nn.relu(tf.matmul(x, w) + b)                # FusedMatMul after the fusion pass
    y = tf.matmul(h, w2, transpose_b=True)             # [96, 40]
    z = tf.matmul(y, x, transpose_a=True)              # [40, 50]
    u = tf.matmul(x, z, transpose_a=False, transpose_b=True)
    v = tf.matmul(z, y, transpose_a=True, transpose_b=True)
    gx, gw = tf.gradients(tf.reduce_sum(u) + tf.reduce_sum(tf.tanh(h)), [x, w])
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
        return [sess.run([h, y, z, u, v, gx, gw], {x: v_}) for v_ in (xv, xv[::-1] * 2)]


def test_graphs_match_oneDNN_switched_off(mode, monkeypatch):
    calls = []
    real = dnnl_matmul.matmul

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(dnnl_matmul, "matmul", spy)
    got = _graph(True, monkeypatch)
    assert sum(calls) >= 6, "oneDNN computed too few of the products"
    calls.clear()
    want = _graph(False, monkeypatch)
    assert not any(calls)
    for g_run, w_run in zip(got, want):
        for g, w in zip(g_run, w_run):
            _close(g, w.astype(np.float64))


@pytest.mark.parametrize("mode", ["blocks", "team", "auto"], indirect=True)
def test_products_on_several_threads_at_once(mode):
    import threading
    a, b = _operands(96, 80, 128, True, False, seed=9)
    bias = np.arange(128, dtype=np.float32)
    want = a.astype(np.float64) @ b + bias
    errors = []

    def run():
        try:
            for _ in range(30):
                _close(dnnl_matmul.matmul(a, b, 2, bias, dnnl.activation_post_ops("", {})), want)
        except Exception as exc:  # handed to the test's thread
            errors.append(exc)
    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


_FORK = """
import os, sys
import numpy as np
from graphflow.kernels.cpu.onednn import dnnl_matmul as dm
dm.PARALLEL_MIN_MACS = 0
a, b = np.ones((256, 64), np.float32), np.ones((64, 256), np.float32)
assert dm.matmul(a, b, 2)[0, 0] == 64 and dm._team_started
pid = os.fork()
if pid == 0:
    ok = dm._no_teams and dm.matmul(a, b, 2)[3, 5] == 64
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_after_a_team_product_uses_blocks():
    # libgomp's threads do not survive fork: a child starting a team would wait forever
    env = dict(os.environ, GRAPHFLOW_MATMUL_THREADING="team",
               PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", _FORK], env=env, timeout=120)
    assert done.returncode == 0


class _FakePlan:
    def __init__(self):
        self.times = {"team": collections.deque(maxlen=3),
                      "blocks": collections.deque(maxlen=3)}
        self.seen = {"team": 0, "blocks": 0}
        self.reference = None


class TestChooser:
    """The process-wide choice, fed with made-up times of three products called in turn."""

    def _feed(self, chooser, plans, times, calls):
        picked = []
        for i in range(calls):
            mode = chooser.pick()
            picked.append(mode)
            plan = plans[i % len(plans)]
            chooser.record(plan, mode, times[mode] * (1 + plans.index(plan)))
        return picked

    def test_keeps_the_faster_way_and_probes_less_often_while_it_holds(self):
        c, plans = dnnl_matmul._Chooser(), [_FakePlan() for _ in range(3)]
        picked = self._feed(c, plans, {"team": 1.0, "blocks": 1.2}, 3000)
        # a warm-up run (untimed), then one timed run each way
        assert picked[:48] == ["team"] * 48 and picked[48:72] == ["blocks"] * 24
        assert c.kept == "team"
        starts = [i for i in range(73, len(picked)) if picked[i] == "blocks" != picked[i - 1]]
        assert len(starts) == 3  # 256 calls after the choice, then 614 and 1474 (x 2 x 1.2)
        assert starts[2] - starts[1] > starts[1] - starts[0] > 2 * (starts[0] - 72)
        assert all(p.reference == 1.0 * (1 + k) for k, p in enumerate(plans))
        far = dnnl_matmul._Chooser()  # a way 10 times slower is timed again far less often
        picked = self._feed(far, [_FakePlan() for _ in range(3)], {"team": 1.0, "blocks": 10.0}, 3000)
        assert sum(1 for i in range(73, 3000) if picked[i] == "blocks" != picked[i - 1]) == 1
        assert far.interval == 5120

    def test_the_blocks_must_win_by_the_margin(self):
        # the timed sums leave out what the blocks cost the ops between products (pool wake-ups)
        close = dnnl_matmul._Chooser()
        self._feed(close, [_FakePlan() for _ in range(3)], {"team": 1.0, "blocks": 0.95}, 200)
        assert close.kept == "team"
        clear = dnnl_matmul._Chooser()
        self._feed(clear, [_FakePlan() for _ in range(3)], {"team": 1.0, "blocks": 0.8}, 200)
        assert clear.kept == "blocks"

    def test_warm_up_times_are_forgotten(self):
        c, plans = dnnl_matmul._Chooser(), [_FakePlan() for _ in range(3)]
        self._feed(c, plans, {"team": 5.0, "blocks": 1.5}, 24)  # a slow start
        self._feed(c, plans, {"team": 1.0, "blocks": 1.5}, 48)
        assert c.kept == "team"

    def test_switches_when_a_core_gets_busy_and_back_when_it_is_quiet(self):
        c, plans = dnnl_matmul._Chooser(), [_FakePlan() for _ in range(3)]
        self._feed(c, plans, {"team": 1.0, "blocks": 1.5}, 84)
        assert c.kept == "team"
        picked = self._feed(c, plans, {"team": 4.0, "blocks": 1.5}, 60)  # a core got busy
        # two slow team calls, the blocks timed, the team timed again (still slow): blocks
        assert c.kept == "blocks" and picked.count("team") <= 2 + c.RUN + 2
        picked = self._feed(c, plans, {"team": 1.0, "blocks": 1.5}, 400)  # quiet again
        assert c.kept == "team" and picked[-1] == "team"

    def test_a_disturbed_moment_does_not_switch_to_the_blocks(self):
        c, plans = dnnl_matmul._Chooser(), [_FakePlan() for _ in range(3)]
        self._feed(c, plans, {"team": 1.0, "blocks": 1.5}, 84)
        assert c.kept == "team"
        self._feed(c, plans, {"team": 4.0, "blocks": 1.5}, 3)  # slow for a moment
        picked = self._feed(c, plans, {"team": 1.0, "blocks": 1.5}, 60)  # then quiet again
        assert c.kept == "team" and picked[-1] == "team"

    def test_one_way_for_every_product(self):
        c, plans = dnnl_matmul._Chooser(), [_FakePlan() for _ in range(3)]
        # team faster for two products, blocks for the third: the sum decides for all
        def feed(calls):
            for i in range(calls):
                mode, plan = c.pick(), plans[i % 3]
                c.record(plan, mode, {"team": (1.0, 1.0, 3.0), "blocks": (1.2, 1.2, 2.0)}[mode][i % 3])
        feed(84)
        assert c.kept == "blocks" and c.pick() == "blocks"

    def test_new_products_are_judged_soon_not_after_the_earned_interval(self):
        """Small products kept the blocks for a long interval; a larger model's products, faster
        as a team, then run: the next probe comes within a few runs, and the team is chosen."""
        c, small = dnnl_matmul._Chooser(), [_FakePlan() for _ in range(3)]
        self._feed(c, small, {"team": 0.15, "blocks": 0.1}, 3000)
        assert c.kept == "blocks" and c.interval > 1000  # a long interval earned
        large = [_FakePlan() for _ in range(3)]
        picked = self._feed(c, large, {"team": 1.0, "blocks": 1.3}, 4 * c.RUN)
        assert c.kept == "team" and picked[-1] == "team"
        picked = self._feed(c, large, {"team": 1.0, "blocks": 1.3}, 2000)
        assert picked.count("blocks") <= 2 * c.RUN  # known products: back to growing intervals

    def test_a_probe_that_compared_nothing_keeps_the_way_and_probes_again_soon(self):
        """A probe of the blocks ends with no product timed both ways since the last choice (a
        new model's products started as the probe did, or the team's times were cleared): the
        way stays and the interval restarts; it once fell to 0, and the chooser then probed after
        every call."""
        c, plans = dnnl_matmul._Chooser(), [_FakePlan() for _ in range(3)]
        self._feed(c, plans, {"team": 1.0, "blocks": 1.5}, 3000)
        assert c.kept == "team" and c.interval > c.FIRST_PROBE
        fresh = _FakePlan()
        c.mode, c.plans, c.left = "blocks", {fresh}, 0  # a probe whose only product is new
        fresh.times["blocks"].extend([1.5, 1.5])
        c._next()
        assert c.kept == c.mode == "team" and c.interval == c.left == c.FIRST_PROBE

    def test_fixed_mode(self, monkeypatch):
        monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "blocks")
        assert dnnl_matmul.fixed_mode() == "blocks"
        monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
        assert dnnl_matmul.fixed_mode() == "team"
        monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "")
        assert dnnl_matmul.fixed_mode() is None


@pytest.fixture
def chosen(monkeypatch):
    """Fresh plans, the way left to the chooser; `chosen(way)` makes the chooser pick `way`."""
    monkeypatch.setattr(dnnl_matmul, "_plans", type(dnnl_matmul._plans)())
    monkeypatch.delenv("GRAPHFLOW_MATMUL_THREADING", raising=False)

    def pick(way):
        monkeypatch.setattr(dnnl_matmul.CHOOSER, "pick", lambda: way)
    return pick


@pytest.mark.parametrize("shape, bias, tb", [((64, 4096, 512), True, False),
                                             ((256, 784, 512), False, False),
                                             ((64, 512, 4096), False, True),
                                             ((4096, 64, 512), False, False)])
def test_a_products_values_do_not_depend_on_the_way(chosen, monkeypatch, shape, bias, tb):
    """The team and the blocks may sum in different orders; a product whose ways differ is pinned
    to one (its probe), so its bits never depend on the chooser's timing."""
    m, k, n = shape
    a, b = _operands(m, k, n, False, tb, seed=8)
    b_vec = np.random.default_rng(9).standard_normal(n).astype(np.float32) if bias else None
    results = []
    for way in (dnnl_matmul.TEAM, dnnl_matmul.BLOCKS):
        chosen(way)
        results.append(dnnl_matmul.matmul(a, b, 2, bias=b_vec))
    for got in results[1:]:
        np.testing.assert_array_equal(got, results[0])
    (plan,) = dnnl_matmul._plans.values()
    assert plan.parallel  # the ways differ only for a product split over threads


def test_the_probe_pins_a_product_whose_blocks_sum_differently(chosen, monkeypatch):
    """Told that the blocks differ from the one-thread primitive, the plan keeps the team (whose
    bits are the one-thread primitive's) and the chooser no longer times it; told that all agree,
    the chooser picks."""
    a, b = _operands(64, 4096, 512, False, False, seed=8)
    chosen(dnnl_matmul.BLOCKS)
    blocks = []
    real = dnnl_matmul._run_blocks
    monkeypatch.setattr(dnnl_matmul, "_run_blocks", lambda *args: blocks.append(1) or real(*args))
    dnnl_matmul.matmul(a, b, 2)
    (plan,) = dnnl_matmul._plans.values()
    probed = len(blocks)  # the probe ran the blocks once
    assert probed == 1
    plan._pinned = dnnl_matmul.TEAM
    recorded = []
    monkeypatch.setattr(dnnl_matmul.CHOOSER, "record", lambda *args: recorded.append(args))
    dnnl_matmul.matmul(a, b, 2)
    assert len(blocks) == probed and not recorded
    plan._pinned = ""
    dnnl_matmul.matmul(a, b, 2)
    assert len(blocks) == probed + 1 and recorded
