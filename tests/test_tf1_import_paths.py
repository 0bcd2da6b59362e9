"""The import paths TF1-era programs spell: `from tensorflow.python.framework import ops` (and
tensor_shape, dtypes, constant_op, graph_util), `from tensorflow.python.ops import math_ops, ...`,
`from tensorflow.contrib.layers import dropout, fully_connected, batch_norm, xavier_initializer`
and `tensorflow.contrib.losses` / `slim.losses` as graphflow's."""

import numpy as np
import pytest

import graphflow as tf


def test_python_framework_modules():
    from graphflow.python.framework import constant_op, dtypes, graph_util, ops, tensor_shape
    ops.reset_default_graph()
    graph = ops.get_default_graph()
    c = constant_op.constant([1.0, 2.0])
    assert c.graph is graph and isinstance(c, ops.Tensor)
    assert dtypes.float32 is tf.float32 and dtypes.as_dtype("int32") is tf.int32
    assert tensor_shape.TensorShape([None, 3]).as_list() == [None, 3]
    assert tensor_shape.unknown_shape().ndims is None
    assert callable(graph_util.convert_variables_to_constants)
    with ops.name_scope("scope"):
        assert ops.convert_to_tensor(1.0).op.name.startswith("scope/")


def test_python_ops_modules():
    from graphflow.python.ops import array_ops, init_ops, math_ops, nn_ops, variable_scope
    with tf.Graph().as_default():
        x = array_ops.reshape(math_ops.range(6), [2, 3])
        y = nn_ops.relu(math_ops.cast(x, tf.float32) - 2.0)
        with variable_scope.variable_scope("v"):
            w = variable_scope.get_variable("w", [3], initializer=init_ops.ones_initializer())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(math_ops.reduce_sum(y * w)).item() == 6.0
    with pytest.raises(ImportError):
        from graphflow.python.ops import no_such_module  # noqa: F401


def test_contrib_layers_names_import():
    from graphflow.contrib.layers import batch_norm, dropout, fully_connected, xavier_initializer
    from graphflow.contrib.losses import softmax_cross_entropy
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        h = fully_connected(x, 3, weights_initializer=xavier_initializer())
        h = batch_norm(dropout(h, keep_prob=0.5, is_training=False), is_training=False)
        loss = softmax_cross_entropy(h, tf.one_hot([0, 2], 3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert np.isfinite(sess.run(loss, {x: np.ones((2, 4))}))
