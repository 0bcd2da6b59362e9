"""The typed JSON encoding of attr values and tensors: exact round trips for every supported type
(list vs tuple, non-finite floats, numpy scalars, DTypes, TensorShapes, nested dicts), inline vs
stored tensors, and bit-exact inline floats for arbitrary bit patterns (property-based)."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphflow as tf
from graphflow.fileformat import file_io
from graphflow.fileformat import graph_format as fmt
from graphflow.framework.errors import GraphFormatError
from graphflow.framework.tensor_shape import TensorShape

LIMITS = file_io.DEFAULT_LIMITS


def _round_trip(value):
    arrays = {}
    encoded = fmt.encode_value(value, "k", arrays)
    text = json.dumps(encoded, allow_nan=False)  # always strict JSON
    stored = {k: np.asarray(v) for k, v in arrays.items()}
    return fmt.decode_value(json.loads(text), "attr", stored, LIMITS), encoded, arrays


def _same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b)
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


@pytest.mark.parametrize("value", [
    None, True, False, 0, -7, 2 ** 70, 0.25, -0.0, 1e300, float("inf"), float("-inf"),
    float("nan"), "SAME", "", [1, 2], (1, 2), [], (), [None, 3], (None, (1, [2.5, "a"])),
    {"a": 1, "b": [True]}, tf.float32, tf.int64, TensorShape([None, 3]), TensorShape(None),
    np.float32(0.1), np.int64(-3), np.bool_(True),
    np.arange(6, dtype=np.int32).reshape(2, 3), np.array([], np.float64).reshape(0, 4),
    np.array(True), np.array([1.5, -0.0, np.inf, -np.inf], np.float16),
], ids=repr)
def test_values_round_trip_exactly(value):
    decoded, _, _ = _round_trip(value)
    _same(decoded, value)


def test_small_tensors_inline_and_readable_large_or_nan_ones_stored():
    _, encoded, arrays = _round_trip(np.array([0.1, 0.2], np.float32))
    assert encoded == {"tensor": {"dtype": "float32", "shape": [2], "values": [0.1, 0.2]}}
    assert not arrays
    _, encoded, _ = _round_trip(np.array(np.inf, np.float64))
    assert encoded["tensor"]["values"] == ["inf"]
    big = np.arange(17, dtype=np.int8)
    decoded, encoded, arrays = _round_trip(big)
    assert encoded == {"tensor": {"dtype": "int8", "shape": [17], "data": "k"}}
    assert arrays["k"] is not None
    nan = np.array([1.0, np.nan])
    _, encoded, arrays = _round_trip(nan)
    assert "data" in encoded["tensor"] and arrays["k"].tobytes() == nan.tobytes()


def test_lists_and_tuples_stay_distinct():
    assert fmt.encode_value([1, (2,)], "k", {}) == {"list": [1, {"tuple": [2]}]}


def test_unsupported_values_are_refused_at_save_time():
    with pytest.raises(TypeError, match="type set cannot be saved"):
        fmt.encode_value({1, 2}, "k", {})
    with pytest.raises(TypeError, match="does not support the dtype"):
        fmt.encode_value(np.zeros(2, "datetime64[s]"), "k", {})
    with pytest.raises(TypeError, match="type builtin_function_or_method cannot"):
        fmt.encode_value([len], "k", {})


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from([np.float16, np.float32, np.float64]),
       st.lists(st.integers(0, 2 ** 64 - 1), min_size=1, max_size=16))
def test_inline_floats_are_bit_exact_for_any_bit_pattern(dtype, patterns):
    bits = np.dtype(dtype).itemsize * 8
    raw = np.array([p % (1 << bits) for p in patterns], dtype=f"u{bits // 8}")
    array = raw.view(dtype)
    decoded, encoded, arrays = _round_trip(array)
    if np.isnan(array).any():
        assert "data" in encoded["tensor"]  # NaN payloads are kept in the binary store
    else:
        assert "values" in encoded["tensor"] and not arrays
    assert decoded.tobytes() == array.tobytes()


@pytest.mark.parametrize("doc, message", [
    ({"tuple": [1], "list": [2]}, "one-key tagged object"),
    ([1, 2], "one-key tagged object"),
    ({"shape": [-1]}, "invalid dimension -1"),
    ({"shape": [True]}, "invalid dimension True"),
    ({"dtype": "complex32"}, "unknown dtype"),
    ({"scalar": {"dtype": "int32", "shape": [1], "values": [1]}}, "scalar must have shape"),
    ({"tensor": {"dtype": "int32", "shape": [None], "values": []}}, "must be fully known"),
    ({"tensor": {"dtype": "int32", "shape": [1], "values": [1], "data": "k"}}, "one of"),
    ({"tensor": {"dtype": "bool", "shape": [1], "values": [1]}}, "bool tensor holds 1"),
    ({"tensor": {"dtype": "float64", "shape": [1], "values": ["nan"]}}, "holds the string"),
    ({"dict": [1]}, "expected dict"),
])
def test_bad_values_are_rejected(doc, message):
    with pytest.raises(GraphFormatError, match=message):
        fmt.decode_value(doc, "attr", {}, LIMITS)
