"""Cases for the string ops (join, split, length, as_string, to_number); expected values are what
TF 1.x/2.x `tf.compat.v1` returns for the same inputs."""


import numpy as np

import graphflow as tf
from graphflow.ops.string_ops import hash_cross
from tests.op_cases import OpCase


def _b(*items):
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def _split(sparse):
    return sparse.indices, sparse.values, sparse.dense_shape


CASES = [
    OpCase("StringJoin", lambda a, b: tf.strings.join([a, "+", b], separator="-"),
           [np.array(["a", "bc"]), np.array(["x", "y"])], lambda a, b: _b(b"a-+-x", b"bc-+-y"),
           grad=False),
    OpCase("StringSplit", lambda s: _split(tf.string_split(s, " ")),
           [np.array(["a b  c", "d", ""])],
           lambda s: (np.array([[0, 0], [0, 1], [0, 2], [1, 0]]), _b(b"a", b"b", b"c", b"d"),
                      np.array([3, 3])), grad=False),
    OpCase("StringSplit", lambda s: _split(tf.string_split(s, ",;", skip_empty=False)),
           [np.array(["a,b;;c"])],
           lambda s: (np.array([[0, 0], [0, 1], [0, 2], [0, 3]]), _b(b"a", b"b", b"", b"c"),
                      np.array([1, 4])), grad=False, name="StringSplit[chars,keep_empty]"),
    OpCase("StringSplit", lambda s: _split(tf.string_split(s, "")), [np.array(["hey"])],
           lambda s: (np.array([[0, 0], [0, 1], [0, 2]]), _b(b"h", b"e", b"y"), np.array([1, 3])),
           grad=False, name="StringSplit[bytes]"),
    OpCase("StringSplitV2", lambda s: _split(tf.strings.split(s, sep=",", maxsplit=1)),
           [np.array(["a,,b,c", ""])],
           lambda s: (np.array([[0, 0], [0, 1], [1, 0]]), _b(b"a", b",b,c", b""), np.array([2, 2])),
           grad=False),
    OpCase("StringSplitV2", lambda s: _split(tf.strings.split(s)), [np.array(["a  b c", " x "])],
           lambda s: (np.array([[0, 0], [0, 1], [0, 2], [1, 0]]), _b(b"a", b"b", b"c", b"x"),
                      np.array([2, 3])), grad=False, name="StringSplitV2[whitespace]"),
    # buckets recorded from TensorFlow 2.21 (tf.compat.v1): FarmHash Fingerprint64, SipHash-2-4,
    # TensorFlow's Hash64
    OpCase("StringToHashBucketFast", lambda s: tf.string_to_hash_bucket_fast(s, 7),
           [np.array([["a", "bc"], ["", "a"]])], lambda s: np.array([[5, 6], [6, 5]]), grad=False),
    OpCase("StringToHashBucketStrong", lambda s: tf.string_to_hash_bucket_strong(s, 7, key=[1, 2]),
           [np.array([["a", "bc"], ["", "a"]])], lambda s: np.array([[1, 0], [5, 1]]), grad=False),
    OpCase("StringToHashBucket", lambda s: tf.string_to_hash_bucket(s, 7),
           [np.array([["a", "bc"], ["", "a"]])], lambda s: np.array([[4, 3], [3, 4]]), grad=False),
    # feature crosses: TensorFlow 2.21's sparse_cross_hashed buckets (hash_key 0xDECAFCAFFE)
    OpCase("HashCross", lambda a, n: hash_cross([a, n], 1000),
           [np.array([["x"], ["y"]]), np.array([[1, 2], [-1, 7]], np.int64)],
           lambda a, n: np.array([[727, 374], [306, 276]]), grad=False),
    OpCase("StringLength", tf.strings.length, [np.array([["h\u00e9llo", ""]])],
           lambda s: np.array([[6, 0]], np.int32), grad=False),
    OpCase("StringLength", lambda s: tf.strings.length(s, unit="UTF8_CHAR"),
           [np.array(["h\u00e9llo"])], lambda s: np.array([5], np.int32), grad=False,
           name="StringLength[utf8]"),
    OpCase("AsString", tf.as_string, [np.array([1.5, 2.0, 1.5e10], np.float32)],
           lambda x: _b(b"1.500000", b"2.000000", b"15000000512.000000"), grad=False),
    OpCase("AsString", lambda x: tf.as_string(x, width=8, precision=1, fill="0"),
           [np.array([-3.25])], lambda x: _b(b"-00003.2"), grad=False, name="AsString[width]"),
    OpCase("AsString", lambda x: tf.as_string(x, scientific=True), [np.array([1.5], np.float32)],
           lambda x: _b(b"1.500000e+00"), grad=False, name="AsString[scientific]"),
    OpCase("AsString", lambda x: tf.as_string(x, width=4, fill="0"), [np.array([3, -12], np.int32)],
           lambda x: _b(b"0003", b"-012"), grad=False, name="AsString[int]"),
    OpCase("AsString", tf.as_string, [np.array([True, False])], lambda x: _b(b"true", b"false"),
           grad=False, name="AsString[bool]"),
    OpCase("StringToNumber", tf.strings.to_number, [np.array([" 1.5", "1e3", "0x10", "-inf"])],
           lambda s: np.array([1.5, 1000.0, 16.0, -np.inf], np.float32), grad=False),
    OpCase("StringToNumber", lambda s: tf.strings.to_number(s, out_type=tf.int64),
           [np.array([" 12", "-7"])], lambda s: np.array([12, -7], np.int64), grad=False,
           name="StringToNumber[int64]"),
]


def _matrix(rows):
    out = np.empty((len(rows), len(rows[0])), dtype=object)
    out[:] = rows
    return out


CASES += [
    OpCase("StringLower", tf.strings.lower,
           [_b("MonDAY \u00c9t\u00c9 7!".encode(), b"")],
           lambda s: _b("monday \u00c9t\u00c9 7!".encode(), b""), grad=False,
           name="StringLower[ascii only]"),
    OpCase("StringLower", lambda s: tf.strings.lower(s, encoding="utf-8"),
           [_matrix([["\u00c9T\u00c9".encode(), b"ABC"]])],
           lambda s: _matrix([["\u00e9t\u00e9".encode(), b"abc"]]), grad=False,
           name="StringLower[utf-8]"),
    OpCase("StringUpper", tf.strings.upper, [_b(b"tuesday", "\u00e9a".encode())],
           lambda s: _b(b"TUESDAY", "\u00e9A".encode()), grad=False),
    OpCase("StringUpper", lambda s: tf.strings.upper(s, encoding="utf-8"),
           [_b("\u00e9a".encode())], lambda s: _b("\u00c9A".encode()), grad=False,
           name="StringUpper[utf-8]"),
    OpCase("StaticRegexFullMatch", lambda s: tf.strings.regex_full_match(s, "(?i)mon(day)?"),
           [_matrix([[b"Monday", b"mon", b"monday!"]])],
           lambda s: np.array([[True, True, False]]), grad=False),
    OpCase("RegexFullMatch", tf.strings.regex_full_match,
           [_b(b"a1", b"b22", b"c"), np.array(b"[a-z][0-9]+", dtype=object)],
           lambda s, p: np.array([True, True, False]), grad=False),
]
