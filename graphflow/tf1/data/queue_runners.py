"""TF1's queue runners and thread coordinator: `tf.train.QueueRunner`, `add_queue_runner`,
`start_queue_runners` and `tf.train.Coordinator`.

A QueueRunner holds a queue and the enqueue ops that fill it; `create_threads(sess, coord)` starts
one thread per enqueue op, each running its op in a loop (`Session.run` is safe on several threads,
and a queue op that waits holds no lock another run needs). An enqueue run that ends in
`tf.errors.OutOfRangeError` (its input is exhausted: an input producer's epochs are done, or the
queue it reads is closed and empty) ends its thread; the last thread to end closes the queue, so
readers of it get OutOfRangeError once it is empty. Other errors are handed to the Coordinator
(`coord.request_stop(e)`; `coord.join()` raises them). With a coordinator, one more thread waits for
the stop request and then closes the queue with `cancel_pending_enqueues=True`, which wakes the
enqueue threads. Threads are daemons by default, and `Session.close` wakes any run still waiting in
a queue op, so no thread keeps a finished program alive.
"""

import logging
import sys
import threading
import time
import weakref

from graphflow.framework.errors import CancelledError, OutOfRangeError
from graphflow.framework.graph import GraphKeys, get_default_graph

_logger = logging.getLogger("graphflow")


class QueueRunner:
    """`tf.train.QueueRunner(queue, enqueue_ops, close_op=None, cancel_op=None,
    queue_closed_exception_types=None)`."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise ValueError("QueueRunner: building from a QueueRunnerDef is not available")
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and a non-empty list of enqueue ops")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (cancel_op if cancel_op is not None
                           else queue.close(cancel_pending_enqueues=True))
        self._queue_closed_exception_types = tuple(queue_closed_exception_types
                                                   or (OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: self._enqueue_ops)
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    queue_closed_exception_types = property(lambda self: self._queue_closed_exception_types)
    name = property(lambda self: self._queue.name)

    @property
    def exceptions_raised(self):
        """Errors the threads raised when they had no coordinator to report them to."""
        return self._exceptions_raised

    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            enqueue = sess.make_callable(enqueue_op)
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as exc:  # the session may be closing: ignored
                                _logger.debug("QueueRunner: ignored error closing the queue: %s",
                                              exc)
                    return
        except Exception as exc:
            if _stopping(sess, coord, exc):
                return
            if coord is not None:
                coord.request_stop(exc)
            else:
                _logger.error("Exception in QueueRunner: %s", exc)
                with self._lock:
                    self._exceptions_raised.append(exc)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as exc:  # the session may be closed already
            _logger.debug("QueueRunner: ignored error cancelling the queue: %s", exc)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """The threads running this runner's enqueue ops in `sess` (none if they already run)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunner-{self.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, self._cancel_op, coord),
                                            name=f"QueueRunnerThread-{self.name}"))
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            thread.daemon = daemon
            if start:
                thread.start()
        return threads


def _stopping(sess, coord, exc):
    """An error that only says the program is stopping: a closed session, or a cancelled enqueue
    after a stop request."""
    if getattr(sess, "_closed", False):
        return True
    return isinstance(exc, CancelledError) and coord is not None and coord.should_stop()


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """`tf.train.add_queue_runner`: add `qr` to the graph's queue runners."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """`tf.train.start_queue_runners`: start the threads of every queue runner of the graph in
    `sess` (the default session if None); returns them."""
    if sess is None:
        from graphflow.framework.default_session import get_default_session
        sess = get_default_session()
        if sess is None:
            raise ValueError("start_queue_runners: no session given and no default session")
    sess = getattr(sess, "raw_session", lambda: sess)()  # a MonitoredSession's own session
    with sess.graph.as_default():
        threads = []
        for qr in sess.graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


class Coordinator:
    """`tf.train.Coordinator(clean_stop_exception_types=None)`: lets threads request a stop and
    joins them; the first error reported with `request_stop(e)` is raised by `join` (errors of
    `clean_stop_exception_types`, OutOfRangeError by default, only stop)."""

    def __init__(self, clean_stop_exception_types=None):
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._exc_info = None
        self._threads = set()
        self._joined = False
        self._clean = tuple(clean_stop_exception_types if clean_stop_exception_types is not None
                            else (OutOfRangeError,))

    def should_stop(self):
        return self._stop.is_set()

    def request_stop(self, ex=None):
        with self._lock:
            if self._stop.is_set():
                return
            if ex is not None:
                exc_info = ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__)
                if not isinstance(exc_info[1], self._clean):
                    self._exc_info = exc_info
            self._stop.set()

    def clear_stop(self):
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop.clear()

    def wait_for_stop(self, timeout=None):
        return self._stop.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._threads.add(thread)

    def stop_on_exception(self):
        return _StopOnException(self)

    @property
    def joined(self):
        return self._joined

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Wait until the threads end or a stop is requested, then up to `stop_grace_period_secs`
        for the threads to end; raise the reported error, or RuntimeError naming threads still
        alive (unless `ignore_live_threads`)."""
        with self._lock:
            threads = set(threads or ()) | self._threads
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.1):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._joined = True
            self._threads = set()
        self.raise_requested_exception()
        alive = [t.name for t in threads if t.is_alive()]
        if alive:
            if ignore_live_threads:
                _logger.info("Coordinator stopped with threads still running: %s", alive)
            else:
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


__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners", "Coordinator"]
