"""Tests for graphflow.tf1.train / graphflow.tf1.optimizers / graphflow.tf1.clip_ops.

The central check trains the cs231n two-layer ReLU network (N=64, D_in=1000, H=100, D_out=10,
loss = sum((y_pred - y)^2)) for 50 steps (40 in float32) with every optimizer and compares the
loss curve and the final weights with the same training written by hand in numpy from the same
initial weights: tightly in float64, loosely in float32. The rest covers compute/apply_gradients,
slots, the global step, var_list, hyper-parameters as tensors, failed-run atomicity and training on clipped
gradients (the clipping ops themselves: tests/test_clip_ops.py).
"""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework.errors import InvalidArgumentError
from tests.op_cases.training_cases import np_adam, np_momentum, np_rmsprop, np_sgd

N, D_IN, H, D_OUT = 64, 1000, 100, 10
STEPS = 50
# float32 runs stop here: centered RMSProp reaches float32's floor (loss ~3e-10 of its start) by
# step 40, and beyond it ms - mg^2 is rounding noise, so its steps (~lr each, whatever the
# gradient) follow the order products are summed in (oneDNN's kernels or numpy's BLAS), not the
# algorithm: at 50 steps the weights differed by 1.8e-3 of their scale, at 40 by 1.2e-5.
STEPS_FLOAT32 = 40


@pytest.fixture(autouse=True)
def one_blas_thread():
    """These matrices are small: one BLAS thread keeps the runtime steady on a busy machine
    (a speed setting only; results are compared with tolerances either way)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _problem(dtype):
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((N, D_IN)), rng.standard_normal((N, D_OUT)),
              rng.standard_normal((D_IN, H)), rng.standard_normal((H, D_OUT)))
    return [a.astype(dtype) for a in arrays]


# ------------------------------------------------------------------ the numpy training by hand
def _numpy_forward_backward(x, y, w1, w2):
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    loss = np.square(y_pred - y).sum()
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = grad_y_pred @ w2.T
    grad_h[h < 0] = 0
    grad_w1 = x.T @ grad_h
    return loss, [grad_w1, grad_w2]


class _NumpyOptimizer:
    """The update rules written out in numpy, one state dict per parameter."""

    def __init__(self, kind, **hyper):
        self.kind, self.hyper, self.state, self.t = kind, hyper, {}, 0

    def step(self, params, grads):
        self.t += 1
        h = self.hyper
        for i, (p, g) in enumerate(zip(params, grads)):
            s = self.state.setdefault(i, {"a": np.zeros_like(p), "b": np.zeros_like(p),
                                          "ms": np.ones_like(p), "mg": np.zeros_like(p)})
            if self.kind == "sgd":
                params[i] = np_sgd(p, g, h["lr"])
            elif self.kind == "momentum":
                params[i], s["a"] = np_momentum(p, s["a"], g, h["lr"], h["momentum"],
                                                h.get("nesterov", False))
            elif self.kind == "adam":
                params[i], s["a"], s["b"] = np_adam(p, s["a"], s["b"], g, h["lr"], 0.9, 0.999,
                                                    1e-8, self.t)
            elif self.kind == "rmsprop":
                mg = s["mg"] if h.get("centered") else None
                params[i], s["ms"], s["a"], mg = np_rmsprop(p, s["ms"], s["a"], g, h["lr"], 0.9,
                                                            h.get("momentum", 0.0), 1e-10, mg)
                if mg is not None:
                    s["mg"] = mg


def _steps(dtype):
    return STEPS if np.dtype(dtype) == np.float64 else STEPS_FLOAT32


def _numpy_train(kind, hyper, dtype):
    x, y, w1, w2 = _problem(dtype)
    params = [w1, w2]
    opt = _NumpyOptimizer(kind, **hyper)
    losses = []
    for _ in range(_steps(dtype)):
        loss, grads = _numpy_forward_backward(x, y, *params)
        losses.append(loss)
        opt.step(params, grads)
    return np.array(losses), params


def _graph_train(make_optimizer, dtype):
    x_v, y_v, w1_v, w2_v = _problem(dtype)
    gf_dtype = tf.as_dtype(dtype)
    x = tf.placeholder(gf_dtype, [None, D_IN])
    y = tf.placeholder(gf_dtype, [None, D_OUT])
    w1 = tf.Variable(w1_v, name="w1")
    w2 = tf.Variable(w2_v, name="w2")
    y_pred = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
    loss = tf.reduce_sum((y_pred - y) ** 2.0)
    train_op = make_optimizer().minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: x_v, y: y_v}
        for _ in range(_steps(dtype)):
            value, _ = sess.run([loss, train_op], feed)
            losses.append(value)
        final = sess.run([w1, w2])
    return np.array(losses), final


OPTIMIZERS = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(1e-6), "sgd", {"lr": 1e-6}),
    "momentum": (lambda: tf.train.MomentumOptimizer(1e-6, 0.9), "momentum",
                 {"lr": 1e-6, "momentum": 0.9}),
    "nesterov": (lambda: tf.train.MomentumOptimizer(1e-6, 0.9, use_nesterov=True), "momentum",
                 {"lr": 1e-6, "momentum": 0.9, "nesterov": True}),
    "adam": (lambda: tf.train.AdamOptimizer(0.1), "adam", {"lr": 0.1}),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(3e-3), "rmsprop", {"lr": 3e-3}),
    "rmsprop_centered": (lambda: tf.train.RMSPropOptimizer(3e-3, momentum=0.5, centered=True),
                         "rmsprop", {"lr": 3e-3, "momentum": 0.5, "centered": True}),
}


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 1e-3)],
                         ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_two_layer_net_matches_numpy(name, dtype, rtol):
    make, kind, hyper = OPTIMIZERS[name]
    losses, weights = _graph_train(make, dtype)
    ref_losses, ref_weights = _numpy_train(kind, hyper, dtype)
    assert losses[-1] < 0.01 * losses[0], f"{name} did not train: {losses[0]} -> {losses[-1]}"
    # Near zero the loss is a cancellation-prone difference: errors are judged against its scale.
    np.testing.assert_allclose(losses, ref_losses, rtol=rtol, atol=rtol * 1e-3 * losses[0])
    for got, want in zip(weights, ref_weights):
        assert got.dtype == dtype
        scale = np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


# ------------------------------------------------------------------ compute / apply gradients
def _small_model(dtype=tf.float64):
    rng = np.random.default_rng(1)
    x_v = rng.standard_normal((5, 3))
    w = tf.Variable(rng.standard_normal((3, 2)), name="w", dtype=dtype)
    b = tf.Variable(np.zeros(2), name="b", dtype=dtype)
    unused = tf.Variable(np.ones(4), name="unused", dtype=dtype)
    x = tf.constant(x_v, dtype=dtype)
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
    return x_v, w, b, unused, loss


def test_compute_gradients_pairs_and_values():
    x_v, w, b, unused, loss = _small_model()
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [w, b, unused]
    assert grads_and_vars[2][0] is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w_v, b_v = sess.run([w, b])
        g_w, g_b = sess.run([grads_and_vars[0][0], grads_and_vars[1][0]])
    out = x_v @ w_v + b_v
    np.testing.assert_allclose(g_w, x_v.T @ (2 * out), rtol=1e-12)
    np.testing.assert_allclose(g_b, (2 * out).sum(axis=0), rtol=1e-12)


def test_compute_gradients_var_list_and_gate_graph():
    _, w, b, _, loss = _small_model()
    opt = tf.train.GradientDescentOptimizer(0.1)
    pairs = opt.compute_gradients(loss, var_list=[b], gate_gradients=tf.train.Optimizer.GATE_GRAPH)
    assert [v for _, v in pairs] == [b]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(pairs[0][0]).shape == (2,)
    with pytest.raises(ValueError, match="gate_gradients"):
        opt.compute_gradients(loss, gate_gradients=7)


def test_apply_gradients_with_given_gradients():
    w = tf.Variable(np.arange(6.0).reshape(2, 3), name="w")
    g = tf.placeholder(tf.float64, [2, 3])
    train_op = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(g, w)])
    assert isinstance(train_op, tf.Operation)
    assert train_op.name == "GradientDescent"
    grad = np.full((2, 3), 2.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(train_op, {g: grad}) is None
        np.testing.assert_array_equal(sess.run(w), np.arange(6.0).reshape(2, 3) - 1.0)
    assert train_op in tf.get_collection(tf.GraphKeys.TRAIN_OP)


def test_var_list_only_updates_listed_variables():
    _, w, b, unused, loss = _small_model()
    train_op = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=[w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run([w, b, unused])
        for _ in range(3):
            sess.run(train_op)
        after = sess.run([w, b, unused])
    assert not np.allclose(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])
    np.testing.assert_array_equal(before[2], after[2])


def test_minimize_errors():
    v = tf.Variable(np.ones(3), name="v")
    other = tf.Variable(np.ones(3), name="other")
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No gradients provided"):
        opt.minimize(tf.reduce_sum(other), var_list=[v])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(TypeError, match="dtype"):
        opt.apply_gradients([(tf.constant(np.ones(3, np.float32)), v)])
    with pytest.raises(ValueError, match="does not match"):
        opt.apply_gradients([(tf.constant(np.ones(4)), v)])
    with pytest.raises(ValueError, match="Duplicate variable"):
        opt.apply_gradients([(tf.constant(np.ones(3)), v), (tf.constant(np.ones(3)), v)])
    with pytest.raises(ValueError, match="Invalid type"):
        opt.minimize(tf.constant(3))
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.train.GradientDescentOptimizer(0.1, name="")


def test_no_variables_to_optimize():
    with pytest.raises(ValueError, match="No variables to optimize"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0) * 2.0)


# ------------------------------------------------------------------ slots
def test_adam_slots_and_names():
    _, w, b, _, loss = _small_model()
    opt = tf.train.AdamOptimizer()
    train_op = opt.minimize(loss, var_list=[w, b])
    assert opt.get_slot_names() == ["m", "v"]
    m, v = opt.get_slot(w, "m"), opt.get_slot(w, "v")
    assert (m.name, v.name) == ("w/Adam:0", "w/Adam_1:0")
    assert opt.get_slot(b, "m").name == "b/Adam:0"
    assert opt.get_slot(w, "nope") is None
    assert [x.name for x in opt.variables()] == ["b/Adam:0", "b/Adam_1:0", "beta1_power:0",
                                                 "beta2_power:0", "w/Adam:0", "w/Adam_1:0"]
    for slot in opt.variables():
        assert isinstance(slot, tf.Variable)
        assert slot not in tf.trainable_variables()
        assert slot in tf.global_variables()
    assert m.shape.as_list() == [3, 2] and m.dtype == tf.float64
    assert tf.get_default_graph().get_operation_by_name("Adam/update_w/ApplyAdam").type == "ApplyAdam"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(m), np.zeros((3, 2)))
        for _ in range(3):
            sess.run(train_op)
        beta1_power, beta2_power = sess.run(opt.variables()[2:4])
        assert np.isclose(beta1_power, 0.9 ** 4) and np.isclose(beta2_power, 0.999 ** 4)
        assert np.abs(sess.run(m)).max() > 0


def test_momentum_and_rmsprop_slots():
    _, w, _, _, loss = _small_model()
    mom = tf.train.MomentumOptimizer(0.1, 0.9)
    mom.minimize(loss, var_list=[w])
    assert mom.get_slot(w, "momentum").name == "w/Momentum:0"
    rms = tf.train.RMSPropOptimizer(0.1, centered=True)
    rms.minimize(loss, var_list=[w])
    assert rms.get_slot_names() == ["mg", "momentum", "rms"]
    assert [rms.get_slot(w, n).name for n in ("rms", "mg", "momentum")] == [
        "w/RMSProp:0", "w/RMSProp_1:0", "w/RMSProp_2:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(rms.get_slot(w, "rms")), np.ones((3, 2)))


def test_minimize_twice_shares_slots():
    _, w, _, _, loss = _small_model()
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    first = opt.minimize(loss, var_list=[w])
    second = opt.minimize(loss, var_list=[w])
    assert (first.name, second.name) == ("Momentum", "Momentum_1")
    assert len(opt.variables()) == 1


# ------------------------------------------------------------------ global step
def test_global_step_helpers():
    assert tf.train.get_global_step() is None
    step = tf.train.create_global_step()
    assert step.name == "global_step:0" and step.dtype == tf.int64
    assert step in tf.get_collection(tf.GraphKeys.GLOBAL_STEP)
    assert step not in tf.trainable_variables()
    assert tf.train.get_global_step() is step
    assert tf.train.get_or_create_global_step() is step
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()
    other = tf.Graph()
    other_step = tf.train.get_or_create_global_step(other)
    assert other_step.graph is other and other_step is not step


def test_global_step_incremented_after_updates():
    _, w, b, _, loss = _small_model()
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
    assert train_op.type == "AssignAdd" and train_op.name == "Adam"
    updates = train_op.control_inputs[0]
    assert updates.name == "Adam/update"
    assert {op.type for op in updates.control_inputs} >= {"ApplyAdam"}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            sess.run(train_op)
        assert tf.train.global_step(sess, step) == 4


# ------------------------------------------------------------------ hyper-parameters
def test_learning_rate_tensor_and_cast():
    w = tf.Variable(np.ones(3), name="w")
    lr = tf.placeholder(tf.float32, [])  # float32 rate, float64 variable: cast in the graph
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(tf.reduce_sum(w * w))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {lr: 0.0})
        np.testing.assert_array_equal(sess.run(w), np.ones(3))
        sess.run(train_op, {lr: 0.25})
        np.testing.assert_allclose(sess.run(w), np.full(3, 0.5))


def test_learning_rate_variable_and_exponential_decay():
    w = tf.Variable(np.ones(2, np.float32), name="w")
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.1, step, decay_steps=2, decay_rate=0.5, staircase=True)
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(tf.reduce_sum(w), global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        rates = []
        for _ in range(5):
            rates.append(sess.run(lr))
            sess.run(train_op)
        np.testing.assert_allclose(rates, [0.1, 0.1, 0.05, 0.05, 0.025], rtol=1e-6)
        np.testing.assert_allclose(sess.run(w), 1 - sum(rates), rtol=1e-6)


def test_hyper_parameters_keep_float64_precision():
    w = tf.Variable(np.zeros(1), name="w")
    train_op = tf.train.GradientDescentOptimizer(0.1).apply_gradients([(tf.constant([1.0], tf.float64), w)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        assert sess.run(w)[0] == -0.1  # exactly the float64 0.1, not a float32 rounding of it


# ------------------------------------------------------------------ failed runs change nothing
def _state(sess, variables):
    return [np.array(v) for v in sess.run(variables)]


def test_failed_run_leaves_variables_unchanged():
    _, w, b, _, loss = _small_model()
    step = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.1)
    train_op = opt.minimize(loss, global_step=step, var_list=[w, b])
    bad = tf.placeholder(tf.float64, [None])
    with tf.control_dependencies([train_op]):
        after = tf.reshape(bad, [2, 2])  # fails at run time for a 3-element feed
    everything = [w, b, step] + opt.variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        before = _state(sess, everything)
        with pytest.raises(InvalidArgumentError):
            sess.run(after, {bad: np.ones(3)})
        for x, y in zip(before, _state(sess, everything)):
            np.testing.assert_array_equal(x, y)
        sess.run(after, {bad: np.ones(4)})
        assert sess.run(step) == 2


def test_failed_update_kernel_leaves_other_variables_unchanged():
    w1 = tf.Variable(np.ones(3), name="w1")
    w2 = tf.Variable(np.ones(2), name="w2")
    g1 = tf.placeholder(tf.float64, [3])
    g2 = tf.placeholder(tf.float64, None)  # shape checked by the kernel at run time
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    train_op = opt.apply_gradients([(g1, w1), (g2, w2)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(InvalidArgumentError, match="does not match variable 'w2'"):
            sess.run(train_op, {g1: np.ones(3), g2: np.ones(5)})
        np.testing.assert_array_equal(sess.run(w1), np.ones(3))
        np.testing.assert_array_equal(sess.run(opt.get_slot(w1, "momentum")), np.zeros(3))


def test_uninitialized_slot_is_reported():
    _, w, _, _, loss = _small_model()
    train_op = tf.train.AdamOptimizer().minimize(loss, var_list=[w])
    with tf.Session() as sess:
        sess.run([v.initializer for v in tf.trainable_variables()])
        with pytest.raises(tf.errors.FailedPreconditionError, match="Adam"):
            sess.run(train_op)


def test_clipped_gradients_train():
    _, w, b, _, loss = _small_model()
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads, variables = zip(*opt.compute_gradients(loss, var_list=[w, b]))
    clipped, norm = tf.clip_by_global_norm(grads, 1.0)
    train_op = opt.apply_gradients(zip(clipped, variables))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w0, b0, g_norm, (g_w, g_b) = sess.run([w, b, norm, list(grads)])
        sess.run(train_op)
        w1, b1 = sess.run([w, b])
    scale = min(1.0, 1.0 / g_norm)
    np.testing.assert_allclose(w1, w0 - 0.1 * g_w * scale, rtol=1e-12)
    np.testing.assert_allclose(b1, b0 - 0.1 * g_b * scale, rtol=1e-12)
