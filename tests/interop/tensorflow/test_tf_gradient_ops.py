"""TensorFlow's gradient helper ops and sparse optimizer updates in hand-made GraphDefs (no
TensorFlow): each imports to the value of TensorFlow's kernel formula, faults name the node,
TensorFlow's gradient MatMul hints import, and BroadcastGradientArgs exports as itself."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import tf_protos as pb
from graphflow.framework.errors import GraphFormatError
from graphflow.interop.tensorflow import tensor_protos as tp

RNG = np.random.RandomState(0)
A = (RNG.randn(3, 4) * 2).astype(np.float32)
A[0, :3] = [0.0, 6.0, -0.0]
G = RNG.randn(3, 4).astype(np.float32)
POS = np.abs(A) + 0.5
Y = np.tanh(A)
SCALE, ALPHA = 1.0507009873554805, 1.6732632423543772
ELU = np.where(A < 0, np.exp(A) - 1, A).astype(np.float32)
SELU = (SCALE * np.where(A < 0, ALPHA * (np.exp(A) - 1), A)).astype(np.float32)

# op, first input, second input, attrs, TensorFlow's kernel formula
CASES = [
    ("ReluGrad", G, A, {}, np.where(A > 0, G, 0)),
    ("Relu6Grad", G, A, {}, np.where((A > 0) & (A < 6), G, 0)),
    ("LeakyReluGrad", G, A, {"alpha": 0.3}, np.where(A > 0, G, G * np.float32(0.3))),
    ("EluGrad", G, ELU, {}, np.where(ELU < 0, (ELU + 1) * G, G)),
    ("SeluGrad", G, SELU, {}, np.where(SELU < 0, G * (SELU + SCALE * ALPHA), G * SCALE)),
    ("SoftplusGrad", G, A, {}, G / (np.exp(-A) + 1)),
    ("SoftsignGrad", G, A, {}, G / (np.abs(A) + 1) ** 2),
    ("TanhGrad", Y, G, {}, G * (1 - Y * Y)),
    ("SigmoidGrad", Y, G, {}, G * Y * (1 - Y)),
    ("SqrtGrad", POS, G, {}, 0.5 * G / POS),
    ("RsqrtGrad", POS, G, {}, -0.5 * (G * POS) * (POS * POS)),
    ("ReciprocalGrad", POS, G, {}, -G * POS * POS),
    ("InvGrad", POS, G, {}, -G * POS * POS),
]


def _const(g, name, value):
    node = g.node.add(name=name, op="Const")
    proto = tp.from_array(np.asarray(value))
    node.attr["value"].tensor.CopyFrom(proto)
    node.attr["dtype"].type = proto.dtype
    return node


def _node(g, name, op, inputs, dtype=np.float32, **attrs):
    node = g.node.add(name=name, op=op, input=inputs)
    if dtype is not None:
        node.attr["T"].type = tp.from_array(np.zeros(0, dtype)).dtype
    for key, value in attrs.items():
        if isinstance(value, bool):
            node.attr[key].b = value
        elif isinstance(value, float):
            node.attr[key].f = value
        elif isinstance(value, int):
            node.attr[key].i = value
        else:
            node.attr[key].s = value.encode()
    return node


def _run(g, fetches):
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.import_graph_def(g, name="")
        return sess.run(fetches)


@pytest.mark.parametrize("op,a,b,attrs,want", CASES, ids=[c[0] for c in CASES])
def test_activation_gradients_are_tensorflows_formulas(op, a, b, attrs, want):
    g = pb.GraphDef()
    _const(g, "a", a)
    _const(g, "b", b)
    _node(g, "grad", op, ["a", "b"], **attrs)
    np.testing.assert_allclose(_run(g, "grad:0"), want, rtol=1e-6, atol=1e-7)


def test_shape_n_concat_offset_and_broadcast_gradient_args():
    g = pb.GraphDef()
    _const(g, "x", np.zeros((2, 3), np.float32))
    _const(g, "z", np.zeros((5,), np.float32))
    node = _node(g, "shapes", "ShapeN", ["x", "z"], N=2)
    node.attr["out_type"].type = pb.DataType.DT_INT64
    _const(g, "axis", np.int32(-2))
    for i, s in enumerate(([2, 3, 4], [2, 5, 4], [2, 1, 4])):
        _const(g, f"s{i}", np.array(s, np.int32))
    _node(g, "offsets", "ConcatOffset", ["axis", "s0", "s1", "s2"], dtype=None, N=3)
    _const(g, "b0", np.array([2, 1, 3], np.int32))
    _const(g, "b1", np.array([3], np.int32))
    _node(g, "bga", "BroadcastGradientArgs", ["b0", "b1"], dtype=np.int32)
    got = _run(g, ["shapes:0", "shapes:1", "offsets:0", "offsets:1", "offsets:2", "bga:0",
                   "bga:1"])
    assert got[0].dtype == np.int64 and got[0].tolist() == [2, 3] and got[1].tolist() == [5]
    assert [o.tolist() for o in got[2:5]] == [[0, 0, 0], [0, 3, 0], [0, 8, 0]]
    assert got[5].tolist() == [1] and got[6].tolist() == [0, 1]


def test_fused_batch_norm_grad_v3_is_graphflows_fused_batch_norm_grad():
    x = RNG.randn(2, 3, 3, 4).astype(np.float32)
    dy = RNG.randn(2, 3, 3, 4).astype(np.float32)
    scale = (RNG.rand(4) + 0.5).astype(np.float32)
    g = pb.GraphDef()
    for name, value in (("x", x), ("dy", dy), ("scale", scale), ("offset", np.zeros(4, np.float32)),
                        ("empty", np.zeros(0, np.float32))):
        _const(g, name, value)
    bn = _node(g, "bn", "FusedBatchNormV3", ["x", "scale", "offset", "empty", "empty"],
               is_training=True, epsilon=0.001)
    bn.attr["U"].type = pb.DataType.DT_FLOAT
    grad = _node(g, "grad", "FusedBatchNormGradV3",
                 ["dy", "x", "scale", "bn:3", "bn:4", "bn:5"], is_training=True, epsilon=0.001)
    grad.attr["U"].type = pb.DataType.DT_FLOAT
    got = _run(g, ["grad:0", "grad:1", "grad:2"])
    with tf.Graph().as_default(), tf.Session() as sess:
        xt = tf.constant(x)
        s = tf.constant(scale)
        y, _, _ = tf.nn.fused_batch_norm(xt, s, tf.zeros([4]), is_training=True)
        want = sess.run(tf.gradients(y, [xt, s], grad_ys=tf.constant(dy)))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], dy.sum((0, 1, 2)), rtol=1e-5, atol=1e-5)
    _node(g, "use", "Identity", ["grad:3"])  # reserve_space_4: TensorFlow's GPU kernel's
    with pytest.raises(GraphFormatError, match="node 'use'.*'grad:3' is not a tensor graphflow"):
        _run(g, "use:0")


def _variable(g, name, value):
    _const(g, f"{name}/init", value)
    var = g.node.add(name=name, op="VariableV2")
    var.attr["dtype"].type = pb.DataType.DT_FLOAT
    for d in value.shape:
        var.attr["shape"].shape.dim.add(size=d)
    _node(g, f"{name}/assign", "Assign", [name, f"{name}/init"])


def test_sparse_momentum_update_rows_once():
    var0 = RNG.randn(5, 2).astype(np.float32)
    acc0 = RNG.rand(5, 2).astype(np.float32)
    grad = RNG.randn(2, 2).astype(np.float32)
    g = pb.GraphDef()
    _variable(g, "var", var0)
    _variable(g, "acc", acc0)
    _const(g, "lr", np.float32(0.1))
    _const(g, "m", np.float32(0.9))
    _const(g, "grad", grad)
    _const(g, "idx", np.array([3, 0], np.int32))
    node = _node(g, "apply", "SparseApplyMomentum", ["var", "acc", "lr", "grad", "idx", "m"])
    node.attr["Tindices"].type = pb.DataType.DT_INT32
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.import_graph_def(g, name="")
        sess.run(["var/assign", "acc/assign"])
        sess.run("apply")
        got_var, got_acc = sess.run(["var:0", "acc:0"])
    acc = acc0.copy()
    acc[[3, 0]] = acc[[3, 0]] * np.float32(0.9) + grad
    var = var0.copy()
    var[[3, 0]] -= acc[[3, 0]] * np.float32(0.1)
    np.testing.assert_allclose(got_acc, acc, rtol=1e-6)
    np.testing.assert_allclose(got_var, var, rtol=1e-6)


def test_faults_name_the_node():
    g = pb.GraphDef()
    _const(g, "a", A)
    _const(g, "i", np.ones(3, np.int32))
    node = _node(g, "grad", "TanhGrad", ["a", "i"])
    with pytest.raises(GraphFormatError, match="node 'grad' \\(TanhGrad\\): inputs of different"):
        _run(g, "grad:0")
    node.input[0] = "i"
    node.attr["T"].type = pb.DataType.DT_INT32
    with pytest.raises(GraphFormatError, match="node 'grad' \\(TanhGrad\\): attr 'T' = 'int32'"):
        _run(g, "grad:0")
    g = pb.GraphDef()
    _node(g, "axis", "Placeholder", [], dtype=None).attr["dtype"].type = pb.DataType.DT_INT32
    _const(g, "s", np.array([1, 2], np.int32))
    _node(g, "off", "ConcatOffset", ["axis", "s", "s"], dtype=None, N=2)
    with pytest.raises(GraphFormatError, match="node 'off' \\(ConcatOffset\\): concat_dim must"):
        _run(g, "off:0")
    g = pb.GraphDef()
    for name in ("v", "lr", "grad"):
        _const(g, name, np.ones((2, 2), np.float32) if name != "lr" else np.float32(1))
    _const(g, "idx", np.array([0], np.int32))
    apply = _node(g, "apply", "SparseApplyAdagrad", ["v", "v", "lr", "grad", "idx"])
    apply.attr["Tindices"].type = pb.DataType.DT_INT32
    with pytest.raises(GraphFormatError, match="node 'apply' \\(SparseApplyAdagrad\\): input v:0 "
                                               "is not a \\(ref\\) variable"):
        _run(g, "apply")


def test_gradient_matmul_hints_import():
    g = pb.GraphDef()
    _const(g, "a", A)
    _const(g, "b", G.T.copy())
    _node(g, "mm", "MatMul", ["a", "b"], grad_a=True, grad_b=False)
    np.testing.assert_allclose(_run(g, "mm:0"), A @ G.T, rtol=1e-5)


def test_broadcast_gradient_args_exports_as_itself():
    from graphflow.ops.gradient_ops import broadcast_gradient_args
    with tf.Graph().as_default() as graph:
        s0 = tf.placeholder(tf.int32, [None], name="s0")
        r0, r1 = broadcast_gradient_args(s0, tf.constant([3]), name="bga")
        graph_def = graph.as_graph_def()
    node = [n for n in graph_def.node if n.name == "bga"][0]
    assert node.op == "BroadcastGradientArgs" and list(node.input) == ["s0", "Const"]
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.import_graph_def(graph_def, name="")
        got = sess.run(["bga:0", "bga:1"], {"s0:0": np.array([2, 1, 3], np.int32)})
    assert got[0].tolist() == [1] and got[1].tolist() == [0, 1]
