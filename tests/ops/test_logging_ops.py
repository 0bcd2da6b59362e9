"""tf.Print, tf.print, tf.Assert, tf.check_numerics, tf.add_check_numerics_ops: what they print,
when, and the errors they raise (naming the op and the user's line; a failed run changes no
variable)."""

import numpy as np
import pytest

import graphflow as tf


def test_print_is_an_identity_that_writes_to_stderr(capsys):
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.Print(x, [x, tf.reduce_sum(x)], message="values: ") * 1.0
    with tf.Session() as sess:
        out = sess.run(y, {x: np.arange(6).reshape(2, 3)})
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))
    captured = capsys.readouterr()
    assert captured.err == "values: [[0 1 2]...][15]\n" and captured.out == ""


def test_print_first_n_and_summarize(capsys):
    x = tf.placeholder(tf.float32, [5])
    y = tf.Print(x, [x], message="x=", first_n=2, summarize=4)
    with tf.Session() as sess:
        for i in range(4):
            sess.run(y, {x: np.full(5, i) + np.arange(5) * 0.5})
    assert capsys.readouterr().err.splitlines() == ["x=[0 0.5 1 1.5...]", "x=[1 1.5 2 2.5...]"]


def test_print_passes_the_gradient_to_its_input():
    x = tf.constant([1.0, 2.0])
    (g,) = tf.gradients(tf.reduce_sum(tf.Print(x, [x]) * 3.0), [x])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(g), [3.0, 3.0])


def test_tf_print_returns_an_op_for_control_dependencies(capsys):
    x = tf.placeholder(tf.int32, [None])
    printed = tf.print("x:", x, "sum:", tf.reduce_sum(x), summarize=2)
    assert isinstance(printed, tf.Operation)
    with tf.control_dependencies([printed]):
        y = tf.identity(x)
    with tf.Session() as sess:
        sess.run(y, {x: np.arange(10)})
        sess.run(x * 2, {x: np.arange(3)})  # does not depend on the print
    assert capsys.readouterr().err == "x: [0 1 ... 8 9] sum: 45\n"


def test_tf_print_streams_sep_end_and_floats(capsys, tmp_path):
    x = tf.constant([[1.5, 2.0], [3.0, 4.25]])
    target = tmp_path / "log.txt"
    with tf.Session() as sess:
        sess.run(tf.print(x, output_stream=__import__("sys").stdout, sep="|", end="!\n"))
        sess.run(tf.print("a", 15.0, x[0], sep="|", output_stream=f"file://{target}"))
    assert capsys.readouterr().out == "[[1.5 2]\n [3 4.25]]!\n"
    assert target.read_text() == "a|15.0|[1.5 2]\n"
    with pytest.raises(ValueError, match="output_stream"):
        tf.print(x, output_stream="somewhere")


def test_assert_fails_the_run_with_its_data_and_the_building_line():
    x = tf.placeholder(tf.float32, [None])
    check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive, got", x], summarize=2)
    with tf.Session() as sess:
        sess.run(check, {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(check, {x: [1.0, -2.0, 3.0]})
    message = str(info.value)
    assert message.startswith("assertion failed: [x must be positive, got] [1 -2...]")
    assert "test_logging_ops.py" in message and "tf.Assert(" in message
    assert info.value.op.name == "Assert"


def test_check_numerics_names_op_line_and_message_and_changes_no_variable():
    v = tf.Variable(1.0)
    x = tf.placeholder(tf.float32, [])
    checked = tf.check_numerics(tf.log(x), "log(x) went bad")
    step = tf.assign_add(v, checked)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step, {x: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(step, {x: -1.0})
        assert sess.run(v) == 1.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had Inf values"):
            sess.run(step, {x: 0.0})
    message = str(info.value)
    assert message.startswith("log(x) went bad : Tensor had NaN values")
    assert "'CheckNumerics' (CheckNumerics)" in message and "tf.check_numerics(" in message


def test_check_numerics_gradient_is_checked_too():
    x = tf.placeholder(tf.float32, [])
    y = tf.sqrt(tf.check_numerics(x, "input of sqrt"))
    (g,) = tf.gradients(y, [x])
    with tf.Session() as sess:
        assert sess.run(g, {x: 4.0}) == 0.25
        with pytest.raises(tf.errors.InvalidArgumentError, match="detected in gradient. input of sqrt"):
            sess.run(g, {x: 0.0})


def test_add_check_numerics_ops_guards_every_float_tensor():
    x = tf.placeholder(tf.float32, [2], name="x")
    hidden = tf.multiply(x, 1e30, name="hidden")
    loss = tf.reduce_sum(tf.multiply(hidden, hidden, name="square"), name="loss")
    check = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        assert sess.run([loss, check], {x: [1e-20, 2e-20]})[0] > 0
        with pytest.raises(tf.errors.InvalidArgumentError, match="square:0 : Tensor had Inf"):
            sess.run([loss, check], {x: [1.0, 2.0]})


def test_tf_print_of_structures(capsys):
    a, b = tf.constant([1, 2]), tf.constant(3.5)
    with tf.Session() as sess:
        sess.run(tf.print({"a": a, "b": [b, "text"]}, (a,)))
    assert capsys.readouterr().err == "{'a': [1 2], 'b': [3.5, 'text']} ([1 2],)\n"  # as TF
