"""Queue runners, the Coordinator, and the producers and batchers built on them
(graphflow/tf1/data/queue_runners.py, input_producers.py), with plain sessions, MonitoredSession
and Supervisor."""

import threading

import numpy as np
import pytest

import graphflow as tf
from tests.tf1.data.conftest import run_to_end


def _start(sess):
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    return coord, tf.train.start_queue_runners(sess=sess, coord=coord)


def test_queue_runner_fills_a_queue_and_closes_it_at_the_end_of_its_input():
    counter = tf.Variable(0, dtype=tf.int64)
    value = counter.count_up_to(5)
    q = tf.FIFOQueue(2, [tf.int64], shapes=[[]])
    qr = tf.train.QueueRunner(q, [q.enqueue([value])] * 2)
    tf.train.add_queue_runner(qr)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [qr]
    with tf.Session() as sess:
        sess.run(counter.initializer)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert len(threads) == 3  # two enqueue threads and the one closing the queue on stop
        assert tf.train.start_queue_runners(sess, coord) == []  # running already
        assert sorted(run_to_end(sess, q.dequeue())) == [0, 1, 2, 3, 4]
        coord.request_stop()
        coord.join(threads)
        assert not any(t.is_alive() for t in threads)


def test_an_error_in_a_queue_runner_reaches_the_coordinator():
    x = tf.placeholder_with_default(tf.constant([1.0, 2.0]), [None])
    q = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    bad = tf.debugging.check_numerics(tf.log(x - 5.0), "bad input")
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue_many([bad])]))
    with tf.Session() as sess:
        coord, threads = _start(sess)
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad input"):
            coord.join(threads, stop_grace_period_secs=10)


def test_coordinator_join_returns_when_threads_end_and_raises_reported_errors():
    coord = tf.train.Coordinator()
    quiet = threading.Thread(target=lambda: None)
    quiet.start()
    coord.join([quiet])  # no stop requested: join returns once the threads are done
    seen = []

    def work():
        with coord.stop_on_exception():
            while not coord.should_stop():
                seen.append(1)
                if len(seen) >= 3:
                    raise ValueError("worker failed")
    thread = threading.Thread(target=work)
    thread.start()
    with pytest.raises(ValueError, match="worker failed"):
        coord.join([thread])
    assert coord.should_stop() and len(seen) == 3
    clean = tf.train.Coordinator()
    clean.request_stop(tf.errors.OutOfRangeError(None, None, "end"))  # a clean stop
    clean.join([])


def test_slice_input_producer_with_epochs_and_batch():
    images = np.arange(20, dtype=np.float32).reshape(10, 2)
    image, label = tf.train.slice_input_producer([images, np.arange(10)], num_epochs=2,
                                                 shuffle=False)
    batch_images, batch_labels = tf.train.batch([image, label], 4, allow_smaller_final_batch=True)
    assert batch_images.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        coord, threads = _start(sess)
        batches = run_to_end(sess, [batch_images, batch_labels])
        coord.request_stop()
        coord.join(threads)
    labels = np.concatenate([b[1] for b in batches])
    np.testing.assert_array_equal(labels, list(range(10)) * 2)
    assert [len(b[1]) for b in batches] == [4, 4, 4, 4, 4]
    for got_images, got_labels in batches:
        np.testing.assert_array_equal(got_images, images[got_labels])


def test_string_input_producer_shuffles_each_epoch_deterministically():
    def names():
        tf.reset_default_graph()
        tf.set_random_seed(3)
        q = tf.train.string_input_producer(["a", "b", "c", "d"], num_epochs=3, seed=1)
        with tf.Session() as sess:
            coord, threads = _start(sess)
            out = run_to_end(sess, q.dequeue())
            coord.request_stop()
            coord.join(threads)
        return out
    first, second = names(), names()
    assert first == second and len(first) == 12
    epochs = [first[i:i + 4] for i in range(0, 12, 4)]
    assert all(sorted(e) == [b"a", b"b", b"c", b"d"] for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # reshuffled each epoch
    with pytest.raises(ValueError, match="non-null"):
        tf.train.string_input_producer([])


def test_range_input_producer_and_one_tensor_batches_come_back_as_a_tensor():
    q = tf.train.range_input_producer(6, num_epochs=1, shuffle=False)
    batch = tf.train.batch([q.dequeue()], 3)
    assert isinstance(batch, tf.Tensor)  # TF1: a list of one tensor batches to one tensor
    as_dict = tf.train.batch({"x": tf.constant(1.0), "y": tf.constant(2)}, 2)
    assert sorted(as_dict) == ["x", "y"]
    with tf.Session() as sess:
        coord, threads = _start(sess)
        np.testing.assert_array_equal(sess.run(batch), [0, 1, 2])
        np.testing.assert_array_equal(sess.run(batch), [3, 4, 5])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(batch)
        assert sess.run(as_dict)["y"].tolist() == [2, 2]
        coord.request_stop()
        coord.join(threads)


def test_shuffle_batch_enqueue_many_and_shapes_rules():
    x = tf.constant(np.arange(40).reshape(20, 2))
    rows = tf.train.shuffle_batch([x], 5, capacity=30, min_after_dequeue=10, enqueue_many=True,
                                  seed=2, num_threads=2)
    assert rows.shape.as_list() == [5, 2]
    with pytest.raises(ValueError, match="bigger than min_after_dequeue"):
        tf.train.shuffle_batch([x], 5, capacity=10, min_after_dequeue=10)
    with pytest.raises(ValueError, match="fully defined"):
        tf.train.batch([tf.placeholder(tf.float32, [None])], 2)
    with tf.Session() as sess:
        coord, threads = _start(sess)
        got = sess.run(rows)
        coord.request_stop()
        coord.join(threads)
    assert got.shape == (5, 2) and all(r[1] == r[0] + 1 and r[0] % 2 == 0 for r in got)


def test_batch_join_and_dynamic_pad():
    a = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
    b = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue() + 100
    joined = tf.train.batch_join([[a], [b]], 6)
    seq = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
    padded = tf.train.batch([tf.range(seq + 1)], 3, dynamic_pad=True)
    assert padded.shape.as_list() == [3, None]
    with tf.Session() as sess:
        coord, threads = _start(sess)
        assert sorted(sess.run(joined).tolist()) == [0, 1, 2, 100, 101, 102]
        np.testing.assert_array_equal(sess.run(padded), [[0, 0, 0], [0, 1, 0], [0, 1, 2]])
        coord.request_stop()
        coord.join(threads)


def test_shuffle_batch_join_mixes_its_inputs():
    a = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
    b = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue() + 10
    mixed = tf.train.shuffle_batch_join([[a], [b]], 8, capacity=20, min_after_dequeue=2, seed=4)
    with tf.Session() as sess:
        coord, threads = _start(sess)
        assert sorted(sess.run(mixed).tolist()) == [0, 1, 2, 3, 10, 11, 12, 13]
        coord.request_stop()
        coord.join(threads)


def test_monitored_training_session_starts_and_stops_queue_runners():
    values = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    total = tf.Variable(0, name="total")
    step = tf.assign_add(total, values)
    seen = 0
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            sess.run(step)
            seen += 1
    assert seen == 10  # the end of the input ended the loop quietly
    assert not [t for t in threading.enumerate() if t.name.startswith("QueueRunner")]


def test_supervisor_managed_session_runs_queue_runners():
    q = tf.train.range_input_producer(4, shuffle=False)
    batch = tf.train.batch([q.dequeue()], 4)
    sv = tf.train.Supervisor(logdir=None, save_model_secs=0)
    with sv.managed_session() as sess:
        got = sess.run(batch)
        assert not sv.should_stop()
    np.testing.assert_array_equal(got, [0, 1, 2, 3])
    assert sv.should_stop()


def test_closing_the_session_ends_queue_runner_threads():
    q = tf.train.range_input_producer(1000)
    batch = tf.train.shuffle_batch([q.dequeue()], 8, capacity=40, min_after_dequeue=20,
                                   num_threads=3)
    sess = tf.Session()
    threads = tf.train.start_queue_runners(sess)  # no coordinator: only the session stops them
    assert sess.run(batch).shape == (8,)
    sess.close()
    for thread in threads:
        thread.join(10)
    assert not any(t.is_alive() for t in threads)


def test_a_program_that_never_stops_its_queue_runners_exits(tmp_path):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(tf.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    script = tmp_path / "program.py"
    script.write_text(
        "import graphflow as tf\n"
        "q = tf.train.string_input_producer(['a', 'b'])\n"
        "batch = tf.train.batch([q.dequeue()], 4, num_threads=2)\n"
        "sess = tf.Session()\n"
        "coord = tf.train.Coordinator()\n"
        "tf.train.start_queue_runners(sess, coord)\n"
        "print(len(sess.run(batch)))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "4"


def test_maybe_batch_keeps_what_keep_input_selects():
    value = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    evens = tf.train.maybe_batch([value], tf.equal(value % 2, 0), 5)
    rows = tf.constant(np.arange(6))
    kept = tf.train.maybe_shuffle_batch([rows], 3, 10, 0, keep_input=rows < 3, enqueue_many=True,
                                        seed=1)
    with pytest.raises(ValueError, match="vector with enqueue_many"):
        tf.train.maybe_batch([rows], rows < 3, 2)
    with tf.Session() as sess:
        coord, threads = _start(sess)
        np.testing.assert_array_equal(sess.run(evens), [0, 2, 4, 6, 8])
        assert set(sess.run(kept).tolist()) <= {0, 1, 2}  # rows 3.. never enqueued
        coord.request_stop()
        coord.join(threads)
