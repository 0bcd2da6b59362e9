"""TFRecord files and Examples cross TensorFlow and graphflow: TensorFlow reads and parses the files
graphflow writes, graphflow reads and parses the files TensorFlow writes, and both get the same
values (plain, GZIP and ZLIB files; FixedLenFeature with defaults, VarLenFeature (also batched by
tf.data), FixedLenSequenceFeature, decode_raw). Skips without TensorFlow (set GRAPHFLOW_TF_PYTHON)."""

import numpy as np
import pytest

import graphflow
from tests.tf_reference import run_in_tensorflow, tf_python

COMPRESSIONS = ("", "GZIP", "ZLIB")


def write_examples(tf, np, path, compression):
    """Five Examples of every feature type (TF1 API), one optional feature in odd ones only."""
    options = tf.python_io.TFRecordOptions(compression) if compression else None
    with tf.python_io.TFRecordWriter(path, options) as writer:
        for i in range(5):
            feature = {
                "f": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, -i])),
                "n": tf.train.Feature(int64_list=tf.train.Int64List(value=[i, 2 ** 40 + i])),
                "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"x" * i])),
                "raw": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[np.arange(3, dtype=np.int32).tobytes()])),
                "v": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i)))),
                "w": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0] * (2 * i)))}
            if i % 2:
                feature["opt"] = tf.train.Feature(float_list=tf.train.FloatList(value=[i]))
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString(deterministic=True))
    return {}


def read_examples(tf, np, path, compression):
    """Parse a file through TFRecordDataset + parse_single_example and through parse_example."""
    def encoded(strings):
        return np.frombuffer(b"|".join(list(np.asarray(strings).reshape(-1))), np.uint8)

    dense = {"f": tf.FixedLenFeature([2], tf.float32), "n": tf.FixedLenFeature([2], tf.int64),
             "s": tf.FixedLenFeature([], tf.string), "raw": tf.FixedLenFeature([], tf.string),
             "opt": tf.FixedLenFeature([], tf.float32, default_value=-1.0)}

    def parse(serialized):
        d = tf.parse_single_example(serialized, dense)
        d["raw"] = tf.decode_raw(d["raw"], tf.int32)
        return d

    dataset = tf.data.TFRecordDataset(path, compression_type=compression).map(parse).batch(10)
    batch = dataset.make_one_shot_iterator().get_next()
    sparse = tf.data.TFRecordDataset(path, compression_type=compression).map(
        lambda s: tf.parse_single_example(s, {"v": tf.VarLenFeature(tf.int64)})["v"]).batch(3)
    sparse_batch = sparse.make_one_shot_iterator().get_next()
    options = tf.python_io.TFRecordOptions(compression) if compression else None
    records = list(tf.python_io.tf_record_iterator(path, options))
    parsed = tf.parse_example(tf.constant(records), dict(dense, v=tf.VarLenFeature(tf.int64), w=(
        tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=7.0))))
    with tf.Session() as sess:
        got, whole, var_len = sess.run([batch, parsed, sparse_batch])
    out = {"ds_" + k: v for k, v in got.items() if k != "s"}
    out.update({"pe_" + k: v for k, v in whole.items() if k not in ("s", "raw", "v")})
    out.update(ds_s=encoded(got["s"]), pe_s=encoded(whole["s"]), pe_raw=encoded(whole["raw"]),
               records=encoded(records),
               v_indices=whole["v"].indices, v_values=whole["v"].values,
               v_shape=whole["v"].dense_shape, ds_v_indices=var_len.indices,
               ds_v_values=var_len.values, ds_v_shape=var_len.dense_shape)
    return out


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    folder = tmp_path_factory.mktemp("records")
    calls = []
    for c in COMPRESSIONS:
        ours, theirs = str(folder / f"graphflow{c}.tfrecord"), str(folder / f"tf{c}.tfrecord")
        write_examples(graphflow, np, ours, c)
        calls += [(f"read{c}", read_examples, {"path": ours, "compression": c}),
                  (f"write{c}", write_examples, {"path": theirs, "compression": c})]
    results = run_in_tensorflow(calls)
    return folder, results


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_tensorflow_reads_graphflows_file_and_graphflow_reads_tensorflows(exchange, compression):
    folder, results = exchange
    tf_read_ours = results[f"read{compression}"]
    ours = read_examples(graphflow, np, str(folder / f"graphflow{compression}.tfrecord"),
                         compression)
    theirs = read_examples(graphflow, np, str(folder / f"tf{compression}.tfrecord"), compression)
    assert sorted(tf_read_ours) == sorted(ours) == sorted(theirs)
    for key in ours:
        for got in (ours[key], theirs[key]):
            np.testing.assert_array_equal(np.asarray(got), tf_read_ours[key], err_msg=key)
            assert np.asarray(got).dtype == tf_read_ours[key].dtype, key
    np.testing.assert_array_equal(ours["pe_opt"], [-1, 1, -1, 3, -1])


def test_uncompressed_files_are_identical(exchange):
    folder, _ = exchange
    assert (folder / "graphflow.tfrecord").read_bytes() == (folder / "tf.tfrecord").read_bytes()
