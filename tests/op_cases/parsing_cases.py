"""Cases for the Example-parsing ops and DecodeRaw; expected values are what TF 1.x
`tf.parse_example` / `tf.parse_single_example` / `tf.decode_raw` return for the same protos."""

import numpy as np

import graphflow as tf
from graphflow.framework import example_proto
from tests.op_cases import OpCase


def _b(*items):
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def _example(**features):
    """A serialized tf.train.Example: float lists, int lists (Python ints) and byte lists."""
    e = example_proto
    feature = {}
    for key, values in features.items():
        if all(isinstance(v, bytes) for v in values):
            feature[key] = e.Feature(bytes_list=e.BytesList(value=values))
        elif all(isinstance(v, int) for v in values):
            feature[key] = e.Feature(int64_list=e.Int64List(value=values))
        else:
            feature[key] = e.Feature(float_list=e.FloatList(value=values))
    return e.Example(features=e.Features(feature=feature)).SerializeToString()


_FEATURES = {"x": tf.FixedLenFeature([2], tf.float32),
             "n": tf.FixedLenFeature([], tf.int64, default_value=-1),
             "tags": tf.VarLenFeature(tf.string)}


def _batch(serialized):
    d = tf.parse_example(serialized, _FEATURES)
    return d["tags"].indices, d["tags"].values, d["tags"].dense_shape, d["n"], d["x"]


def _single(serialized):
    d = tf.parse_single_example(serialized, _FEATURES)
    return d["tags"].indices, d["tags"].values, d["tags"].dense_shape, d["n"], d["x"]


def _sequence(serialized):
    spec = {"s": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True, default_value=9)}
    return tf.parse_example(serialized, spec)["s"]


_BATCH = _b(_example(x=[1.0, 2.5], n=[4], tags=[b"a", b"b"]), _example(x=[-1.0, 0.0]),
            _example(x=[3.0, 3.0], tags=[b"c"]))

CASES = [
    OpCase("ParseExample", _batch, [_BATCH],
           lambda s: (np.array([[0, 0], [0, 1], [2, 0]]), _b(b"a", b"b", b"c"), np.array([3, 2]),
                      np.array([4, -1, -1]), np.array([[1, 2.5], [-1, 0], [3, 3]], np.float32)),
           grad=False),
    OpCase("ParseExample", _sequence, [_b(_example(s=[1, 2, 3, 4]), _example(), _example(s=[5, 6]))],
           lambda s: np.array([[[1, 2], [3, 4]], [[9, 9], [9, 9]], [[5, 6], [9, 9]]]), grad=False,
           name="ParseExample[sequence]"),
    OpCase("ParseSingleExample", _single, [np.array(_BATCH[0], dtype=object)],
           lambda s: (np.array([[0], [1]]), _b(b"a", b"b"), np.array([2]), np.array(4),
                      np.array([1, 2.5], np.float32)), grad=False),
    OpCase("DecodeRaw", lambda s: tf.decode_raw(s, tf.int32),
           [_b(np.array([1, -2], "<i4").tobytes(), np.array([3, 4], "<i4").tobytes())],
           lambda s: np.array([[1, -2], [3, 4]], np.int32), grad=False),
    OpCase("DecodeRaw", lambda s: tf.io.decode_raw(s, tf.float32, little_endian=False),
           [_b(np.array([1.5, 2], ">f4").tobytes())], lambda s: np.array([[1.5, 2]], np.float32),
           grad=False, name="DecodeRaw[big_endian]"),
    OpCase("DecodeRaw", lambda s: tf.decode_raw(s, tf.uint8),
           [np.array(b"\x01\x02\xff", dtype=object)], lambda s: np.array([1, 2, 255], np.uint8),
           grad=False, name="DecodeRaw[scalar]"),
    OpCase("DecodeCSV", lambda s: tuple(tf.decode_csv(s, [[0], [""], [1.5], []],
                                                      na_value="NA")),
           [_b(b'1,"a,b",2.5,4', b'3,"""q""",NA,-7')],
           lambda s: (np.array([1, 3], np.int32), _b(b"a,b", b'"q"'),
                      np.array([2.5, 1.5], np.float32), np.array([4, -7], np.float32)),
           grad=False),
]
