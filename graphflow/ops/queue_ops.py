"""TF1's queues: `tf.FIFOQueue`, `tf.RandomShuffleQueue`, `tf.PaddingFIFOQueue` and their ops.

A queue is a session resource (`kernels/cpu/reference/queue_kernels.py`) made by its creation op
(`FIFOQueueV2`, `RandomShuffleQueueV2`, `PaddingFIFOQueueV2`), whose output is the queue's handle
(a `variant` scalar). Every other queue op takes that handle as input 0:

  QueueEnqueueV2 / QueueEnqueueManyV2   add one element / the rows of its components (no outputs);
                                        block while the queue is full
  QueueDequeueV2                        one element's components
  QueueDequeueManyV2 / QueueDequeueUpToV2   `n` elements stacked (UpTo: fewer once it is closed)
  QueueCloseV2                          close (attr `cancel_pending_enqueues`)
  QueueSizeV2 / QueueIsClosedV2         the number of elements / whether it is closed

Dequeues block until enough elements are there; on a closed queue without enough elements they
raise `tf.errors.OutOfRangeError`, and an enqueue on a closed queue raises CancelledError. All of
them are `stateful` (never folded, merged or pruned when fetched) and, like TF1's, not undone when
the run fails later (an element dequeued by a failed run is gone). The queue's `shared_name` attr is
the op's name when none is given, so each queue object is one queue per session.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import get_default_graph, name_scope
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.random_ops import get_seed
from graphflow.ops.registry import define, make_op, no_gradient
from graphflow.ops.static_value import scalar_value


def _handle():
    return [(dtypes.variant, TensorShape([]))]


def _queue_attrs_of(attrs):
    types = [dtypes.as_dtype(t) for t in attrs["component_types"]]
    shapes = [as_shape(s) for s in attrs["shapes"]]
    if not types:
        raise ValueError("a queue needs at least one component dtype")
    if shapes and len(shapes) != len(types):
        raise ValueError(f"a queue of {len(types)} components was given {len(shapes)} shapes")
    return types, shapes


def _create_infer(inputs, attrs):
    _queue_attrs_of(attrs)
    if attrs["capacity"] == 0 or attrs["capacity"] < -1:
        raise ValueError(f"queue capacity must be positive (or -1: unbounded), got "
                         f"{attrs['capacity']}")
    return _handle()


def _require_handle(t):
    if t.dtype != dtypes.variant:
        raise TypeError(f"a queue op's input 0 must be a queue handle (variant), got {t.name} of "
                        f"dtype {t.dtype.name}")


def _require_count(t, what="n"):
    if not t.dtype.is_integer or t.shape.ndims not in (None, 0):
        raise TypeError(f"{what} must be an integer scalar, got {t.name} of dtype {t.dtype.name} "
                        f"and shape {t.shape}")


def _component_facts(attrs):
    types = [dtypes.as_dtype(t) for t in attrs["component_types"]]
    shapes = [as_shape(s) for s in attrs["shapes"]] or [TensorShape(None)] * len(types)
    return types, shapes


def _check_components(values, attrs, many):
    types, shapes = _component_facts(attrs)
    if len(values) != len(types):
        raise ValueError(f"the queue holds {len(types)} components, {len(values)} were given")
    for i, (v, dt, shape) in enumerate(zip(values, types, shapes)):
        if v.dtype != dt:
            raise TypeError(f"component {i} must be {dt.name}, got {v.name} of {v.dtype.name}")
        got = v.shape
        if many:
            if got.ndims == 0:
                raise ValueError(f"enqueue_many: component {i} must have a batch dimension, got "
                                 f"a scalar")
            got = TensorShape(None) if got.ndims is None else TensorShape(got.dims[1:])
        if not shape.is_compatible_with(got):
            raise ValueError(f"component {i} of shape {got} does not fit the queue's element "
                             f"shape {shape}")


def _enqueue_infer(inputs, attrs):
    _require_handle(inputs[0])
    _check_components(inputs[1:], attrs, many=False)
    return []


def _enqueue_many_infer(inputs, attrs):
    _require_handle(inputs[0])
    _check_components(inputs[1:], attrs, many=True)
    sizes = {v.shape.dims[0] for v in inputs[1:] if v.shape.ndims and v.shape.dims[0] is not None}
    if len(sizes) > 1:
        raise ValueError(f"enqueue_many: the components have different batch sizes {sorted(sizes)}")
    return []


def _dequeue_infer(inputs, attrs):
    _require_handle(inputs[0])
    return list(zip(*_component_facts(attrs)))


def _dequeue_many_infer(inputs, attrs, static_n=True):
    _require_handle(inputs[0])
    _require_count(inputs[1])
    n = scalar_value(inputs[1]) if static_n else None
    types, shapes = _component_facts(attrs)
    return [(dt, TensorShape([n]).concatenate(s)) for dt, s in zip(types, shapes)]


def _dequeue_up_to_infer(inputs, attrs):
    return _dequeue_many_infer(inputs, attrs, static_n=False)


def _close_infer(inputs, attrs):
    _require_handle(inputs[0])
    return []


def _size_infer(inputs, attrs):
    _require_handle(inputs[0])
    return [(dtypes.int32, TensorShape([]))]


def _is_closed_infer(inputs, attrs):
    _require_handle(inputs[0])
    return [(dtypes.bool_, TensorShape([]))]


_QUEUE = "component_types:list(dtype) shapes:list(shape) capacity:int shared_name:string"
_COMPONENTS = "component_types:list(dtype) shapes:list(shape)"
# schedule="early": a run takes its element first, before it reads any variable, so the wait
# happens before the run takes the locks of use_locking variables (engine/executor.py)
define("FIFOQueueV2", _create_infer, stateful=True, attrs=_QUEUE, schedule="early", onnx=no_onnx.QUEUE)
define("PaddingFIFOQueueV2", _create_infer, stateful=True, attrs=_QUEUE, schedule="early", onnx=no_onnx.QUEUE)
define("RandomShuffleQueueV2", _create_infer, stateful=True, schedule="early",
       attrs=_QUEUE + " min_after_dequeue:int seed:int seed2:int", onnx=no_onnx.QUEUE)
define("QueueEnqueueV2", _enqueue_infer, stateful=True, attrs=_COMPONENTS, onnx=no_onnx.QUEUE)
define("QueueEnqueueManyV2", _enqueue_many_infer, stateful=True, attrs=_COMPONENTS, onnx=no_onnx.QUEUE)
# returns_state: a dequeued element may be the array an enqueue stored (no copy)
define("QueueDequeueV2", _dequeue_infer, stateful=True, returns_state=True, attrs=_COMPONENTS,
       schedule="early", onnx=no_onnx.QUEUE)
define("QueueDequeueManyV2", _dequeue_many_infer, stateful=True, attrs=_COMPONENTS, schedule="early",
       onnx=no_onnx.QUEUE)
define("QueueDequeueUpToV2", _dequeue_up_to_infer, stateful=True, attrs=_COMPONENTS,
       value_dependent_shape=True, schedule="early", onnx=no_onnx.QUEUE)
define("QueueCloseV2", _close_infer, stateful=True, attrs="cancel_pending_enqueues:bool", onnx=no_onnx.QUEUE)
define("QueueSizeV2", _size_infer, stateful=True, onnx=no_onnx.QUEUE)
define("QueueIsClosedV2", _is_closed_infer, stateful=True, onnx=no_onnx.QUEUE)
no_gradient("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "QueueDequeueV2",
            "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueSizeV2", "QueueIsClosedV2")


# ------------------------------------------------------------------------------ Python classes
def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


class QueueBase:
    """`tf.QueueBase`: what the three queue classes share (TF1's methods and properties)."""

    _create_type = None

    def __init__(self, dtypes_, shapes, names, capacity, shared_name, name, extra_attrs=None):
        self._dtypes = [dtypes.as_dtype(d) for d in _as_list(dtypes_)]
        if shapes is not None:
            shapes = [as_shape(s) for s in _as_list(shapes)] if _as_list(shapes) else []
            if shapes and len(shapes) != len(self._dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes: "
                                 f"{len(shapes)} != {len(self._dtypes)}")
        self._shapes = shapes or [TensorShape(None)] * len(self._dtypes)
        self._shapes_given = bool(shapes)
        if names is not None:
            names = _as_list(names)
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self._names = names
        graph = get_default_graph()
        with graph.control_dependencies(None):
            op_name = graph.unique_name(name)
            attrs = {"component_types": [d.name for d in self._dtypes],
                     "shapes": [s.dims for s in self._shapes] if self._shapes_given else [],
                     "capacity": -1 if capacity is None else int(capacity),
                     "shared_name": shared_name or op_name}
            attrs.update(extra_attrs or {})
            self._queue_op = make_op(self._create_type, (), attrs, name=op_name + "/")
        self._queue_ref = self._queue_op.outputs[0]
        self._name = self._queue_op.name
        self._base = self._name.rsplit("/", 1)[-1]

    # --- properties
    queue_ref = property(lambda self: self._queue_ref)
    name = property(lambda self: self._name)
    dtypes = property(lambda self: list(self._dtypes))
    shapes = property(lambda self: list(self._shapes))
    names = property(lambda self: self._names)

    def _components(self):
        return {"component_types": [d.name for d in self._dtypes],
                "shapes": [s.dims for s in self._shapes] if self._shapes_given else []}

    def _values(self, vals, what):
        if self._names is not None:
            if not isinstance(vals, dict):
                raise ValueError(f"{what}: this queue has names, so vals must be a dict")
            if sorted(vals) != sorted(self._names):
                raise ValueError(f"{what}: keys {sorted(vals)} do not match the queue's names "
                                 f"{sorted(self._names)}")
            vals = [vals[n] for n in self._names]
        else:
            vals = _as_list(vals)
        if len(vals) != len(self._dtypes):
            raise ValueError(f"{what}: the queue holds {len(self._dtypes)} components, "
                             f"{len(vals)} values were given")
        return [convert_to_tensor(v, dtype=d, name=f"component_{i}")
                for i, (v, d) in enumerate(zip(vals, self._dtypes))]

    def _returned(self, tensors):
        if self._names is not None:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else list(tensors)

    # --- ops
    def enqueue(self, vals, name=None):
        with name_scope(name, f"{self._base}_enqueue", []) as scope:
            values = self._values(vals, "enqueue")
            return make_op("QueueEnqueueV2", [self._queue_ref] + values, self._components(),
                           name=scope)

    def enqueue_many(self, vals, name=None):
        with name_scope(name, f"{self._base}_EnqueueMany", []) as scope:
            values = self._values(vals, "enqueue_many")
            return make_op("QueueEnqueueManyV2", [self._queue_ref] + values, self._components(),
                           name=scope)

    def dequeue(self, name=None):
        op = make_op("QueueDequeueV2", (self._queue_ref,), self._components(),
                     name=name or f"{self._base}_Dequeue")
        return self._returned(op.outputs)

    def dequeue_many(self, n, name=None):
        n = convert_to_tensor(n, dtype=dtypes.int32, name="n")
        op = make_op("QueueDequeueManyV2", (self._queue_ref, n), self._components(),
                     name=name or f"{self._base}_DequeueMany")
        return self._returned(op.outputs)

    def dequeue_up_to(self, n, name=None):
        n = convert_to_tensor(n, dtype=dtypes.int32, name="n")
        op = make_op("QueueDequeueUpToV2", (self._queue_ref, n), self._components(),
                     name=name or f"{self._base}_DequeueUpTo")
        return self._returned(op.outputs)

    def close(self, cancel_pending_enqueues=False, name=None):
        return make_op("QueueCloseV2", (self._queue_ref,),
                       {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                       name=name or f"{self._base}_Close")

    def size(self, name=None):
        return make_op("QueueSizeV2", (self._queue_ref,), name=name or f"{self._base}_Size"
                       ).outputs[0]

    def is_closed(self, name=None):
        return make_op("QueueIsClosedV2", (self._queue_ref,),
                       name=name or f"{self._base}_IsClosed").outputs[0]


class FIFOQueue(QueueBase):
    """`tf.FIFOQueue(capacity, dtypes, shapes=None, names=None, shared_name=None,
    name="fifo_queue")`: elements come out in the order they went in."""

    _create_type = "FIFOQueueV2"

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        super().__init__(dtypes, shapes, names, capacity, shared_name, name)


class PaddingFIFOQueue(QueueBase):
    """`tf.PaddingFIFOQueue(capacity, dtypes, shapes, ...)`: a FIFO queue whose element shapes may
    have unknown dimensions; `dequeue_many` pads each component to the batch's largest size (with
    zeros, or empty strings)."""

    _create_type = "PaddingFIFOQueueV2"

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        shapes = _as_list(shapes)
        if len(shapes) != len(_as_list(dtypes)) or any(as_shape(s).ndims is None for s in shapes):
            raise ValueError("PaddingFIFOQueue needs a shape of known rank for every component")
        super().__init__(dtypes, shapes, names, capacity, shared_name, name)


class RandomShuffleQueue(QueueBase):
    """`tf.RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes=None, names=None,
    seed=None, shared_name=None, name="random_shuffle_queue")`: dequeues take elements at random
    and, while the queue is open, leave at least `min_after_dequeue` in it. Seeded as TF1's random
    ops are (`tf.set_random_seed` makes the order deterministic)."""

    _create_type = "RandomShuffleQueueV2"

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        seed1, seed2 = get_seed(seed)
        super().__init__(dtypes, shapes, names, capacity, shared_name, name, {
            "min_after_dequeue": int(min_after_dequeue), "seed": seed1 or 0, "seed2": seed2 or 0})


__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue"]
