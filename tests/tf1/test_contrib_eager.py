"""tf.contrib.eager (graphflow/tf1/contrib_eager.py), and eager programs against TensorFlow's
eager mode: the same TF1 code run eagerly gives TensorFlow 2.21's numbers (recorded below; compared live where
GRAPHFLOW_TF_PYTHON names a Python with TensorFlow)."""

import inspect
import os
import subprocess
import tempfile
import textwrap

import numpy as np
import pytest

import graphflow as tf
from tests.tf_reference import tf_python


# ------------------------------------------------------------------ programs (TF1 API, any `tf`)
def regression_steps(tf, np):
    """Linear regression: GradientTape + GradientDescentOptimizer, five steps."""
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(6, 2)
    y = x @ np.array([[2.0], [-3.0]], np.float32) + 0.25
    w = tf.Variable(np.array([[0.1], [0.2]], np.float32))
    b = tf.Variable(np.float32(0.0))
    opt = tf.train.GradientDescentOptimizer(0.3)
    losses = []
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        losses.append(loss.numpy())
    return {"losses": np.array(losses), "w": w.numpy(), "b": b.numpy()}


def classifier_steps(tf, np):
    """A two-layer softmax classifier on a tf.data pipeline, Adam, second derivative of tanh."""
    rng = np.random.RandomState(0)
    x = rng.randn(32, 5).astype(np.float32)
    labels = rng.randint(0, 3, size=32).astype(np.int32)
    w1 = tf.Variable(rng.randn(5, 8).astype(np.float32) * 0.3)
    w2 = tf.Variable(rng.randn(8, 3).astype(np.float32) * 0.3)
    opt = tf.train.AdamOptimizer(0.05)
    losses = []
    for bx, by in tf.data.Dataset.from_tensor_slices((x, labels)).batch(8).repeat(2):
        with tf.GradientTape() as tape:
            logits = tf.matmul(tf.nn.relu(tf.matmul(bx, w1)), w2)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=by, logits=logits))
        opt.apply_gradients(zip(tape.gradient(loss, [w1, w2]), [w1, w2]))
        losses.append(loss.numpy())
    t = tf.constant(np.float32(0.7))
    with tf.GradientTape() as outer:
        outer.watch(t)
        with tf.GradientTape() as inner:
            inner.watch(t)
            u = tf.tanh(t)
        du = inner.gradient(u, t)
    return {"losses": np.array(losses), "w2": w2.numpy(), "du": du.numpy(),
            "d2u": outer.gradient(du, t).numpy()}


PROGRAMS = [regression_steps, classifier_steps]

# TensorFlow 2.21's eager results of the programs above (tensorflow.compat.v1, CPU), recorded
RECORDED = {
    "regression_steps": {
        "losses": np.array([0.6974310874938965, 0.19503414630889893, 0.05533428117632866,
                            0.015823835507035255, 0.004544401075690985], np.float32),
        "w": np.array([[-0.5019896626472473], [-0.4398559033870697]], np.float32),
        "b": np.array(-0.20826441049575806, np.float32),
    },
    "classifier_steps": {
        "losses": np.array([0.9995794296264648, 1.1288597583770752, 1.361541509628296,
                            1.0762861967086792, 0.7640143632888794, 1.0628788471221924,
                            1.0975873470306396, 0.9935664534568787], np.float32),
        "w2": np.array([[0.04666190594434738, 0.2913760840892792, -0.11666254699230194],
                        [0.832908034324646, -0.0962270051240921, 0.35405614972114563],
                        [-0.08973869681358337, 0.10044407099485397, 0.09165389835834503],
                        [0.15111064910888672, -0.374688982963562, -0.8537163734436035],
                        [0.11148682981729507, -0.49211570620536804, 0.17895305156707764],
                        [-0.5726251602172852, 0.34376174211502075, -0.31751948595046997],
                        [-0.45810750126838684, -0.3596106171607971, -0.49998509883880615],
                        [-0.34540557861328125, 0.2514086663722992, -0.2576696574687958]],
                       np.float32),
        "du": np.array(0.6347396373748779, np.float32),
        "d2u": np.array(-0.7672322988510132, np.float32),
    },
}


_SCRIPT = """
import sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.enable_eager_execution()
{source}
np.savez(sys.argv[1], **{name}(tf, np))
"""


def _in_tensorflow(program):
    source = textwrap.dedent(inspect.getsource(program))
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "program.py")
        with open(script, "w") as f:
            f.write(_SCRIPT.format(source=source, name=program.__name__))
        out = os.path.join(tmp, "out.npz")
        subprocess.run([tf_python(), script, out], check=True, capture_output=True, timeout=300,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES=""))
        with np.load(out) as data:
            return {k: data[k] for k in data.files}


def _in_graphflow(program):
    tf.enable_eager_execution()
    try:
        return program(tf, np)
    finally:
        tf.disable_eager_execution()


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_eager_programs_give_tensorflows_numbers(program):
    got = _in_graphflow(program)
    expected = RECORDED[program.__name__]
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=2e-5, atol=2e-6, err_msg=key)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_eager_programs_against_live_tensorflow(program):
    got = _in_graphflow(program)
    live = _in_tensorflow(program)
    for key in live:
        np.testing.assert_allclose(got[key], live[key], rtol=2e-5, atol=2e-6, err_msg=key)


# ------------------------------------------------------------------ tf.contrib.eager's names
def test_implicit_gradients_follow_the_variables_read(eager):
    tfe = tf.contrib.eager
    w = tfe.Variable(2.0, name="w")
    b = tfe.Variable(1.0, name="b")
    frozen = tfe.Variable(5.0, trainable=False)

    def loss(x):
        return w * x * frozen + b

    value, grads_and_vars = tfe.implicit_value_and_gradients(loss)(3.0)
    assert value.numpy() == 31.0
    assert [v for _, v in grads_and_vars] == [w, b]
    assert [g.numpy() for g, _ in grads_and_vars] == [15.0, 1.0]
    assert [g.numpy() for g, _ in tfe.implicit_gradients(loss)(1.0)] == [5.0, 1.0]
    with pytest.raises(ValueError, match="No trainable variables"):
        tfe.implicit_gradients(lambda: tf.constant(1.0))()


def test_gradients_function_and_its_nesting(eager):
    tfe = tf.contrib.eager

    def square(x):
        return x * x

    assert tfe.gradients_function(square)(3.0)[0].numpy() == 6.0
    second = tfe.gradients_function(lambda x: tfe.gradients_function(square)(x)[0])
    assert second(3.0)[0].numpy() == 2.0

    def product(x, y):
        return x * y * y

    value, (dy,) = tfe.value_and_gradients_function(product, params=["y"])(2.0, 3.0)
    assert value.numpy() == 18.0 and dy.numpy() == 12.0


def test_network_tracks_layers_and_their_variables(eager):
    tfe = tf.contrib.eager

    class Two(tfe.Network):
        def __init__(self):
            super().__init__()
            self.first = self.track_layer(tf.layers.Dense(3))
            self.second = tf.layers.Dense(1)  # an attribute is tracked too

        def call(self, x):
            return self.second(self.first(x))

    net = Two()
    assert net(tf.ones([2, 4])).shape.as_list() == [2, 1]
    assert [v.shape.as_list() for v in net.variables] == [[4, 3], [3], [3, 1], [1]]
    assert len(net.trainable_variables) == 4


def test_checkpoint_and_saver_round_trip(eager, tmp_path):
    tfe = tf.contrib.eager
    w = tfe.Variable([1.0, 2.0], name="w")
    opt = tf.train.AdamOptimizer(0.1)
    opt.minimize(lambda: tf.reduce_sum(w * w))
    ckpt = tf.train.Checkpoint(w=w, optimizer=opt)
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert path.endswith("ckpt-1") and tf.train.latest_checkpoint(str(tmp_path)) == path
    saved = w.numpy()
    w.assign([0.0, 0.0])
    ckpt.restore(path).assert_consumed()
    np.testing.assert_array_equal(w.numpy(), saved)
    saver = tf.train.Saver([w])
    prefix = saver.save(None, str(tmp_path / "saver"))
    w.assign([5.0, 5.0])
    saver.restore(None, prefix)
    np.testing.assert_array_equal(w.numpy(), saved)
    with pytest.raises(RuntimeError, match="var_list"):
        tf.train.Saver()
    reader = tf.train.load_checkpoint(path)
    assert reader.has_tensor("w/w")


def test_iterator_and_for_loops_over_datasets(eager):
    tfe = tf.contrib.eager
    ds = tf.data.Dataset.range(5).map(lambda x: x * 2).batch(2)
    assert [b.numpy().tolist() for b in tfe.Iterator(ds)] == [[0, 2], [4, 6], [8]]
    assert [b.numpy().tolist() for b in ds] == [[0, 2], [4, 6], [8]]  # a fresh pass each time
    it = tfe.Iterator(tf.data.Dataset.range(1))
    it.get_next()
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()


def test_tfe_iterator_needs_eager_mode():
    with pytest.raises(RuntimeError, match="eager execution"):
        tf.contrib.eager.Iterator(tf.data.Dataset.range(2))


def test_finished_eager_iterations_keep_nothing(eager):
    from graphflow.engine import eager as eager_mode
    graph = eager_mode.eager_graph()
    ds = tf.data.Dataset.range(3)
    list(ds)
    before = (len(graph.state.resources), len(graph.get_collection("graphflow_datasets")))
    for _ in range(5):
        assert [int(x) for x in ds] == [0, 1, 2]
    assert (len(graph.state.resources),
            len(graph.get_collection("graphflow_datasets"))) == before == (0, 0)


def test_keras_models_are_called_eagerly_and_fit_says_what_to_do(eager):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    out = model(tf.ones([4, 3]))
    assert out.shape.as_list() == [4, 2] and len(model.trainable_variables) == 2
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(NotImplementedError, match="GradientTape loop"):
        model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
