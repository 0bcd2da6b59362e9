"""graphflow/ops/conv_composite_ops.py (and tf.nn.relu_layer of nn_ops.py): TF1's composed
tf.nn functions against TensorFlow's numbers, recorded in data/tf_nn_composites_reference.json by
data/make_tf_nn_composites_reference.py and compared live where GRAPHFLOW_TF_PYTHON is set."""

import json
import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from nn_composites_program import nn_composites_program  # noqa: E402
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402

RECORDED = json.loads((DATA / "tf_nn_composites_reference.json").read_text())["outputs"]


def test_composites_give_tensorflows_recorded_numbers():
    got = nn_composites_program(tf, np)
    assert set(got) == set(RECORDED)
    for name, record in RECORDED.items():
        want = np.array(record["values"], np.float32).reshape(record["shape"])
        assert got[name].shape == want.shape, name
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_composites_against_tensorflow_live():
    want = run_in_tensorflow([("r", nn_composites_program, {})])["r"]
    got = nn_composites_program(tf, np)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-5, err_msg=name)


def test_composites_are_built_from_existing_ops_and_refuse_bad_arguments():
    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    y = tf.nn.atrous_conv2d(x, tf.ones([3, 3, 3, 4]), rate=3, padding="SAME")
    assert y.op.type == "Conv2D" and y.op.attrs["dilations"] in ([1, 3, 3, 1], (1, 3, 3, 1))
    assert y.shape.as_list() == [None, 8, 8, 4]
    with pytest.raises(ValueError, match="rate 0 cannot be less than one"):
        tf.nn.atrous_conv2d(x, tf.ones([3, 3, 3, 4]), rate=0, padding="SAME")
    layer = tf.nn.relu_layer(tf.ones([2, 3]), tf.ones([3, 4]), tf.zeros([4]), name="hidden")
    assert layer.op.type == "Relu" and layer.op.name == "hidden"
    with pytest.raises(ValueError, match="filter_sizes of 4 values"):
        tf.nn.depthwise_conv2d_native_backprop_filter(
            x, tf.placeholder(tf.int32, [4]), tf.ones([1, 8, 8, 3]), [1, 1, 1, 1], "SAME")
