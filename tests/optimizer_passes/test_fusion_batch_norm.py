"""graphflow.optimizer_passes.fusion_batch_norm: a training FusedBatchNorm becomes its statistics
op and elementwise ops for y, which fuse with the ReLU or residual add after it; the same bits as
the whole op. Then (fusion.py) the ReLU's gradient joins the batch norm's gradient
(FusedBatchNormGradReluMask), the same bits as the two ops."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.ops import nn_norm_ops
from graphflow.optimizer_passes import fusion


def _model(fmt, dtype, residual):
    shape = [64, 6, 5, 3] if fmt == "NHWC" else [64, 3, 6, 5]  # static: Shape readers fold
    x = tf.placeholder(dtype, shape, name="x")
    scale = tf.Variable(np.linspace(0.5, 2.0, 3).astype(dtype.as_numpy_dtype))
    offset = tf.Variable(np.linspace(-1.0, 1.0, 3).astype(dtype.as_numpy_dtype))
    y, batch_mean, batch_variance = tf.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3,
                                                          data_format=fmt)
    h = tf.nn.relu(y + x * 0.5 if residual else y)
    loss = tf.reduce_sum(h * h)
    moving = tf.Variable(np.zeros(3, dtype.as_numpy_dtype))
    update = tf.assign_sub(moving, (moving - batch_variance) * 0.1)
    with tf.control_dependencies([update]):
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    stats = tf.reduce_sum(batch_mean) + tf.reduce_sum(batch_variance)
    return x, shape, [h, stats, loss, moving, train]


def _run(fetches, feed, split, monkeypatch, relu_mask=True):
    monkeypatch.setattr(fusion, "SPLIT_BATCH_NORM", split)
    monkeypatch.setattr(fusion, "FUSE_BATCH_NORM_RELU_MASK", relu_mask)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = [sess.run(fetches[:3], feed) for _ in range(2)]
        sess.run(fetches[4], feed)
        values.append(sess.run(fetches[:4], feed))
        return values


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("residual", [False, True])
def test_split_batch_norm_gives_the_whole_ops_bits(fmt, dtype, residual, monkeypatch):
    tf.set_random_seed(0)
    x, shape, fetches = _model(fmt, dtype, residual)
    rng = np.random.default_rng(1)
    shifted = {x: (rng.standard_normal(shape) * 3 + 1).astype(dtype.as_numpy_dtype)}
    graph, report = tf.optimize(fetches, [x])
    types = [op.type for op in graph.get_operations()]
    assert "FusedBatchNorm" not in types and "FusedBatchNormStats" in types
    assert report["fusion"].details["split_batch_norms"] == 1
    # the ReLU gradient joins the batch norm's gradient, unless the ReLU reads a residual sum
    assert report["fusion"].details["fused_batch_norm_relu_masks"] == (0 if residual else 1)
    assert types.count("FusedBatchNormGradReluMask") == (0 if residual else 1)
    # the ReLU (and the residual add) are one program with y's arithmetic
    (relu,) = [op for op in graph.get_operations() if op.type == "FusedElementwise"
               and "Relu" in op.attrs["member_types"]]
    assert {"Sub", "Mul", "Add"} <= set(relu.attrs["member_types"])
    for feed in ({x: rng.standard_normal(shape).astype(dtype.as_numpy_dtype)}, shifted):
        split = _run(fetches, feed, True, monkeypatch)
        whole = _run(fetches, feed, False, monkeypatch)
        for a, b in zip(split, whole):
            for u, v in zip(a, b):
                assert np.asarray(u).tobytes() == np.asarray(v).tobytes()


def test_left_whole_for_float16_fetched_statistics_or_inference():
    x = tf.placeholder(tf.float16, [2, 3, 3, 2])
    y16, _, _ = tf.nn.fused_batch_norm(x, tf.ones([2], tf.float16), tf.zeros([2], tf.float16))
    x32 = tf.placeholder(tf.float32, [2, 3, 3, 2])
    y32, mean32, _ = tf.nn.fused_batch_norm(x32, tf.ones([2]), tf.zeros([2]))
    y_infer, _, _ = tf.nn.fused_batch_norm(x32, tf.ones([2]), tf.zeros([2]), tf.zeros([2]),
                                           tf.ones([2]), is_training=False)
    graph, _ = tf.optimize([tf.nn.relu(y16), tf.nn.relu(y32), mean32, tf.nn.relu(y_infer)],
                           [x, x32])
    assert [op.type for op in graph.get_operations()].count("FusedBatchNorm") == 3


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("images", [4, 64], ids=["numpy", "compiled"])
def test_relu_mask_in_the_batch_norm_gradient_gives_the_two_ops_bits(fmt, dtype, images,
                                                                      monkeypatch):
    # conv -> batch norm (tf.layers, training) -> ReLU -> conv: the first ReLU's mask joins the
    # batch norm's gradient; the values of several training steps are the unfused plan's bits
    def model():
        tf.reset_default_graph()
        tf.set_random_seed(0)
        shape = [images, 8, 8, 3] if fmt == "NHWC" else [images, 3, 8, 8]
        x = tf.placeholder(dtype, shape, name="x")
        axis = -1 if fmt == "NHWC" else 1
        fmt_l = "channels_last" if fmt == "NHWC" else "channels_first"
        h = tf.layers.conv2d(x, 4, 3, padding="same", use_bias=False, data_format=fmt_l)
        h = tf.nn.relu(tf.layers.batch_normalization(h, axis=axis, training=True, fused=True))
        h = tf.layers.conv2d(h, 2, 3, padding="same", data_format=fmt_l)
        loss = tf.reduce_mean(tf.square(h))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)  # as TF1 programs did
        feed = {x: np.random.default_rng(2).standard_normal(shape).astype(dtype.as_numpy_dtype)}
        return [loss, train], feed

    values = {}
    for relu_mask in (True, False):
        fetches, feed = model()
        monkeypatch.setattr(fusion, "FUSE_BATCH_NORM_RELU_MASK", relu_mask)
        graph, _ = tf.optimize(fetches, list(feed))
        assert [op.type for op in graph.get_operations()].count(
            "FusedBatchNormGradReluMask") == int(relu_mask)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run(fetches, feed)[0] for _ in range(3)]
            values[relu_mask] = [np.asarray(v).tobytes() for v in
                                 losses + [sess.run(v) for v in tf.global_variables()]]
    assert values[True] == values[False]


def test_relu_mask_left_apart_when_the_masked_gradient_is_fetched():
    x = tf.placeholder(tf.float32, [4, 5, 5, 3])
    y, _, _ = tf.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]))
    h = tf.nn.relu(y)
    dh = tf.placeholder(tf.float32, [4, 5, 5, 3])
    (dy,) = tf.gradients(h, [y], grad_ys=dh)
    (dx,) = tf.gradients(y, [x], grad_ys=dy)
    fused, _ = tf.optimize([dx], [x, dh])
    apart, _ = tf.optimize([dx, dy], [x, dh])
    assert [op.type for op in fused.get_operations()].count("FusedBatchNormGradReluMask") == 1
    assert [op.type for op in apart.get_operations()].count("FusedBatchNormGradReluMask") == 0


def test_relu_mask_left_apart_for_an_affine_of_other_operands():
    # relu((x - m) * a + o) with a scalar m before a FusedBatchNormGrad of x: the op's mask takes
    # per-channel vectors only, so the two ops stay; the values are the unfused ones
    x = tf.placeholder(tf.float32, [4, 5, 5, 3])
    m = tf.Variable(0.25)  # a scalar
    y = (x - m) * tf.Variable([1.0, -2.0, 0.5]) + tf.Variable([0.1, 0.2, -0.3])
    dh = tf.placeholder(tf.float32, [4, 5, 5, 3])
    (dy,) = tf.gradients(tf.nn.relu(y), [y], grad_ys=dh)  # where(relu(y) > 0, dh, 0)
    mean, variance = tf.nn.moments(x, [0, 1, 2])
    dx = nn_norm_ops.fused_batch_norm_grad(dy, x, tf.ones([3]), mean, variance, 1e-3)[0]
    graph, _ = tf.optimize([dx], [x, dh])
    assert [op.type for op in graph.get_operations()].count("FusedBatchNormGradReluMask") == 0
    rng = np.random.default_rng(3)
    feed = {x: rng.standard_normal([4, 5, 5, 3]).astype(np.float32),
            dh: rng.standard_normal([4, 5, 5, 3]).astype(np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(dx, feed)
    with tf.Session(optimize=False) as sess:
        sess.run(tf.global_variables_initializer())
        want = sess.run(dx, feed)
    assert got.tobytes() == want.tobytes()
