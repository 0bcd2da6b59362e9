"""Tests for graphflow.tf1.rnn_cell and rnn_cell_wrappers: each cell's step against a hand-written
numpy reference with the cell's own weights, TF1's variable names, state layouts and sizes,
zero_state, weight sharing across calls, MultiRNNCell and DropoutWrapper semantics."""

import numpy as np
import pytest

import graphflow as tf

rnn_cell = tf.nn.rnn_cell


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _step(cell, x_value, state_value_fn, batch=3):
    """Run one cell step on x_value; state from state_value_fn(cell) (numpy nest); returns
    (output, state, {variable name: value})."""
    x = tf.placeholder(tf.float64, [None, x_value.shape[1]])
    state_np = state_value_fn(cell)
    state = tf.nn.rnn_cell.LSTMStateTuple(*[tf.constant(s) for s in state_np]) \
        if isinstance(state_np, tf.nn.rnn_cell.LSTMStateTuple) else tf.constant(state_np)
    out, new_state = cell(x, state)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, state_v = sess.run([out, new_state], {x: x_value})
        weights = {v.name[:-2]: sess.run(v) for v in tf.global_variables()}
    return out_v, state_v, weights, state_np


def _lstm_ref(x, c, h, kernel, bias, forget_bias=1.0):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
    return np.tanh(new_c) * sigmoid(o), new_c


def test_basic_rnn_cell(rng):
    cell = rnn_cell.BasicRNNCell(4)
    assert cell.state_size == 4 and cell.output_size == 4
    x = rng.standard_normal((3, 2))
    out, state, w, h = _step(cell, x, lambda c: rng.standard_normal((3, 4)))
    assert sorted(w) == ["basic_rnn_cell/bias", "basic_rnn_cell/kernel"]
    assert w["basic_rnn_cell/kernel"].shape == (6, 4)
    ref = np.tanh(np.concatenate([x, h], 1) @ w["basic_rnn_cell/kernel"] + w["basic_rnn_cell/bias"])
    np.testing.assert_allclose(out, ref, rtol=1e-10)
    np.testing.assert_allclose(state, ref, rtol=1e-10)


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_basic_lstm_cell(rng, state_is_tuple):
    cell = rnn_cell.BasicLSTMCell(5, forget_bias=0.5, state_is_tuple=state_is_tuple)
    assert cell.output_size == 5
    assert cell.state_size == ((5, 5) if state_is_tuple else 10)
    x = rng.standard_normal((3, 2))
    c0, h0 = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    make = (lambda _: rnn_cell.LSTMStateTuple(c0, h0)) if state_is_tuple else \
        (lambda _: np.concatenate([c0, h0], 1))
    out, state, w, _ = _step(cell, x, make)
    kernel, bias = w["basic_lstm_cell/kernel"], w["basic_lstm_cell/bias"]
    assert kernel.shape == (7, 20) and bias.shape == (20,) and not bias.any()
    bias = rng.standard_normal(20) * 0  # bias starts at zero (TF1's default)
    h_ref, c_ref = _lstm_ref(x, c0, h0, kernel, bias, forget_bias=0.5)
    np.testing.assert_allclose(out, h_ref, rtol=1e-10)
    if state_is_tuple:
        assert isinstance(state, rnn_cell.LSTMStateTuple)
        np.testing.assert_allclose(state.c, c_ref, rtol=1e-10)
        np.testing.assert_allclose(state.h, h_ref, rtol=1e-10)
    else:
        np.testing.assert_allclose(state, np.concatenate([c_ref, h_ref], 1), rtol=1e-10)


def _lstm_cell_ref(x, c, m, w, *, peep=False, cell_clip=None, proj=False, proj_clip=None):
    i, j, f, o = np.split(np.concatenate([x, m], 1) @ w["lstm_cell/kernel"] + w["lstm_cell/bias"],
                          4, axis=1)
    if peep:
        c = (sigmoid(f + 1.0 + w["lstm_cell/w_f_diag"] * c) * c
             + sigmoid(i + w["lstm_cell/w_i_diag"] * c) * np.tanh(j))
    else:
        c = sigmoid(f + 1.0) * c + sigmoid(i) * np.tanh(j)
    if cell_clip is not None:
        c = np.clip(c, -cell_clip, cell_clip)
    m = sigmoid(o + (w["lstm_cell/w_o_diag"] * c if peep else 0)) * np.tanh(c)
    if proj:
        m = m @ w["lstm_cell/projection/kernel"]
        if proj_clip is not None:
            m = np.clip(m, -proj_clip, proj_clip)
    return m, c


@pytest.mark.parametrize("options", [
    {},
    {"use_peepholes": True, "cell_clip": 0.3},
    {"num_proj": 3, "proj_clip": 0.05},
    {"use_peepholes": True, "num_proj": 2, "state_is_tuple": False},
])
def test_lstm_cell(rng, options):
    options = dict(options)
    tuple_state = options.get("state_is_tuple", True)
    cell = rnn_cell.LSTMCell(6, initializer=tf.random_uniform_initializer(-1, 1, seed=3),
                             **options)
    proj = options.get("num_proj")
    h_size = proj or 6
    assert cell.output_size == h_size
    assert cell.state_size == ((6, h_size) if tuple_state else 6 + h_size)
    x = rng.standard_normal((3, 4))
    c0, m0 = rng.standard_normal((3, 6)) * 2, rng.standard_normal((3, h_size))
    make = (lambda _: rnn_cell.LSTMStateTuple(c0, m0)) if tuple_state else \
        (lambda _: np.concatenate([c0, m0], 1))
    out, state, w, _ = _step(cell, x, make)
    expected = {"lstm_cell/kernel", "lstm_cell/bias"}
    if options.get("use_peepholes"):
        expected |= {"lstm_cell/w_f_diag", "lstm_cell/w_i_diag", "lstm_cell/w_o_diag"}
    if proj:
        expected.add("lstm_cell/projection/kernel")
        assert w["lstm_cell/projection/kernel"].shape == (6, proj)
    assert set(w) == expected
    assert w["lstm_cell/kernel"].shape == (4 + h_size, 24)
    m_ref, c_ref = _lstm_cell_ref(x, c0, m0, w, peep=options.get("use_peepholes", False),
                                  cell_clip=options.get("cell_clip"), proj=bool(proj),
                                  proj_clip=options.get("proj_clip"))
    np.testing.assert_allclose(out, m_ref, rtol=1e-10, atol=1e-12)
    flat_state = np.concatenate([state.c, state.h], 1) if tuple_state else state
    np.testing.assert_allclose(flat_state, np.concatenate([c_ref, m_ref], 1), rtol=1e-10,
                               atol=1e-12)
    if options.get("cell_clip"):
        assert np.abs(c_ref).max() <= 0.3 + 1e-12


def test_gru_cell(rng):
    cell = rnn_cell.GRUCell(4)
    x = rng.standard_normal((3, 2))
    out, state, w, h = _step(cell, x, lambda c: rng.standard_normal((3, 4)))
    assert set(w) == {"gru_cell/gates/kernel", "gru_cell/gates/bias", "gru_cell/candidate/kernel",
                      "gru_cell/candidate/bias"}
    np.testing.assert_array_equal(w["gru_cell/gates/bias"], np.ones(8))  # TF1: gates start open
    gates = sigmoid(np.concatenate([x, h], 1) @ w["gru_cell/gates/kernel"] + 1.0)
    r, u = np.split(gates, 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * h], 1) @ w["gru_cell/candidate/kernel"])
    ref = u * h + (1 - u) * cand
    np.testing.assert_allclose(out, ref, rtol=1e-10)
    np.testing.assert_allclose(state, ref, rtol=1e-10)


def test_cells_share_weights_across_calls_and_new_cells_get_unique_scopes():
    x = tf.placeholder(tf.float32, [2, 3])
    cell = rnn_cell.BasicLSTMCell(4)
    state = cell.zero_state(2, tf.float32)
    out1, state = cell(x, state)
    out2, _ = cell(out1[:, :3], state)
    other = rnn_cell.BasicLSTMCell(4)
    other(x, other.zero_state(2, tf.float32))
    names = [v.name for v in tf.global_variables()]
    assert names == ["basic_lstm_cell/kernel:0", "basic_lstm_cell/bias:0",
                     "basic_lstm_cell_1/kernel:0", "basic_lstm_cell_1/bias:0"]
    assert [v.name for v in cell.variables] == names[:2]
    named = rnn_cell.GRUCell(3, name="my_gru")
    named(x, named.zero_state(2, tf.float32))
    assert "my_gru/gates/kernel:0" in [v.name for v in tf.global_variables()]


def test_zero_state_shapes_and_dynamic_batch():
    cell = rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(4, num_proj=2), rnn_cell.GRUCell(3)])
    assert cell.state_size == ((4, 2), 3) and cell.output_size == 3
    state = cell.zero_state(5, tf.float32)
    assert isinstance(state[0], rnn_cell.LSTMStateTuple)
    assert [s.shape.as_list() for s in [state[0].c, state[0].h, state[1]]] == [[5, 4], [5, 2],
                                                                               [5, 3]]
    x = tf.placeholder(tf.float32, [None, 7])
    dyn = cell.zero_state(tf.shape(x)[0], tf.float64)
    with tf.Session() as sess:
        values = sess.run(dyn, {x: np.zeros((6, 7))})
    assert values[0].c.shape == (6, 4) and values[1].dtype == np.float64
    assert not values[0].c.any()


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_multi_rnn_cell_stacks_layers(rng, state_is_tuple):
    cells = [rnn_cell.BasicLSTMCell(4, state_is_tuple=state_is_tuple), rnn_cell.GRUCell(3)]
    cell = rnn_cell.MultiRNNCell(cells, state_is_tuple=state_is_tuple)
    x_value = rng.standard_normal((2, 5))
    x = tf.constant(x_value)
    out, state = cell(x, cell.zero_state(2, tf.float64))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, state_v = sess.run([out, state])
        w = {v.name[:-2]: sess.run(v) for v in tf.global_variables()}
    prefix = "multi_rnn_cell/cell_0/basic_lstm_cell/"
    assert prefix + "kernel" in w and "multi_rnn_cell/cell_1/gru_cell/gates/kernel" in w
    zeros = np.zeros((2, 4))
    h1, c1 = _lstm_ref(x_value, zeros, zeros, w[prefix + "kernel"], w[prefix + "bias"])
    g = "multi_rnn_cell/cell_1/gru_cell/"
    gates = sigmoid(np.concatenate([h1, np.zeros((2, 3))], 1) @ w[g + "gates/kernel"]
                    + w[g + "gates/bias"])
    _, u = np.split(gates, 2, axis=1)
    h2 = (1 - u) * np.tanh(h1 @ w[g + "candidate/kernel"][:4] + w[g + "candidate/bias"])
    np.testing.assert_allclose(out_v, h2, rtol=1e-10)
    if state_is_tuple:
        np.testing.assert_allclose(state_v[0].c, c1, rtol=1e-10)
        np.testing.assert_allclose(state_v[1], h2, rtol=1e-10)
    else:
        np.testing.assert_allclose(state_v, np.concatenate([c1, h1, h2], 1), rtol=1e-10)


def test_multi_rnn_cell_rejects_tuple_states_without_state_is_tuple():
    with pytest.raises(ValueError, match="state_is_tuple"):
        rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(3)], state_is_tuple=False)
    with pytest.raises(ValueError, match="at least one cell"):
        rnn_cell.MultiRNNCell([])


def test_dropout_wrapper_keeps_variable_names_and_passes_through_at_keep_prob_one(rng):
    plain = rnn_cell.BasicLSTMCell(4)
    cell = rnn_cell.DropoutWrapper(plain)
    x = tf.constant(rng.standard_normal((2, 3)))
    out, _ = cell(x, cell.zero_state(2, tf.float64))
    assert [v.name for v in tf.global_variables()] == ["basic_lstm_cell/kernel:0",
                                                        "basic_lstm_cell/bias:0"]
    ref, _ = plain(x, plain.zero_state(2, tf.float64))  # the same weights, no dropout
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([out, ref])
    np.testing.assert_array_equal(a, b)


def test_dropout_wrapper_drops_outputs_and_h_but_not_c():
    keep = tf.placeholder_with_default(tf.constant(0.5), [])
    base = rnn_cell.BasicLSTMCell(200, forget_bias=50.0)
    cell = rnn_cell.DropoutWrapper(base, input_keep_prob=1.0, output_keep_prob=keep,
                                   state_keep_prob=0.5, seed=1)
    x = tf.ones([8, 3])
    out, state = cell(x, cell.zero_state(8, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, s, full = sess.run([out, state, out], {keep: 1.0})
        o_half = sess.run(out)
    assert (s.c != 0).all()                    # the memory cell is never dropped
    assert 0.3 < (s.h == 0).mean() < 0.7       # h is dropped with probability 1/2
    np.testing.assert_array_equal((s.h != 0), np.abs(s.h) > 0)
    assert (o != 0).all() and 0.3 < (o_half == 0).mean() < 0.7
    kept = o_half != 0
    np.testing.assert_allclose(o_half[kept], 2 * full[kept], rtol=1e-6)


def test_dropout_wrapper_variational_mask_is_shared_across_steps():
    base = rnn_cell.BasicRNNCell(50, activation=lambda v: v * 0 + 1.0)
    cell = rnn_cell.DropoutWrapper(base, output_keep_prob=0.5, variational_recurrent=True,
                                   dtype=tf.float32)
    state = cell.zero_state(4, tf.float32)
    outs = []
    for _ in range(3):
        out, state = cell(tf.ones([4, 2]), state)
        outs.append(out)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b, c = sess.run(outs)
    mask = a != 0
    assert 0 < mask.mean() < 1
    np.testing.assert_array_equal(mask, b != 0)
    np.testing.assert_array_equal(mask, c != 0)
    np.testing.assert_array_equal(mask[0], mask[1])  # one mask for the whole batch (TF1)
    with pytest.raises(ValueError, match="input_size"):
        rnn_cell.DropoutWrapper(base, input_keep_prob=0.5, variational_recurrent=True,
                                dtype=tf.float32)


def test_dropout_wrapper_checks_keep_probs():
    with pytest.raises(ValueError, match="between 0 and 1"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), output_keep_prob=1.5)
    with pytest.raises(TypeError, match="not a RNNCell"):
        rnn_cell.DropoutWrapper(object())


def test_residual_wrapper_adds_inputs_to_outputs(rng):
    base = rnn_cell.GRUCell(3)
    cell = rnn_cell.ResidualWrapper(base)
    x = tf.constant(rng.standard_normal((2, 3)))
    state = cell.zero_state(2, tf.float64)
    out, new_state = cell(x, state)
    plain, _ = base(x, state)
    doubled = rnn_cell.ResidualWrapper(base, residual_fn=lambda i, o: 2 * i + o)(x, state)[0]
    assert [v.name for v in tf.global_variables()][0] == "gru_cell/gates/kernel:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, s, p, d, xv = sess.run([out, new_state, plain, doubled, x])
    np.testing.assert_allclose(o, xv + p, rtol=1e-12)
    np.testing.assert_allclose(s, p, rtol=1e-12)
    np.testing.assert_allclose(d, 2 * xv + p, rtol=1e-12)


def test_device_wrapper_places_the_cell_ops():
    cell = rnn_cell.DeviceWrapper(rnn_cell.BasicRNNCell(2), "/cpu:0")
    out, _ = cell(tf.ones([1, 2]), cell.zero_state(1, tf.float32))
    assert "cpu" in out.op.device.lower()
    assert cell.state_size == 2 and cell.output_size == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out).shape == (1, 2)
