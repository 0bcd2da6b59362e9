"""Helpers the benchmark scripts share: a median wall-clock timer, a timed warm-up and TensorFlow's v1
API if installed."""

import os
import statistics
import time


def median_ms(fn, repeat, warmup=3):
    """Median milliseconds of `repeat` calls of `fn` after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def warm_up(fn, seconds, calls=1):
    """Call `fn` untimed at least `calls` times and for at least `seconds`."""
    start, done = time.perf_counter(), 0
    while done < calls or time.perf_counter() - start < seconds:
        fn()
        done += 1


def tensorflow_v1():
    """`tensorflow.compat.v1` in graph mode, or None when TensorFlow is not installed. With
    Keras 2 (`tf_keras`) for `tf.layers` where TensorFlow ships Keras 3, as TF1 programs need."""
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    try:
        import tensorflow as real_tf
    except ImportError:
        return None
    tf1 = real_tf.compat.v1
    tf1.disable_eager_execution()
    return tf1


def session_step(tf, graph, init, fetches, feed, threads):
    """(step function, first-step seconds) of `fetches` in a session on `threads` intra- and
    inter-op threads, its variables initialized by `init`."""
    config = tf.ConfigProto(intra_op_parallelism_threads=threads,
                            inter_op_parallelism_threads=threads)
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    started = time.perf_counter()
    sess.run(fetches, feed)
    return (lambda: sess.run(fetches, feed)), time.perf_counter() - started


def interleaved_medians(steps, repeat, warmup):
    """{name: median seconds} of `steps` ({name: fn}) after `warmup` untimed calls each, timed in
    `repeat` interleaved rounds (one call of each per round), so load drift hits all alike."""
    for step in steps.values():
        for _ in range(warmup):
            step()
    samples = {name: [] for name in steps}
    for _ in range(repeat):
        for name, step in steps.items():
            started = time.perf_counter()
            step()
            samples[name].append(time.perf_counter() - started)
    return {name: statistics.median(s) for name, s in samples.items()}
