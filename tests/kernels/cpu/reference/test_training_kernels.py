"""graphflow.kernels.cpu.reference.training_kernels: every optimizer update gives, bit for bit, the
whole-array numpy update (each term a full-size numpy operation, TF1's functor order), as the numpy
reference and as the "numba" implementation (`numba/update_kernels.py`, when numba is installed), on
one and several threads over blocks with a short last one, in place or not; a failed update writes
nothing."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu import TABLE
from graphflow.kernels.cpu.numba import jit_updates

SIZE = 2 * jit_updates.BLOCK_ELEMENTS + 12345  # three blocks, the last one short
SHAPE = (SIZE // 5, 5)
HAVE_NUMBA = jit_updates.loops() is not None


@pytest.fixture(params=["jit", "numpy"])
def mode(request):
    """Plans choose the compiled loops ("jit", where they apply), or the numpy reference only."""
    if request.param == "jit" and not HAVE_NUMBA:
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1): the numpy form is the only one")
    if request.param == "numpy":
        with TABLE.restricted_to():
            yield request.param
    else:
        yield request.param


def _whole_array(kind, var, slots, grad, hyper, one):
    """The whole-array update the kernels computed before they were chunked (the reference)."""
    if kind == "sgd":
        return [var - grad * hyper["lr"]]
    if kind in ("momentum", "nesterov"):
        (accum,) = slots
        lr, momentum = hyper["lr"], hyper["momentum"]
        accum_new = accum * momentum
        accum_new += grad
        if kind == "nesterov":
            step = grad * lr
            step += accum_new * momentum * lr
        else:
            step = accum_new * lr
        return [var - step, accum_new]
    if kind == "adagrad":
        (accum,) = slots
        accum_new = np.square(grad)
        accum_new += accum
        step = grad * hyper["lr"]
        step *= one / np.sqrt(accum_new)
        return [var - step, accum_new]
    if kind == "adadelta":
        accum, update = slots
        rho, eps, lr = hyper["decay"], hyper["epsilon"], hyper["lr"]
        accum_new = accum * rho
        accum_new += np.square(grad) * (one - rho)
        u = np.sqrt(update + eps)
        u *= one / np.sqrt(accum_new + eps)
        u *= grad
        update_new = update * rho
        update_new += np.square(u) * (one - rho)
        return [var - u * lr, accum_new, update_new]
    ms, mom = slots[:2]
    rho, momentum, eps, lr = hyper["decay"], hyper["momentum"], hyper["epsilon"], hyper["lr"]
    ms_new = np.square(grad)
    ms_new -= ms
    ms_new *= one - rho
    ms_new += ms
    if kind == "centered":
        mg = slots[2]
        mg_new = grad - mg
        mg_new *= one - rho
        mg_new += mg
        denom = ms_new - np.square(mg_new)
        denom += eps
    else:
        denom = ms_new + eps
    denom = np.sqrt(denom)
    mom_new = grad * lr
    mom_new /= denom
    mom_new += mom * momentum
    return [var - mom_new, ms_new, mom_new]


def _optimizer(kind, hyper):
    if kind == "sgd":
        return tf.train.GradientDescentOptimizer(hyper["lr"])
    if kind in ("momentum", "nesterov"):
        return tf.train.MomentumOptimizer(hyper["lr"], hyper["momentum"],
                                          use_nesterov=kind == "nesterov")
    if kind == "adam":
        return tf.train.AdamOptimizer(hyper["lr"], hyper["beta1"], hyper["beta2"], hyper["epsilon"])
    if kind == "adagrad":
        return tf.train.AdagradOptimizer(hyper["lr"])
    if kind == "adadelta":
        return tf.train.AdadeltaOptimizer(hyper["lr"], hyper["decay"], hyper["epsilon"])
    return tf.train.RMSPropOptimizer(hyper["lr"], hyper["decay"], hyper["momentum"], hyper["epsilon"],
                                     centered=kind == "centered")


SLOTS = {"sgd": [], "momentum": ["momentum"], "nesterov": ["momentum"], "adam": ["m", "v"],
         "rmsprop": ["rms", "momentum"], "centered": ["rms", "momentum", "mg"],
         "adagrad": ["accumulator"], "adadelta": ["accum", "accum_update"]}
HYPER = {"lr": 0.05, "momentum": 0.9, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7, "decay": 0.9}


@pytest.mark.parametrize("in_place", [True, False], ids=["in_place", "out_of_place"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("kind", list(SLOTS))
def test_update_is_the_whole_array_update_bit_for_bit(kind, threads, dtype, mode, in_place):
    rng = np.random.default_rng(3)
    start = rng.standard_normal(SHAPE).astype(dtype)
    grad_value = rng.standard_normal(SHAPE).astype(dtype)
    var = tf.Variable(start)
    grad = tf.placeholder(tf.as_dtype(dtype), SHAPE)
    opt = _optimizer(kind, HYPER)
    train = opt.apply_gradients([(grad, var)])
    slot_vars = [opt.get_slot(var, s) for s in SLOTS[kind]]
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        # one step from zero slots, then a second step from the first one's slots
        sess.run(train, {grad: grad_value})
        before = sess.run([var] + slot_vars)
        # the update is the run's last op: in place, unless something holds the stored arrays
        held = None if in_place else _stored(sess, [var] + slot_vars)
        sess.run(train, {grad: grad_value * 0.5})
        after = sess.run([var] + slot_vars)
        if held is not None:
            assert not any(a is b for a, b in zip(held, _stored(sess, [var] + slot_vars)))
    one = dtype(1)
    hyper = {k: np.asarray(v, dtype) for k, v in HYPER.items()}
    slots_before = before[1:]
    if kind == "adam":  # the second step's bias correction: beta1**2, beta2**2
        b1, b2 = hyper["beta1"], hyper["beta2"]
        expect = _whole_array_adam_step2(before[0], slots_before, grad_value * dtype(0.5), hyper,
                                         one, b1 * b1, b2 * b2)
    else:
        expect = _whole_array(kind, before[0], slots_before, grad_value * dtype(0.5), hyper, one)
    for got, want in zip(after, expect):
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()


def _whole_array_adam_step2(var, slots, grad, hyper, one, beta1_power, beta2_power):
    m, v = slots
    b1, b2, eps = hyper["beta1"], hyper["beta2"], hyper["epsilon"]
    alpha = hyper["lr"] * np.sqrt(one - beta2_power) / (one - beta1_power)
    m_new = grad - m
    m_new *= one - b1
    m_new += m
    v_new = np.square(grad)
    v_new -= v
    v_new *= one - b2
    v_new += v
    denom = np.sqrt(v_new)
    denom += eps
    step = m_new * alpha
    step /= denom
    return [var - step, m_new, v_new]


def test_a_gradient_of_the_wrong_shape_changes_no_variable(mode):
    var = tf.Variable(np.ones(SIZE, np.float32))
    grad = tf.placeholder(tf.float32, None)
    train = tf.train.AdamOptimizer(0.1).apply_gradients([(grad, var)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(Exception, match="does not match"):
            sess.run(train, {grad: np.ones(SIZE - 1, np.float32)})
        np.testing.assert_array_equal(sess.run(var), np.ones(SIZE, np.float32))


@pytest.mark.parametrize("threads", [1, 2])
def test_recycled_buffers_never_overwrite_a_value_still_in_use(threads, mode):
    var = tf.Variable(np.ones(SHAPE, np.float32))
    grad = tf.placeholder(tf.float32, SHAPE)
    train = tf.train.AdamOptimizer(0.1).apply_gradients([(grad, var)])
    ones = np.ones(SHAPE, np.float32)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {grad: ones})
        held = sess.run(var)            # a fetched value the user keeps
        view = sess.run(var)[::2]       # and a view of another one
        kept, kept_view = held.copy(), view.copy()
        pointers = set()
        for step in range(4):
            sess.run(train, {grad: ones * (step + 2)})
            pointers.add(sess.run(var).__array_interface__["data"][0])
        np.testing.assert_array_equal(held, kept)
        np.testing.assert_array_equal(view, kept_view)
        if mode == "jit":  # four steps live in fewer buffers than four fresh ones each
            assert len(pointers) < 4


def _stored(sess, variables):
    store = sess._state.variables
    return [store.values[v.op.attrs["shared_name"]] for v in variables]


def test_a_failure_after_the_update_in_the_run_changes_no_variable():
    """An op after the update that fails (here CheckNumerics, run after it by a control edge):
    the update moves after it or stays out of place; either way the variables are untouched."""
    var = tf.Variable(np.ones(SHAPE, np.float32))
    grad = tf.placeholder(tf.float32, SHAPE)
    bad = tf.placeholder(tf.float32, [])
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.apply_gradients([(grad, var)])
    variables = [var, opt.get_slot(var, "m"), opt.get_slot(var, "v")]
    with tf.control_dependencies([train]):
        checked = tf.check_numerics(bad, "bad value")
        asserted = tf.Assert(tf.greater(bad, 0.0), [bad])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {grad: np.ones(SHAPE, np.float32)})
        before = sess.run(variables)
        for fetch, value in ((checked, np.nan), (asserted, -1.0)):
            with pytest.raises(tf.errors.OpError):
                sess.run(fetch, {grad: np.full(SHAPE, 2, np.float32), bad: value})
            for got, want in zip(sess.run(variables), before):
                np.testing.assert_array_equal(got, want)
        sess.run(checked, {grad: np.full(SHAPE, 2, np.float32), bad: 1.0})
        assert not np.array_equal(sess.run(var), before[0])


