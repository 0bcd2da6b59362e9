"""tf.py_func / tf.numpy_function: outputs and dtypes, several outputs, no gradient, errors in the
function naming the op; a checkpoint's `.meta` holds TensorFlow's PyFunc node, which runs in the
process that registered its token and fails naming the op, line and token elsewhere; graphflow's
own file refuses it."""

import os
import subprocess
import sys

import numpy as np
import pytest

import graphflow as tf


def test_py_func_runs_python_on_arrays_each_time():
    calls = []

    def scaled(a, b):
        calls.append(1)
        return a * b

    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(scaled, [x, tf.constant(2.0)], tf.float32)
    assert y.dtype == tf.float32 and y.shape.dims is None
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3]}), [2, 4, 6])
        sess.run(y, {x: [1, 2, 3]})
    assert len(calls) == 2  # stateful: never cached or folded


def test_several_outputs_cast_to_tout_and_numpy_function():
    x = tf.constant([1.0, 2.0, 4.0])
    total, count = tf.py_func(lambda v: (v.sum(), len(v)), [x], [tf.float64, tf.int64])
    doubled = tf.numpy_function(lambda v: v * 2, [x], tf.float32)
    with tf.Session() as sess:
        t, c, d = sess.run([total, count, doubled])
    assert (t.dtype, c.dtype, t, c) == (np.float64, np.int64, 7.0, 3)
    np.testing.assert_array_equal(d, [2, 4, 8])


def test_py_func_has_no_gradient():
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(np.square, [x], tf.float32)
    assert tf.gradients(tf.reduce_sum(y), [x]) == [None]


def test_errors_in_the_function_and_wrong_results_name_the_op():
    def broken(v):
        raise ZeroDivisionError("boom")

    x = tf.constant([1.0])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="'PyFunc'.*ZeroDivisionError: boom"):
            sess.run(tf.py_func(broken, [x], tf.float32))
        with pytest.raises(tf.errors.InvalidArgumentError, match="returned 2 values, Tout declares 1"):
            sess.run(tf.py_func(lambda v: (v, v), [x], [tf.float32]))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="returned float32 for output 0, Tout declares int32"):
            sess.run(tf.py_func(lambda v: v, [x], tf.int32))


def test_graphflow_save_of_a_py_func_is_refused_naming_the_op(tmp_path):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.py_func(np.tanh, [x], tf.float32, name="my_tanh")
    path = tmp_path / "model.gfz"
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="'my_tanh' \\(PyFunc\\).*cannot travel in a graph file"):
            tf.save(str(path), inputs={"x": x}, outputs={"y": y}, session=sess)
    assert not path.exists()


def _py_func_checkpoint(tmp_path):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None], name="x")
        tf.py_func(lambda a: a * 2, [x], tf.float32, name="double")
        tf.Variable(1.0, name="w")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "model"))
    return graph, prefix


def test_saver_writes_tensorflows_py_func_node_and_this_process_runs_it(tmp_path):
    """TensorFlow writes the PyFunc node (token, Tin, Tout) in the `.meta`; importing it in the
    process that built it runs the function."""
    graph, prefix = _py_func_checkpoint(tmp_path)
    meta = tf.train.read_meta_graph_file(prefix + ".meta")
    (node,) = [n for n in meta.graph_def.node if n.op == "PyFunc"]
    assert node.name == "double" and list(node.input) == ["x"]
    assert sorted(k for k in node.attr if not k.startswith("_")) == ["Tin", "Tout", "token"]
    token = node.attr["token"].s.decode()
    assert token == graph.get_operation_by_name("double").attrs["token"]
    assert token.startswith("pyfunc_")
    with tf.Graph().as_default():
        with pytest.raises(PermissionError, match="PyFunc 'double' \\(python\\)"):
            tf.train.import_meta_graph(prefix + ".meta")
        tf.train.import_meta_graph(prefix + ".meta", allow_io=True)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run("double:0", {"x:0": [1.0, 2.0]}), [2.0, 4.0])


_FRESH = """
import graphflow as tf
tf.train.import_meta_graph(PREFIX + ".meta", allow_io=True)
tf.py_func(lambda a: a * 3, [tf.constant([1.0])], tf.float32)  # this process's first function
with tf.Session() as sess:
    try:
        sess.run("double:0", {"x:0": [1.0]})
    except tf.errors.InvalidArgumentError as exc:
        print(exc)
"""


def test_a_fresh_process_fails_naming_the_op_line_and_token(tmp_path):
    """In a fresh process the token names no function (TensorFlow: "Could not find callback with
    key=pyfunc_0 in the registry"), not even that process's own first py_func."""
    graph, prefix = _py_func_checkpoint(tmp_path)
    token = graph.get_operation_by_name("double").attrs["token"]
    script = tmp_path / "fresh.py"
    script.write_text(f"PREFIX = {prefix!r}\n" + _FRESH)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout
    assert f"could not find callback with key={token} in the registry" in out
    assert "'double' (PyFunc) created at" in out and "fresh.py:4" in out


def test_py_function_passes_eager_style_values_and_takes_tout():
    x = tf.placeholder(tf.float32, [3])
    seen = []

    def double_and_sum(v, w):
        seen.append(type(v).__name__)
        return v.numpy() * 2, np.sum(w.numpy(), dtype=np.int64)

    a, b = tf.py_function(double_and_sum, [x, tf.constant([1, 2, 3])], [tf.float32, tf.int64])
    single = tf.py_function(lambda v: v + 1, [x], tf.float32)
    assert a.dtype == tf.float32 and b.dtype == tf.int64 and single.dtype == tf.float32
    with tf.Session() as sess:
        av, bv, sv = sess.run([a, b, single], {x: [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(av, [2.0, 4.0, 6.0])
    assert bv == 6 and seen == ["EagerValue"]
    np.testing.assert_array_equal(sv, [2.0, 3.0, 4.0])
    assert a.op.type == "PyFunc" and tf.gradients(a, [x]) == [None]
