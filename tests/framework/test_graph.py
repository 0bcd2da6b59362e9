"""Graph structure: naming and scopes, control dependencies, devices, collections, lookup, finalize."""

import numpy as np
import pytest

import graphflow as tf


def test_unique_names_and_name_scopes():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="a")
    assert (a.op.name, b.op.name) == ("a", "a_1")
    assert a.name == "a:0"
    with tf.name_scope("layer"):
        c = tf.add(a, b)
        with tf.name_scope("inner"):
            d = tf.multiply(c, c, name="prod")
    with tf.name_scope("layer"):
        e = tf.add(a, b)
    assert c.op.name == "layer/Add"
    assert d.op.name == "layer/inner/prod"
    assert e.op.name == "layer_1/Add"
    with tf.name_scope("abs/"):  # trailing slash: re-enter an existing scope exactly
        f = tf.add(a, b)
    assert f.op.name == "abs/Add"


def test_tensor_properties_and_static_shapes():
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    assert x.shape.as_list() == [None, 3]
    assert x.get_shape().ndims == 2
    assert x.dtype == tf.float32 and x.dtype == np.float32 and x.dtype == "float32"
    y = x * 2.0
    assert y.shape.as_list() == [None, 3]
    z = x + tf.constant(np.ones((4, 1, 3), np.float32))
    assert z.shape.as_list() == [4, None, 3]
    u = tf.placeholder(tf.float32)
    assert u.shape.ndims is None
    x.set_shape([5, 3])
    assert x.shape.as_list() == [5, 3]
    with pytest.raises(ValueError):
        x.set_shape([6, 3])


def test_operator_overloading_matches_numpy():
    xv = np.array([[1.5, -2.0], [3.0, 4.5]], np.float32)
    yv = np.array([[2.0, 3.0], [-1.0, 2.5]], np.float32)
    x = tf.placeholder(tf.float32, [2, 2])
    y = tf.placeholder(tf.float32, [2, 2])
    exprs = {
        "add": (x + y, xv + yv), "radd": (1.0 + x, 1 + xv), "sub": (x - y, xv - yv),
        "rsub": (2.0 - x, 2 - xv), "mul": (x * y, xv * yv), "div": (x / y, xv / yv),
        "rdiv": (1.0 / y, 1 / yv), "floordiv": (x // y, xv // yv), "mod": (x % y, xv % yv),
        "pow": (abs(x) ** y, np.abs(xv) ** yv), "matmul": (x @ y, xv @ yv), "neg": (-x, -xv),
        "abs": (abs(x), np.abs(xv)), "lt": (x < y, xv < yv), "le": (x <= y, xv <= yv),
        "gt": (x > y, xv > yv), "ge": (x >= y, xv >= yv),
        "and": ((x > 0) & (y > 0), (xv > 0) & (yv > 0)), "or": ((x > 0) | (y > 0), (xv > 0) | (yv > 0)),
        "not": (~(x > 0), ~(xv > 0)), "np_scalar": (np.float32(2) * x, 2 * xv),
    }
    with tf.Session() as sess:
        values = sess.run({k: v[0] for k, v in exprs.items()}, {x: xv, y: yv})
    for k, (_, want) in exprs.items():
        np.testing.assert_allclose(values[k], want, rtol=1e-6, err_msg=k)


def test_tensor_identity_semantics_and_bool_error():
    x = tf.constant(1.0)
    assert x == x and x != tf.constant(1.0)
    assert len({x, x}) == 1
    with pytest.raises(TypeError, match="bool"):
        if x:
            pass


def test_no_silent_dtype_promotion():
    a = tf.constant(1.0, dtype=tf.float32)
    b = tf.constant(1.0, dtype=tf.float64)
    with pytest.raises(TypeError, match="same dtype") as info:
        tf.add(a, b)
    assert "test_graph.py" in str(info.value)  # names the user's line
    i = tf.constant([1, 2])
    assert i.dtype == tf.int32
    assert (i * 2).dtype == tf.int32
    with pytest.raises(TypeError):
        _ = i * 1.5  # a fractional Python number cannot become int32
    assert (a * 2).dtype == tf.float32  # Python numbers adopt the tensor's dtype


def test_control_dependencies_recorded_and_nested():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        c = tf.identity(b)
        with tf.control_dependencies([b.op]):
            d = tf.identity(a)
        with tf.control_dependencies(None):
            e = tf.identity(a)
    assert c.op.control_inputs == (a.op,)
    assert set(d.op.control_inputs) == {b.op}  # a is a data input already
    assert e.op.control_inputs == ()


def test_device_scope_recorded():
    with tf.device("/gpu:0"):
        a = tf.constant(1.0)
        with tf.device("/device:CPU:0"):
            b = tf.constant(2.0)
        with tf.device(None):
            c = tf.constant(3.0)
    assert (a.op.device, b.op.device, c.op.device) == ("/gpu:0", "/cpu:0", "")
    with pytest.raises(ValueError, match="device"):
        with tf.device("/tpu:0"):
            pass


def test_collections_and_lookup():
    g = tf.get_default_graph()
    x = tf.constant(1.0, name="x")
    tf.add_to_collection("things", x)
    assert tf.get_collection("things") == [x]
    assert g.get_operation_by_name("x") is x.op
    assert g.get_tensor_by_name("x:0") is x
    with pytest.raises(KeyError, match="nope"):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError, match="outputs"):
        g.get_tensor_by_name("x:3")
    with pytest.raises(ValueError, match="Tensor name"):
        g.get_tensor_by_name("x")


def test_graph_as_default_and_separate_graphs():
    g1 = tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
        assert tf.get_default_graph() is g1
    assert a.graph is g1
    assert tf.get_default_graph() is not g1
    b = tf.constant(2.0)
    with pytest.raises(ValueError, match="different graph"):
        tf.add(a, b)


def test_finalize_fails_loudly():
    g = tf.get_default_graph()
    tf.constant(1.0)
    g.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        tf.constant(2.0)


def test_source_location_points_at_user_line():
    x = tf.placeholder(tf.float32, name="x")  # the line under test
    assert x.op.source.filename.endswith("test_graph.py")
    assert "the line under test" in x.op.source.line


def test_version_increases_with_ops():
    g = tf.get_default_graph()
    v = g.version
    tf.constant(1.0)
    assert g.version == v + 1


# ---------------------------------------------------------------- device scopes and functions
def test_device_function_is_called_with_each_op_and_merges_with_outer_scopes():
    seen = []

    def by_type(op):
        seen.append((op.type, op.node_def.op, len(op.outputs)))
        return "/gpu:1" if op.node_def.op == "MatMul" else None

    with tf.device("/job:w/cpu:0"):
        with tf.device(by_type):
            a = tf.constant([[1.0]], name="a")
            m = tf.matmul(a, a)
        with tf.device(tf.DeviceSpec(device_type="GPU", device_index=3)):
            c = tf.constant(1)
        with tf.device(None):
            free = tf.constant(2)
    assert (a.op.device, m.op.device, c.op.device, free.op.device) == \
        ("/cpu:0", "/gpu:1", "/gpu:3", "")
    assert seen == [("Const", "Const", 1), ("MatMul", "MatMul", 1)]
    assert m.op.node_def.input == ["a", "a"]


def test_a_device_function_returning_nonsense_names_itself_and_the_op():
    def broken(op):
        return 42

    with tf.device(broken):
        with pytest.raises(ValueError, match="device function 'broken' returned 42 for op 'c'"):
            tf.constant(1.0, name="c")
    assert "c" not in [op.name for op in tf.get_default_graph().get_operations()]
    with pytest.raises(TypeError, match="tf.device expects"):
        with tf.device(3):
            pass


def test_ps_device_function_idiom():
    ps_ops = ["Variable", "VariableV2", "AutoReloadVariable"]

    def assign_to_device(device, ps_device="/cpu:0"):
        def _assign(op):
            node_def = op if isinstance(op, tf.NodeDef) else op.node_def
            return ps_device if node_def.op in ps_ops else device
        return _assign

    with tf.device(assign_to_device("/gpu:0")):
        w = tf.Variable(tf.zeros([2]), name="w")
        y = w * 2.0
    assert w.op.device == "/cpu:0" and y.op.device == "/gpu:0"
