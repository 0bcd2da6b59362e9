"""TensorFlow's training graphs, read from `.meta` files TensorFlow 2.21 wrote
(tests/fixtures/tensorflow/training/, made by make_training_graphs.py): imported with
`tf.train.import_meta_graph`, restored, and trained 5 steps through the `train_op` collection's
op to TensorFlow's own losses and variables. Their gradients are TensorFlow's gradient ops
(ReluGrad, FusedBatchNormGradV3, BroadcastGradientArgs, ...) as TensorFlow wrote them."""

import pathlib

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import tf_protos as pb

TRAINING = pathlib.Path(__file__).parents[2] / "fixtures" / "tensorflow" / "training"
MODELS = {
    "cnn_bn_adam": {"ReluGrad", "FusedBatchNormGradV3", "MaxPoolGrad", "AvgPoolGrad",
                    "Conv2DBackpropInput", "Conv2DBackpropFilter", "BiasAddGrad", "ApplyAdam",
                    "ShapeN"},
    "mlp_tanh_sigmoid_elu": {"TanhGrad", "SigmoidGrad", "EluGrad", "SqrtGrad",
                             "BroadcastGradientArgs", "ApplyRMSProp"},
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tensorflow_training_graph_trains_to_tensorflows_numbers(name):
    expected = np.load(TRAINING / "expected.npz")
    prefix = str(TRAINING / name / "model")
    meta = pb.MetaGraphDef.FromString(pathlib.Path(prefix + ".meta").read_bytes())
    assert MODELS[name] <= {n.op for n in meta.graph_def.node}  # the fixture holds TF's grad ops
    feed = {"x:0": expected[f"{name}/x"], "y:0": expected[f"{name}/y"]}
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        saver.restore(sess, prefix)
        train_op = tf.get_collection("train_op")[0]
        losses = []
        for _ in range(5):
            losses.append(sess.run("loss:0", feed))
            sess.run(train_op, feed)
        losses.append(sess.run("loss:0", feed))
        np.testing.assert_allclose(losses, expected[f"{name}/losses"], rtol=1e-5)
        variables = tf.global_variables()
        assert variables
        for var in variables:
            np.testing.assert_allclose(sess.run(var), expected[f"{name}/var:{var.op.name}"],
                                       rtol=1e-4, atol=1e-6, err_msg=var.op.name)


def test_batch_norm_moving_averages_move_through_update_ops():
    expected = np.load(TRAINING / "expected.npz")
    prefix = str(TRAINING / "cnn_bn_adam" / "model")
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        saver.restore(sess, prefix)
        mean = [v for v in tf.global_variables() if v.op.name.endswith("moving_mean")][0]
        before = sess.run(mean)
        sess.run(tf.get_collection("train_op")[0], {"x:0": expected["cnn_bn_adam/x"],
                                                     "y:0": expected["cnn_bn_adam/y"]})
        assert not np.allclose(sess.run(mean), before)


def test_fixtures_are_small_and_recorded_by_tensorflow():
    total = sum(p.stat().st_size for p in TRAINING.rglob("*") if p.is_file())
    assert total < 200_000
    assert (TRAINING / "made_by.txt").read_text().startswith("TensorFlow ")
