"""Cases for the iterator ops: `IteratorGetNext` of one-shot iterators (no feeds: a one-shot
iterator captures constants only). `MakeIterator` has no outputs: tests/tf1/data/test_iterator_ops.py."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase

_ROWS = np.arange(12, dtype=np.float32).reshape(4, 3)


def _first_batch():
    dataset = tf.data.Dataset.from_tensor_slices((_ROWS, np.arange(4))).batch(3, drop_remainder=True)
    return dataset.make_one_shot_iterator().get_next()


CASES = [
    OpCase("IteratorGetNext",
           lambda: tf.data.Dataset.from_tensors(_ROWS).make_one_shot_iterator().get_next(), [],
           lambda: _ROWS, grad=False),
    OpCase("IteratorGetNext", _first_batch, [], lambda: (_ROWS[:3], np.arange(3)), grad=False,
           name="IteratorGetNext[tuple batch]"),
]
