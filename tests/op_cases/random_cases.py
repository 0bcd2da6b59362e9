"""Cases for RandomShuffle and Multinomial (shapes, dtypes, unknown-shape builds; their values
are checked statistically in tests/ops/test_random_ops.py). The older random ops' cases are in
nn_cases.py."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand

CASES = [
    OpCase("RandomShuffle", lambda x: tf.random_shuffle(x, seed=4), [rand(5, 3)], grad=False),
    OpCase("RandomShuffle", lambda x: tf.random.shuffle(x), [np.arange(7, dtype=np.int32)],
           grad=False, name="RandomShuffle[int32]"),
    OpCase("Multinomial", lambda x: tf.multinomial(x, 6, seed=2), [rand(3, 4)], grad=False),
    OpCase("Multinomial", lambda x: tf.random.categorical(x, 2, dtype=tf.int32),
           [rand(2, 5).astype(np.float32)], grad=False, name="Multinomial[int32 out]"),
]
