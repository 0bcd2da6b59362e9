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
