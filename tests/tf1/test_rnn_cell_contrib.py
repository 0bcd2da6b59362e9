"""graphflow.tf1.rnn_cell_contrib: tf.contrib.rnn's block cells against TensorFlow 2.21's
LSTMBlockCell and GRUBlockCell kernels (tf.raw_ops, the ops TF1's cells ran; recorded numbers, and
live with GRAPHFLOW_TF_PYTHON set), LSTMBlockFusedCell against dynamic_rnn of the same weights, and
LayerNormBasicLSTMCell against numpy of TF1's formula (TF 2.21 no longer ships it)."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

rnn = tf.contrib.rnn


def block_cells_reference(tf, np):
    """TensorFlow's LSTMBlockCell / GRUBlockCell kernels on fixed values."""
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    c = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    h = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (7, 16)).astype(np.float32)
    b = rng.uniform(-1, 1, (16,)).astype(np.float32)
    wci, wcf, wco = [rng.uniform(-1, 1, (4,)).astype(np.float32) for _ in range(3)]
    w_ru = rng.uniform(-1, 1, (7, 8)).astype(np.float32)
    w_c = rng.uniform(-1, 1, (7, 4)).astype(np.float32)
    b_ru = rng.uniform(-1, 1, (8,)).astype(np.float32)
    b_c = rng.uniform(-1, 1, (4,)).astype(np.float32)
    out = {}
    for name, peep, clip, fb in (("plain", False, -1.0, 1.0), ("peephole_clip", True, 0.6, 0.3)):
        r = tf.raw_ops.LSTMBlockCell(x=x, cs_prev=c, h_prev=h, w=w, wci=wci, wcf=wcf, wco=wco, b=b,
                                     forget_bias=fb, cell_clip=clip, use_peephole=peep)
        out[name + "_c"], out[name + "_h"] = r.cs, r.h
    g = tf.raw_ops.GRUBlockCell(x=x, h_prev=h, w_ru=w_ru, w_c=w_c, b_ru=b_ru, b_c=b_c)
    out["gru_h"] = g.h
    with tf.Session() as sess:
        return sess.run(out)


# TensorFlow 2.21's kernels on the values above
TF_NUMBERS = {
    "plain_c": [[0.15827668, 0.6733137, 1.1845218, -0.39733052],
                [0.8167563, 0.02887527, -0.33712393, 0.65361464]],
    "plain_h": [[0.044038, 0.45487013, 0.2909308, -0.2661552],
                [0.34066176, 0.01329152, -0.24541992, 0.31811303]],
    "peephole_clip_c": [[0.18889195, 0.6, 0.6, -0.3714034],
                        [0.6, 0.0209306, -0.3336571, 0.54537195]],
    "peephole_clip_h": [[0.05106194, 0.36099282, 0.2184018, -0.25287053],
                        [0.25677797, 0.0095421, -0.2349797, 0.26917762]],
    "gru_h": [[0.086308, -0.7877594, -0.7534748, 0.85863227],
              [0.57276976, 0.16420448, 0.76939905, 0.4680139]]}


def _fixed_values():
    rng = np.random.RandomState(0)
    names = ["x", "c", "h", "w", "b", "wci", "wcf", "wco", "w_ru", "w_c", "b_ru", "b_c"]
    shapes = [(2, 3), (2, 4), (2, 4), (7, 16), (16,), (4,), (4,), (4,), (7, 8), (7, 4), (8,),
              (4,)]
    return {n: rng.uniform(-1, 1, s).astype(np.float32) for n, s in zip(names, shapes)}


def _assign(sess, values):
    by_name = {v.op.name: v for v in tf.global_variables()}
    sess.run([tf.assign(by_name[name], value) for name, value in values.items()])


def graphflow_block_cells():
    v = _fixed_values()
    state = tf.nn.rnn_cell.LSTMStateTuple(tf.constant(v["c"]), tf.constant(v["h"]))
    plain = rnn.LSTMBlockCell(4)
    _, plain_state = plain(tf.constant(v["x"]), state)
    peep = rnn.LSTMBlockCell(4, forget_bias=0.3, cell_clip=0.6, use_peephole=True,
                             name="peephole")
    _, peep_state = peep(tf.constant(v["x"]), state)
    gru = rnn.GRUBlockCell(4)
    gru_h, _ = gru(tf.constant(v["x"]), tf.constant(v["h"]))
    gru2 = rnn.GRUBlockCellV2(cell_size=4, name="gru_v2")
    gru2_h, _ = gru2(tf.constant(v["x"]), tf.constant(v["h"]))
    names = sorted(var.op.name for var in tf.global_variables())
    assert names == sorted([
        "lstm_cell/kernel", "lstm_cell/bias", "peephole/kernel", "peephole/bias",
        "peephole/w_i_diag", "peephole/w_f_diag", "peephole/w_o_diag", "gru_cell/w_ru",
        "gru_cell/b_ru", "gru_cell/w_c", "gru_cell/b_c", "gru_v2/gates/kernel",
        "gru_v2/gates/bias", "gru_v2/candidate/kernel", "gru_v2/candidate/bias"]), names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _assign(sess, {"lstm_cell/kernel": v["w"], "lstm_cell/bias": v["b"],
                       "peephole/kernel": v["w"], "peephole/bias": v["b"],
                       "peephole/w_i_diag": v["wci"], "peephole/w_f_diag": v["wcf"],
                       "peephole/w_o_diag": v["wco"], "gru_cell/w_ru": v["w_ru"],
                       "gru_cell/b_ru": v["b_ru"], "gru_cell/w_c": v["w_c"],
                       "gru_cell/b_c": v["b_c"], "gru_v2/gates/kernel": v["w_ru"],
                       "gru_v2/gates/bias": v["b_ru"], "gru_v2/candidate/kernel": v["w_c"],
                       "gru_v2/candidate/bias": v["b_c"]})
        return sess.run({"plain_c": plain_state.c, "plain_h": plain_state.h,
                         "peephole_clip_c": peep_state.c, "peephole_clip_h": peep_state.h,
                         "gru_h": gru_h, "gru2_h": gru2_h})


def test_block_cells_match_tensorflows_kernels():
    got = graphflow_block_cells()
    for name, want in TF_NUMBERS.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(got["gru2_h"], TF_NUMBERS["gru_h"], rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_block_cells_against_tensorflow_live():
    want = run_in_tensorflow([("r", block_cells_reference, {})])["r"]
    with tf.Graph().as_default():
        got = graphflow_block_cells()
    for name in TF_NUMBERS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_fused_cell_runs_the_sequence_like_dynamic_rnn():
    rng = np.random.default_rng(1)
    inputs = rng.standard_normal((5, 3, 2)).astype(np.float32)
    lengths = np.array([5, 2, 4], np.int32)
    fused = rnn.LSTMBlockFusedCell(4, use_peephole=True, cell_clip=2.0)
    outputs, state = fused(tf.constant(inputs), dtype=tf.float32,
                           sequence_length=tf.constant(lengths))
    listed, _ = fused([tf.constant(x) for x in inputs], dtype=tf.float32)
    step = rnn.LSTMBlockCell(4, use_peephole=True, cell_clip=2.0, name="step")
    want, want_state = tf.nn.dynamic_rnn(step, tf.constant(inputs), sequence_length=lengths,
                                         dtype=tf.float32, time_major=True)
    assert len(listed) == 5
    names = sorted(v.op.name for v in tf.global_variables())
    assert "lstm_fused_cell/kernel" in names and "lstm_fused_cell/w_o_diag" in names, names
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fused_vars = sorted(fused.variables, key=lambda v: v.op.name)
        step_vars = sorted(step.variables, key=lambda v: v.op.name)
        sess.run([tf.assign(s, f) for f, s in zip(fused_vars, step_vars)])
        got, got_state, want_out, want_st = sess.run([outputs, state, want, want_state])
    assert got.shape == (5, 3, 4)
    np.testing.assert_allclose(got, want_out, rtol=1e-6)
    np.testing.assert_allclose(got_state.h, want_st.h, rtol=1e-6)
    assert (got[2:, 1] == 0).all()


def _layer_norm(x, gamma, beta):
    mean = x.mean(1, keepdims=True)
    var = ((x - mean) ** 2).mean(1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


@pytest.mark.parametrize("layer_norm", [True, False])
def test_layer_norm_lstm_is_tf1s_formula(layer_norm):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2)).astype(np.float32)
    c = rng.standard_normal((3, 4)).astype(np.float32)
    h = rng.standard_normal((3, 4)).astype(np.float32)
    cell = rnn.LayerNormBasicLSTMCell(4, forget_bias=0.5, layer_norm=layer_norm, norm_gain=1.5,
                                      norm_shift=0.2)
    out, state = cell(tf.constant(x), tf.nn.rnn_cell.LSTMStateTuple(tf.constant(c),
                                                                    tf.constant(h)))
    names = sorted(v.op.name for v in tf.global_variables())
    scopes = ("input", "transform", "forget", "output", "state")
    want_names = ["layer_norm_basic_lstm_cell/kernel"] + (
        [f"layer_norm_basic_lstm_cell/{s}/{p}" for s in scopes for p in ("gamma", "beta")]
        if layer_norm else ["layer_norm_basic_lstm_cell/bias"])
    assert names == sorted(want_names)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_h, got_c = sess.run([out, state.c])
        w = sess.run({v.op.name.split("/", 1)[1]: v for v in tf.global_variables()})
    gates = np.concatenate([x, h], 1) @ w["kernel"]
    if not layer_norm:
        gates = gates + w["bias"]
    i, j, f, o = np.split(gates, 4, 1)
    if layer_norm:
        def norm(t, s):
            assert np.allclose(w[f"{s}/gamma"], 1.5) and np.allclose(w[f"{s}/beta"], 0.2)
            return _layer_norm(t, w[f"{s}/gamma"], w[f"{s}/beta"])
        i, j, f, o = norm(i, "input"), norm(j, "transform"), norm(f, "forget"), norm(o, "output")
    new_c = c * _sigmoid(f + 0.5) + _sigmoid(i) * np.tanh(j)
    if layer_norm:
        new_c = norm(new_c, "state")
    np.testing.assert_allclose(got_c, new_c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_h, np.tanh(new_c) * _sigmoid(o), rtol=1e-5, atol=1e-5)


def test_layer_norm_lstm_drops_out_the_candidate():
    keep = tf.placeholder(tf.float32, [])
    cell = rnn.LayerNormBasicLSTMCell(64, layer_norm=False, dropout_keep_prob=keep,
                                      dropout_prob_seed=3)
    _, state = cell(tf.ones([8, 3]), cell.zero_state(8, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kept, dropped = sess.run(state.c, {keep: 1.0}), sess.run(state.c, {keep: 0.5})
    assert (kept != 0).all()
    # the memory starts at zero: new c = sigmoid(i) * dropout(g), zero where g was dropped
    assert 0.35 < (dropped == 0).mean() < 0.65
    survivors = dropped != 0
    np.testing.assert_allclose(dropped[survivors], kept[survivors] * 2, rtol=1e-5)


@pytest.mark.parametrize("project", [True, False])
def test_intersection_rnn_is_tf1s_formula(project):
    rng = np.random.default_rng(3)
    depth = 3 if project else 4
    x = rng.standard_normal((2, depth)).astype(np.float32)
    s = rng.standard_normal((2, 4)).astype(np.float32)
    cell = rnn.IntersectionRNNCell(4, num_in_proj=4 if project else None, forget_bias=0.5)
    y, new_state = cell(tf.constant(x), tf.constant(s))
    names = sorted(v.op.name for v in tf.global_variables())
    want = ["intersection_rnn_cell/bias", "intersection_rnn_cell/kernel"]
    if project:
        want += ["intersection_rnn_cell/in_projection/bias",
                 "intersection_rnn_cell/in_projection/kernel"]
    assert names == sorted(want)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([tf.assign(v, v + 0.1) for v in tf.global_variables() if "bias" in v.op.name])
        got_y, got_s = sess.run([y, new_state])
        w = sess.run({v.op.name.split("/", 1)[1]: v for v in tf.global_variables()})
    if project:
        x = x @ w["in_projection/kernel"] + w["in_projection/bias"]
    gh, h, gy, ya = np.split(np.concatenate([x, s], 1) @ w["kernel"] + w["bias"], 4, 1)
    gh, gy = _sigmoid(gh + 0.5), _sigmoid(gy + 0.5)
    np.testing.assert_allclose(got_s, gh * s + (1 - gh) * np.tanh(h), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_y, gy * x + (1 - gy) * np.maximum(ya, 0), rtol=1e-5,
                               atol=1e-6)


def test_intersection_rnn_needs_a_projection_for_other_input_sizes():
    with pytest.raises(ValueError, match="num_in_proj should be set"):
        rnn.IntersectionRNNCell(4)(tf.zeros([2, 3]), tf.zeros([2, 4]))
