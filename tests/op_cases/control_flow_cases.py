"""Cases for the control-flow ops (While, If) and the TensorArray ops (forward and gradient ones).

The generic harness checks each forward case against numpy and its gradient by finite
differences; the gradient-only ops (WhileGrad, the TensorArray gradient ops) get cases whose build
calls `tf.gradients`, checked against the hand-derived derivative."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand


def _power_loop(x):
    """x -> x * x * x by a while_loop of 2 iterations multiplying by x (a captured tensor)."""
    _, y = tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * x), (tf.constant(0), x))
    return y


def _unstack_stack(x):
    ta = tf.TensorArray(x.dtype, size=tf.shape(x)[0]).unstack(x)
    return ta.stack() * 2.0


def _write_read(x):
    ta = tf.TensorArray(x.dtype, size=2)
    ta = ta.write(0, x).write(1, x * 3.0)
    return ta.read(1) + ta.read(0)


def _scatter_gather(x):
    ta = tf.TensorArray(x.dtype, size=3).scatter([2, 0, 1], x)
    return ta.gather([1, 2])


def _concat(x):
    ta = tf.TensorArray(x.dtype, size=2, element_shape=[None, 2], infer_shape=False)
    return ta.write(0, x).write(1, x[:1] * 2.0).concat()


def _size(x):
    ta = tf.TensorArray(x.dtype, size=0, dynamic_size=True)
    return ta.write(3, x).size()


def _cond(x):
    return tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x * x)


def _grad_of_loop(x):
    return tf.gradients(tf.reduce_sum(_power_loop(x)), x)[0]


def _grad_through_array(x):
    ta = tf.TensorArray(x.dtype, size=2, clear_after_read=False).unstack(x)
    y = ta.read(0) * ta.read(1) + tf.reduce_sum(ta.stack())
    return tf.gradients(tf.reduce_sum(y), x)[0]


def _grad_scatter_gather(x):
    y = _scatter_gather(x)
    return tf.gradients(tf.reduce_sum(y * y), x)[0]


def _grad_concat(x):
    return tf.gradients(tf.reduce_sum(_concat(x) ** 2), x)[0]


def _grad_zero(x):
    """Only the counter output of the loop is used: the array output's gradient is zero."""
    ta = tf.TensorArray(x.dtype, size=2).unstack(x)
    ta2 = tf.TensorArray(x.dtype, size=2)

    def body(i, acc, out):
        v = ta.read(i)
        return i + 1, acc + v, out.write(i, v * 2.0)
    _, acc, out = tf.while_loop(lambda i, a, o: i < 2, body,
                                (tf.constant(0), tf.zeros_like(x[0]), ta2))
    return tf.gradients(tf.reduce_sum(acc), x)[0]


def _array_grad_reference(x):
    """d/dx sum(x[0] * x[1] + sum(x)): the sum broadcasts over the element's size."""
    return x[::-1] + (x[0].size if x.ndim > 1 else 1)


x23 = rand(2, 3)
FIRST_ORDER = dict(second_order=False)  # no gradient of a gradient through loops and arrays
CASES = [
    OpCase("While", _power_loop, [rand(2, 3)], lambda x: x ** 3, **FIRST_ORDER),
    OpCase("If", _cond, [np.abs(rand(2, 3)) + 0.1], lambda x: x * 2, name="If[true]"),
    OpCase("If", _cond, [-np.abs(rand(2, 3)) - 0.1], lambda x: x * x, name="If[false]"),
    OpCase("TensorArrayV3", _unstack_stack, [rand(3, 2)], lambda x: x * 2, grad=False),
    OpCase("TensorArrayUnstack", _unstack_stack, [rand(4)], lambda x: x * 2, **FIRST_ORDER),
    OpCase("TensorArrayStack", _unstack_stack, [rand(2, 2, 2)], lambda x: x * 2, **FIRST_ORDER),
    OpCase("TensorArrayWriteV3", _write_read, [rand(3)], lambda x: 4 * x, **FIRST_ORDER),
    OpCase("TensorArrayReadV3", _write_read, [rand(2, 2)], lambda x: 4 * x, **FIRST_ORDER),
    OpCase("TensorArrayScatterV3", _scatter_gather, [rand(3, 2)], lambda x: x[[2, 0]], **FIRST_ORDER),
    OpCase("TensorArrayGatherV3", _scatter_gather, [rand(3)], lambda x: x[[2, 0]], **FIRST_ORDER),
    OpCase("TensorArrayConcatV3", _concat, [rand(2, 2)],
           lambda x: np.concatenate([x, x[:1] * 2]), **FIRST_ORDER),
    OpCase("TensorArraySizeV3", _size, [rand(2)], lambda x: np.int32(4), grad=False),
    OpCase("WhileGrad", _grad_of_loop, [rand(2, 3)], lambda x: 3 * x ** 2, grad=False),
    OpCase("TensorArrayGradOfRead", _grad_through_array, [x23], _array_grad_reference,
           grad=False),
    OpCase("TensorArrayGradRead", lambda x: tf.gradients(tf.reduce_sum(_write_read(x)), x)[0],
           [rand(2)], lambda x: np.full_like(x, 4.0), grad=False),
    OpCase("TensorArrayGradOfStack", _grad_through_array, [rand(2, 2)], _array_grad_reference,
           grad=False),
    OpCase("TensorArrayGradStack", _grad_through_array, [rand(2, 1)], _array_grad_reference,
           grad=False),
    OpCase("TensorArrayAddGradients", _grad_through_array, [rand(2, 4)], _array_grad_reference,
           grad=False),
    OpCase("TensorArrayGradOfGather", _grad_scatter_gather, [rand(3, 2)],
           lambda x: np.stack([2 * x[0], 0 * x[1], 2 * x[2]]), grad=False),
    OpCase("TensorArrayGradGather", _grad_scatter_gather, [rand(3)],
           lambda x: np.stack([2 * x[0], 0 * x[1], 2 * x[2]]), grad=False),
    OpCase("TensorArrayGradOfConcat", _grad_concat, [rand(2, 2)],
           lambda x: 2 * x + np.stack([8 * x[0], 0 * x[1]]), grad=False),
    OpCase("TensorArrayZeroGradient", _grad_zero, [rand(2, 3)], lambda x: np.ones_like(x),
           grad=False),
]
