"""Tests for graphflow/tf1/template.py: `tf.make_template` shares the first call's variables with
every later call, with TF1's scope names (recorded from TensorFlow 2.21's tf.compat.v1: templates
'tmpl' called, then another 'tmpl', then one made with `create_scope_now_`, and one with
`unique_name_='given'`)."""

import numpy as np
import pytest

import graphflow as tf


def _scale(x):
    return x * tf.get_variable("w", [], initializer=tf.constant_initializer(3.0))


def test_calls_share_the_first_calls_variables_with_tensorflows_names():
    t = tf.make_template("tmpl", _scale)
    a, b = t(1.0), t(2.0)
    t2 = tf.make_template("tmpl", _scale)
    t2(1.0)
    t3 = tf.make_template("tmpl", _scale, create_scope_now_=True)
    t4 = tf.make_template("other", _scale, unique_name_="given")
    t4(1.0)
    t3(1.0)
    t3(2.0)
    # tf.compat.v1: ['tmpl/w:0', 'tmpl_1/w:0', 'given/w:0', 'tmpl_2/w:0'], tmpl/ tmpl_2/ given/
    assert [v.name for v in tf.global_variables()] == ["tmpl/w:0", "tmpl_1/w:0", "given/w:0",
                                                       "tmpl_2/w:0"]
    assert (t.variable_scope_name, t3.variable_scope_name, t4.variable_scope_name) == (
        "tmpl/", "tmpl_2/", "given/")
    assert [v.name for v in t.trainable_variables] == ["tmpl/w:0"]
    assert t.name == "tmpl" and t.func is _scale
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(t.variables[0].assign(5.0))
        assert sess.run([a, b]) == [5.0, 10.0]


def test_keyword_arguments_are_bound_and_custom_getter_applies():
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs)

    def dense(x, units):
        w = tf.get_variable("kernel", [x.shape[-1], units], initializer=tf.ones_initializer())
        return tf.matmul(x, w)

    t = tf.make_template("dense", dense, units=2, custom_getter_=getter)
    y1 = t(tf.ones([1, 3]))
    y2 = t(tf.ones([4, 3]))
    assert seen == ["dense/kernel", "dense/kernel"]
    assert len(tf.trainable_variables()) == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(y2), np.full((4, 2), 3.0))
        np.testing.assert_array_equal(sess.run(y1), [[3.0, 3.0]])


def test_a_new_trainable_variable_on_a_later_call_is_an_error():
    t = tf.make_template("bad", lambda x: x * tf.Variable(2.0))
    t(1.0)
    with pytest.raises(ValueError, match="Trainable variable created when calling a template "
                                         "after the first time"):
        t(2.0)
    with pytest.raises(ValueError, match="name cannot be None"):
        tf.make_template(None, _scale)


def test_templates_share_partitioned_variables():
    def lookup(ids):
        table = tf.get_variable("table", [6, 2], partitioner=tf.fixed_size_partitioner(2),
                                initializer=tf.ones_initializer())
        return tf.nn.embedding_lookup(table, ids)

    t = tf.make_template("embed", lookup)
    t([0, 1])
    t([5])
    assert [v.name for v in tf.global_variables()] == ["embed/table/part_0:0",
                                                       "embed/table/part_1:0"]
