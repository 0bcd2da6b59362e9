"""Dtype names as TF1 spells them (`as_dtype` follows TF's table, not numpy's) and the `tf.string`
representation (object arrays of bytes)."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.framework import dtypes


@pytest.mark.parametrize("name, want", [
    ("float", tf.float32), ("double", tf.float64), ("half", tf.float16), ("float32", tf.float32),
    ("float64", tf.float64), ("float16", tf.float16), ("int8", tf.int8), ("int16", tf.int16),
    ("int32", tf.int32), ("int64", tf.int64), ("uint8", tf.uint8), ("uint16", tf.uint16),
    ("uint32", tf.uint32), ("uint64", tf.uint64), ("bool", tf.bool), ("string", tf.string),
    ("complex64", tf.complex64), ("complex128", tf.complex128), ("float_ref", tf.float32),
])
def test_tf_dtype_names(name, want):
    assert tf.as_dtype(name) is want
    assert want == name


@pytest.mark.parametrize("value, want", [
    (np.float32, tf.float32), (np.dtype("float64"), tf.float64), (np.int64, tf.int64),
    (np.bool_, tf.bool), (np.str_, tf.string), (np.bytes_, tf.string), (np.object_, tf.string),
    (np.dtype("U5"), tf.string), (np.complex64, tf.complex64), (float, tf.float32),
    (bool, tf.bool), (object, tf.string), (tf.float64, tf.float64),
])
def test_numpy_and_python_types(value, want):
    assert tf.as_dtype(value) is want


def test_equality_with_names_and_numpy():
    assert tf.float32 == "float" and tf.float64 == "double" and tf.float16 == "half"
    assert tf.float32 != "double" and tf.float32 != "float64"
    assert tf.float32 == np.float32 and tf.string == "string"
    assert not (tf.float32 == "nonsense") and not (tf.float32 == 3)


def test_unknown_names_fail_clearly():
    with pytest.raises(TypeError, match="graphflow does not know the dtype name 'flaot'"):
        tf.as_dtype("flaot")
    with pytest.raises(TypeError, match="does not support the dtype"):
        tf.as_dtype(dict)
    with pytest.raises(TypeError, match="does not support the dtype"):
        tf.as_dtype(np.dtype("datetime64[s]"))


def test_placeholder_float_is_float32_and_matmul_with_float32_variable_works():
    x = tf.placeholder("float", [None, 2])
    w = tf.Variable(tf.ones([2, 1]))
    assert x.dtype == tf.float32
    y = tf.matmul(x, w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {x: [[1.0, 2.0]]})
    assert out.dtype == np.float32 and out.tolist() == [[3.0]]


@pytest.mark.parametrize("make, want", [
    (lambda: tf.zeros([2], dtype="float"), tf.float32), (lambda: tf.ones([2], "double"), tf.float64),
    (lambda: tf.cast(tf.constant([1, 2]), "float"), tf.float32),
    (lambda: tf.constant([1, 2], dtype="float"), tf.float32),
    (lambda: tf.random_normal([2], dtype="float"), tf.float32),
    (lambda: tf.get_variable("v", [2], dtype="double"), tf.float64),
    (lambda: tf.Variable(tf.zeros([2], "half"), dtype="half"), tf.float16),
    (lambda: tf.placeholder("half"), tf.float16),
    (lambda: tf.one_hot([1, 2], 3, dtype="float"), tf.float32),
    (lambda: tf.zeros_like(tf.constant([1]), dtype="double"), tf.float64),
    (lambda: tf.range(3, dtype="float"), tf.float32),
    (lambda: tf.shape(tf.zeros([2]), out_type="int64"), tf.int64),
    (lambda: tf.argmax(tf.zeros([2, 2]), 1, output_type="int32"), tf.int32),
    (lambda: tf.convert_to_tensor([1.0], dtype="float"), tf.float32),
])
def test_apis_taking_a_dtype_accept_tf_names(make, want):
    assert make().dtype is want


def test_string_dtype_properties():
    assert tf.string.as_numpy_dtype is np.object_ or tf.string.as_numpy_dtype == np.dtype(object)
    assert not tf.string.is_numeric and not tf.string.is_floating and tf.string.size == 0
    assert tf.complex64.is_complex and tf.complex64.real_dtype is tf.float32


def test_string_array_encodes_text_as_utf8_bytes():
    arr = dtypes.string_array([["a", b"b"], ["h\u00e9", b"\xff"]])
    assert arr.dtype == object and arr.shape == (2, 2)
    assert arr.tolist() == [[b"a", b"b"], [b"h\xc3\xa9", b"\xff"]]
    assert dtypes.string_array("x").shape == () and dtypes.string_array("x")[()] == b"x"
    assert dtypes.string_array(np.array(["ab", "c"])).tolist() == [b"ab", b"c"]
    assert dtypes.string_array(np.array([b"ab", b"c"])).tolist() == [b"ab", b"c"]
    with pytest.raises(TypeError, match="must hold str or bytes, found int"):
        dtypes.string_array(["a", 3])
