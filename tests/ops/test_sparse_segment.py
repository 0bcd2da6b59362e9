"""sparse_segment_sum / mean / sqrt_n: TensorFlow's recorded numbers (tests/ops/
sparse_programs.py's segment program), live ones with GRAPHFLOW_TF_PYTHON, and gradients by
finite differences."""

import numpy as np
import pytest

import graphflow as tf
from tests.ops.sparse_reference import (
    assert_same,
    check_gradient,
    recorded,
    run_graphflow,
    run_tensorflow,
)
from tests.tf_reference import tf_python


def test_segment_program_gives_tensorflows_recorded_numbers():
    assert_same(run_graphflow("segment"), recorded("segment"))


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_segment_program_against_tensorflow_live():
    assert_same(run_graphflow("segment"), run_tensorflow("segment"))


@pytest.mark.parametrize("fn", [tf.sparse_segment_sum, tf.sparse_segment_mean,
                                tf.sparse_segment_sqrt_n])
def test_gradients_by_finite_differences(fn):
    def build(data):
        plain = fn(data, [0, 3, 1, 4, 4], [0, 0, 2, 2, 3])
        counted = fn(data, [2, 2, 0], [1, 1, 4], num_segments=5)
        return tf.reduce_sum(tf.sin(plain)) + tf.reduce_sum(counted ** 2)
    check_gradient(build, [np.random.RandomState(6).randn(5, 2)])


def test_segment_ids_must_be_a_vector():
    with pytest.raises(ValueError, match="segment_ids must be a vector"):
        tf.sparse_segment_sum(np.ones((3, 2)), [0, 1], [[0, 1]])
