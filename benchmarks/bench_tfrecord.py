"""Reading TFRecord files: MB/s of a full pass over a file (100 MB by default, records the size of
an MNIST float image) with `tf.python_io.tf_record_iterator`, through `tf.data.TFRecordDataset`
batched in a session, and Examples/s of `tf.parse_example`; against TF1 (`tf.compat.v1`) in the
same interleaved rounds when TensorFlow is importable:

    PYTHONPATH=. python benchmarks/bench_tfrecord.py [--mb 100] [--record 3136] [--rounds 5]

The file is written once (by graphflow) and read from the page cache; medians of `rounds`.
Also prints the pure-Python CRC-32C fallback's MB/s on a 2 MB slice.
"""

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
from common import tensorflow_v1

import graphflow as gf
from graphflow.fileformat import tfrecord


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _iterate(tf, path):
    return lambda: sum(len(r) for r in tf.python_io.tf_record_iterator(path))


def _dataset_runner(tf, path, batch):
    graph = tf.Graph()

    def run():
        with graph.as_default():
            nxt = tf.data.TFRecordDataset(path).batch(batch).make_one_shot_iterator().get_next()
            with tf.Session(graph=graph) as sess:
                while True:
                    try:
                        sess.run(nxt)
                    except tf.errors.OutOfRangeError:
                        return
    return run


def _parser(tf, serialized):
    graph = tf.Graph()
    with graph.as_default():
        ph = tf.placeholder(tf.string, [None])
        parsed = tf.parse_example(ph, {"image": tf.FixedLenFeature([784], tf.float32),
                                       "label": tf.FixedLenFeature([], tf.int64)})
        sess = tf.Session(graph=graph)
    return lambda: sess.run(parsed, {ph: serialized})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--record", type=int, default=3136)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()
    tf1 = tensorflow_v1()
    rng = np.random.default_rng(0)
    count = args.mb * 2**20 // args.record
    payload = rng.integers(0, 256, args.record * 16, dtype=np.uint8).tobytes()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bench.tfrecord")
        t_write = _timed(lambda: _write(path, payload, args.record, count))
        size = os.path.getsize(path) / 2**20
        print(f"crc32c: {tfrecord.CRC32C_IMPLEMENTATION}; file {size:.1f} MB, {count} records of "
              f"{args.record} bytes; write {size / t_write:.0f} MB/s; load {os.getloadavg()}")
        examples = [_example(rng) for _ in range(1024)]
        cases = [("tf_record_iterator", lambda tf: _iterate(tf, path), size, "MB/s"),
                 (f"TFRecordDataset.batch({args.batch})",
                  lambda tf: _dataset_runner(tf, path, args.batch), size, "MB/s"),
                 ("parse_example (1024 MNIST Examples)",
                  lambda tf: _parser(tf, np.array(examples, dtype=object)), 1024, "Examples/s")]
        for name, make, amount, unit in cases:
            runners = {"graphflow": make(gf)}
            if tf1 is not None:
                runners["TF1"] = make(tf1)
            times = {k: [] for k in runners}
            for run in runners.values():
                run()  # warm up
            for _ in range(args.rounds):
                for key, run in runners.items():
                    times[key].append(_timed(run))
            line = ", ".join(f"{k} {amount / statistics.median(v):,.0f} {unit}"
                             for k, v in times.items())
            print(f"{name}: {line}")
    slice_ = payload[: 2 * 2**20] if len(payload) >= 2 * 2**20 else payload * (2 * 2**20 // len(payload))
    t = _timed(lambda: tfrecord._crc32c_python(slice_))
    print(f"pure-Python CRC-32C fallback: {len(slice_) / 2**20 / t:.1f} MB/s; load {os.getloadavg()}")


def _write(path, payload, record, count):
    with gf.python_io.TFRecordWriter(path) as writer:
        for i in range(count):
            start = (i * 977) % (len(payload) - record)
            writer.write(payload[start:start + record])


def _example(rng):
    from graphflow.framework import example_proto as e
    return e.Example(features=e.Features(feature={
        "image": e.Feature(float_list=e.FloatList(value=rng.random(784, dtype=np.float32))),
        "label": e.Feature(int64_list=e.Int64List(value=[int(rng.integers(10))]))})
    ).SerializeToString()


if __name__ == "__main__":
    main()
