"""graphflow.kernels.cpu.numba.update_kernels: the plan chooses the compiled optimizer updates for
float32/float64 variables of a static size of at least MIN_ELEMENTS (their values are checked bit
for bit against the reference in `tests/kernels/cpu/reference/test_training_kernels.py`), and as a
run's last op they write the variables in place only where nothing else holds the stored arrays."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import jit_updates, update_kernels
from graphflow.ops import training_ops
from tests.kernels.cpu.reference.test_training_kernels import HYPER, SHAPE, SIZE, SLOTS, _optimizer, _stored

HAVE_NUMBA = jit_updates.loops() is not None
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed (or "
                                 "GRAPHFLOW_NO_JIT=1): the numpy reference never writes in place")
IN_PLACE_KINDS = list(SLOTS)


def _choices(shape, dtype=np.float32, grad_shape=None, kind="adam", validate_shape=True):
    """{op type: implementation} the plan chooses for the updates of one variable."""
    tf.reset_default_graph()
    var = tf.Variable(np.ones(shape, dtype), validate_shape=validate_shape)
    grad = tf.placeholder(tf.as_dtype(dtype), shape if grad_shape is None else grad_shape)
    _optimizer(kind, HYPER).apply_gradients([(grad, var)])
    ops = [op for op in tf.get_default_graph().get_operations() if op.type.startswith("Apply")]
    return {op.type: TABLE.choose(KernelNode.describing(op, SessionState())).name for op in ops}


@needs_numba
@pytest.mark.parametrize("kind", list(SLOTS))
def test_the_choice(kind):
    big = (SIZE // 5, 5)
    op = {"sgd": "ApplyGradientDescent", "momentum": "ApplyMomentum", "nesterov": "ApplyMomentum",
          "adam": "ApplyAdam", "rmsprop": "ApplyRMSProp", "centered": "ApplyCenteredRMSProp",
          "adagrad": "ApplyAdagrad", "adadelta": "ApplyAdadelta"}[kind]
    assert _choices(big, kind=kind) == {op: "numba"}
    assert _choices(big, np.float64, kind=kind) == {op: "numba"}
    assert _choices((4, 5), kind=kind) == {op: "reference"}            # below MIN_ELEMENTS
    assert _choices(big, np.float16, kind=kind) == {op: "reference"}   # float16: numpy
    with TABLE.restricted_to():
        assert _choices(big, kind=kind) == {op: "reference"}
    with TABLE.restricted_to({"numba"}):
        assert _choices(big, kind=kind) == {op: "numba"}


@needs_numba
def test_the_size_comes_from_the_variable_or_its_gradient():
    big = (SIZE // 5, 5)
    assert _choices(big, grad_shape=None) == {"ApplyAdam": "numba"}
    assert _choices(big, grad_shape=(None, 5)) == {"ApplyAdam": "numba"}     # the variable's
    # a variable of no declared shape: its gradient's static shape, else the reference
    assert _choices(big, grad_shape=big, validate_shape=False) == {"ApplyAdam": "numba"}
    assert _choices(big, grad_shape=(None, 5), validate_shape=False) == {"ApplyAdam": "by-shape"}
    assert update_kernels.static_size((None, 5), (7, None)) == 35
    assert update_kernels.static_size((3, 5), (7, 5)) is None
    assert update_kernels.static_size(None, None) is None


@needs_numba
def test_a_sessions_plan_names_the_choice():
    var, small = tf.Variable(np.ones(SHAPE, np.float32)), tf.Variable(np.ones(8, np.float32))
    grad, small_grad = tf.placeholder(tf.float32, SHAPE), tf.placeholder(tf.float32, [8])
    train = tf.train.AdamOptimizer(0.1).apply_gradients([(grad, var), (small_grad, small)])
    feed = {grad: np.ones(SHAPE, np.float32), small_grad: np.ones(8, np.float32)}
    for restricted in (False, True):
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if restricted:
                with TABLE.restricted_to():
                    sess.run(train, feed)
            else:
                sess.run(train, feed)
            plan = sess._compiled_plans()[-1]
            chosen = sorted(impl for _, t, _, impl in plan.kernel_choices() if t == "ApplyAdam")
            assert chosen == (["reference"] * 2 if restricted else ["numba", "reference"])


def _nesterov_adam_steps():
    tf.reset_default_graph()
    rng = np.random.default_rng(5)
    n = 100_003  # several blocks and a short last one
    var = tf.Variable(rng.standard_normal(n).astype(np.float32))
    m, v = tf.Variable(np.zeros(n, np.float32)), tf.Variable(np.zeros(n, np.float32))
    grad = tf.placeholder(tf.float32, [n])
    update = training_ops.apply_adam(var, m, v, 0.9, 0.999, 0.01, 0.9, 0.999, 1e-7, grad,
                                     use_nesterov=True)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(update, {grad: rng.standard_normal(n).astype(np.float32)})
        return sess.run([var, m, v])


@needs_numba
def test_nesterov_adam_compiled_loop_is_the_numpy_update_bit_for_bit():
    compiled = _nesterov_adam_steps()
    with TABLE.restricted_to():
        reference = _nesterov_adam_steps()
    for got, want in zip(compiled, reference):
        np.testing.assert_array_equal(got, want)


@needs_numba
@pytest.mark.parametrize("kind", IN_PLACE_KINDS)
def test_the_runs_last_update_writes_its_variables_in_place(kind):
    """The update that is the run's last op keeps its arrays (the bits are the whole-array
    update's: `test_update_is_the_whole_array_update_bit_for_bit` runs these same plans)."""
    var = tf.Variable(np.ones(SHAPE, np.float32))
    grad = tf.placeholder(tf.float32, SHAPE)
    opt = _optimizer(kind, HYPER)
    train = opt.apply_gradients([(grad, var)])
    variables = [var] + [opt.get_slot(var, s) for s in SLOTS[kind]]
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {grad: np.ones(SHAPE, np.float32)})
        ids = [id(a) for a in _stored(sess, variables)]
        for step in range(3):
            sess.run(train, {grad: np.full(SHAPE, step + 2, np.float32)})
        assert [id(a) for a in _stored(sess, variables)] == ids
        assert not any(a.flags.writeable for a in _stored(sess, variables))


@pytest.mark.parametrize("kind", IN_PLACE_KINDS)
def test_an_array_held_elsewhere_is_never_written_in_place(kind):
    var = tf.Variable(np.ones(SHAPE, np.float32))
    grad = tf.placeholder(tf.float32, SHAPE)
    opt = _optimizer(kind, HYPER)
    train = opt.apply_gradients([(grad, var)])
    variables = [var] + [opt.get_slot(var, s) for s in SLOTS[kind]]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {grad: np.ones(SHAPE, np.float32)})
        held = _stored(sess, variables)  # as a value another run still reads would be
        kept = [a.copy() for a in held]
        sess.run(train, {grad: np.full(SHAPE, 3, np.float32)})
        for a, k, now in zip(held, kept, _stored(sess, variables)):
            np.testing.assert_array_equal(a, k)
            assert now is not a


def test_another_threads_reads_never_see_an_update_in_place_half_done():
    """SGD with a gradient of ones: every value the variable ever holds is one number repeated;
    a thread fetching it while the other trains must only ever see such values."""
    import threading
    size = 1 << 21
    var = tf.Variable(np.zeros(size, np.float32))
    train = tf.train.GradientDescentOptimizer(1.0).apply_gradients(
        [(tf.constant(np.ones(size, np.float32)), var)])
    seen, done = [], threading.Event()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())

        def watch():
            while not done.is_set():
                value = sess.run(var)
                seen.append((value.min(), value.max()))
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            for _ in range(60):
                sess.run(train)
        finally:
            done.set()
            watcher.join()
        assert sess.run(var)[0] == -60
        snapshots = sess.variable_values()
        assert snapshots[var.op.attrs["shared_name"]].min() == -60
    assert seen and all(lo == hi for lo, hi in seen)


def test_in_place_updates_never_reach_the_initial_value():
    """The initializer's constant may become the variable's first stored array (Assign adopts it):
    the constant holds a reference, so that array is never written in place, and re-running the
    initializer gives the initial values again."""
    init_value = np.ones((512, 512), np.float32)
    w = tf.Variable(init_value)
    x = tf.placeholder(tf.float32, [4, 512])
    train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(tf.matmul(x, w) ** 2))
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        results = []
        for _ in range(2):
            sess.run(init)
            np.testing.assert_array_equal(sess.run(w), init_value)
            for _ in range(3):
                sess.run(train, {x: np.ones((4, 512), np.float32)})
            results.append(sess.run(w))
        np.testing.assert_array_equal(results[0], results[1])
        assert not np.array_equal(results[0], init_value)
    np.testing.assert_array_equal(init_value, np.ones((512, 512), np.float32))
