"""Cases for the gradient helper ops (StopGradient, SumToShape, ReducedShape,
BroadcastGradientArgs)."""

import numpy as np

import graphflow as tf
from graphflow.ops.gradient_ops import broadcast_gradient_args, reduced_shape, sum_to_shape
from tests.op_cases import OpCase, rand


def _sum_to(shape):
    shape = tuple(shape)

    def reference(x):
        lead = x.ndim - len(shape)
        out = x.sum(axis=tuple(range(lead))) if lead else x
        axes = tuple(i for i, d in enumerate(shape) if d == 1 and out.shape[i] != 1)
        return out.sum(axis=axes, keepdims=True) if axes else out
    return reference


CASES = [
    OpCase("StopGradient", tf.stop_gradient, [rand(3, 2)], lambda x: x, grad=False),
    OpCase("SumToShape", lambda x: sum_to_shape(x, np.array([4], np.int32)), [rand(3, 4)],
           _sum_to([4])),
    OpCase("SumToShape", lambda x: sum_to_shape(x, np.array([3, 1], np.int64)), [rand(2, 3, 4)],
           _sum_to([3, 1])),
    OpCase("SumToShape", lambda x: sum_to_shape(x, np.array([2, 3], np.int32)), [rand(2, 3)],
           lambda x: x),
    OpCase("SumToShape", lambda x: sum_to_shape(x, np.array([], np.int32)), [rand(2, 3)],
           lambda x: np.sum(x)),
    OpCase("SumToShape", lambda x, y: sum_to_shape(x, tf.shape(y)), [rand(5, 2, 3), rand(2, 1)],
           lambda x, y: _sum_to([2, 1])(x), grad_inputs=[0]),
    OpCase("ReducedShape", lambda s: reduced_shape(s, [0, -1]), [np.array([2, 3, 4], np.int32)],
           lambda s: np.array([1, 3, 1], np.int32), grad=False),
    OpCase("ReducedShape", lambda s: reduced_shape(s, None), [np.array([5, 6], np.int64)],
           lambda s: np.array([1, 1], np.int64), grad=False),
    # TensorFlow's results for these shapes (equal shapes: nothing; 1 on both sides: both)
    *[OpCase("BroadcastGradientArgs", broadcast_gradient_args,
             [np.array(a, dt), np.array(b, dt)],
             lambda a, b, r0=r0, r1=r1: (np.array(r0, a.dtype), np.array(r1, a.dtype)), grad=False)
      for a, b, r0, r1, dt in (
          ([2, 1, 3], [3], [1], [0, 1], np.int32), ([1], [1], [], [], np.int32),
          ([1, 1], [1], [0, 1], [0, 1], np.int64), ([5, 1], [1, 4], [1], [0], np.int32),
          ([1, 2], [3, 1, 2], [0, 1], [1], np.int64), ([0, 1], [1, 3], [1], [0], np.int32),
          ([2, 3], [2, 3], [], [], np.int32))],
]
