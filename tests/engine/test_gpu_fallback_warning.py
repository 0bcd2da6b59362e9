"""Ops placed on a GPU that run on the CPU (soft placement on a machine without one, or no GPU
kernel) are named in one warning per session on the 'graphflow' logger; without
allow_soft_placement a missing GPU is an error, as in TF1 (TensorFlow 2.21 raises
InvalidArgumentError there and, with soft placement, gives [2.] for the program below)."""

import logging

import numpy as np
import pytest

import graphflow as tf
from graphflow.engine import placement


def _gpu_unavailable():
    try:
        placement.gpu_backend("/gpu:0")
    except Exception:  # noqa: BLE001 - any reason the CUDA backend cannot run here
        return True
    return False


pytestmark = pytest.mark.skipif(not _gpu_unavailable(), reason="a GPU is available here")


def _program():
    x = tf.placeholder(tf.float32, [1], name="x")
    with tf.device("/gpu:0"):
        y = tf.multiply(x, 2.0, name="doubled")
    return x, y


def test_soft_placement_warns_once_per_session(caplog):
    with tf.Graph().as_default():
        x, y = _program()
        config = tf.ConfigProto(allow_soft_placement=True)
        with caplog.at_level(logging.WARNING, logger="graphflow"):
            with tf.Session(config=config) as sess:
                assert sess.run(y, {x: [1.0]}).tolist() == [2.0]
                assert sess.run(y * 3.0, {x: [1.0]}).tolist() == [6.0]  # a second plan
            warnings = [r for r in caplog.records if "placed on a GPU" in r.getMessage()]
            assert len(warnings) == 1 and "doubled (Mul" in warnings[0].getMessage()
            with tf.Session(config=config) as sess:  # a new session warns again
                sess.run(y, {x: [1.0]})
            assert len([r for r in caplog.records if "placed on a GPU" in r.getMessage()]) == 2


def test_without_soft_placement_a_missing_gpu_is_an_error():
    with tf.Graph().as_default():
        x, y = _program()
        with tf.Session() as sess, pytest.raises(Exception, match="doubled.*gpu:0"):
            sess.run(y, {x: np.ones(1, np.float32)})
