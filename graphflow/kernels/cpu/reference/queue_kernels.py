"""CPU kernels of the queue ops (`graphflow.ops.queue_ops`) and the queue resource they share.

A session keeps one `QueueResource` per queue `shared_name` (`SessionState.resource`); the creation
op's kernel returns it as the queue's handle and every other queue op calls its methods. Blocking
is a wait on the queue's condition variable: it holds no lock of the session or of a variable, so
another thread's run (an enqueue from a queue runner) proceeds while a dequeue waits. When the
session closes (`SessionState.clear` calls `close()`), every waiter wakes up and raises
`tf.errors.CancelledError`, so no thread stays blocked after `Session.close`.
"""

import collections
import threading

import numpy as np

from graphflow.framework import dtypes as graph_dtypes
from graphflow.framework.errors import CancelledError, InvalidArgumentError, OutOfRangeError
from graphflow.kernels.cpu import cpu_kernel


def _owned(value, dtype):
    """A private copy of an enqueued component (the user may change a fed array later); read-only
    arrays are stored state that is never written in place, kept as they are."""
    arr = np.asarray(value, dtype=dtype)
    if arr.flags.writeable or arr.base is not None and arr.base.flags.writeable:
        arr = np.array(arr, copy=True)
    return arr


class QueueResource:
    """One queue of a session: a FIFO (`kind` "fifo" or "padding_fifo") or a random-shuffle queue
    ("shuffle", which keeps `min_after_dequeue` elements while open and draws with `rng`)."""

    def __init__(self, name, kind, dtypes, shapes, capacity, min_after_dequeue=0, rng=None):
        self.name, self.kind = name, kind
        self.dtypes, self.shapes = dtypes, shapes  # shapes: tuples (None dims) or None per component
        self.capacity = capacity if capacity > 0 else None
        self.min_after_dequeue = min_after_dequeue
        self._rng = rng
        self._items = collections.deque() if kind != "shuffle" else []
        self._cond = threading.Condition()
        self.closed = False
        self._cancels = 0          # close(cancel_pending_enqueues=True) calls so far
        self._session_closed = False

    # ------------------------------------------------------------------ states
    def _label(self):
        kinds = {"fifo": "FIFOQueue", "padding_fifo": "PaddingFIFOQueue",
                 "shuffle": "RandomShuffleQueue"}
        return f"{kinds[self.kind]} '{self.name}'"

    def _check_session(self):
        if self._session_closed:
            raise CancelledError(None, None, f"{self._label()}: the session was closed")

    def _floor(self):
        return self.min_after_dequeue if self.kind == "shuffle" and not self.closed else 0

    def size(self):
        with self._cond:
            return len(self._items)

    def close_queue(self, cancel_pending_enqueues=False):
        with self._cond:
            self.closed = True
            if cancel_pending_enqueues:
                self._cancels += 1
            self._cond.notify_all()

    def close(self):
        """The session is closing: wake every waiter (they raise CancelledError)."""
        with self._cond:
            self.closed = True
            self._session_closed = True
            self._cancels += 1
            self._cond.notify_all()

    # ------------------------------------------------------------------ enqueue
    def _element(self, components):
        if len(components) != len(self.dtypes):
            raise InvalidArgumentError(None, None, f"{self._label()} holds {len(self.dtypes)} "
                                       f"components, {len(components)} were enqueued")
        element = tuple(_owned(c, d) for c, d in zip(components, self.dtypes))
        if self.shapes is not None:
            for i, (value, shape) in enumerate(zip(element, self.shapes)):
                if len(value.shape) != len(shape) or any(
                        d is not None and d != s for d, s in zip(shape, value.shape)):
                    raise InvalidArgumentError(
                        None, None, f"Shape mismatch in tuple component {i}: expected "
                        f"{list(shape)}, got {list(value.shape)} ({self._label()})")
        return element

    def _put(self, elements):
        """Add `elements` in order, waiting while the queue is full (`_cond` not held)."""
        with self._cond:
            self._check_session()
            if self.closed:
                raise CancelledError(None, None, f"{self._label()} is closed.")
            cancels = self._cancels
            for element in elements:
                while self.capacity is not None and len(self._items) >= self.capacity:
                    if self._cancels != cancels:
                        self._check_session()
                        raise CancelledError(None, None, f"Enqueue operation was cancelled "
                                             f"({self._label()} was closed)")
                    self._cond.wait()
                self._items.append(element)
                self._cond.notify_all()

    def enqueue(self, components):
        self._put([self._element(components)])

    def enqueue_many(self, components):
        arrays = [np.asarray(c, dtype=d) for c, d in zip(components, self.dtypes)]
        if any(a.ndim == 0 for a in arrays):
            raise InvalidArgumentError(None, None, f"enqueue_many into {self._label()}: every "
                                       "component needs a batch dimension")
        sizes = {a.shape[0] for a in arrays}
        if len(sizes) > 1:
            raise InvalidArgumentError(None, None, f"enqueue_many into {self._label()}: the "
                                       f"components have different batch sizes {sorted(sizes)}")
        n = sizes.pop() if sizes else 0
        self._put([self._element([a[i] for a in arrays]) for i in range(n)])

    # ------------------------------------------------------------------ dequeue
    def _take_one(self):
        if self.kind != "shuffle":
            return self._items.popleft()
        items = self._items
        index = int(self._rng.integers(len(items)))
        items[index], items[-1] = items[-1], items[index]
        return items.pop()

    def _take(self, n, up_to):
        """`n` elements (fewer from a closed queue when `up_to`), taken as they arrive, so `n`
        may exceed the capacity; on a closed queue without enough elements the ones taken go
        back to the front and OutOfRangeError is raised (TF1's order of events)."""
        if n == 0:
            return []
        taken = []
        with self._cond:
            while True:
                self._check_session()
                while len(taken) < n and len(self._items) > self._floor():
                    taken.append(self._take_one())
                if taken:
                    self._cond.notify_all()
                if len(taken) == n:
                    return taken
                if self.closed:
                    if up_to and taken:
                        return taken
                    self._restore(taken)
                    raise OutOfRangeError(
                        None, None, f"{self._label()} is closed and has insufficient elements "
                        f"(requested {n}, current size {len(self._items)})")
                try:
                    self._cond.wait()
                except BaseException:
                    self._restore(taken)
                    raise

    def _restore(self, taken):
        if self.kind == "shuffle":
            self._items.extend(taken)
        else:
            self._items.extendleft(reversed(taken))

    def dequeue(self):
        return self._take(1, up_to=False)[0]

    def dequeue_many(self, n, up_to=False):
        if n < 0:
            raise InvalidArgumentError(None, None, f"dequeue_many from {self._label()}: n must "
                                       f"be >= 0, got {n}")
        return self._stack(self._take(n, up_to))

    def _stack(self, elements):
        out = []
        for i, dtype in enumerate(self.dtypes):
            values = [e[i] for e in elements]
            if not values:
                shape = self.shapes[i] if self.shapes is not None else ()
                out.append(np.empty((0,) + tuple(d or 0 for d in shape), dtype=dtype))
                continue
            if self.kind == "padding_fifo":
                values = _padded(values, dtype)
            elif len({v.shape for v in values}) > 1:
                raise InvalidArgumentError(
                    None, None, f"dequeue_many from {self._label()}: component {i} has elements "
                    f"of different shapes {sorted({v.shape for v in values})} (give the queue "
                    "shapes, or use a PaddingFIFOQueue)")
            out.append(np.stack(values))
        return tuple(out)


def _padded(values, dtype):
    shape = tuple(max(v.shape[k] for v in values) for k in range(values[0].ndim))
    fill = b"" if dtype == np.object_ else 0
    out = []
    for v in values:
        if v.shape == shape:
            out.append(v)
            continue
        padded = np.full(shape, fill, dtype=dtype)
        padded[tuple(slice(0, d) for d in v.shape)] = v
        out.append(padded)
    return out


# ---------------------------------------------------------------------------------- kernels
def _queue_builder(kind):
    def build(node):
        attrs = node.attrs
        dtypes = [graph_dtypes.as_dtype(t).as_numpy_dtype for t in attrs["component_types"]]
        shapes = [tuple(s) if s is not None else None for s in attrs["shapes"]] or None
        if shapes is not None and any(s is None for s in shapes):
            shapes = None

        def create():
            rng = None
            if kind == "shuffle":
                seed, seed2 = attrs["seed"], attrs["seed2"]
                rng = np.random.default_rng(None if seed == 0 and seed2 == 0 else [seed, seed2])
            return QueueResource(attrs["shared_name"], kind, dtypes, shapes, attrs["capacity"],
                                 attrs.get("min_after_dequeue", 0), rng)
        queue = node.state.resource(("queue", attrs["shared_name"]), create)
        return lambda: queue
    return build


cpu_kernel("FIFOQueueV2")(_queue_builder("fifo"))
cpu_kernel("PaddingFIFOQueueV2")(_queue_builder("padding_fifo"))
cpu_kernel("RandomShuffleQueueV2")(_queue_builder("shuffle"))


@cpu_kernel("QueueEnqueueV2")
def _enqueue(node):
    def queue_enqueue(queue, *components):
        queue.enqueue(components)
    return queue_enqueue


@cpu_kernel("QueueEnqueueManyV2")
def _enqueue_many(node):
    def queue_enqueue_many(queue, *components):
        queue.enqueue_many(components)
    return queue_enqueue_many


def _result(node, values):
    return values[0] if len(node.out_dtypes) == 1 else tuple(values)


@cpu_kernel("QueueDequeueV2")
def _dequeue(node):
    def queue_dequeue(queue):
        return _result(node, queue.dequeue())
    return queue_dequeue


@cpu_kernel("QueueDequeueManyV2")
def _dequeue_many(node):
    def queue_dequeue_many(queue, n):
        return _result(node, queue.dequeue_many(int(n)))
    return queue_dequeue_many


@cpu_kernel("QueueDequeueUpToV2")
def _dequeue_up_to(node):
    def queue_dequeue_up_to(queue, n):
        return _result(node, queue.dequeue_many(int(n), up_to=True))
    return queue_dequeue_up_to


@cpu_kernel("QueueCloseV2")
def _close(node):
    cancel = node.attrs["cancel_pending_enqueues"]

    def queue_close(queue):
        queue.close_queue(cancel)
    return queue_close


@cpu_kernel("QueueSizeV2")
def _size(node):
    return lambda queue: np.asarray(queue.size(), dtype=np.int32)


@cpu_kernel("QueueIsClosedV2")
def _is_closed(node):
    return lambda queue: np.asarray(queue.closed)
