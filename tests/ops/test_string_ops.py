"""tf.string tensors: constants, placeholders fed with str/bytes, Session.run results as TF1 returns
them (bytes, object arrays of bytes), graph files, and the string ops (join, split, as_string, ...)."""

import zipfile

import numpy as np
import pytest

import graphflow as tf
from graphflow.fileformat import graph_format as fmt
from graphflow.fileformat.file_io import DEFAULT_LIMITS
from graphflow.framework.errors import GraphFormatError


def test_string_constants_and_fetches_are_bytes():
    scalar = tf.constant("h\u00e9llo")
    matrix = tf.constant([["a", "bc"], ["d", b"e"]])
    raw = tf.constant(b"\xff\x00")
    assert scalar.dtype == tf.string and matrix.shape.as_list() == [2, 2]
    with tf.Session() as sess:
        got_scalar, got_matrix, got_raw, ident = sess.run(
            [scalar, matrix, raw, tf.identity(scalar)])
    assert got_scalar == b"h\xc3\xa9llo" and type(got_scalar) is bytes
    assert got_matrix.dtype == object and got_matrix.tolist() == [[b"a", b"bc"], [b"d", b"e"]]
    assert got_raw == b"\xff\x00" and ident == got_scalar


def test_string_constant_with_dtype_and_shape():
    t = tf.constant("x", dtype=tf.string, shape=[2, 2])
    with tf.Session() as sess:
        assert sess.run(t).tolist() == [[b"x", b"x"], [b"x", b"x"]]
    with pytest.raises(TypeError):
        tf.constant("x", dtype=tf.float32)
    with pytest.raises(TypeError):
        tf.constant([1, 2], dtype=tf.string)


def test_string_placeholders_take_str_bytes_and_numpy_text():
    names = tf.placeholder(tf.string, [None], name="names")
    one = tf.placeholder("string", name="one")
    out = tf.identity(names)
    with tf.Session() as sess:
        assert sess.run(out, {names: ["x", b"y"]}).tolist() == [b"x", b"y"]
        assert sess.run(out, {names: np.array(["ab", "c"])}).tolist() == [b"ab", b"c"]
        assert sess.run(tf.identity(one), {one: "z"}) == b"z"
        with pytest.raises(ValueError, match="shape"):
            sess.run(out, {names: "scalar"})
        with pytest.raises(TypeError, match="names"):
            sess.run(out, {names: [1, 2]})


def test_strings_save_and_load_without_pickle(tmp_path):
    small = tf.constant(["a", "h\u00e9", b"\xff"], name="small")
    big = tf.constant([("w%d" % i) * (i % 5) for i in range(40)], name="big")
    fed = tf.placeholder(tf.string, [None], name="fed")
    joined = tf.identity(fed, name="joined")
    path = str(tmp_path / "strings.gfz")
    tf.save(path, inputs={"fed": fed}, outputs={"small": small, "big": big, "joined": joined})
    model = tf.load(path)
    out = model.run({"fed": ["q"]})
    assert out["small"].tolist() == [b"a", b"h\xc3\xa9", b"\xff"]
    assert out["big"].tolist() == [(b"w%d" % i) * (i % 5) for i in range(40)]
    assert out["joined"].tolist() == [b"q"]
    with zipfile.ZipFile(path) as zf:
        text = zf.read("graph.json").decode()
    assert '"values": ["a", "h\u00e9", {"base64": "/w=="}]' in text


def test_a_tampered_string_tensor_is_rejected():
    limits = DEFAULT_LIMITS
    spec = {"dtype": "string", "shape": [2], "data": "k"}
    tensors = {"k.bytes": np.frombuffer(b"abc", np.uint8), "k.lengths": np.array([1, 5])}
    with pytest.raises(GraphFormatError, match="inconsistent"):
        fmt.decode_tensor(spec, "t", tensors, limits)
    with pytest.raises(GraphFormatError, match="base64"):
        fmt.decode_tensor({"dtype": "string", "shape": [], "values": [3]}, "t", {}, limits)
    tensors["k.lengths"] = np.array([1, 2])
    assert fmt.decode_tensor(spec, "t", tensors, limits).tolist() == [b"a", b"bc"]


def test_string_split_gives_a_sparse_tensor_fetched_as_a_sparse_tensor_value():
    sparse = tf.string_split(tf.constant(["a b", "c"]))
    assert isinstance(sparse, tf.SparseTensor) and sparse.dtype == tf.string
    with tf.Session() as sess:
        value = sess.run(sparse)
        nested = sess.run({"s": sparse, "n": tf.constant(1)})
    assert isinstance(value, tf.SparseTensorValue)
    assert value.indices.tolist() == [[0, 0], [0, 1], [1, 0]]
    assert value.values.tolist() == [b"a", b"b", b"c"] and value.dense_shape.tolist() == [2, 2]
    assert nested["s"].values.tolist() == [b"a", b"b", b"c"] and nested["n"] == 1


def test_to_number_names_the_bad_string():
    numbers = tf.strings.to_number(tf.placeholder(tf.string, [None], name="text"))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert "
                                                                   "string: 1_0"):
            sess.run(numbers, {"text:0": ["3", "1_0"]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="12.0"):
            sess.run(tf.string_to_number(["12.0"], out_type=tf.int32))


def test_string_ops_reject_numbers_and_bad_arguments():
    with pytest.raises(TypeError, match="tf.strings.join inputs"):
        tf.strings.join([tf.constant([1.0])])
    with pytest.raises(ValueError, match="one shape"):
        tf.strings.join([tf.constant(["a", "b"]), tf.constant(["a", "b", "c"])])
    with pytest.raises(ValueError, match="vector"):
        tf.string_split(tf.constant([["a"]]))
    with pytest.raises(ValueError, match="RaggedTensor"):
        tf.strings.split(["a"], result_type="RaggedTensor")
    with pytest.raises(TypeError, match="out_type"):
        tf.strings.to_number(["1"], out_type=tf.string)
