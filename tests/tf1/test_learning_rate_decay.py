"""Tests for graphflow.tf1.learning_rate_decay: argument checks (the schedules' values, against
their formulas and TensorFlow, are in tests/tf1/test_training_programs.py)."""

import pytest

import graphflow as tf


def test_schedules_reject_a_missing_step_and_bad_boundaries():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="global_step is required for cosine_decay"):
            tf.train.cosine_decay(0.1, None, 10)
        with pytest.raises(ValueError, match="1 less than"):
            tf.train.piecewise_constant(tf.constant(1), [1, 2], [0.1, 0.2])
        with pytest.raises(ValueError, match="same dtype"):
            tf.train.piecewise_constant(tf.constant(1), [1.5], [0.1, 0.2])
