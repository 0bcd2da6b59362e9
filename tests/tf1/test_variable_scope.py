"""Tests for graphflow.tf1.variable_scope: TF1 naming of scoped variables and of the name scopes a
variable scope opens, sharing (reuse=True, AUTO_REUSE, inheritance, scope objects), TF1's error
messages, initializers in every accepted form, scope defaults, regularizers, custom getters and
the per-graph store."""

import numpy as np
import pytest

import graphflow as tf


def _values(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


# ------------------------------------------------------------------ names
def test_variable_names_follow_the_variable_scope_only():
    with tf.variable_scope("a"):
        w = tf.get_variable("w", [2, 3])
        with tf.variable_scope("b"):
            v = tf.get_variable("v", [1])
        with tf.name_scope("not_in_the_name"):
            u = tf.get_variable("u", [1])
    with tf.name_scope("outside"):
        top = tf.get_variable("top", [1])
    assert (w.name, w.op.name, v.name, u.name, top.name) == \
        ("a/w:0", "a/w", "a/b/v:0", "a/u:0", "top:0")
    graph = tf.get_default_graph()
    assert graph.get_tensor_by_name("a/w:0") is w.value()
    assert w.initializer.name == "a/w/Assign"
    assert w.op.type == "VariableV2" and w.shape.as_list() == [2, 3]
    assert tf.trainable_variables() == [w, v, u, top]


def test_variable_scope_opens_a_name_scope_and_reentry_gets_a_fresh_one():
    with tf.variable_scope("a") as scope:
        c = tf.constant(1.0, name="c")
        assert scope.name == "a" and scope.original_name_scope == "a/"
        with tf.variable_scope("b") as inner:
            d = tf.constant(1.0, name="d")
            assert inner.name == "a/b" and inner.original_name_scope == "a/b/"
            assert tf.get_variable_scope() is inner
        assert tf.get_variable_scope() is scope
    assert tf.get_variable_scope().name == ""
    with tf.variable_scope("a"):
        again = tf.constant(1.0, name="c")
        w = tf.get_variable("w", [])
    assert (c.name, d.name, again.name, w.name) == ("a/c:0", "a/b/d:0", "a_1/c:0", "a/w:0")


def test_reentering_a_scope_object_keeps_its_name_wherever_it_is_entered():
    with tf.variable_scope("outer") as outer:
        with tf.variable_scope("tower", "default", []):
            assert tf.get_variable("w", []).name == "outer/tower/w:0"
        with tf.variable_scope(None, "default", []):
            assert tf.get_variable("w", []).name == "outer/default/w:0"
    with tf.variable_scope("elsewhere"):
        with tf.variable_scope(outer) as again:
            assert again.name == "outer" and again.original_name_scope == "outer/"
            with tf.variable_scope("tower", "default", reuse=True):
                assert tf.get_variable("w", []).name == "outer/tower/w:0"
                with tf.name_scope("scope2") as sc2:
                    assert sc2 == "elsewhere/outer/tower/scope2/"
            again.reuse_variables()
            with tf.variable_scope(None, "default", []):
                assert tf.get_variable("w", []).name == "outer/default/w:0"
    assert len(tf.global_variables()) == 2


def test_default_names_are_unique_per_variable_scope_and_reset_when_it_closes():
    def block():
        with tf.variable_scope(None, default_name="layer"):
            return tf.get_variable("w", [], initializer=tf.zeros_initializer()).name

    assert [block(), block()] == ["layer/w:0", "layer_1/w:0"]
    with tf.name_scope("ns"):  # name scopes do not count
        assert block() == "layer_2/w:0"
    with tf.variable_scope("model"):
        assert [block(), block()] == ["model/layer/w:0", "model/layer_1/w:0"]
    # closing 'model' forgets its sub-scopes: re-entering with reuse shares them (TF1)
    with tf.variable_scope("model", reuse=True):
        assert [block(), block()] == ["model/layer/w:0", "model/layer_1/w:0"]
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        tf.variable_scope(None, default_name="x", reuse=True)
    with pytest.raises(TypeError, match="default_name is None"):
        tf.variable_scope(None)


def test_auxiliary_name_scope_false_keeps_the_current_name_scope():
    with tf.name_scope("ns"):
        with tf.variable_scope("v", auxiliary_name_scope=False) as scope:
            c = tf.constant(0.0, name="c")
            w = tf.get_variable("w", [])
    assert (c.name, w.name, scope.original_name_scope) == ("ns/c:0", "v/w:0", "ns/")


# ------------------------------------------------------------------ reuse
def test_reuse_true_shares_and_is_inherited():
    with tf.variable_scope("m"):
        w = tf.get_variable("w", [3])
        with tf.variable_scope("inner"):
            v = tf.get_variable("v", [2])
    with tf.variable_scope("m", reuse=True):
        assert tf.get_variable("w", [3]) is w
        assert tf.get_variable("w") is w  # shape may be left out when sharing
        with tf.variable_scope("inner", reuse=False):  # False inherits: still reusing
            assert tf.get_variable_scope().reuse is True
            assert tf.get_variable("v", [2]) is v
    assert len(tf.global_variables()) == 2


def test_reuse_variables_on_the_current_scope():
    with tf.variable_scope("rnn") as scope:
        first = tf.get_variable("w", [2])
        scope.reuse_variables()
        assert tf.get_variable("w", [2]) is first


def test_auto_reuse_creates_once_then_shares():
    def tower(x):
        with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
            return x * tf.get_variable("scale", [], initializer=tf.constant_initializer(3.0))

    a, b = tower(tf.constant(1.0)), tower(tf.constant(2.0))
    assert len(tf.global_variables()) == 1
    assert tf.global_variables()[0].name == "tower/scale:0"
    assert _values([a, b]) == [3.0, 6.0]


def test_tf1_error_messages():
    with tf.variable_scope("a"):
        tf.get_variable("w", [2, 3])
    with pytest.raises(ValueError) as err:
        with tf.variable_scope("a"):
            tf.get_variable("w", [2, 3])
    assert str(err.value).startswith(
        "Variable a/w already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=tf.AUTO_REUSE in VarScope?")
    assert "test_variable_scope.py" in str(err.value)  # where the variable was defined
    with pytest.raises(ValueError) as err:
        with tf.variable_scope("a", reuse=True):
            tf.get_variable("missing", [1])
    assert str(err.value) == ("Variable a/missing does not exist, or was not created with "
                              "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                              "VarScope?")
    with tf.variable_scope("a", reuse=True):
        with pytest.raises(ValueError, match=r"Trying to share variable a/w, but specified shape"):
            tf.get_variable("w", [3, 2])
        with pytest.raises(ValueError, match="specified dtype float64 and found dtype float32"):
            tf.get_variable("w", [2, 3], dtype=tf.float64)
    # a tf.Variable of the same name was not created with get_variable
    tf.Variable(1.0, name="plain")
    with pytest.raises(ValueError, match="Variable plain does not exist"):
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            tf.get_variable("plain", [])
    with pytest.raises(ValueError, match="reuse must be"):
        tf.variable_scope("x", reuse="yes")
    with pytest.raises(TypeError, match="name_or_scope must be a string or VariableScope"):
        tf.variable_scope(3)


# ------------------------------------------------------------------ initializers
def test_default_initializers_glorot_for_floats_zeros_for_ints_and_bools():
    tf.set_random_seed(1)
    w = tf.get_variable("w", [200, 100])
    d = tf.get_variable("d", [50], dtype=tf.float64)
    i = tf.get_variable("i", [3], dtype=tf.int32)
    b = tf.get_variable("b", [2], dtype=tf.bool)
    assert [v.dtype for v in (w, d, i, b)] == [tf.float32, tf.float64, tf.int32, tf.bool]
    assert w.initializer.inputs[0].name.startswith("w/Initializer/")
    w_v, d_v, i_v, b_v = _values([w, d, i, b])
    limit = np.sqrt(6.0 / 300)
    assert np.abs(w_v).max() <= limit
    np.testing.assert_allclose(w_v.std(), limit / np.sqrt(3), rtol=0.03)
    assert d_v.dtype == np.float64 and np.abs(d_v).max() <= np.sqrt(6.0 / 100)
    np.testing.assert_array_equal(i_v, [0, 0, 0])
    np.testing.assert_array_equal(b_v, [False, False])


def test_initializer_forms():
    def halves(shape, dtype=None, partition_info=None):
        return tf.fill(shape, tf.constant(0.5, dtype=dtype))

    def tf1_style(shape, dtype, partition_info):  # TF1 passes partition_info when accepted
        assert partition_info is None
        return tf.ones(shape, dtype=dtype) * 3.0

    obj = tf.get_variable("obj", [2], initializer=tf.ones_initializer())
    three = tf.get_variable("three", [1], initializer=tf1_style)
    cls = tf.get_variable("cls", [2], initializer=tf.ones_initializer)
    fn = tf.get_variable("fn", [2, 2], initializer=halves)
    lam = tf.get_variable("lam", [3], dtype=tf.float64,
                          initializer=lambda shape, dtype: np.arange(shape[0], dtype=np.float64))
    arr = tf.get_variable("arr", initializer=np.array([[1.0, 2.0]]))
    lst = tf.get_variable("lst", initializer=[1, 2, 3], dtype=tf.float32)
    ten = tf.get_variable("ten", initializer=tf.constant([4, 5]))
    noarg = tf.get_variable("noarg", initializer=lambda: tf.constant([7.0, 8.0]))
    assert arr.shape.as_list() == [1, 2] and arr.dtype == tf.float64
    assert lst.dtype == tf.float32 and ten.dtype == tf.int32 and ten.shape.as_list() == [2]
    values = _values([obj, cls, fn, lam, arr, lst, ten, noarg, three])
    expected = [[1, 1], [1, 1], [[0.5, 0.5], [0.5, 0.5]], [0, 1, 2], [[1, 2]], [1, 2, 3], [4, 5],
                [7, 8], [3]]
    for got, want in zip(values, expected):
        np.testing.assert_array_equal(got, want)


def test_initializer_errors():
    with pytest.raises(ValueError, match="if initializer is a constant, do not specify shape"):
        tf.get_variable("a", [2], initializer=np.zeros(2))
    with pytest.raises(ValueError, match="shape must be fully defined"):
        tf.get_variable("b", [None, 2])
    with pytest.raises(ValueError, match="shape must be fully defined"):
        tf.get_variable("c")
    with pytest.raises(ValueError, match="Initializer type 'int32' and explicit dtype 'float32'"):
        tf.get_variable("d", initializer=tf.constant([1, 2]), dtype=tf.float32)
    with pytest.raises(ValueError, match=r"initializer made a value of shape \(3,\)"):
        tf.get_variable("e", [2], initializer=lambda shape, dtype: tf.zeros([3], dtype=dtype))
    with pytest.raises(ValueError, match="more partitions than the 4 elements"):
        tf.get_variable("f", [4], partitioner=lambda shape, dtype: [5])
    assert tf.global_variables() == []


def test_scope_defaults_are_inherited_and_overridable():
    with tf.variable_scope("s", initializer=tf.constant_initializer(2.0), dtype=tf.float64):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("inner"):
            b = tf.get_variable("b", [1])
            c = tf.get_variable("c", [1], initializer=tf.zeros_initializer(), dtype=tf.float32)
        with tf.variable_scope("over", initializer=tf.ones_initializer()):
            d = tf.get_variable("d", [1])
    assert [v.dtype for v in (a, b, c, d)] == [tf.float64, tf.float64, tf.float32, tf.float64]
    assert [list(v) for v in _values([a, b, c, d])] == [[2, 2], [2], [0], [1]]


# ------------------------------------------------------------------ regularizers
def test_regularizers_from_the_call_and_from_the_scope():
    def l2(scale):
        return lambda w: scale * tf.reduce_sum(w * w)

    tf.get_variable("w", [3], initializer=tf.constant_initializer([1.0, 2.0, 3.0]),
                    regularizer=l2(0.5))
    with tf.variable_scope("reg", regularizer=l2(0.1)):
        v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
        tf.get_variable("none", [2], regularizer=tf.no_regularizer)
    with tf.variable_scope("reg", reuse=True):
        tf.get_variable("v", [2])  # sharing adds no second penalty
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    assert losses[0].op.name.startswith("w/Regularizer/")
    assert losses[1].op.name.startswith("reg/v/Regularizer/")
    assert v.name == "reg/v:0"
    np.testing.assert_allclose(_values(losses), [0.5 * 14.0, 0.1 * 2.0], rtol=1e-6)


# ------------------------------------------------------------------ collections, getters
def test_trainable_and_collections():
    frozen = tf.get_variable("frozen", [1], trainable=False)
    local = tf.get_variable("local", [1], collections=[tf.GraphKeys.LOCAL_VARIABLES],
                            trainable=False)
    with tf.variable_scope("net") as scope:
        w = tf.get_variable("w", [1])
    assert tf.trainable_variables() == [w]
    assert tf.global_variables() == [frozen, w] and tf.local_variables() == [local]
    assert scope.global_variables() == [w] and scope.trainable_variables() == [w]


def test_custom_getters_compose():
    calls = []

    def doubling(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name, *args, **kwargs) * 2.0

    def logging(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        return getter(name, *args, **kwargs)

    with tf.variable_scope("g", custom_getter=doubling):
        with tf.variable_scope("h", custom_getter=logging):
            out = tf.get_variable("w", [], initializer=tf.constant_initializer(3.0))
    assert calls == [("inner", "g/h/w"), ("outer", "g/h/w")]
    assert tf.global_variables()[0].name == "g/h/w:0"
    assert _values(out) == 6.0


def test_each_graph_has_its_own_store():
    outer_w = tf.get_variable("w", [1])
    other = tf.Graph()
    with other.as_default():
        with tf.variable_scope("s"):
            inner_w = tf.get_variable("w", [1])  # no clash with the default graph's 'w'
            assert tf.get_variable_scope().name == "s"
        assert tf.get_variable_scope().name == ""
    assert inner_w.graph is other and outer_w.graph is tf.get_default_graph()
    assert inner_w.name == "s/w:0"
    tf.reset_default_graph()
    assert tf.get_variable("w", [1]).graph is tf.get_default_graph()  # fresh store


def test_gradients_flow_into_scoped_variables():
    x = tf.placeholder(tf.float32, [None, 2])
    with tf.variable_scope("lin"):
        w = tf.get_variable("w", initializer=np.array([[1.0], [-1.0]], np.float32))
    loss = tf.reduce_sum(tf.matmul(x, w))
    (grad,) = tf.gradients(loss, [w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g = sess.run(grad, {x: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_array_equal(g, [[4.0], [6.0]])
