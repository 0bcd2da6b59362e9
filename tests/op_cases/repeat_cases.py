"""Cases for `tf.repeat` (a gather of repeated slice indices, under the GatherV2 op type it
builds; the input's rank must be known when the graph is built): scalar and per-slice counts,
known when the graph is built or fed at run time, with and without an axis. The reference is
numpy's np.repeat."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand

CASES = [
    OpCase("GatherV2", lambda x: tf.repeat(x, [2, 0, 1], axis=1), [rand(2, 3)],
           lambda x: np.repeat(x, [2, 0, 1], axis=1), unknown_shapes=False,
           name="GatherV2[repeat per slice]"),
    OpCase("GatherV2", lambda x: tf.repeat(x, 3), [rand(2, 2)], lambda x: np.repeat(x, 3),
           name="GatherV2[repeat flattened]"),
    OpCase("GatherV2", lambda x, r: tf.repeat(x, r, axis=0),
           [rand(3, 2), np.array([1, 3, 0], np.int32)],
           lambda x, r: np.repeat(x, r, axis=0), grad_inputs=[0], shape_from_values=True,
           unknown_shapes=False, name="GatherV2[repeat counts fed]"),
    OpCase("GatherV2", lambda x, r: tf.repeat(x, r, axis=-1), [rand(2, 3), np.array(2, np.int64)],
           lambda x, r: np.repeat(x, r, axis=-1), grad_inputs=[0], shape_from_values=True,
           unknown_shapes=False, name="GatherV2[repeat scalar fed]"),
]
