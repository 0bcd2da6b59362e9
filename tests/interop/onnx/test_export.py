"""graphflow.interop.onnx export: models pass the full ONNX checker, run in onnxruntime with
graphflow's numbers, and ops without an export are named in the error with the user's line."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import graphflow as tf
from graphflow.interop import onnx as gf_onnx


def _roundtrip(outputs, inputs, feeds, session=None, opset=17, rtol=1e-5, atol=1e-6):
    model = gf_onnx.build_model(outputs, inputs=inputs, session=session, opset=opset)
    onnx.checker.check_model(model, full_check=True)
    runner = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = runner.run(list(outputs), {name: feeds[t] for name, t in inputs.items()})
    sess = session or tf.Session()
    want = sess.run(list(outputs.values()), feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return model


@pytest.mark.parametrize("opset", [13, 17, onnx.defs.onnx_opset_version()])
def test_cnn_with_variables_runs_in_onnxruntime(opset, rng, tmp_path):
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.nn.avg_pool(h, [1, 3, 3, 1], [1, 1, 1, 1], "SAME")
    h = tf.reshape(h, [-1, 4 * 4 * 4])
    logits = tf.layers.dense(h, 5)
    probs = tf.nn.softmax(logits)
    top = tf.argmax(logits, axis=1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feeds = {x: rng.standard_normal((3, 8, 8, 3)).astype(np.float32)}
        _roundtrip({"probs": probs, "top": top}, {"x": x}, feeds, sess, opset)
        path = gf_onnx.export({"probs": probs}, tmp_path / "m.onnx", inputs={"x": x}, session=sess)
    model = onnx.load(str(path))
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param and [d.dim_value for d in dims[1:]] == [8, 8, 3]  # symbolic batch


def test_elementwise_shape_and_reduction_ops(rng):
    x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
    y = tf.placeholder(tf.float32, [4], name="y")
    outs = {
        "math": tf.tanh(x * 1.5 + y) - tf.exp(-tf.square(x)) + tf.rsqrt(tf.abs(x) + 1.0),
        "acts": tf.nn.relu6(x) + tf.nn.leaky_relu(x, 0.1) + tf.nn.elu(x) + tf.sigmoid(x),
        "reduce": tf.reduce_sum(x, axis=[0, 2]) + tf.reduce_mean(x, axis=[0, 2]) + tf.reduce_max(x, [0, 2]),
        "keep": tf.reduce_prod(x, axis=1, keepdims=True),
        "transpose": tf.transpose(x, [2, 0, 1]),
        "concat": tf.concat([x, x * 2.0], axis=-1),
        "slice": x[:, 1:, ::2],
        "stack": tf.stack([y, y + 1.0], axis=1),
        "unstack": tf.unstack(x, axis=1)[2],
        "expand": tf.squeeze(tf.expand_dims(y, 0), [0]),
        "gather": tf.gather(x, [2, 0], axis=2),
        "tile": tf.tile(y[None, :], [3, 2]),
        "pad": tf.pad(x, [[0, 0], [1, 2], [0, 1]], constant_values=0.5),
        "where": tf.where(x > 0.0, x, -x),
        "cast": tf.cast(x * 10.0, tf.int32),
        "floordiv": tf.floordiv(x, 0.3) + tf.floormod(x, 0.7),
        "softmax": tf.nn.log_softmax(x),
        "matmul": tf.matmul(x[0], x[1], transpose_b=True),
        "onehot": tf.one_hot([0, 2, 1], 3),
        "compare": tf.logical_and(x > 0.1, tf.logical_not(tf.equal(x, 0.5))),
    }
    feeds = {x: rng.standard_normal((2, 3, 4)).astype(np.float32),
             y: rng.standard_normal(4).astype(np.float32)}
    _roundtrip(outs, {"x": x, "y": y}, feeds)


def test_unexportable_op_names_the_op_and_line(rng):
    x = tf.placeholder(tf.float32, [3], name="x")
    noise = tf.random_normal([3])  # the line the error must show
    with pytest.raises(gf_onnx.ExportError) as info:
        gf_onnx.build_model({"y": x + noise}, inputs={"x": x})
    assert "RandomStandardNormal" in str(info.value) and "test_export.py" in str(info.value)


def test_missing_input_is_a_clear_error():
    x = tf.placeholder(tf.float32, [3], name="features")
    with pytest.raises(gf_onnx.ExportError, match="'features'"):
        gf_onnx.build_model({"y": x * 2.0}, inputs={})


def test_cli_exports_a_saved_model_and_runs_the_onnx_file(rng, tmp_path, capsys):
    from graphflow.tools.cli import main
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.layers.dense(x, 2)
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(y, {x: xs})
        tf.save(tmp_path / "m.gfz", inputs={"x": x}, outputs={"y": y}, session=sess)
    np.save(tmp_path / "x.npy", xs)
    assert main(["export-onnx", str(tmp_path / "m.gfz"), str(tmp_path / "m.onnx")]) == 0
    assert main(["run", str(tmp_path / "m.onnx"), "--input", f"x={tmp_path / 'x.npy'}",
                 "--output", str(tmp_path / "out.npz")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["y"], want, rtol=1e-5, atol=1e-6)


def test_string_equal_exports_from_opset_19_and_is_refused_below(tmp_path):
    x = tf.placeholder(tf.string, [None], name="x")
    eq = tf.equal(x, "cat", name="eq")
    ne = tf.not_equal(x, "dog", name="ne")
    with pytest.raises(gf_onnx.ExportError, match=r"'eq' \(Equal\).*opset 19"):
        gf_onnx.build_model([eq, ne], inputs=[x], opset=17)
    model = gf_onnx.build_model([eq, ne], inputs=[x], opset=19)
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / "strings.onnx"
    onnx.save(model, str(path))
    words = np.array(["cat", "dog", "owl"], dtype=object)
    want = [np.array([True, False, False]), np.array([True, False, True])]
    got_ort = ort.InferenceSession(str(path)).run(None, {"x": words})
    imported = gf_onnx.import_model(str(path)).run({"x": np.array([b"cat", b"dog", b"owl"],
                                                                    dtype=object)})
    for w, a, b in zip(want, got_ort, [imported["eq"], imported["ne"]]):
        np.testing.assert_array_equal(a, w)
        np.testing.assert_array_equal(b, w)
