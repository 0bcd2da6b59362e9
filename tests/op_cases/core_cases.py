"""Cases for the core ops (identity, placeholder_with_default)."""

import graphflow as tf
from tests.op_cases import OpCase, rand

CASES = [
    OpCase("Identity", tf.identity, [rand(3, 2)], lambda x: x),
    OpCase("IdentityN", lambda a, b: tuple(tf.identity_n([a, b])), [rand(3, 2), rand(4, seed=1)],
           lambda a, b: (a, b)),
    OpCase("IdentityN", lambda a: tf.identity_n([a])[0], [rand(3, 2)], lambda a: a,
           name="IdentityN[one tensor]"),
    OpCase("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, shape=[3, 2]) * 2.0,
           [rand(3, 2)], lambda x: x * 2),
]
