"""TF1's queue-based input pipelines (`tf.train.shuffle_batch`, `string_input_producer`,
`QueueRunner` ...): graphflow has no queues; each of these names raises an error that shows the
`tf.data` pipeline doing the same job. `start_queue_runners` returns no threads (a graph without
queue runners is what TF1 gives that call too), and `Coordinator` is TF1's thread coordinator,
which works with any Python threads.
"""

import sys
import threading
import time

_TF_DATA = ("graphflow has no queue-based input pipelines; use tf.data, e.g.\n"
            "    dataset = tf.data.Dataset.from_tensor_slices((images, labels))\n"
            "    dataset = dataset.shuffle(buffer_size=10000).batch(32).repeat().prefetch(1)\n"
            "    images_batch, labels_batch = dataset.make_one_shot_iterator().get_next()")


def _unsupported(name, equivalent):
    def raise_error(*args, **kwargs):
        raise NotImplementedError(f"tf.train.{name}: {_TF_DATA}\n({equivalent})")
    raise_error.__name__ = name
    raise_error.__doc__ = f"`tf.train.{name}` is not available: use tf.data ({equivalent})."
    return raise_error


batch = _unsupported("batch", "tf.train.batch(tensors, n) is dataset.batch(n)")
shuffle_batch = _unsupported(
    "shuffle_batch", "tf.train.shuffle_batch(tensors, n, capacity, min_after_dequeue) is "
    "dataset.shuffle(min_after_dequeue).batch(n)")
batch_join = _unsupported("batch_join", "use Dataset.zip / interleave, then batch(n)")
shuffle_batch_join = _unsupported("shuffle_batch_join", "use interleave, shuffle, then batch(n)")
string_input_producer = _unsupported(
    "string_input_producer", "a list of file names is Dataset.from_tensor_slices(names)")
slice_input_producer = _unsupported(
    "slice_input_producer", "slice_input_producer(tensors) is Dataset.from_tensor_slices(tensors)")
range_input_producer = _unsupported("range_input_producer", "use Dataset.range(n)")
input_producer = _unsupported("input_producer", "use Dataset.from_tensor_slices")
add_queue_runner = _unsupported("add_queue_runner", "a tf.data pipeline needs no queue runner")


class QueueRunner:
    """`tf.train.QueueRunner`: not available (graphflow has no queues)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"tf.train.QueueRunner: {_TF_DATA}")


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=None):
    """No queue runner can exist in a graphflow graph, so there are no threads to start: []."""
    return []


class Coordinator:
    """`tf.train.Coordinator`: lets threads request a stop, and joins them."""

    def __init__(self, clean_stop_exception_types=None):
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._exc_info = None
        self._threads = set()
        self._clean = tuple(clean_stop_exception_types or ())

    def should_stop(self):
        return self._stop.is_set()

    def request_stop(self, ex=None):
        with self._lock:
            if ex is not None and self._exc_info is None:
                if isinstance(ex, tuple):
                    exc_info = ex
                else:
                    exc_info = (type(ex), ex, ex.__traceback__)
                if not isinstance(exc_info[1], self._clean):
                    self._exc_info = exc_info
            self._stop.set()

    def clear_stop(self):
        with self._lock:
            self._exc_info = None
            self._stop.clear()

    def wait_for_stop(self, timeout=None):
        return self._stop.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._threads.add(thread)

    def stop_on_exception(self):
        return _StopOnException(self)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        threads = set(threads or ()) | self._threads
        self._stop.wait()
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self.raise_requested_exception()
        alive = [t.name for t in threads if t.is_alive()]
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: {alive}")

    def raise_requested_exception(self):
        with self._lock:
            exc_info = self._exc_info
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])


class _StopOnException:
    def __init__(self, coord):
        self._coord = coord

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            return False
        self._coord.request_stop((exc_type, exc, tb) if exc is not None else sys.exc_info())
        return True


__all__ = ["batch", "shuffle_batch", "batch_join", "shuffle_batch_join", "string_input_producer",
           "slice_input_producer", "range_input_producer", "input_producer", "add_queue_runner",
           "QueueRunner", "start_queue_runners", "Coordinator"]
