"""Cases for the queue ops (`graphflow/ops/queue_ops.py`): each builds a queue, fills it and reads
it back within one run (the reads depend on the writes through control dependencies), so a run
may be repeated in one session. Blocking, closing and threads: tests/tf1/data/test_queues.py."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase

_X = np.arange(6, dtype=np.float32).reshape(3, 2)


def _after(ops, fn):
    with tf.control_dependencies(ops):
        return fn()


def _one(x):
    q = tf.FIFOQueue(4, [tf.float32], shapes=[[3, 2]])
    return _after([q.enqueue([x])], q.dequeue)


def _many(x):
    q = tf.FIFOQueue(8, [tf.float32, tf.int32], shapes=[[2], []])
    enqueue = q.enqueue_many([x, tf.constant([7, 8, 9])])
    return _after([enqueue], lambda: q.dequeue_many(3))


def _up_to(x):
    q = tf.FIFOQueue(8, [tf.float32], shapes=[[2]])
    return _after([q.enqueue_many([x])], lambda: q.dequeue_up_to(3))


def _size(x):
    q = tf.FIFOQueue(8, [tf.float32], shapes=[[2]])
    return _after([q.enqueue_many([x])], q.size)


def _is_closed(x):
    q = tf.FIFOQueue(8, [tf.float32], shapes=[[2]])
    return _after([q.close()], q.is_closed)


def _padded(x):
    q = tf.PaddingFIFOQueue(4, [tf.float32], shapes=[[None, 2]])
    first = q.enqueue([x])
    second = _after([first], lambda: q.enqueue([_X[:1]]))  # a shorter element
    return _after([second], lambda: q.dequeue_many(2))


def _padded_reference(x):
    short = np.zeros_like(x)
    short[:1] = x[:1]
    return np.stack([x, short])


def _shuffled_sum(x):
    q = tf.RandomShuffleQueue(8, 0, [tf.float32], shapes=[[2]], seed=3)
    rows = _after([q.enqueue_many([x])], lambda: q.dequeue_many(3))
    return tf.reduce_sum(rows, axis=0)


CASES = [
    OpCase("FIFOQueueV2", _one, [_X], lambda x: x, grad=False),
    OpCase("QueueEnqueueV2", _one, [_X], lambda x: x, grad=False),
    OpCase("QueueDequeueV2", _one, [_X], lambda x: x, grad=False),
    OpCase("QueueEnqueueManyV2", _many, [_X], lambda x: (x, np.array([7, 8, 9], np.int32)),
           grad=False),
    OpCase("QueueDequeueManyV2", _many, [_X], lambda x: (x, np.array([7, 8, 9], np.int32)),
           grad=False),
    OpCase("QueueCloseV2", _is_closed, [_X], lambda x: np.bool_(True), grad=False),
    OpCase("QueueDequeueUpToV2", _up_to, [_X], lambda x: x, grad=False, shape_from_values=True),
    OpCase("QueueSizeV2", _size, [_X], lambda x: np.int32(3), grad=False),
    OpCase("QueueIsClosedV2", _is_closed, [_X], lambda x: np.bool_(True), grad=False),
    OpCase("PaddingFIFOQueueV2", _padded, [_X], _padded_reference, grad=False,
           shape_from_values=True),
    OpCase("RandomShuffleQueueV2", _shuffled_sum, [_X], lambda x: x.sum(0), grad=False),
]
