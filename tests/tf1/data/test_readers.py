"""tf.data.TFRecordDataset: records in file order, several files, compressed files, filenames fed
at run time, corrupt files failing get_next, and a whole TF1-style pipeline that trains a model."""

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.data.conftest import run_to_end


def _write(path, records, options=None):
    with tf.python_io.TFRecordWriter(str(path), options) as writer:
        for r in records:
            writer.write(r)
    return str(path)


def test_records_in_order(tmp_path, elements):
    path = _write(tmp_path / "a", [b"x", b"", b"yz"])
    ds = tf.data.TFRecordDataset(path)
    assert ds.output_types == tf.string and ds.output_shapes.as_list() == []
    assert elements(ds) == [b"x", b"", b"yz"]


def test_several_files_and_parallel_reads(tmp_path, elements):
    a = _write(tmp_path / "a", [b"a0", b"a1", b"a2"])
    b = _write(tmp_path / "b", [b"b0"])
    c = _write(tmp_path / "c", [b"c0", b"c1"])
    assert elements(tf.data.TFRecordDataset([a, b, c])) == [b"a0", b"a1", b"a2", b"b0", b"c0", b"c1"]
    assert elements(tf.data.TFRecordDataset([a, b, c], num_parallel_reads=2)) == [
        b"a0", b"b0", b"a1", b"a2", b"c0", b"c1"]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_files(tmp_path, elements, compression):
    path = _write(tmp_path / "g", [b"r%d" % i for i in range(100)], compression)
    got = elements(tf.data.TFRecordDataset(path, compression_type=compression, buffer_size=1024))
    assert got == [b"r%d" % i for i in range(100)]


def test_filenames_fed_at_run_time(tmp_path):
    a = _write(tmp_path / "a", [b"1"])
    b = _write(tmp_path / "b", [b"2", b"3"])
    names = tf.placeholder(tf.string, [None])
    it = tf.data.TFRecordDataset(names).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {names: [b]})
        assert run_to_end(sess, nxt) == [b"2", b"3"]
        sess.run(it.initializer, {names: [a, b]})
        assert run_to_end(sess, nxt) == [b"1", b"2", b"3"]


def test_corrupt_file_fails_get_next_with_data_loss(tmp_path):
    path = _write(tmp_path / "a", [b"good", b"bad!"])
    data = bytearray(open(path, "rb").read())
    data[-6] ^= 1
    open(path, "wb").write(bytes(data))
    nxt = tf.data.TFRecordDataset(path).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == b"good"
        with pytest.raises(tf.errors.DataLossError, match=f"{path}: corrupted record at 20"):
            sess.run(nxt)


def test_bad_arguments():
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TFRecordDataset("f", compression_type="LZ4")
    with pytest.raises(ValueError, match="num_parallel_reads"):
        tf.data.TFRecordDataset("f", num_parallel_reads=0)
    with pytest.raises(TypeError, match="strings"):
        tf.data.TFRecordDataset([1, 2])


def _mnist_like(rng, n):
    """Two classes of 8x8 'digits': a bright left or right half, with noise."""
    labels = rng.integers(0, 2, n)
    images = rng.uniform(0, 0.3, (n, 8, 8)).astype(np.float32)
    for i, y in enumerate(labels):
        images[i, :, 4 * y:4 * y + 4] += 0.7
    return images, labels


def test_tf1_style_pipeline_trains_a_model(tmp_path):
    rng = np.random.default_rng(0)
    images, labels = _mnist_like(rng, 200)
    paths = [str(tmp_path / f"train-{k}.tfrecord") for k in range(2)]
    for k, path in enumerate(paths):
        with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions("GZIP")) as w:
            for image, label in zip(images[k::2], labels[k::2]):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "image_raw": tf.train.Feature(
                        bytes_list=tf.train.BytesList(value=[image.tobytes()])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)]))}))
                w.write(example.SerializeToString())

    def parse(serialized):
        features = tf.parse_single_example(serialized, features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.reshape(tf.decode_raw(features["image_raw"], tf.float32), [64])
        return image, tf.cast(features["label"], tf.int32)

    dataset = (tf.data.TFRecordDataset(paths, compression_type="GZIP").map(parse)
               .shuffle(100, seed=1).repeat(10).batch(20))
    x, y = dataset.make_one_shot_iterator().get_next()
    assert x.shape.as_list() == [None, 64]
    logits = tf.layers.dense(x, 2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    test_x = tf.constant(images.reshape(-1, 64))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(
        tf.argmax(tf.layers.dense(test_x, 2, name="dense", reuse=True), 1), labels), tf.float32))
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        while True:
            try:
                losses.append(sess.run([train, loss])[1])
            except tf.errors.OutOfRangeError:
                break
        acc = sess.run(accuracy)
    assert len(losses) == 100  # 200 examples x 10 epochs / 20
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:5])
    assert acc > 0.95


def test_filenames_from_a_dataset_and_through_interleave(tmp_path, elements):
    a = _write(tmp_path / "a", [b"a0", b"a1"])
    b = _write(tmp_path / "b", [b"b0"])
    names = tf.data.Dataset.from_tensor_slices(np.array([a, b]))
    assert elements(tf.data.TFRecordDataset(names)) == [b"a0", b"a1", b"b0"]
    assert elements(names.interleave(tf.data.TFRecordDataset, cycle_length=2)) == [
        b"a0", b"b0", b"a1"]
    with pytest.raises(TypeError, match="scalar string"):
        tf.data.TFRecordDataset(tf.data.Dataset.range(3))


def _tagged_file(tmp_path):
    path = str(tmp_path / "tags.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        for i in range(4):
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i)))),
                "y": tf.train.Feature(float_list=tf.train.FloatList(value=[i]))}))
                .SerializeToString())
    return path


def test_var_len_features_through_map(tmp_path):
    """A VarLenFeature parsed in map comes out of get_next as a SparseTensor."""
    features = {"tags": tf.VarLenFeature(tf.int64), "y": tf.FixedLenFeature([], tf.float32)}
    ds = tf.data.TFRecordDataset(_tagged_file(tmp_path)).map(
        lambda s: tf.parse_single_example(s, features))
    ds = ds.map(lambda d: (tf.sparse.to_dense(d["tags"]), d["tags"], d["y"]))
    dense, sparse, y = ds.make_one_shot_iterator().get_next()
    assert isinstance(sparse, tf.SparseTensor)
    with tf.Session() as sess:
        got = [sess.run([dense, sparse, y]) for _ in range(4)]
    assert [list(g[0]) for g in got] == [[], [0], [0, 1], [0, 1, 2]]
    assert [list(g[1].dense_shape) for g in got] == [[0], [1], [2], [3]]
    assert [float(g[2]) for g in got] == [0, 1, 2, 3]


def test_batch_then_parse_example_with_var_len_features(tmp_path):
    features = {"tags": tf.VarLenFeature(tf.int64)}
    ds = tf.data.TFRecordDataset(_tagged_file(tmp_path)).batch(3).map(
        lambda s: tf.parse_example(s, features)["tags"])
    tags = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first, second = sess.run(tags), sess.run(tags)
    assert first.indices.tolist() == [[1, 0], [2, 0], [2, 1]]
    assert list(first.dense_shape) == [3, 2] and list(second.values) == [0, 1, 2]


def test_batching_sparse_elements_matches_parse_example(tmp_path):
    """map(parse_single_example).batch(n) gives parse_example's SparseTensor for the same batch."""
    features = {"tags": tf.VarLenFeature(tf.int64), "y": tf.FixedLenFeature([], tf.float32)}
    path = _tagged_file(tmp_path)
    ds = tf.data.TFRecordDataset(path).map(lambda s: tf.parse_single_example(s, features))
    batched = ds.batch(3).make_one_shot_iterator().get_next()
    assert batched["tags"].indices.shape.as_list() == [None, 2]
    assert batched["tags"].dense_shape.shape.as_list() == [2]
    reference = tf.parse_example(list(tf.python_io.tf_record_iterator(path)), features)
    with tf.Session() as sess:
        first, second = sess.run(batched), sess.run(batched)
        want = sess.run(reference)
    assert first["tags"].indices.tolist() == want["tags"].indices.tolist()[:3]
    assert list(first["tags"].dense_shape) == [3, 2] and list(second["tags"].dense_shape) == [1, 3]
    assert list(first["tags"].values) == [0, 0, 1] and list(second["tags"].values) == [0, 1, 2]
    assert second["tags"].indices.tolist() == [[0, 0], [0, 1], [0, 2]]
    assert list(first["y"]) == [0, 1, 2]
    with pytest.raises(TypeError, match="SparseTensor cannot be padded"):
        ds.padded_batch(2, padded_shapes={"tags": [None], "y": []})
