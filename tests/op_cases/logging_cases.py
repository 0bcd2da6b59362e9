"""Cases for the printing and checking ops and py_func (their failures and output are tested in
tests/ops/test_logging_ops.py and tests/ops/test_script_ops.py)."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, positive, rand


def _after(op, x):
    with tf.control_dependencies([op]):
        return tf.identity(x)


CASES = [
    OpCase("Print", lambda x, y: tf.Print(x, [y], message="x: ") * 2.0, [rand(3, 2), rand(4)],
           lambda x, y: x * 2, grad_inputs=[0]),
    OpCase("PrintV2", lambda x: _after(tf.print("x =", x), x) * 3.0, [rand(2, 3)],
           lambda x: x * 3, grad=False),
    # a constant condition: the GPU tests' recorded device values could not satisfy a computed one
    # (conditions computed from values: tests/ops/test_logging_ops.py, tests/tf1/test_debugging.py)
    OpCase("Assert", lambda x: _after(tf.Assert(tf.constant(True), ["x:", x]), x) + 1.0,
           [positive(5)], lambda x: x + 1, grad=False),
    OpCase("CheckNumerics", lambda x: tf.check_numerics(x * x, "square"), [rand(2, 4)],
           lambda x: x * x),
    OpCase("PyFunc", lambda x: tf.py_func(lambda v: np.sin(v) + 1.0, [x], tf.float64),
           [rand(3, 3)], lambda x: np.sin(x) + 1, grad=False),
]
