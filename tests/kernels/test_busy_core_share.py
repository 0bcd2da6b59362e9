"""graphflow.kernels.cpu.busy_core_share: blocks shared with a helper thread pinned to the busy CPU
give every block's outputs exactly once, whoever computed them (the caller recomputes what the
helper has not published; a late helper never writes into the outputs after the call); the
convolutions that use it give the one-thread bits; the caller's affinity is restored."""

import os
import threading
import time

import numpy as np
import pytest

from graphflow.kernels.cpu import busy_core_share, free_cores
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv, dnnl_conv_grads
from graphflow.kernels.cpu.reference.conv_kernels import Geometry

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux only")


def _cpu():
    return max(os.sched_getaffinity(0))


needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(
    os, "sched_getaffinity") else True, reason="needs two CPUs in the affinity mask")


def _blocks(x, out, slow_helper=0.0, slow_caller=0.0, log=None):
    """Blocks of 2 rows: out = x * 2 + 1, the helper's (into given) or the caller's slowed."""
    def work_on(lo, hi, into=None):
        if into is None:
            time.sleep(slow_caller)
            np.multiply(x[lo:hi], 2, out=out[lo:hi])
            out[lo:hi] += 1
        else:
            time.sleep(slow_helper)
            np.multiply(x[lo:hi], 2, out=into[0])
            into[0] += 1
        if log is not None:
            log.append((threading.get_ident(), lo, into is not None))

    def outputs(lo, hi):
        return [out[lo:hi]]
    return [(work_on, lo, min(len(x), lo + 2), outputs) for lo in range(0, len(x), 2)]


@pytest.fixture(autouse=True)
def fresh_helper():
    busy_core_share.reset()
    yield
    busy_core_share.reset()


def test_a_slow_helper_leaves_its_blocks_to_the_caller_and_never_writes_late():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    out = np.zeros_like(x)
    busy_core_share.run(_blocks(x, out, slow_helper=0.05), _cpu())
    np.testing.assert_array_equal(out, x * 2 + 1)
    out[:] = -7  # the op's outputs handed on: the helper's late blocks must not land here
    time.sleep(0.15)
    assert (out == -7).all()
    assert busy_core_share._HELPER.published == 0


@needs_two_cpus
def test_the_helper_publishes_blocks_while_the_caller_is_slow():
    x = np.random.default_rng(0).standard_normal((16, 3)).astype(np.float32)
    out = np.zeros_like(x)
    log = []
    busy_core_share.run(_blocks(x, out, slow_caller=0.02, log=log), _cpu())
    np.testing.assert_array_equal(out, x * 2 + 1)
    helper_blocks = [lo for _, lo, by_helper in log if by_helper]
    assert helper_blocks and busy_core_share._HELPER.published >= 1
    assert len({lo for _, lo, _ in log}) == 8  # every block computed at least once


@needs_two_cpus
def test_a_block_the_helper_fails_to_publish_is_computed_by_the_caller():
    x = np.arange(32, dtype=np.float32).reshape(16, 2)
    out = np.zeros_like(x)
    log = []
    blocks = []
    for work_on, lo, hi, _ in _blocks(x, out, slow_caller=0.01, log=log):
        def read_only(lo, hi):
            view = out[lo:hi]
            view.flags.writeable = False  # the helper's copy into it fails
            return [view]
        blocks.append((work_on, lo, hi, read_only))
    busy_core_share.run(blocks, _cpu())
    np.testing.assert_array_equal(out, x * 2 + 1)
    assert any(by_helper for _, _, by_helper in log), "the helper computed blocks"
    assert busy_core_share._HELPER.published == 0


@needs_two_cpus
def test_a_caller_pinned_by_the_user_away_from_the_busy_cpu_shares_nothing():
    before = os.sched_getaffinity(0)
    mine, busy = sorted(before)[:2]
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    out = np.zeros_like(x)
    log = []
    os.sched_setaffinity(0, {mine})
    try:
        busy_core_share.run(_blocks(x, out, log=log), busy)
        assert os.sched_getaffinity(0) == {mine}
    finally:
        os.sched_setaffinity(0, before)
    np.testing.assert_array_equal(out, x * 2 + 1)
    assert not any(by_helper for _, _, by_helper in log)


def test_the_callers_affinity_is_restored_after_an_error():
    before = os.sched_getaffinity(0)

    def failing(lo, hi, into=None):
        raise ValueError("block failed")
    blocks = [(failing, lo, lo + 1, lambda lo, hi: [np.zeros(1)]) for lo in range(3)]
    with pytest.raises(ValueError, match="block failed"):
        busy_core_share.run(blocks, _cpu())
    assert os.sched_getaffinity(0) == before


def test_wanted_only_with_one_free_core_and_a_busy_cpu(monkeypatch):
    sensor = free_cores.SENSOR
    monkeypatch.setattr(sensor, "enabled", True)
    monkeypatch.setattr(sensor, "count", lambda: 1)
    monkeypatch.setattr(sensor, "busy_cpu", 1)
    assert busy_core_share.wanted(2, 8) == 1
    assert busy_core_share.wanted(1, 8) is None  # the session asked for one thread
    assert busy_core_share.wanted(2, 1) is None  # nothing to share
    assert busy_core_share.wanted(2, 8, busy_core_share.MIN_MACS) == 1
    assert busy_core_share.wanted(2, 8, busy_core_share.MIN_MACS - 1) is None  # too small
    monkeypatch.setattr(sensor, "busy_cpu", None)
    assert busy_core_share.wanted(2, 8) is None
    monkeypatch.setattr(sensor, "busy_cpu", 1)
    monkeypatch.setattr(sensor, "count", lambda: 2)  # two free cores: the usual split
    assert busy_core_share.wanted(2, 8) is None
    monkeypatch.setattr(busy_core_share, "ENABLED", False)
    monkeypatch.setattr(sensor, "count", lambda: 1)
    assert busy_core_share.wanted(2, 8) is None


needs_dnnl = pytest.mark.skipif(dnnl.library() is None, reason="oneDNN not installed")


def _sharing(monkeypatch, on):
    sensor = free_cores.SENSOR
    monkeypatch.setattr(sensor, "enabled", on)
    monkeypatch.setattr(sensor, "count", lambda: 1)
    monkeypatch.setattr(sensor, "busy_cpu", _cpu() if on else None)


@needs_dnnl
@needs_two_cpus
@pytest.mark.parametrize("slow", [None, "helper", "caller"])
def test_convolutions_shared_give_the_one_thread_bits(monkeypatch, slow):
    """Forward (bias + ReLU), input gradient, filter + bias gradient of a ReLU-masked dy, and the
    input + filter gradients together: shared with the busy CPU, the same bits as on one thread,
    with either side slowed down (the caller then recomputes the helper's blocks, or the helper
    publishes most of them)."""
    rng = np.random.default_rng(1)
    geo = Geometry(16, 16, 3, 3, 1, 1, 1, 1, "SAME")
    x = rng.standard_normal((32, 16, 16, 16)).astype(np.float32)
    f = rng.standard_normal((3, 3, 16, 32)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    g = rng.standard_normal((32, 16, 16, 32)).astype(np.float32)
    y = rng.standard_normal((32, 16, 16, 32)).astype(np.float32)
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 1)

    def everything():
        return (dnnl_conv.conv2d(x, f, geo, 2, bias, ((dnnl.ELTWISE_RELU, 0.0, 0.0),)),
                dnnl_conv.conv2d_backprop_input(g, f, geo, 32, 16, 2),
                *dnnl_conv_grads.conv2d_backprop_filter(x, g, geo, f.shape, 2, bias=True,
                                                        relu_output=y),
                *dnnl_conv_grads.conv2d_backprop_input_filter(g, f, x, geo, 2))
    _sharing(monkeypatch, False)
    want = everything()
    _sharing(monkeypatch, True)
    if slow is not None:
        execute = dnnl.Primitive.execute

        def slowed(self, buffers):
            on_helper = threading.current_thread().name == "graphflow-busy-core-share"
            if (slow == "helper") == on_helper:
                time.sleep(0.002)
            return execute(self, buffers)
        monkeypatch.setattr(dnnl.Primitive, "execute", slowed)
    published = busy_core_share._HELPER.published
    got = everything()
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    if slow == "caller":
        assert busy_core_share._HELPER.published > published


@needs_dnnl
def test_a_training_session_shared_with_the_busy_cpu_gives_the_same_values(monkeypatch):
    """A small CNN's Adam steps on two threads with one free core and a busy CPU: the convolutions
    shared with the helper, the same bits as with the sensor off."""
    import graphflow as tf

    def train():
        tf.reset_default_graph()
        rng = np.random.default_rng(3)
        x = tf.constant(rng.standard_normal((16, 16, 16, 8), np.float32))
        w1 = tf.Variable(rng.standard_normal((3, 3, 8, 16), np.float32) * 0.2)
        b1 = tf.Variable(np.zeros(16, np.float32))
        w2 = tf.Variable(rng.standard_normal((3, 3, 16, 16), np.float32) * 0.2)
        h = tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME") + b1)
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        h = tf.nn.relu(tf.nn.conv2d(h, w2, [1, 1, 1, 1], "SAME"))
        loss = tf.reduce_mean(tf.square(h))
        step = tf.train.AdamOptimizer(1e-2).minimize(loss)
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            return sess.run([loss, w1, b1, w2])
    monkeypatch.setattr(dnnl_conv, "PARALLEL_MIN_MACS", 1)
    monkeypatch.setattr(busy_core_share, "MIN_MACS", 1)
    monkeypatch.setattr(dnnl_conv, "BLOCK_MIN_WORK", 1)  # blocks of images
    _sharing(monkeypatch, False)
    want = train()
    _sharing(monkeypatch, True)
    blocks = []
    run = busy_core_share.run
    monkeypatch.setattr(busy_core_share, "run", lambda b, cpu: (blocks.append(len(b)), run(b, cpu)))
    got = train()
    assert len(blocks) >= 3 * 4, "the forward and gradient convolutions were shared"
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
