"""The pipeline's threads (graphflow/tf1/data/threads.py): a parallel map really runs on several
threads, prefetch really produces in the background, errors and closing behave."""

import threading
import time

import pytest

import graphflow as tf
from graphflow.tf1.data import threads


def test_parallel_map_overlaps_work_and_keeps_order():
    def slow_square(x):
        time.sleep(0.05)  # releases the GIL like a numpy kernel
        return (x * x, threading.get_ident())

    start = time.perf_counter()
    out = list(threads.parallel_map((i for i in range(8)), slow_square, workers=4))
    elapsed = time.perf_counter() - start
    assert [v for v, _ in out] == [i * i for i in range(8)]
    assert len({ident for _, ident in out}) > 1
    assert elapsed < 0.3, f"8 x 50 ms on 4 workers took {elapsed:.2f}s"


def test_prefetch_produces_in_a_background_thread():
    producer_threads = []

    def gen():
        for i in range(6):
            producer_threads.append(threading.get_ident())
            time.sleep(0.05)
            yield i

    ds = tf.data.Dataset.from_generator(gen, tf.int64, []).prefetch(2)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        start = time.perf_counter()
        got = []
        for _ in range(6):
            got.append(sess.run(nxt).item())
            time.sleep(0.05)  # the "training step" overlaps the production of the next element
        elapsed = time.perf_counter() - start
    assert got == list(range(6))
    assert set(producer_threads) != {threading.get_ident()}
    assert elapsed < 0.5, f"overlapped 6 x (50 + 50) ms took {elapsed:.2f}s"


def test_prefetch_passes_errors_through_in_order():
    def gen():
        yield 1
        raise RuntimeError("broken source")

    nxt = tf.data.Dataset.from_generator(gen, tf.int64, []).prefetch(4).make_one_shot_iterator() \
        .get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="broken source"):
            sess.run(nxt)


def test_closing_the_session_stops_the_producer():
    before = threading.active_count()
    nxt = tf.data.Dataset.range(10**9).prefetch(2).make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert sess.run(nxt) == 0
    assert threading.active_count() > before
    sess.close()
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before
