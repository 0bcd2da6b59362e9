"""graphflow.ops.csv_ops (tf.decode_csv): defaults, required columns, quoting, select_cols and
TF1's errors; and tf.data.TextLineDataset (tf1/data/readers.py) feeding it, as CSV input pipelines
of TF1 tutorials do."""

import gzip

import numpy as np
import pytest

import graphflow as tf


def _decode(lines, defaults, **kwargs):
    with tf.Session() as sess:
        return sess.run(tf.decode_csv(tf.constant(lines), defaults, **kwargs))


def test_defaults_fill_empty_fields_and_types_follow_the_defaults():
    ints, strings, floats, wide = _decode(["1,x,,5", ",y,2.25,"],
                                          [[7], ["z"], [0.5], np.array([9], np.int64)])
    np.testing.assert_array_equal(ints, [1, 7])
    assert ints.dtype == np.int32 and wide.dtype == np.int64 and floats.dtype == np.float32
    assert list(strings) == [b"x", b"y"] and list(floats) == [0.5, 2.25] and list(wide) == [5, 9]


def test_select_cols_tab_delimiter_and_unquoted_mode():
    a, c = _decode(['1\t"x"\t3'], [[0], [0]], field_delim="\t", select_cols=[0, 2])
    assert (a[0], c[0]) == (1, 3)
    (quoted,) = _decode(['"a"'], [[""]], use_quote_delim=False)
    assert quoted[0] == b'"a"'


@pytest.mark.parametrize("lines,defaults,message", [
    (["1,2"], [[0]], "Expect 1 fields but have 2 in record 0"),
    ([",2"], [[], [0]], "Field 0 is required but missing in record 0"),
    (["x"], [[0.0]], "Field 0 in record 0 is not a valid float32: x"),
])
def test_bad_records_are_tf1s_errors(lines, defaults, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        _decode(lines, defaults)


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_text_line_dataset_feeds_decode_csv(tmp_path, compression):
    text = b"a,b\r\n1,2.5\n3,4.5\n5,6.5"  # CRLF and a last line without a newline
    path = str(tmp_path / "data.csv")
    with (gzip.open if compression else open)(path, "wb") as f:
        f.write(text)
    files = tf.data.Dataset.from_tensor_slices([path, path])  # each file's header skipped
    dataset = files.flat_map(
        lambda name: tf.data.TextLineDataset(name, compression_type=compression).skip(1))
    dataset = dataset.map(lambda line: tuple(tf.decode_csv(line, [[0], [0.0]]))).batch(10)
    a, b = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got_a, got_b = sess.run([a, b])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(a)
    assert got_a.tolist() == [1, 3, 5, 1, 3, 5]
    assert got_b.tolist() == [2.5, 4.5, 6.5, 2.5, 4.5, 6.5]
    plain = tf.data.TextLineDataset(path, compression_type=compression).batch(5)
    with tf.Session() as sess:
        lines = sess.run(plain.make_one_shot_iterator().get_next())
    assert lines.tolist() == [b"a,b", b"1,2.5", b"3,4.5", b"5,6.5"]


def test_text_line_dataset_missing_file_is_not_found(tmp_path):
    lines = tf.data.TextLineDataset(str(tmp_path / "missing.csv")).make_one_shot_iterator()
    with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError):
        sess.run(lines.get_next())
