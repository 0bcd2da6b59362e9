"""Fusion: elementwise groups, matmul+bias+activation and conv+bias+activation, what must stay out
of a group, and the fused CPU kernel against each op's own kernel for every instruction type."""

import json

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.reference import fused_instructions, fused_kernels
from graphflow.ops import conv_ops, fused_ops, registry
from graphflow.optimizer_passes import fusion, fusion_elementwise

PASS = ["fusion"]


def _x(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(-2, 2, size=shape).astype(dtype)


def test_elementwise_chain_becomes_one_op_with_provenance(optimized, both, same):
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    y = tf.add(tf.tanh(x * 1.5 + 0.25) * 0.5, tf.nn.relu(x) - tf.exp(-x * x), name="expr")
    out = tf.reduce_sum(y)
    opt = optimized(out, [x], passes=PASS)
    assert opt.types() == {"Placeholder": 1, "FusedElementwise": 1, "Sum": 1}
    fused = opt.op("expr")  # takes the root's name, line and output tensor
    assert fused.type == "FusedElementwise" and fused.source is y.op.source
    assert len(fused.attrs["members"]) == 10 and fused.attrs["members"][-1] == "expr"
    assert all(s.startswith(__file__) for s in fused.attrs["member_sources"])
    program = fused.attrs["program"]
    assert json.loads(json.dumps(program)) == program  # plain JSON
    assert [t.name for t in fused.inputs] == ["x:0"]  # scalar constants are inlined
    assert fused_ops.validate_program(program).name == "float32"
    same(*both(out, {x: _x(5, 8)}, passes=PASS), rtol=1e-6)


def test_values_read_outside_the_group_stay_outside(optimized, both, same):
    x = tf.placeholder(tf.float64, [4], name="x")
    h = tf.sigmoid(x * 2.0, name="h")     # read by the group and by the reduction
    y = tf.square(h + 1.0) * 3.0
    out = [y, tf.reduce_sum(h)]
    opt = optimized(out, [x], passes=PASS)
    fused = [op for op in opt.ops() if op.type == "FusedElementwise"]
    assert len(fused) == 2
    assert any(t.name == "h:0" for t in fused[1].inputs)
    same(*both(out, {x: _x(4, dtype=np.float64)}, passes=PASS))


def test_fetched_controlled_and_differently_shaped_ops_are_not_absorbed(optimized, both, same):
    x = tf.placeholder(tf.float64, [3, 4], name="x")
    b = tf.placeholder(tf.float64, [4], name="b")
    fetched = tf.exp(x, name="fetched")
    bias = tf.abs(b) * 2.0                    # shape [4]: not in the [3, 4] group
    v = tf.Variable(0.0)
    with tf.control_dependencies([tf.assign_add(v, 1.0)]):
        gated = tf.negative(x, name="gated")  # has a control input
    y = tf.tanh(fetched + bias) * gated
    opt = optimized([y, fetched], [x, b], passes=PASS)
    assert opt.op("fetched").type == "Exp" and opt.op("gated").type == "Neg"
    root = opt.op(y.op.name)
    assert root.type == "FusedElementwise"
    assert set(root.attrs["member_types"]) == {"Add", "Tanh", "Mul"}
    bias_group = [op for op in opt.ops() if op.type == "FusedElementwise" and op is not root]
    assert bias_group and set(bias_group[0].attrs["member_types"]) == {"Abs", "Mul"}
    with tf.Session(optimize=False) as sess:
        sess.run(v.initializer)
        want = sess.run([y, fetched], {x: _x(3, 4, dtype=np.float64), b: _x(4, dtype=np.float64)})
    with tf.Session(passes=PASS) as sess:
        sess.run(v.initializer)
        got = sess.run([y, fetched], {x: _x(3, 4, dtype=np.float64), b: _x(4, dtype=np.float64)})
        assert sess.run(v) == 1.0
    same(want, got)


def test_a_broadcast_input_is_read_unbroadcast(optimized, both, same):
    """x op BroadcastTo(y, shape(x)) -> x op y inside a group (a reduction's gradient): the same
    bits, and the broadcast is never written out."""
    x = tf.placeholder(tf.float32, [4, 6, 6, 8], name="x")
    g = tf.placeholder(tf.float32, [1, 1, 1, 8], name="g")
    spread = tf.broadcast_to(g, [4, 6, 6, 8])
    y = tf.add_n([x * 2.0, spread, tf.negative(x)], name="y")
    opt = optimized(y, [x, g], passes=PASS)
    assert opt.count("BroadcastTo") == 0
    fused = opt.op("y")
    assert fused.type == "FusedElementwise" and [t.name for t in fused.inputs] == ["x:0", "g:0"]
    feed = {x: _x(4, 6, 6, 8), g: _x(1, 1, 1, 8, seed=1)}
    same(*both(y, feed, passes=PASS), rtol=0, atol=0)
    # the mean's gradient in a batch norm's moments: the same numbers with and without fusion
    m, v = tf.nn.moments(x, [0, 1, 2])
    grads = tf.gradients(tf.reduce_sum(tf.nn.batch_normalization(x, m, v, None, None, 1e-3) ** 2),
                         x)
    same(*both(grads, {x: feed[x]}, passes=PASS), rtol=1e-6, atol=1e-6)


def test_a_broadcast_stays_when_no_input_has_the_whole_shape(optimized, both, same):
    g = tf.placeholder(tf.float32, [1, 8], name="g")
    h = tf.placeholder(tf.float32, [8], name="h")
    y = tf.exp(tf.broadcast_to(g, [4, 8]) * h) + 1.0
    opt = optimized(y, [g, h], passes=PASS)
    assert opt.count("BroadcastTo") == 1
    same(*both(y, {g: _x(1, 8), h: _x(8, seed=1)}, passes=PASS), rtol=0, atol=0)


def test_a_large_op_alone_is_a_program_of_one_instruction(optimized, both, same, monkeypatch):
    monkeypatch.setattr(fusion_elementwise, "SINGLE_OP_MIN_ELEMENTS", 1000)
    big = tf.placeholder(tf.float32, [10, 100], name="big")
    m = tf.placeholder(tf.float32, [100], name="m")
    small = tf.placeholder(tf.float32, [9, 100], name="small")
    y = tf.reduce_sum(tf.squared_difference(big, m, name="sd"))
    z = tf.reduce_sum(tf.squared_difference(small, m, name="sd_small"))
    opt = optimized([y, z], [big, m, small], passes=PASS)
    assert opt.op("sd").type == "FusedElementwise"      # 1000 elements: one instruction
    assert opt.op("sd_small").type == "SquaredDifference"  # 900: the op's own kernel
    feed = {big: _x(10, 100), m: _x(100, seed=1), small: _x(9, 100, seed=2)}
    same(*both([y, z], feed, passes=PASS), rtol=0, atol=0)


def test_a_sum_over_leading_axes_joins_the_group_it_reads(optimized, both, same):
    """mean((x - m)^2, [0, 1, 2]) and sum(g * x, [0, 1]) become FusedElementwiseSum ops: the
    program's value is summed block by block instead of written out (float32 rounding apart)."""
    x = tf.placeholder(tf.float32, [16, 32, 32, 8], name="x")
    g = tf.placeholder(tf.float32, [16, 32, 32, 8], name="g")
    m = tf.placeholder(tf.float32, [1, 1, 1, 8], name="m")
    v = tf.reduce_mean(tf.squared_difference(x, m), [0, 1, 2], name="v")
    s = tf.reduce_sum(tf.exp(g) * x, [0, 1], keepdims=True, name="s")
    t = tf.reduce_sum(g * x, [1, 2, 3], name="t")                    # not leading axes
    opt = optimized([v, s, t], [x, g, m], passes=PASS)
    assert opt.op("v").type == opt.op("s").type == "FusedElementwiseSum"
    assert opt.op("v").attrs["mean"] and opt.op("s").attrs["keepdims"]
    assert opt.op("s").attrs["member_types"] == ["Exp", "Mul", "Sum"]
    assert opt.op("t").type == "Sum"
    assert opt.report["fusion"].details["fused_sums"] == 2
    feed = {x: _x(16, 32, 32, 8), g: _x(16, 32, 32, 8, seed=1), m: _x(1, 1, 1, 8, seed=2)}
    same(*both([v, s, t], feed, passes=PASS), rtol=1e-5, atol=1e-4)


def test_a_value_read_elsewhere_is_not_summed_inside(optimized, both, same):
    x = tf.placeholder(tf.float32, [16, 32, 32, 8], name="x")
    sq = tf.square(x - 1.0)
    s = tf.reduce_sum(sq, [0, 1, 2])
    opt = optimized([s, sq], [x], passes=PASS)
    assert opt.count("FusedElementwiseSum") == 0 and opt.count("Sum") == 1
    same(*both([s, sq], {x: _x(16, 32, 32, 8)}, passes=PASS), rtol=1e-5, atol=1e-4)


def test_group_size_is_bounded(optimized, both, same):
    x = tf.placeholder(tf.float32, [16], name="x")
    y = x
    for _ in range(fusion_elementwise.MAX_GROUP_OPS * 2 + 5):
        y = tf.sin(y)
    opt = optimized(y, [x], passes=PASS)
    assert opt.count("FusedElementwise") == 3 and opt.count("Sin") == 0
    same(*both(y, {x: _x(16)}, passes=PASS), rtol=1e-6)


def test_matmul_bias_activation_remapping(optimized, both, same):
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    w1 = tf.constant(_x(6, 5, seed=1))
    w2 = tf.constant(_x(5, 3, seed=2))
    b1 = tf.constant(_x(5, seed=3))
    h = tf.nn.relu(tf.matmul(x, w1) + b1, name="h")
    logits = tf.nn.bias_add(tf.matmul(h, w2, transpose_b=False), tf.constant(_x(3, seed=4)))
    opt = optimized(logits, [x], passes=PASS)
    assert opt.count("FusedMatMul") == 2 and opt.count("MatMul") == 0
    assert opt.op("h").attrs["activation"] == "Relu"
    assert opt.op("h").attrs["members"] == ["MatMul", "Add", "h"]
    assert opt.op(logits.op.name).attrs["activation"] == ""
    same(*both(logits, {x: _x(7, 6)}, passes=PASS), rtol=1e-5)


def test_matmul_not_remapped_when_the_bias_grows_the_product_or_it_is_read_elsewhere(optimized):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.constant(_x(3, 2))
    grows = tf.matmul(x, w) + tf.constant(_x(5, 4, 2))   # result [5, 4, 2]
    mm = tf.matmul(x, w, name="shared")
    read_twice = [mm + tf.constant(_x(2)), tf.reduce_sum(mm)]
    opt = optimized([grows] + read_twice, [x], passes=PASS)
    assert opt.count("FusedMatMul") == 0 and opt.count("MatMul") == 2


def test_pre_activation_read_elsewhere_fuses_matmul_and_bias_only(optimized, both, same):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    pre = tf.matmul(x, tf.constant(_x(3, 2))) + tf.constant(_x(2))
    out = [tf.nn.relu(pre), tf.reduce_sum(pre)]
    opt = optimized(out, [x], passes=PASS)
    (fm,) = [op for op in opt.ops() if op.type == "FusedMatMul"]
    assert fm.attrs["activation"] == ""
    same(*both(out, {x: _x(4, 3)}, passes=PASS), rtol=1e-6)


def _conv(x, k, c_in, c_out, seed, data_format="NHWC"):
    strides = [1, 1, 1, 1]
    return tf.nn.conv2d(x, tf.constant(_x(k, k, c_in, c_out, seed=seed)), strides, "SAME",
                        data_format=data_format)


def test_conv_bias_activation_remapping(optimized, both, same):
    x = tf.placeholder(tf.float32, [None, 9, 8, 3], name="x")
    h = tf.nn.relu(_conv(x, 3, 3, 4, 1) + tf.constant(_x(4, seed=2)), name="h")   # Add + Relu
    y = tf.nn.bias_add(_conv(h, 3, 4, 5, 3), tf.constant(_x(5, seed=4)), name="y")  # BiasAdd only
    z = tf.nn.leaky_relu(tf.nn.bias_add(_conv(x, 1, 3, 2, 5), tf.constant(_x(2, seed=6))),
                         alpha=0.3, name="z")
    opt = optimized([y, z], [x], passes=PASS)
    assert opt.count("FusedConv2D") == 3 and opt.count("Conv2D") == 0
    assert opt.op("h").attrs["activation"] == "Relu"
    assert opt.op("h").attrs["member_types"] == ["Conv2D", "Add", "Relu"]
    assert opt.op("y").attrs["activation"] == "" and opt.op("y").attrs["padding"] == "SAME"
    assert opt.op("z").attrs["activation_attrs"] == {"alpha": 0.3}
    assert opt.report["fusion"].details["fused_convs"] == 3
    # the small fused convolutions run as oneDNN's primitive (dnnl_small_conv.py), the unfused
    # Conv2D as the gathered BLAS product: float32 rounding apart (1.3e-6 seen on outputs of ~30)
    same(*both([y, z], {x: _x(2, 9, 8, 3)}, passes=PASS), rtol=1e-5, atol=1e-5)


def test_conv_nchw_bias_add_fuses_and_an_nchw_add_does_not(optimized, both, same):
    x = tf.placeholder(tf.float32, [2, 3, 6, 5], name="x")
    fused = tf.nn.relu(tf.nn.bias_add(_conv(x, 3, 3, 4, 1, "NCHW"), tf.constant(_x(4, seed=2)),
                                      data_format="NCHW"))
    broadcast = _conv(x, 3, 3, 4, 3, "NCHW") + tf.constant(_x(4, 1, 1, seed=4))  # not [C]
    opt = optimized([fused, broadcast], [x], passes=PASS)
    assert opt.count("FusedConv2D") == 1 and opt.count("Conv2D") == 1
    same(*both([fused, broadcast], {x: _x(2, 3, 6, 5)}, passes=PASS), rtol=1e-5, atol=1e-6)


def test_conv_not_remapped_when_read_elsewhere_or_the_bias_is_not_per_channel(optimized):
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    shared = _conv(x, 3, 3, 4, 1)
    read_twice = [shared + tf.constant(_x(4, seed=2)), tf.reduce_sum(shared)]
    scalar_bias = _conv(x, 3, 3, 4, 3) + tf.constant(_x(1, seed=4))      # broadcast, not [C]
    full_bias = _conv(x, 3, 3, 4, 5) + tf.constant(_x(6, 6, 4, seed=6))  # not per channel
    opt = optimized(read_twice + [scalar_bias, full_bias], [x], passes=PASS)
    assert opt.count("FusedConv2D") == 0 and opt.count("Conv2D") == 3


def test_conv_training_step_is_unchanged_by_fusion(optimized, same):
    x = tf.placeholder(tf.float32, [4, 8, 8, 3], name="x")
    w = tf.Variable(_x(3, 3, 3, 8, seed=1) * 0.3)
    b = tf.Variable(_x(8, seed=2))
    h = tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME") + b)
    loss = tf.reduce_sum(h * h)
    grads = tf.gradients(loss, [w, b, x])
    init = tf.global_variables_initializer()
    feed = {x: _x(4, 8, 8, 3, seed=3)}
    with tf.Session() as sess:
        sess.run(init)
        opt_graph = sess.run([loss] + grads, feed)
    with tf.Session(optimize=False) as sess:
        sess.run(init)
        plain = sess.run([loss] + grads, feed)
    same(plain, opt_graph, rtol=1e-5, atol=1e-5)
    opt = optimized([loss] + grads, [x], passes=PASS)  # the backward pass reads the fused output
    assert opt.count("FusedConv2D") == 1 and opt.count("Conv2D") == 0


# ------------------------------------------------------------------ max pool gradient + ReLU mask
_POOL = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")


def _relu_pool_grad(x, pool_kw=None, mask_of=None):
    """(h = relu(x), dz = where(mask_of > 0, max_pool_grad(h, max_pool(h), g), 0), that
    MaxPoolGrad result): the backward pass of max_pool(relu(z)) spelled out."""
    h = tf.nn.relu(x, name="h")
    p = tf.nn.max_pool(h, **_POOL)
    g = tf.constant(_x(*p.shape.as_list(), seed=7))
    dh = conv_ops.max_pool_grad(h, p, g, **(pool_kw or _POOL))
    cond = (h if mask_of is None else mask_of) > 0
    return h, tf.where(cond, dh, tf.zeros_like(dh), name="dz"), dh


def test_max_pool_grad_and_relu_mask_fuse(optimized, both):
    x = tf.placeholder(tf.float32, [2, 6, 8, 3], name="x")
    _, dz, _ = _relu_pool_grad(x)
    opt = optimized(dz, [x])  # every pass: arithmetic turns zeros_like into the scalar 0
    assert opt.count("FusedMaxPoolGradReluMask") == 1 and opt.count("MaxPoolGrad") == 0
    fused = opt.op("dz")
    assert fused.attrs["member_types"] == ["MaxPoolGrad", "Greater", "Select"]
    assert fused.attrs["ksize"] == [1, 2, 2, 1] and fused.attrs["data_format"] == "NHWC"
    assert opt.report["fusion"].details["fused_pool_relu_masks"] == 1
    want, got = both(dz, {x: _x(2, 6, 8, 3)})
    assert np.array_equal(want.view(np.uint32), got.view(np.uint32))  # exact bits
    cond = dz.op.inputs[0]  # h > 0, fetched too: it stays, the rest still fuses
    opt = optimized([dz, cond], [x])
    assert opt.op("dz").attrs["member_types"] == ["MaxPoolGrad", "Select"]
    assert opt.count("Greater") == 1


def test_max_pool_grad_and_relu_mask_do_not_fuse_when_the_gradient_is_read_or_fetched(optimized):
    x = tf.placeholder(tf.float32, [2, 6, 8, 3], name="x")
    _, dz, dh = _relu_pool_grad(x)
    assert optimized([dz, dh], [x]).count("FusedMaxPoolGradReluMask") == 0  # fetched
    opt = optimized([dz, tf.reduce_sum(dh)], [x])                           # read elsewhere
    assert opt.count("FusedMaxPoolGradReluMask") == 0 and opt.count("MaxPoolGrad") == 1


def test_max_pool_grad_and_a_mask_of_another_tensor_or_window_do_not_fuse(optimized, both, same):
    x = tf.placeholder(tf.float32, [2, 6, 8, 3], name="x")
    other = tf.nn.relu(x - 0.5)
    _, masked_by_other, _ = _relu_pool_grad(x, mask_of=other)   # mask not of orig_input
    y = tf.placeholder(tf.float32, [2, 6, 8, 3], name="y")
    h = tf.nn.relu(y)
    dh = conv_ops.max_pool_grad(h, tf.nn.max_pool(h * 2.0, **_POOL), tf.constant(_x(2, 3, 4, 3)),
                                **_POOL)
    not_its_pool = tf.where(h > 0, dh, tf.zeros_like(dh))       # orig_output not max_pool(h)
    w = tf.placeholder(tf.float32, [2, 6, 8, 3], name="w")
    _, other_window, _ = _relu_pool_grad(w, pool_kw=dict(_POOL, padding="SAME"))
    fetches = [masked_by_other, not_its_pool]
    opt = optimized(fetches + [other_window], [x, y, w])
    assert opt.count("FusedMaxPoolGradReluMask") == 0 and opt.count("MaxPoolGrad") == 3
    same(*both(fetches, {x: _x(2, 6, 8, 3), y: _x(2, 6, 8, 3, seed=1)}), rtol=0)


def test_cnn_training_gives_the_same_numbers_with_and_without_the_mask_fusion(monkeypatch):
    def train(fuse):
        monkeypatch.setattr(fusion, "FUSE_POOL_RELU_MASK", fuse)
        tf.reset_default_graph()
        x = tf.constant(_x(8, 12, 12, 3, seed=3))
        labels = tf.constant(np.eye(4, dtype=np.float32)[np.arange(8) % 4])
        w = tf.Variable(_x(3, 3, 3, 8, seed=4) * 0.3)
        b = tf.Variable(_x(8, seed=5) * 0.1)
        h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME") + b), **_POOL)
        v = tf.Variable(_x(6 * 6 * 8, 4, seed=6) * 0.1)
        logits = tf.matmul(tf.reshape(h, [8, -1]), v)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                                         logits=logits))
        step = tf.train.AdamOptimizer(0.01).minimize(loss)
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, step])[0] for _ in range(4)]
            kinds = {op.type for op in _plan_ops(loss, step)}
            return losses, sess.run([w, b, v]), kinds
    fused_losses, fused_vars, fused_kinds = train(True)
    plain_losses, plain_vars, plain_kinds = train(False)
    assert "FusedMaxPoolGradReluMask" in fused_kinds and "MaxPoolGrad" in plain_kinds
    assert fused_losses == plain_losses
    for a, b in zip(fused_vars, plain_vars):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def _plan_ops(*fetches):
    return tf.optimize(list(fetches))[0].get_operations()


def test_runtime_errors_in_fused_ops_name_the_users_line():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    z = tf.tanh(x + y) * 2.0  # the failing line
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(z, {x: np.ones((2, 3)), y: np.ones((4, 3))})
    assert "test_fusion.py" in str(info.value) and "FusedElementwise" in str(info.value)


# ------------------------------------------------------------------ the fused CPU kernel
def _operands(op_type, shape, seed):
    """Inputs for one instruction of `op_type` (dtypes and domains it accepts)."""
    r = np.random.default_rng(seed)
    x = r.uniform(-3, 3, size=shape)
    if op_type in ("Log", "Sqrt", "Rsqrt", "Log1p", "Reciprocal"):
        return [np.abs(x) + 0.5], "float32"
    if op_type in ("LogicalNot",):
        return [x > 0], "bool"
    if op_type in ("LogicalAnd", "LogicalOr", "LogicalXor"):
        return [x > 0, r.uniform(-1, 1, size=shape[-1:]) > 0], "bool"
    if op_type in ("FloorDiv", "FloorMod"):
        return [np.round(x * 10).astype(np.int32),
                r.integers(1, 5, size=shape[-1:]).astype(np.int32)], "int32"
    if op_type == "Pow":
        return [np.abs(x) + 0.5, r.uniform(-2, 2, size=shape[-1:])], "float32"
    if op_type == "Select":
        return [x > 0, x, r.uniform(-1, 1, size=shape[-1:])], "float32"
    if op_type == "ClipByValue":
        return [x, np.full(shape[-1:], -1.0), np.array(1.5)], "float32"
    if op_type == "AddN":
        return [x, x * 2, r.uniform(-1, 1, size=shape)], "float32"
    if op_type == "Betainc":
        return [np.abs(x) + 0.5, r.uniform(0.5, 2, size=shape[-1:]), r.uniform(0, 1, size=shape)], \
            "float32"
    arity = 1 if op_type in fused_ops.UNARY_OPS or op_type == "Cast" else 2
    return [x, r.uniform(-2, 2, size=shape[-1:])][:arity], "float32"


@pytest.mark.parametrize("op_type", sorted(fused_ops.ELEMENTWISE_INSTRUCTIONS))
@pytest.mark.parametrize("rows,threads", [
    (3, 1), (2 * (fused_kernels.CHUNK_ELEMENTS // 64) + 7, 1),
    (fused_kernels.PARALLEL_MIN_ELEMENTS // 64 + 7, 2)], ids=["whole", "chunked", "threaded"])
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "numba"])
def test_every_instruction_matches_the_ops_own_kernel(op_type, rows, threads, compiled):
    # the numpy program against the op's reference; the compiled program against the op's kernel
    # with numba where it has one (float32 Sigmoid's compiled function), else its reference
    if compiled and not cpu_kernels.TABLE.feature("numba"):
        pytest.skip("numba is not installed (or GRAPHFLOW_NO_JIT=1)")
    from graphflow.kernels.cpu.numba import fused_program
    program_class = fused_program.CompiledFusedProgram if compiled else fused_kernels.FusedProgram
    ops, dtype = _operands(op_type, (rows, 64), seed=len(op_type))
    np_dtype = np.dtype(dtype)
    ops = [o.astype(np_dtype) if o.dtype.kind == "f" and dtype == "float32" else o for o in ops]
    attrs = {"alpha": 0.1} if op_type == "LeakyRelu" else {}
    if op_type == "Cast":
        attrs = {"DstT": "int32"}
    in_dtypes = tuple(o.dtype for o in ops)
    node = KernelNode("k", op_type, attrs, in_dtypes, (None,), (None,), None)
    build = cpu_kernels.reference_builder(op_type)
    if compiled:
        build = next((i.build for i in cpu_kernels.TABLE.implementations(op_type)
                      if i.name == "numba" and i.applies(node)), build)
    want = np.asarray(build(node)(*ops))
    refs = list(range(len(ops)))
    program = {"version": 1, "inputs": [o.dtype.name for o in ops],
               "instructions": [[op_type, refs, attrs, want.dtype.name]], "output": len(ops)}
    f = program_class(program, in_dtypes, threads=threads)
    got = f(*ops)
    assert got.dtype == want.dtype and got.shape == want.shape
    # (a float32 Sigmoid's kernel and its instruction, in a compiled run or not, are both
    # kernels/cpu/numba/jit_math.py's sigmoid: the same bits)
    np.testing.assert_array_equal(got, want)
    out = np.empty_like(want)
    assert program_class(program, in_dtypes, threads=threads)(*ops, out=out) is out
    np.testing.assert_array_equal(out, want)


def test_every_instruction_type_is_elementwise_and_implemented():
    for op_type in fused_ops.ELEMENTWISE_INSTRUCTIONS:
        assert registry.lookup(op_type).elementwise
        fused_instructions.instruction(op_type, {}, [np.dtype(np.float32)] * 3, np.dtype(np.float32))


def test_out_may_alias_an_input_even_for_non_aliasing_instructions():
    x = _x(2 * (fused_kernels.CHUNK_ELEMENTS // 50) + 3, 50)
    program = {"version": 1, "inputs": ["float32"], "output": 2, "instructions": [
        ["Sin", [0], {}, "float32"], ["Elu", [1], {}, "float32"]]}
    f = fused_kernels.FusedProgram(program, [np.dtype(np.float32)])
    want = f(x)
    for rows in (x.shape[0], 4):  # chunked, then whole-array evaluation
        buf = x[:rows].copy()
        assert f(buf, out=buf) is buf
        np.testing.assert_array_equal(buf, want[:rows])


def test_malformed_programs_are_rejected():
    x = tf.placeholder(tf.float32, [3])
    good = {"version": 1, "inputs": ["float32"], "output": 1,
            "instructions": [["Tanh", [0], {}, "float32"]]}
    fused_ops.fused_elementwise([x], good)
    for bad in ({**good, "version": 2}, {**good, "output": 0},
                {**good, "instructions": [["Tanh", [1], {}, "float32"]]},
                {**good, "instructions": [["MatMul", [0, 0], {}, "float32"]]},
                {**good, "inputs": ["float64"]}):
        with pytest.raises((ValueError, TypeError)):
            fused_ops.fused_elementwise([x], bad)


def test_fused_kernel_takes_strided_inputs_and_outputs():
    program = {"version": 1, "inputs": ["float64", "float64"], "output": 3, "instructions": [
        ["Mul", [0, 1], {}, "float64"], ["Tanh", [2], {}, "float64"]]}
    f = fused_kernels.FusedProgram(program, [np.dtype(np.float64)] * 2)
    base = np.random.default_rng(0).uniform(-1, 1, (300, 400))
    a, b = base.T, base[::2].T          # non-contiguous views, shapes (400, 300) and (400, 150)
    b = np.repeat(b, 2, axis=1)
    want = np.tanh(a * b)
    np.testing.assert_array_equal(f(a, b), want)
    out = np.empty((300, 400)).T        # an F-ordered output buffer
    assert f(a, b, out=out) is out
    np.testing.assert_array_equal(out, want)


def test_fused_plans_run_from_several_threads_with_different_shapes():
    import threading
    x = tf.placeholder(tf.float32, [None, 300], name="x")
    y = tf.sigmoid(x * 2.0) - tf.nn.relu(x) * 0.5
    sess = tf.Session()
    errors = []

    def work(rows):
        try:
            for i in range(6):
                xv = _x(rows + i, 300, seed=rows + i)
                want = 1 / (1 + np.exp(-2 * xv)) - np.maximum(xv, 0) * np.float32(0.5)
                np.testing.assert_allclose(sess.run(y, {x: xv}), want, rtol=1e-5, atol=1e-6)
        except Exception as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(rows,)) for rows in (5, 40, 200, 400)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sess.close()
    assert not errors, errors
