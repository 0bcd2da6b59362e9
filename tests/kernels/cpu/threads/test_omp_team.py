"""graphflow.kernels.cpu.threads.omp_team: loops over images run on the OpenMP team give the one-thread
loop's bits (MaxPool, the few-tap convolution, as ops in a session), run only while the chooser
runs products as a team (not on the intra-op pool's workers, not when switched off), and a process
forked after the team ran computes its pools (and in-place optimizer updates, which hold the GIL on
the team) on one thread instead of waiting for threads it does not have."""

import os
import signal
import time

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.numba import jit_conv, jit_pool
from graphflow.kernels.cpu.onednn import dnnl_matmul
from graphflow.kernels.cpu.reference import conv_geometry
from graphflow.kernels.cpu.threads import intra_op, omp_team

pytestmark = pytest.mark.skipif(not omp_team.usable(),
                                reason="needs numba (omp threading layer) and oneDNN")


@pytest.fixture
def team(monkeypatch):
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    calls = []
    real = omp_team.run
    monkeypatch.setattr(omp_team, "run", lambda *a: calls.append(a[2]) or real(*a))
    return calls


def _pool(x, threads):
    tf.reset_default_graph()
    p = tf.placeholder(tf.float32, x.shape)
    y = tf.nn.max_pool(p, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        return sess.run(y, {p: x})


@pytest.mark.parametrize("batch", [256, 7])
def test_max_pool_on_the_team_gives_the_one_thread_bits(team, batch):
    x = np.random.default_rng(0).standard_normal((batch, 8, 8, 32 * 256 // batch), np.float32)
    x[3, 1, 1, 0] = np.nan  # NaN propagates as in the one-thread loop
    got = _pool(x, 2)
    assert team == [batch]
    want = _pool(x, 1)
    assert len(team) == 1
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[3, 0, 0, 0])


def test_few_tap_convolution_on_the_team_gives_the_one_thread_bits(team):
    rng = np.random.default_rng(1)
    geo = conv_geometry.Geometry(8, 8, 3, 3, 1, 1, 1, 1, "SAME")
    x = rng.standard_normal((255, 8, 8, 1), np.float32)
    f = rng.standard_normal((3, 3, 1, 32), np.float32)
    b = rng.standard_normal(32, np.float32)
    got = jit_conv.Prepared(x, f, geo, True, threads=2)(x, f, b)
    assert team == [255]
    np.testing.assert_array_equal(got, jit_conv.Prepared(x, f, geo, True)(x, f, b))


def test_the_team_runs_only_while_products_run_as_one(monkeypatch):
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "blocks")
    assert not omp_team.wanted(2)
    monkeypatch.setenv("GRAPHFLOW_MATMUL_THREADING", "team")
    assert omp_team.wanted(2) and not omp_team.wanted(1)
    seen = []
    intra_op.POOL.run_shared(lambda: seen.append(omp_team.wanted(2)), 2)
    assert seen and not any(seen[1:])  # the caller may take the only piece; workers never team
    monkeypatch.setattr(dnnl_matmul, "_no_teams", True)
    assert not omp_team.wanted(2)


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("GRAPHFLOW_TEAM_LOOPS", "0")
    monkeypatch.setattr(omp_team, "_usable", None)
    assert not omp_team.usable()
    monkeypatch.setattr(omp_team, "_usable", None)
    monkeypatch.delenv("GRAPHFLOW_TEAM_LOOPS")
    assert omp_team.usable()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_after_the_team_ran_pools_on_one_thread(team):
    x = np.random.default_rng(2).standard_normal((256, 8, 8, 32), np.float32)
    want = _pool(x, 1)
    np.testing.assert_array_equal(_pool(x, 2), want)
    assert team, "the parent ran the team"
    # the child: the team's threads are gone; a team call would wait or abort
    _in_forked_child(lambda: not omp_team.wanted(2) and np.array_equal(_pool(x, 2), want))


def _in_forked_child(check):
    """Fork, run `check()` in the child (it must return True), and fail if the child fails or
    hangs."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if check() else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung")


def _pool_training_step(threads, relu=False):
    """A training step's MaxPool (argmaxes recorded for its gradient, from the second step on: the
    gradient asks for them in the first) and its recorded gradient (ReLU-masked with `relu`):
    the gradient of the third step."""
    tf.reset_default_graph()
    rng = np.random.default_rng(3)
    x = tf.Variable(rng.standard_normal((64, 16, 16, 32), np.float32))
    h = tf.nn.relu(x) if relu else x
    y = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    grad = tf.gradients(tf.reduce_sum(y * y), x)[0]
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            sess.run(grad)
        return sess.run(grad)


@pytest.mark.parametrize("relu", [False, True])
def test_pool_records_for_training_on_the_team_give_the_one_thread_bits(team, relu, monkeypatch):
    """The forward pass recording argmaxes and the recorded gradient (MaxPoolGrad, or
    FusedMaxPoolGradReluMask) run on the team (`jit_pool.TRAINING_ON_TEAM`), one call each per
    step, with the one-thread loops' bits; switched off, they keep the intra-op split."""
    assert jit_pool.TEAM_MIN_ELEMENTS <= 64 * 16 * 16 * 32
    got = _pool_training_step(2, relu)
    # the first step's pool (unrecorded; its gradient searches the windows), then each step's
    # recording forward pass and recorded gradient
    assert team == [64, 64, 64, 64, 64]
    team.clear()
    want = _pool_training_step(1, relu)
    assert team == []
    np.testing.assert_array_equal(got, want)
    monkeypatch.setattr(jit_pool, "TRAINING_ON_TEAM", False)
    np.testing.assert_array_equal(_pool_training_step(2, relu), want)
    assert team == [64]  # the first step's unrecorded pool only


def _adam_in_place(threads, size=None):
    from graphflow.kernels.cpu.numba import jit_updates
    size = size or omp_team.IN_PLACE_TEAM_MIN_ELEMENTS
    rng = np.random.default_rng(4)
    var, m, g = (rng.standard_normal(size, np.float32) for _ in range(3))
    v = np.abs(rng.standard_normal(size, np.float32))
    f32 = np.float32
    omp_team.run_holding_gil(jit_updates.loops()["adam_in_place"], size,
                                (var, m, v, g, f32(1e-3), f32(0.1), f32(1e-3), f32(0.9),
                                 f32(1e-7), False), threads)
    return var, m, v


def test_an_in_place_update_on_the_team_gives_the_one_thread_bits(team):
    got = _adam_in_place(2)
    assert team == [omp_team.IN_PLACE_TEAM_MIN_ELEMENTS]
    for a, b in zip(got, _adam_in_place(1)):
        np.testing.assert_array_equal(a, b)


def test_a_smaller_in_place_update_stays_on_the_calling_thread(team):
    size = omp_team.IN_PLACE_TEAM_MIN_ELEMENTS - 1
    got = _adam_in_place(2, size)
    assert team == []
    for a, b in zip(got, _adam_in_place(1, size)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_after_the_team_ran_updates_in_place_on_one_thread(team):
    want = _adam_in_place(1)
    _adam_in_place(2)
    assert team, "the parent ran the team"
    _in_forked_child(lambda: all(np.array_equal(a, b) for a, b in zip(_adam_in_place(2), want)))
