"""Cases for the core ops (identity, placeholder_with_default)."""

import graphflow as tf
from tests.op_cases import OpCase, rand

CASES = [
    OpCase("Identity", tf.identity, [rand(3, 2)], lambda x: x),
    OpCase("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, shape=[3, 2]) * 2.0,
           [rand(3, 2)], lambda x: x * 2),
]
