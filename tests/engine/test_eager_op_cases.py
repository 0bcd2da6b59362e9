"""Every op case (tests/op_cases) run eagerly equals the same case run as a graph, bit for bit,
and GradientTape's gradients equal tf.gradients' over the cases that have gradients: eager mode
runs the same shape rules, kernels and gradient rules (graphflow/engine/eager.py, tape.py)."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import eager as eager_mode
from graphflow.ops.gradients import dense_gradients
from tests.op_cases import all_cases

CASES = all_cases()

# Cases that cannot run eagerly as written, and why (each is a graph-only construct).
_TF_GRADIENTS = "its build calls tf.gradients, which eager mode refuses as TF does"
_RANDOM = ("a random op's numbers come from a generator per op and seed; an eager op draws from "
           "its own stream, as TF's eager ops do (tests/engine/test_eager.py checks seeded eager "
           "draws repeat)")
GRAPH_ONLY = {
    "WhileGrad[[2, 3]]": _TF_GRADIENTS,
    "IgammaGradA[[6]x[6]]": _TF_GRADIENTS,
    **dict.fromkeys([
        "TensorArrayGradOfRead[[2, 3]]", "TensorArrayGradRead[[2]]",
        "TensorArrayGradOfStack[[2, 2]]", "TensorArrayGradStack[[2, 1]]",
        "TensorArrayAddGradients[[2, 4]]", "TensorArrayGradOfGather[[3, 2]]",
        "TensorArrayGradGather[[3]]", "TensorArrayGradOfConcat[[2, 2]]",
        "TensorArrayZeroGradient[[2, 3]]"], _TF_GRADIENTS),
    **dict.fromkeys(["RandomStandardNormal[shape of x]", "RandomUniform[]", "RandomUniformInt[]",
                     "TruncatedNormal[]", "RandomShuffle[int32]", "Multinomial[int32 out]"],
                    _RANDOM),
    "TFRecordReaderV2[]": "each build writes its records to a new temporary file, whose name the "
                          "op returns",
}


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _graph_values(case):
    tf.reset_default_graph()
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in case.inputs]
    out = _as_list(case.build(*placeholders))
    with tf.Session(optimize=False) as sess:
        return sess.run(out, dict(zip(placeholders, case.inputs)))


def _eager_values(case):
    tf.reset_default_graph()
    eager_mode.enable()
    try:
        out = _as_list(case.build(*[tf.constant(x) for x in case.inputs]))
        return [o.numpy() if hasattr(o, "numpy") else o for o in out]
    finally:
        eager_mode.disable()


def _same(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, f"{what}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    if a.dtype.kind == "O":
        assert a.tolist() == b.tolist(), what
    else:  # the same bits (NaN payloads and signed zeros included)
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), \
            f"{what}: {a} != {b}"


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in GRAPH_ONLY],
                         ids=lambda c: c.name)
def test_op_case_runs_eagerly_as_in_a_graph(case):
    expected = _graph_values(case)
    got = _eager_values(case)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        _same(g, e, f"{case.name} output {i}")


def _float_positions(case):
    if case.grad_inputs is not None:
        return list(case.grad_inputs)
    return [i for i, x in enumerate(case.inputs) if x.dtype.kind == "f"]


def _graph_gradients(case, positions):
    tf.reset_default_graph()
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in case.inputs]
    out = [o for o in _as_list(case.build(*placeholders)) if o.dtype.is_floating]
    grads = dense_gradients(out, [placeholders[i] for i in positions])
    fetch = [g for g in grads if g is not None]
    with tf.Session(optimize=False) as sess:
        values = iter(sess.run(fetch, dict(zip(placeholders, case.inputs))))
    return [None if g is None else next(values) for g in grads]


def _tape_gradients(case, positions):
    tf.reset_default_graph()
    eager_mode.enable()
    try:
        xs = [tf.constant(x) for x in case.inputs]
        with tf.GradientTape() as tape:
            tape.watch([xs[i] for i in positions])
            out = [o for o in _as_list(case.build(*xs)) if o.dtype.is_floating]
        grads = tape.gradient(out, [xs[i] for i in positions])
        # a gather's gradient is an IndexedSlices, eagerly as in a graph (TF's too): its dense value
        return [None if g is None else tf.convert_to_tensor(g).numpy() for g in grads]
    finally:
        eager_mode.disable()


_GRAD_CASES = [c for c in CASES if c.grad and c.name not in GRAPH_ONLY and _float_positions(c)]


@pytest.mark.parametrize("case", _GRAD_CASES, ids=lambda c: c.name)
def test_tape_gradients_equal_tf_gradients(case):
    positions = _float_positions(case)
    expected = _graph_gradients(case, positions)
    got = _tape_gradients(case, positions)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert (g is None) == (e is None), f"{case.name}: gradient {i} is {g} vs {e}"
        if g is not None:
            _same(g, e, f"{case.name} gradient of input {positions[i]}")
