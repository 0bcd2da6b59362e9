"""String hash buckets equal TensorFlow's: `tf.string_to_hash_bucket_fast` (FarmHash Fingerprint64),
`tf.string_to_hash_bucket_strong` (keyed SipHash-2-4), the legacy `tf.string_to_hash_bucket`
(TensorFlow's Hash64) and hashed feature columns. The numbers were recorded from TensorFlow 2.21
(tf.compat.v1); with GRAPHFLOW_TF_PYTHON set, the same programs also run in TensorFlow."""

import pathlib
import sys

import numpy as np
import pytest

import graphflow as tf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tf_reference import run_in_tensorflow, tf_python  # noqa: E402


def strings_of_every_length():
    """Two strings of each length 0..200 (FarmHash branches at 16, 32 and 64 bytes), then a few."""
    out = ["".join(chr(97 + (i * 7 + j * 13) % 26) for j in range(n))
           for n in range(0, 201) for i in range(2)]
    return out + ["cat", "dog", "h\u00e9llo", "\x00\xff", "1", "-5", "12345"]


def hash_program(tf, np, strings):
    with tf.Session() as sess:
        fast, strong, legacy = sess.run([tf.string_to_hash_bucket_fast(strings, 2 ** 62),
                                         tf.string_to_hash_bucket_strong(strings, 2 ** 62,
                                                                         key=[1, 2]),
                                         tf.string_to_hash_bucket(strings, 2 ** 62)])
    return {"fast": fast, "strong": strong, "legacy": legacy}


def _xor(values):
    out = 0
    for v in values:
        out ^= int(v)
    return out


def test_hash_buckets_equal_tensorflows_on_strings_of_every_length():
    with tf.Graph().as_default():
        got = hash_program(tf, np, strings_of_every_length())
    # TensorFlow's buckets (mod 2**62) of the 409 strings, folded by XOR, and the last few as they are
    assert hex(_xor(got["fast"])) == "0x578eee56a262651"
    assert hex(_xor(got["strong"])) == "0x541b10074ed3905"
    assert hex(_xor(got["legacy"])) == "0xd4c11bc7de2dfb2"
    assert got["fast"][-7:].tolist() == [1283407398697799384, 3022853038965250400,
                                         3262255192197256439, 266199859724201575,
                                         80785766752259041, 3867527841621742104,
                                         2715825699093921016]


def test_hash_bucket_examples():
    strings = ["cat", "dog", "", "a" * 17, "graphflow", "x" * 33, "y" * 65,
               "hello world, this is a longer string!!"]
    with tf.Session() as sess:
        fast, strong, legacy, small = sess.run([
            tf.string_to_hash_bucket_fast(strings, 1000),
            tf.strings.to_hash_bucket_strong(strings, 1000, key=[7, 11]),
            tf.string_to_hash_bucket(strings, 1000),
            tf.string_to_hash_bucket_fast(["cat", "dog"], 100)])
    assert small.tolist() == [96, 12]
    assert fast.tolist() == [96, 112, 263, 131, 668, 935, 76, 688]
    assert strong.tolist() == [716, 362, 847, 500, 224, 208, 329, 81]
    assert legacy.tolist() == [335, 335, 899, 477, 841, 628, 746, 803]


def test_strong_hash_needs_a_key_of_two():
    with pytest.raises(ValueError, match="two elements"):
        tf.string_to_hash_bucket_strong(["a"], 10, key=[1])


def test_hashed_feature_columns_give_tensorflows_ids():
    fc = tf.feature_column
    features = {"s": tf.constant([["cat"], ["dog"], ["mouse"]]),
                "i": tf.constant([[3], [-7], [123456]], tf.int64)}
    strings = fc.categorical_column_with_hash_bucket("s", 50)
    ints = fc.categorical_column_with_hash_bucket("i", 50, dtype=tf.int64)
    with tf.Session() as sess:
        s_ids, i_ids = sess.run([strings._ids(features), ints._ids(features)])
    assert s_ids.ravel().tolist() == [46, 12, 6]  # TensorFlow's ids
    assert i_ids.ravel().tolist() == [21, 12, 48]  # integers hashed through their decimal text


@pytest.mark.skipif(tf_python() is None, reason="TensorFlow is not installed (set "
                                                "GRAPHFLOW_TF_PYTHON to compare with it)")
def test_hash_buckets_against_tensorflow_live():
    strings = strings_of_every_length()
    want = run_in_tensorflow([("h", hash_program, {"strings": strings})])["h"]
    with tf.Graph().as_default():
        got = hash_program(tf, np, strings)
    for name in ("fast", "strong", "legacy"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
