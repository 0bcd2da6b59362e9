"""TF1's readers (graphflow/ops/reader_ops.py, kernels/cpu/reference/reader_kernels.py) fed by file-name
queues: keys and values, several files and epochs, the "Reading data" guide's pipelines, readers
shared by threads, reset."""

import os

import numpy as np
import pytest

import graphflow as tf


def _write(tmp_path, name, data):
    path = os.path.join(str(tmp_path), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _names_queue(paths, epochs=1):
    q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
    return q, tf.group(q.enqueue_many([paths * epochs]), q.close())


def _read_all(sess, fetch):
    out = []
    while True:
        try:
            out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            return out


def test_text_line_reader_reads_files_in_turn_skipping_headers(tmp_path):
    a = _write(tmp_path, "a.csv", b"x,y\n1,2\n3,4")
    b = _write(tmp_path, "b.csv", b"x,y\r\n5,6\r\n")
    empty = _write(tmp_path, "c.csv", b"")
    q, fill = _names_queue([a, empty, b])
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(q)
    with tf.Session() as sess:
        sess.run(fill)
        got = _read_all(sess, [key, value])
        assert got == [[f"{a}:2".encode(), b"1,2"], [f"{a}:3".encode(), b"3,4"],
                       [f"{b}:2".encode(), b"5,6"]]
        assert sess.run([reader.num_records_produced(), reader.num_work_units_completed()]) \
            == [3, 3]


def test_reading_data_guide_csv_pipeline(tmp_path):
    """TextLineReader + decode_csv + tf.train.batch, as the guide's example wrote it."""
    path = _write(tmp_path, "file0.csv",
                  b"".join(b"%d,%d,%d,%d,%d\n" % (i, i + 1, i + 2, i + 3, i % 2)
                           for i in range(8)))
    filename_queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    reader = tf.TextLineReader()
    key, value = reader.read(filename_queue)
    record_defaults = [[1], [1], [1], [1], [1]]
    col1, col2, col3, col4, col5 = tf.decode_csv(value, record_defaults=record_defaults)
    features = tf.stack([col1, col2, col3, col4])
    example_batch, label_batch = tf.train.batch([features, col5], batch_size=4)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord, sess=sess)
        batches = _read_all(sess, [example_batch, label_batch])
        coord.request_stop()
        coord.join(threads)
    assert len(batches) == 2
    np.testing.assert_array_equal(batches[0][0][:, 0], [0, 1, 2, 3])
    np.testing.assert_array_equal(batches[1][1], [0, 1, 0, 1])


def test_tfrecord_reader_parse_single_example_shuffle_batch(tmp_path):
    path = os.path.join(str(tmp_path), "train.tfrecords")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(12):
            example = tf.train.Example(features=tf.train.Features(feature={
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[np.full(4, i, np.uint8).tobytes()]))}))
            writer.write(example.SerializeToString())
    filename_queue = tf.train.string_input_producer([path], num_epochs=1)
    reader = tf.TFRecordReader()
    _, serialized_example = reader.read(filename_queue)
    features = tf.parse_single_example(serialized_example, features={
        "image_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([4])
    label = tf.cast(features["label"], tf.int32)
    images, labels = tf.train.shuffle_batch([image, label], batch_size=3, num_threads=2,
                                            capacity=10, min_after_dequeue=4,
                                            allow_smaller_final_batch=True)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        batches = _read_all(sess, [images, labels])
        coord.request_stop()
        coord.join(threads)
    all_labels = np.concatenate([b[1] for b in batches])
    assert sorted(all_labels) == list(range(12))
    for got_images, got_labels in batches:
        np.testing.assert_array_equal(got_images[:, 0], got_labels)


def test_fixed_length_and_whole_file_readers_and_read_up_to(tmp_path):
    a = _write(tmp_path, "a.bin", b"H" + b"0123456789" + b"FF")
    b = _write(tmp_path, "b.bin", b"H" + b"abcd" + b"FF")
    q, fill = _names_queue([a, b])
    reader = tf.FixedLengthRecordReader(record_bytes=4, header_bytes=1, footer_bytes=2)
    keys, values = reader.read_up_to(q, 3)
    with tf.Session() as sess:
        sess.run(fill)
        got = [list(v) for _, v in _read_all(sess, [keys, values])]
    assert got == [[b"0123", b"4567", b"abcd"]]  # the partial record "89" is skipped
    q2, fill2 = _names_queue([a, b])
    whole_key, whole = tf.WholeFileReader().read(q2)
    with tf.Session() as sess:
        sess.run(fill2)
        assert _read_all(sess, [whole_key, whole]) == [[a.encode(), b"H0123456789FF"],
                                                        [b.encode(), b"HabcdFF"]]


def test_a_missing_file_is_not_found(tmp_path):
    q, fill = _names_queue([os.path.join(str(tmp_path), "missing.txt")])
    _, value = tf.TextLineReader().read(q)
    with tf.Session() as sess:
        sess.run(fill)
        with pytest.raises(tf.errors.NotFoundError, match="missing.txt"):
            sess.run(value)


def test_threads_sharing_a_reader_each_get_other_records_and_reset(tmp_path):
    path = _write(tmp_path, "lines.txt", b"".join(b"%d\n" % i for i in range(200)))
    q, fill = _names_queue([path], epochs=2)
    reader = tf.TextLineReader()
    _, value = reader.read(q)
    batch = tf.train.batch([tf.string_to_number(value, tf.int32)], 400, num_threads=4)
    with tf.Session() as sess:
        sess.run(fill)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = sess.run(batch)
        coord.request_stop()
        coord.join(threads)
    assert sorted(got.tolist()) == sorted(list(range(200)) * 2)
    q3, fill3 = _names_queue([path], epochs=2)
    reader3 = tf.TextLineReader()
    _, first = reader3.read(q3)
    with tf.Session() as sess:
        sess.run(fill3)
        assert sess.run(first) == b"0" and sess.run(first) == b"1"
        sess.run(reader3.reset())  # forget the file: the next read starts the next file name
        assert sess.run(first) == b"0"
        assert sess.run(reader3.num_records_produced()) == 1
