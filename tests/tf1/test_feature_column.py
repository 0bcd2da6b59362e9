"""tf.feature_column: each column kind's input_layer block against numpy, TF1's column order
(sorted by name), linear_model's weighted sum, and the argument checks."""

import numpy as np
import pytest

import graphflow as tf

fc = tf.feature_column


def _run(fetch, init=True):
    with tf.Session() as session:
        if init:
            session.run(tf.global_variables_initializer())
        return session.run(fetch)


def _input(features, columns):
    with tf.Graph().as_default():
        return _run(fc.input_layer(features, columns))


def test_numeric_column_shape_dtype_and_normalizer():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    out = _input({"x": x}, [fc.numeric_column("x", shape=2, normalizer_fn=lambda t: t * 2.0 - 1)])
    np.testing.assert_allclose(out, x * 2.0 - 1)
    assert out.dtype == np.float32
    img = np.arange(12, dtype=np.float64).reshape(3, 2, 2)
    np.testing.assert_allclose(_input({"img": img}, [fc.numeric_column("img", shape=(2, 2))]),
                               img.reshape(3, 4))


def test_bucketized_column_is_one_hot_per_value():
    x = np.array([[-1.0, 0.0], [0.5, 2.0], [3.0, 10.0]], np.float32)
    boundaries = [0.0, 1.0, 3.0]
    out = _input({"x": x}, [fc.bucketized_column(fc.numeric_column("x", shape=2), boundaries)])
    buckets = np.searchsorted(boundaries, x, side="right")
    expected = np.eye(4, dtype=np.float32)[buckets].reshape(3, 8)
    np.testing.assert_array_equal(out, expected)


def test_vocabulary_list_indicator_with_oov_default_and_missing():
    words = np.array([["a", "c"], ["b", "zz"], ["", "a"]])
    col = fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c"])
    out = _input({"w": words}, [fc.indicator_column(col)])
    # 'zz' is out of vocabulary (default -1) and '' is absent: both contribute nothing
    np.testing.assert_array_equal(out, [[1, 0, 1], [0, 1, 0], [1, 0, 0]])
    oov = fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c"], num_oov_buckets=2)
    out = _input({"w": words}, [fc.indicator_column(oov)])
    assert out.shape == (3, 5) and out[1, 3:].sum() == 1 and out[1, 1] == 1
    ints = fc.categorical_column_with_vocabulary_list("n", [10, 20, 30], default_value=0)
    out = _input({"n": np.array([30, 99, 20])}, [fc.indicator_column(ints)])
    np.testing.assert_array_equal(out, [[0, 0, 1], [1, 0, 0], [0, 1, 0]])


def test_identity_and_hash_bucket_columns():
    ids = np.array([[0, 3], [2, 2], [7, -1]])
    out = _input({"i": ids}, [fc.indicator_column(fc.categorical_column_with_identity("i", 4))])
    np.testing.assert_array_equal(out, [[1, 0, 0, 1], [0, 0, 2, 0], [0, 0, 0, 0]])
    out = _input({"i": ids}, [fc.indicator_column(
        fc.categorical_column_with_identity("i", 4, default_value=1))])
    np.testing.assert_array_equal(out[2], [0, 1, 0, 0])
    names = np.array(["x", "y", "x", ""])
    out = _input({"h": names}, [fc.indicator_column(fc.categorical_column_with_hash_bucket("h", 7))])
    assert out.shape == (4, 7)
    np.testing.assert_array_equal(out.sum(1), [1, 1, 1, 0])
    np.testing.assert_array_equal(out[0], out[2])


def test_embedding_column_combiners_against_numpy():
    ids = np.array([[0, 2], [1, -1], [-1, -1]])
    col = fc.categorical_column_with_identity("i", 3)
    for combiner in ("mean", "sum", "sqrtn"):
        with tf.Graph().as_default():
            out = fc.input_layer({"i": ids}, [fc.embedding_column(col, 4, combiner=combiner)])
            (table,) = tf.global_variables()
            assert table.name == "input_layer/i_embedding/embedding_weights:0"
            got, w = _run([out, table])
        sums = np.stack([w[0] + w[2], w[1], np.zeros(4)])
        counts = np.array([2.0, 1.0, 0.0])[:, None]
        expected = {"sum": sums, "mean": sums / np.maximum(counts, 1),
                    "sqrtn": sums / np.maximum(np.sqrt(counts), 1)}[combiner]
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_crossed_column_hashes_each_combination():
    features = {"a": np.array([["x"], ["x"], ["y"]]), "b": np.array([[1, 2], [2, 1], [1, -1]])}
    out = _input(features, [fc.indicator_column(fc.crossed_column(["a", "b"], 50))])
    np.testing.assert_array_equal(out.sum(1), [2, 2, 2])  # a dense -1 is crossed, as in TF
    np.testing.assert_array_equal(out[0], out[1])  # the same pairs in another order
    assert not np.array_equal(out[0], out[2])


def test_input_layer_orders_columns_by_name():
    features = {"b": np.array([[1.0], [2.0]]), "a": np.array([[10.0, 20.0], [30.0, 40.0]])}
    out = _input(features, [fc.numeric_column("b"), fc.numeric_column("a", shape=2)])
    np.testing.assert_array_equal(out, [[10, 20, 1], [30, 40, 2]])


def test_linear_model_is_a_weighted_sum_of_every_column():
    features = {"x": np.array([[1.0], [2.0]], np.float32), "c": np.array(["a", "b"])}
    columns = [fc.numeric_column("x"), fc.categorical_column_with_vocabulary_list("c", ["a", "b"])]
    with tf.Graph().as_default():
        out = fc.linear_model(features, columns, units=2)
        names = sorted(v.name for v in tf.global_variables())
        assert names == ["linear_model/bias_weights:0", "linear_model/c/weights:0",
                         "linear_model/x/weights:0"]
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            for name, value in (("x", [[2.0, -1.0]]), ("c", [[0.5, 0.0], [0.0, 3.0]])):
                session.run(variables[f"linear_model/{name}/weights:0"].assign(value))
            session.run(variables["linear_model/bias_weights:0"].assign([1.0, 1.0]))
            got = session.run(out)
    np.testing.assert_allclose(got, [[1 * 2 + 0.5 + 1, -1 + 0 + 1], [2 * 2 + 0 + 1, -2 + 3 + 1]])


def test_argument_errors():
    with pytest.raises(ValueError, match="sorted"):
        fc.bucketized_column(fc.numeric_column("x"), [2.0, 1.0])
    with pytest.raises(ValueError, match="numeric_column"):
        fc.bucketized_column("x", [1.0])
    with pytest.raises(ValueError, match="Duplicate"):
        fc.categorical_column_with_vocabulary_list("w", ["a", "a"])
    col = fc.categorical_column_with_identity("i", 3)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="_DenseColumn"):
            fc.input_layer({"i": np.array([1])}, [col])
        with pytest.raises(ValueError, match="not in features"):
            fc.input_layer({"j": np.array([1.0])}, [fc.numeric_column("i")])


def test_vocabulary_file_and_sparse_inputs(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("cat\ndog\nbird\n")
    col = fc.categorical_column_with_vocabulary_file("pet", str(path), vocabulary_size=2)
    assert col.num_buckets == 2
    with tf.Graph().as_default():
        sparse = tf.SparseTensor(indices=[[0, 0], [1, 1], [2, 0]],
                                 values=["dog", "cat", "bird"], dense_shape=[3, 2])
        out = _run(fc.input_layer({"pet": sparse}, [fc.indicator_column(col)]))
    np.testing.assert_array_equal(out, [[0, 1], [1, 0], [0, 0]])


def test_make_parse_example_spec_feeds_parse_example():
    age = fc.numeric_column("age", default_value=30.0)
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "blue"])
    columns = [fc.bucketized_column(age, [40.0]), fc.indicator_column(color), age]
    spec = fc.make_parse_example_spec(columns)
    assert set(spec) == {"age", "color"}
    assert isinstance(spec["age"], tf.FixedLenFeature)
    assert isinstance(spec["color"], tf.VarLenFeature)
    examples = [tf.train.Example(features=tf.train.Features(feature={
        "age": tf.train.Feature(float_list=tf.train.FloatList(value=[a])),
        "color": tf.train.Feature(bytes_list=tf.train.BytesList(value=c))}))
        for a, c in ((25.0, [b"blue"]), (50.0, [b"red", b"blue"]))]
    with tf.Graph().as_default():
        parsed = tf.parse_example([e.SerializeToString() for e in examples], spec)
        out = _run(fc.input_layer(parsed, columns))
    np.testing.assert_array_equal(out, [[25, 1, 0, 0, 1], [50, 0, 1, 1, 1]])


def test_weighted_categorical_column_in_indicator_embedding_and_linear_model():
    features = {"w": np.array([["a", "b"], ["b", ""]]),
                "f": np.array([[2.0, 0.5], [3.0, 9.0]], np.float32)}
    weighted = fc.weighted_categorical_column(
        fc.categorical_column_with_vocabulary_list("w", ["a", "b"]), "f")
    np.testing.assert_allclose(_input(features, [fc.indicator_column(weighted)]),
                               [[2.0, 0.5], [0.0, 3.0]])
    table = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    for combiner, expected in (("sum", [[2, 0.5], [0, 3]]),
                               ("mean", [[2 / 2.5, 0.5 / 2.5], [0, 1]]),
                               ("sqrtn", [[2 / np.sqrt(4.25), 0.5 / np.sqrt(4.25)], [0, 1]])):
        column = fc.embedding_column(weighted, 2, combiner=combiner,
                                     initializer=tf.constant_initializer(table))
        np.testing.assert_allclose(_input(features, [column]), expected, rtol=1e-6)
    with tf.Graph().as_default():
        out = fc.linear_model(features, [weighted])
        (weights,) = [v for v in tf.global_variables() if v.name.endswith("/weights:0")]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(weights.assign([[1.0], [10.0]]))
            np.testing.assert_allclose(session.run(out), [[2 + 5.0], [30.0]])


def _cross_ids(features, column):
    with tf.Graph().as_default():
        features = features() if callable(features) else features
        return _run(column._ids(features), init=False)


def test_crossed_column_gives_tensorflows_buckets():
    """Bucket ids TensorFlow 2.21 (tf.compat.v1 feature_column_v2, get_sparse_tensors) gave for the
    same features: FingerprintCat64 crosses, hash_key 0xDECAFCAFFE unless given."""
    strings = {"a": np.array([["x"], ["x"], ["y"], [""]]),
               "b": np.array([["p", "q"], ["q", "p"], ["p", ""], ["p", "q"]])}
    np.testing.assert_array_equal(_cross_ids(strings, fc.crossed_column(["a", "b"], 1000)),
                                  [[452, 216], [216, 452], [734, 515], [838, 679]])
    ints = {"a": np.array([["x"], ["y"]]), "n": np.array([[1, 2], [-1, 7]])}
    np.testing.assert_array_equal(_cross_ids(ints, fc.crossed_column(["a", "n"], 1000)),
                                  [[727, 374], [306, 276]])
    three = {"a": np.array([["x"], ["y"]]), "b": np.array([["p"], ["q"]]),
             "c": np.array([["u", "v"], ["w", "w"]])}
    np.testing.assert_array_equal(_cross_ids(three, fc.crossed_column(["a", "b", "c"], 100000)),
                                  [[24281, 29121], [43996, 43996]])
    np.testing.assert_array_equal(
        _cross_ids(three, fc.crossed_column([fc.crossed_column(["a", "b"], 50), "c"], 1000)),
        [[281, 121], [996, 996]])
    np.testing.assert_array_equal(
        _cross_ids(three, fc.crossed_column(["a", "b"], 100000, hash_key=123)), [[54124], [39716]])
    # categorical columns cross their ids, before the dense features; absent ids are left out
    vocab = fc.categorical_column_with_vocabulary_list("b", ["p", "q"])
    got = _cross_ids(strings, fc.crossed_column(["a", vocab], 1000))
    np.testing.assert_array_equal(got, [[43, 859], [859, 43], [411, -1], [158, 619]])
    ident = fc.categorical_column_with_identity("n", 10)
    np.testing.assert_array_equal(_cross_ids(ints, fc.crossed_column([ident, "a"], 1000)),
                                  [[859, 569], [-1, 882]])
    # a SparseTensor feature crosses its present values only, and comes first
    def sparse():
        return {"a": tf.SparseTensor([[0, 0], [1, 1]], np.array(["x", "y"]), [2, 2]),
                "b": np.array([["p"], ["q"]])}
    np.testing.assert_array_equal(_cross_ids(sparse, fc.crossed_column(["b", "a"], 1000)),
                                  [[452, -1], [-1, 692]])
    indicator = _input(strings, [fc.indicator_column(fc.crossed_column(["a", "b"], 7))])
    np.testing.assert_array_equal(indicator, [[0, 1, 0, 1, 0, 0, 0], [0, 1, 0, 1, 0, 0, 0],
                                              [0, 1, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0, 1]])
    with pytest.raises(ValueError, match="not supported for crossing"):
        fc.crossed_column([fc.categorical_column_with_hash_bucket("a", 10), "n"], 10)
