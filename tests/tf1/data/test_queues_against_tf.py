"""The CIFAR-10 tutorial's evaluation input pipeline (no shuffling: string_input_producer with
shuffle=False, FixedLengthRecordReader, decode_raw, strided_slice/reshape/transpose/cast,
resize_image_with_crop_or_pad, per_image_standardization, tf.train.batch on one thread) and the
"Reading data" guide's CSV pipeline (TextLineReader with a header, decode_csv, a smaller final
batch) run in graphflow and in TensorFlow's compat.v1: same batches, keys and end of input. Skips
without TensorFlow (set GRAPHFLOW_TF_PYTHON)."""

import os

import numpy as np
import pytest

import graphflow
from tests.tf_reference import run_in_tensorflow, tf_python


def cifar_eval_pipeline(tf, np, data_dir):
    """Batches of the whole binary files, in file order, until OutOfRangeError."""
    filenames = [data_dir + "/test_batch_%d.bin" % i for i in range(2)]
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=1, shuffle=False)
    reader = tf.FixedLengthRecordReader(record_bytes=1 + 3 * 8 * 8, header_bytes=2)
    key, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record_bytes, [0], [1]), tf.int32)
    depth_major = tf.reshape(tf.strided_slice(record_bytes, [1], [1 + 3 * 8 * 8]), [3, 8, 8])
    image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32)
    resized = tf.image.resize_image_with_crop_or_pad(image, 6, 6)
    float_image = tf.image.per_image_standardization(resized)
    float_image.set_shape([6, 6, 3])
    label.set_shape([1])
    images, labels, keys = tf.train.batch([float_image, label, key], batch_size=4, num_threads=1,
                                          capacity=20, allow_smaller_final_batch=True)
    out = {"images": [], "labels": [], "keys": []}
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while True:
                i, l, k = sess.run([images, labels, keys])
                out["images"].append(i)
                out["labels"].append(l)
                out["keys"].extend(k)
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    return {"images": np.concatenate(out["images"]), "labels": np.concatenate(out["labels"]),
            "sizes": np.array([len(b) for b in out["labels"]]),
            "keys": np.frombuffer(b"|".join(out["keys"]), np.uint8)}


def csv_pipeline(tf, np, path):
    filename_queue = tf.train.string_input_producer([path], num_epochs=2, shuffle=False)
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(filename_queue)
    a, b, c = tf.decode_csv(value, record_defaults=[[0], [0.0], [""]])
    numbers, floats, texts = tf.train.batch([a, b, c], batch_size=3,
                                            allow_smaller_final_batch=True)
    got = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while True:
                got.append(sess.run([numbers, floats, texts]))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    return {"numbers": np.concatenate([g[0] for g in got]),
            "floats": np.concatenate([g[1] for g in got]),
            "sizes": np.array([len(g[0]) for g in got]),
            "texts": np.frombuffer(b"|".join(t for g in got for t in g[2]), np.uint8)}


def _write_files(folder):
    rng = np.random.RandomState(4)
    for i in range(2):
        records = np.concatenate([rng.randint(0, 10, size=(5, 1)),
                                  rng.randint(0, 256, size=(5, 3 * 8 * 8))], axis=1)
        with open(os.path.join(folder, "test_batch_%d.bin" % i), "wb") as f:
            f.write(b"HD" + records.astype(np.uint8).tobytes())
    path = os.path.join(folder, "rows.csv")
    with open(path, "w") as f:
        f.write("n,x,s\n1,0.5,a\n2,,b\n3,1.25,\n4,-2,dd\n")
    return path


def test_queue_pipelines_match_tensorflow(tmp_path):
    if tf_python() is None:
        pytest.skip("TensorFlow is not installed (set GRAPHFLOW_TF_PYTHON to compare with it)")
    folder = str(tmp_path)
    csv_path = _write_files(folder)
    theirs = run_in_tensorflow([("cifar", cifar_eval_pipeline, {"data_dir": folder}),
                                ("csv", csv_pipeline, {"path": csv_path})])
    graphflow.reset_default_graph()
    ours = {"cifar": cifar_eval_pipeline(graphflow, np, folder)}
    graphflow.reset_default_graph()
    ours["csv"] = csv_pipeline(graphflow, np, csv_path)
    np.testing.assert_array_equal(ours["cifar"]["sizes"], [4, 4, 2])
    np.testing.assert_array_equal(ours["csv"]["sizes"], [3, 3, 2])
    for program in ("cifar", "csv"):
        assert sorted(ours[program]) == sorted(theirs[program])
        for name, value in ours[program].items():
            want = theirs[program][name]
            assert np.asarray(value).dtype == want.dtype, (program, name)
            np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{program}/{name}")
