"""tf.parse_example / parse_single_example / decode_raw: static shapes, defaults, TF1's errors for
missing, mistyped and mis-sized features, and feature specs refused when the graph is built."""

import numpy as np
import pytest

import graphflow as tf
from tests.op_cases.parsing_cases import _b, _example


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_static_shapes_and_dtypes():
    s = tf.placeholder(tf.string, [5])
    d = tf.parse_example(s, {"img": tf.FixedLenFeature([2, 3], tf.float32),
                             "label": tf.FixedLenFeature([], tf.int64),
                             "name": tf.FixedLenFeature([1], tf.string),
                             "seq": tf.FixedLenSequenceFeature([4], tf.int64, allow_missing=True),
                             "ids": tf.VarLenFeature(tf.int64)})
    assert d["img"].shape.as_list() == [5, 2, 3] and d["img"].dtype == tf.float32
    assert d["label"].shape.as_list() == [5] and d["name"].dtype == tf.string
    assert d["seq"].shape.as_list() == [5, None, 4]
    assert isinstance(d["ids"], tf.SparseTensor) and d["ids"].values.dtype == tf.int64
    single = tf.parse_single_example(tf.placeholder(tf.string, []),
                                     {"img": tf.FixedLenFeature([2, 3], tf.float32)})
    assert single["img"].shape.as_list() == [2, 3]


def test_required_feature_missing_is_tf1s_error():
    """TF1's words: parse_single_example's without the example's name, parse_example's with it."""
    spec = {"x": tf.FixedLenFeature([], tf.float32)}
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^Feature: x \(data type: float\) is required but could not "
                             r"be found\.$"):
        _run(tf.parse_single_example(_example(y=[1.0]), spec))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Name: <unknown>, Feature: x \(data type: float\) is required"):
        _run(tf.parse_example(_b(_example(y=[1.0])), spec))


def test_type_mismatch_is_an_error():
    d = tf.parse_example(_b(_example(x=[1, 2])), {"x": tf.FixedLenFeature([2], tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Key: x, Index: 0.  Data types don't match. Data type: int64 but "
                             "expected type: float"):
        _run(d)


def test_size_mismatch_is_an_error():
    d = tf.parse_example(_b(_example(x=[1.0]), _example(x=[1.0, 2.0, 3.0])),
                         {"x": tf.FixedLenFeature([1], tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: x, Index: 1.  Number of float "
                       "values != expected.  Values size: 3 but output shape: \\[1\\]"):
        _run(d)


def test_bytes_that_are_not_an_example():
    d = tf.parse_single_example(b"\xff\xff\xff", {"x": tf.VarLenFeature(tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse example input"):
        _run(d)


def test_defaults_fill_missing_features_and_keep_present_ones():
    features = {"v": tf.FixedLenFeature([2, 2], tf.float32, default_value=[1, 2, 3, 4]),
                "s": tf.FixedLenFeature([], tf.string, default_value="none")}
    got = _run(tf.parse_example(_b(_example(), _example(v=[5.0, 6, 7, 8], s=[b"k"])), features))
    np.testing.assert_array_equal(got["v"], [[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
    assert list(got["s"]) == [b"none", b"k"]


def test_empty_feature_counts_as_no_values():
    from graphflow.framework import example_proto as e
    empty = e.Example(features=e.Features(feature={"t": e.Feature()})).SerializeToString()
    got = _run(tf.parse_example(_b(empty), {"t": tf.VarLenFeature(tf.string)}))
    assert got["t"].values.shape == (0,) and list(got["t"].dense_shape) == [1, 0]


def test_sequence_feature_must_allow_missing():
    with pytest.raises(ValueError, match="requires allow_missing to be True"):
        tf.parse_example(_b(_example()), {"q": tf.FixedLenSequenceFeature([], tf.float32)})


def test_sequence_feature_size_must_be_a_multiple_of_the_item():
    d = tf.parse_example(_b(_example(s=[1.0, 2.0, 3.0])),
                         {"s": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True)})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Key: s, Index: 0.  Number of float "
                       r"values is not a multiple of stride length. Saw 3 values but output shape "
                       r"is: \[\?,2\]"):
        _run(d)


def test_empty_batch():
    s = tf.placeholder(tf.string, [None])
    d = tf.parse_example(s, {"x": tf.FixedLenFeature([3], tf.float32),
                             "v": tf.VarLenFeature(tf.int64)})
    got = _run(d, {s: np.array([], dtype=object)})
    assert got["x"].shape == (0, 3) and list(got["v"].dense_shape) == [0, 0]


def test_output_does_not_depend_on_dict_order():
    a = {"b": tf.FixedLenFeature([], tf.int64), "a": tf.FixedLenFeature([], tf.float32)}
    b = dict(reversed(list(a.items())))
    ex = _b(_example(a=[0.5], b=[3]))
    assert _run(tf.parse_example(ex, a)) == _run(tf.parse_example(ex, b))


@pytest.mark.parametrize("features, error", [
    ({"x": tf.FixedLenFeature([2], tf.float64)}, "float32, int64 or string"),
    ({"x": tf.FixedLenFeature([None], tf.float32)}, "fully defined"),
    ({"x": tf.FixedLenFeature([2], tf.float32, default_value=[1, 2, 3])}, "needs 2"),
    ({}, "non-empty dict"),
    ({"x": "float"}, "unsupported feature spec"),
])
def test_bad_specs_are_refused_when_building(features, error):
    with pytest.raises((ValueError, TypeError), match=error):
        tf.parse_example(tf.placeholder(tf.string, [None]), features)


def test_serialized_rank_is_checked():
    with pytest.raises(ValueError, match="vector"):
        tf.parse_example(tf.placeholder(tf.string, [2, 2]), {"x": tf.VarLenFeature(tf.int64)})
    with pytest.raises(ValueError, match="scalar"):
        tf.parse_single_example(tf.placeholder(tf.string, [2]), {"x": tf.VarLenFeature(tf.int64)})


def test_decode_raw_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="length 5 that is not a multiple of 4, the size of float"):
        _run(tf.decode_raw(_b(b"12345"), tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size, but element 1 has size 4 != 8"):
        _run(tf.decode_raw(_b(b"1234", b"12345678"), tf.int32))
    with pytest.raises(TypeError, match="out_type"):
        tf.decode_raw(_b(b"12"), tf.string)


def test_decode_raw_of_an_image_feature():
    image = np.arange(12, dtype=np.uint8).reshape(3, 4)
    d = tf.parse_single_example(_example(img=[image.tobytes()]),
                                {"img": tf.FixedLenFeature([], tf.string)})
    pixels = tf.reshape(tf.decode_raw(d["img"], tf.uint8), [3, 4])
    np.testing.assert_array_equal(_run(pixels), image)
