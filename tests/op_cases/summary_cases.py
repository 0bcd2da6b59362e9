"""Cases for the summary ops: each yields a scalar tf.string (a serialized Summary). Their contents
are read back with TensorBoard's own reader in tests/tf1/summary/test_summary_ops.py."""

import numpy as np

import graphflow as tf
from tests.op_cases import OpCase, rand

TEXT = np.array([b"hello", b"**graphflow**"], dtype=object)

CASES = [
    OpCase("ScalarSummary", lambda x: tf.summary.scalar("loss", x), [np.float32(0.25)], grad=False),
    OpCase("HistogramSummary", lambda x: tf.summary.histogram("w", x), [rand(4, 5)], grad=False),
    OpCase("ImageSummary", lambda x: tf.summary.image("img", x, max_outputs=2),
           [rand(3, 4, 5, 3, dtype=np.float32)], grad=False),
    OpCase("AudioSummary", lambda x: tf.summary.audio("snd", x, sample_rate=8000),
           [rand(2, 50, dtype=np.float32, low=-1, high=1)], grad=False),
    OpCase("TextSummary", lambda x: tf.summary.text("note", x), [TEXT], grad=False),
    OpCase("MergeSummary",
           lambda x, y: tf.summary.merge([tf.summary.scalar("a", x), tf.summary.histogram("b", y)]),
           [np.float32(1.5), rand(6)], grad=False),
]
