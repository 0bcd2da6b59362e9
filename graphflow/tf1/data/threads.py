"""The threads of a running pipeline: a parallel `map` and a background `prefetch` producer.

Both are generators that own their threads: closing the generator (a new `initializer` run, the
session closing) stops the threads and closes the upstream generator. Errors raised upstream reach
the consumer unchanged, in order (an error of the map function is its result, an `ElementError`).

`parallel_map` keeps up to `workers` elements in flight in a thread pool and yields `fn`'s results
in input order (TF1's deterministic order). The map functions are graph functions whose kernels are numpy
calls, which release the GIL for large arrays, so the workers overlap real work.
`prefetch` runs the upstream pipeline in a producer thread that keeps up to `buffer_size` elements
ready, so producing the next batches overlaps the training step that consumes the current one.
"""

import collections
import os
import queue
import threading
from concurrent.futures import ThreadPoolExecutor

_POLL_SECONDS = 0.05


def resolve_parallelism(value):
    """`num_parallel_calls` / `buffer_size`: AUTOTUNE (-1) means the number of CPU cores."""
    return max(1, os.cpu_count() or 1) if value == -1 else int(value)


def parallel_map(upstream, fn, workers):
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="graphflow-data-map")
    pending = collections.deque()
    try:
        for element in upstream:
            pending.append(pool.submit(fn, element))
            if len(pending) >= workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)
        upstream.close()


class _End:
    pass


class _Failure:
    def __init__(self, exc):
        self.exc = exc


def prefetch(upstream, buffer_size):
    ready = queue.Queue(maxsize=max(1, buffer_size))
    stop = threading.Event()

    def put(item):
        while not stop.is_set():
            try:
                ready.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for element in upstream:
                if not put(element):
                    return
            put(_End)
        except BaseException as exc:  # handed to the consumer, raised there
            put(_Failure(exc))
        finally:
            upstream.close()

    producer = threading.Thread(target=produce, name="graphflow-data-prefetch", daemon=True)
    producer.start()
    try:
        while True:
            item = ready.get()
            if item is _End:
                return
            if isinstance(item, _Failure):
                raise item.exc
            yield item
    finally:
        stop.set()
        while producer.is_alive():
            try:
                ready.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                pass
        producer.join()
