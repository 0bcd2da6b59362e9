"""TF1's queues (graphflow/ops/queue_ops.py, kernels/cpu/reference/queue_kernels.py): order, blocking across
threads, closing, seeded shuffling, padding, and a session that closes while a run waits."""

import threading
import time

import numpy as np
import pytest

import graphflow as tf


def _in_thread(fn):
    """Run `fn` on a daemon thread; returns (thread, box) where box holds its result or error."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_fifo_order_size_and_structures():
    q = tf.FIFOQueue(10, [tf.int32, tf.string], shapes=[[], []])
    enqueue_many = q.enqueue_many([[1, 2, 3], [b"a", b"b", b"c"]])
    enqueue = q.enqueue([4, "d"])
    number, text = q.dequeue()
    numbers, texts = q.dequeue_many(2)
    with tf.Session() as sess:
        sess.run(enqueue_many)
        sess.run(enqueue)
        assert sess.run(q.size()) == 4
        assert sess.run([number, text]) == [1, b"a"]
        got_numbers, got_texts = sess.run([numbers, texts])
        np.testing.assert_array_equal(got_numbers, [2, 3])
        assert list(got_texts) == [b"b", b"c"]
        assert sess.run(q.size()) == 1
    assert numbers.shape.as_list() == [2] and number.shape.as_list() == []


def test_one_component_and_named_queues_dequeue_as_tf1():
    single = tf.FIFOQueue(3, tf.float32, shapes=[[2]])
    named = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], []], names=["i", "f"])
    out = single.dequeue()
    assert isinstance(out, tf.Tensor)  # one component: a tensor, not a list
    element = named.dequeue()
    assert sorted(element) == ["f", "i"]
    with tf.Session() as sess:
        sess.run(single.enqueue([[1.0, 2.0]]))
        sess.run(named.enqueue({"i": 5, "f": 0.5}))
        np.testing.assert_array_equal(sess.run(out), [1.0, 2.0])
        assert sess.run(element) == {"i": 5, "f": 0.5}


def test_enqueue_checks_shapes_and_dtypes():
    q = tf.FIFOQueue(3, [tf.float32], shapes=[[2]])
    with pytest.raises(ValueError, match="does not fit"):
        q.enqueue([[1.0, 2.0, 3.0]])
    p = tf.placeholder(tf.float32, [None])
    enqueue = q.enqueue([p])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
            sess.run(enqueue, {p: [1.0, 2.0, 3.0]})


def test_closed_queue_semantics():
    q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    enqueue_many = q.enqueue_many([[1, 2, 3]])
    dequeue, dequeue_many, up_to = q.dequeue(), q.dequeue_many(2), q.dequeue_up_to(2)
    with tf.Session() as sess:
        sess.run(enqueue_many)
        sess.run(q.close())
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(q.enqueue([4]))
        assert sess.run(dequeue) == 1                   # elements left: dequeues succeed
        with pytest.raises(tf.errors.OutOfRangeError, match="insufficient elements"):
            sess.run(q.dequeue_many(3))                 # fewer than asked: nothing taken
        np.testing.assert_array_equal(sess.run(dequeue_many), [2, 3])
        with pytest.raises(tf.errors.OutOfRangeError) as info:
            sess.run(dequeue)
        assert info.value.op is dequeue.op               # the error names the op
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(up_to)


def test_dequeue_up_to_returns_the_rest_of_a_closed_queue():
    q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    up_to = q.dequeue_up_to(4)
    assert up_to.shape.as_list() == [None]
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3, 4, 5, 6]]))
        sess.run(q.close())
        np.testing.assert_array_equal(sess.run(up_to), [1, 2, 3, 4])
        np.testing.assert_array_equal(sess.run(up_to), [5, 6])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(up_to)


def test_a_dequeue_waits_for_an_enqueue_from_another_thread():
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    dequeue = q.dequeue()
    x = tf.placeholder(tf.float32, [])
    enqueue = q.enqueue([x])
    with tf.Session() as sess:
        thread, box = _in_thread(lambda: sess.run(dequeue))
        time.sleep(0.2)
        assert thread.is_alive()  # blocked in the dequeue kernel
        sess.run(enqueue, {x: 7.0})  # another run proceeds meanwhile
        thread.join(10)
        assert box == {"value": 7.0}


def test_an_enqueue_waits_while_the_queue_is_full_and_close_cancels_it():
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    enqueue = q.enqueue([1])
    with tf.Session() as sess:
        sess.run(enqueue)
        thread, box = _in_thread(lambda: sess.run(enqueue))
        time.sleep(0.2)
        assert thread.is_alive()
        assert sess.run(q.dequeue()) == 1  # room: the waiting enqueue completes
        thread.join(10)
        assert "error" not in box and sess.run(q.size()) == 1
        thread, box = _in_thread(lambda: sess.run(enqueue))
        time.sleep(0.2)
        sess.run(q.close(cancel_pending_enqueues=True))
        thread.join(10)
        assert isinstance(box["error"], tf.errors.CancelledError)


def test_a_pending_enqueue_survives_a_plain_close():
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue([1]))
        thread, box = _in_thread(lambda: sess.run(q.enqueue([2])))
        time.sleep(0.2)
        sess.run(q.close())
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(5)), [1])
        thread.join(10)
        assert "error" not in box
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(5)), [2])


def test_closing_the_session_wakes_a_blocked_run():
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    dequeue = q.dequeue()
    sess = tf.Session()
    thread, box = _in_thread(lambda: sess.run(dequeue))
    time.sleep(0.2)
    sess.close()
    thread.join(10)
    assert not thread.is_alive()
    assert isinstance(box["error"], tf.errors.CancelledError)


def test_a_run_waiting_in_a_queue_holds_no_variable_lock():
    """A training step that waits for its batch keeps no lock: a run updating the same variables
    with use_locking=True proceeds meanwhile; a failed run still changes no variable."""
    v = tf.Variable(0.0)
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    step = tf.assign_add(v, q.dequeue(), use_locking=True)
    bump = tf.assign_add(v, 1.0, use_locking=True)
    with tf.Session() as sess:
        sess.run(v.initializer)
        thread, box = _in_thread(lambda: sess.run(step))
        time.sleep(0.2)
        assert thread.is_alive()
        done, _ = _in_thread(lambda: sess.run(bump))
        done.join(5)
        assert not done.is_alive() and sess.run(v) == 1.0
        sess.run(q.enqueue([10.0]))
        thread.join(10)
        assert sess.run(v) == 11.0
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(step)
        assert sess.run(v) == 11.0


def test_random_shuffle_queue_is_seeded_and_keeps_min_after_dequeue():
    def order():
        tf.reset_default_graph()
        tf.set_random_seed(5)
        q = tf.RandomShuffleQueue(20, 4, [tf.int32], shapes=[[]])
        with tf.Session() as sess:
            sess.run(q.enqueue_many([list(range(10))]))
            first = list(sess.run(q.dequeue_many(6)))
            with pytest.raises(tf.errors.OutOfRangeError):  # none but the 4 kept once closed
                sess.run([q.close(), q.dequeue_many(5)])
            rest = list(sess.run(q.dequeue_up_to(10)))
        return first + rest
    a, b = order(), order()
    assert a == b and sorted(a) == list(range(10)) and a != list(range(10))


def test_random_shuffle_dequeue_waits_above_min_after_dequeue():
    q = tf.RandomShuffleQueue(10, 3, [tf.int32], shapes=[[]], seed=1)
    dequeue = q.dequeue()
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
        thread, box = _in_thread(lambda: sess.run(dequeue))
        time.sleep(0.2)
        assert thread.is_alive()  # 3 elements, 3 must stay
        sess.run(q.enqueue([4]))
        thread.join(10)
        assert box["value"] in (1, 2, 3, 4)


def test_padding_fifo_queue_pads_each_batch():
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None], []])
    values, texts = q.dequeue_many(2)
    assert values.shape.as_list() == [2, None]
    with tf.Session() as sess:
        sess.run(q.enqueue([[1, 2, 3], "a"]))
        sess.run(q.enqueue([[4], "b"]))
        got, _ = sess.run([values, texts])
    np.testing.assert_array_equal(got, [[1, 2, 3], [4, 0, 0]])
    with pytest.raises(ValueError, match="known rank"):
        tf.PaddingFIFOQueue(5, [tf.int32], shapes=[None])


def test_count_up_to_counts_across_threads_then_raises():
    counter = tf.Variable(0, dtype=tf.int64)
    count = counter.count_up_to(40)
    with tf.Session() as sess:
        sess.run(counter.initializer)
        seen = []

        def work():
            while True:
                try:
                    seen.append(int(sess.run(count)))
                except tf.errors.OutOfRangeError:
                    return
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(seen) == list(range(40))  # each value once: no lost update
        assert sess.run(counter) == 40
