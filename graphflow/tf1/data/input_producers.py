"""TF1's queue-based input pipelines (TF1's training/input.py), built on `tf.FIFOQueue`,
`tf.RandomShuffleQueue` and queue runners:

  producers  `input_producer`, `string_input_producer`, `range_input_producer`,
             `slice_input_producer`: a queue that a queue runner refills with the input's rows
             (reshuffled each epoch when `shuffle`); `num_epochs` counts the refills in a local
             variable (`limit_epochs`, run `tf.local_variables_initializer()`), and past the last
             epoch the queue closes, so its readers get OutOfRangeError once it is empty.
  batchers   `batch`, `shuffle_batch`, `batch_join`, `shuffle_batch_join`: a queue that
             `num_threads` queue-runner threads fill with the given tensors (each thread runs the
             enqueue op, so every thread evaluates the tensors afresh: one more record read and
             preprocessed), and the op dequeuing `batch_size` elements from it. A list of one
             tensor comes back as one tensor, as in TF1. `maybe_batch` and `maybe_shuffle_batch`
             enqueue only what `keep_input` keeps (a `tf.cond` around the enqueue, or a
             boolean mask of the rows with `enqueue_many`).

The threads start with `tf.train.start_queue_runners(sess, coord)` (or a MonitoredSession).
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, Tensor, control_dependencies, name_scope
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import (
    array_ops,
    control_flow_ops,
    core_ops,
    index_ops,
    logging_ops,
    math_ops,
    random_ops,
    shape_ops,
)
from graphflow.ops.queue_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from graphflow.ops.sparse_tensor import SparseTensor
from graphflow.ops.state_ops import Variable
from graphflow.tf1.data.queue_runners import QueueRunner, add_queue_runner


def _summary_scalar(name, value):
    from graphflow.tf1.summary import summary_ops
    summary_ops.scalar(name, value)


# ------------------------------------------------------------------------------ producers
def limit_epochs(tensor, num_epochs=None, name=None):
    """`tf.train.limit_epochs`: `tensor`, `num_epochs` times; then OutOfRangeError."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = core_ops.convert_to_tensor(0, dtype=dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with control_dependencies([counter]):
            return core_ops.identity(tensor, name=scope[:-1].rsplit("/", 1)[-1])


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None, cancel_op=None):
    """`tf.train.input_producer`: a FIFOQueue of the rows of `input_tensor`, refilled by a queue
    runner (the rows shuffled each time when `shuffle`)."""
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = core_ops.convert_to_tensor(input_tensor, name="input_tensor")
        rows = input_tensor.shape
        row_shape = TensorShape(None) if rows.ndims is None else TensorShape(rows.dims[1:])
        element_shape = row_shape.merge_with(as_shape(element_shape) if element_shape is not None
                                             else TensorShape(None))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype], shapes=[element_shape],
                          shared_name=shared_name, name=name or "fifo_queue")
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _summary_scalar(summary_name,
                            math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """`tf.train.string_input_producer`: a queue of the strings (file names) of `string_tensor`."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = core_ops.convert_to_tensor(string_tensor, dtype=dtypes.string)
        check = logging_ops.Assert(math_ops.greater(shape_ops.size(string_tensor), 0),
                                   [not_null_err])
        with control_dependencies([check]):
            string_tensor = core_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, f"fraction_of_{capacity}_full",
                              scope[:-1].rsplit("/", 1)[-1], cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """`tf.train.range_input_producer`: a queue of the integers 0 .. limit-1."""
    with name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = array_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope[:-1].rsplit("/", 1)[-1])


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """`tf.train.slice_input_producer`: one row of each tensor of `tensor_list` (the same row of
    each) per evaluation, row indices from a `range_input_producer`."""
    with name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [core_ops.convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = shape_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]


# ------------------------------------------------------------------------------ batchers
def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (Tensor, SparseTensor)) or not isinstance(tensors, (list, tuple)):
        return [tensors]
    return list(tensors)


def _validate(tensor_list):
    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    if any(isinstance(t, SparseTensor) for t in tensor_list):
        raise TypeError("batching SparseTensors through a queue is not available: batch the "
                        "dense tensors, or use tf.data")
    return [core_ops.convert_to_tensor(t) for t in tensor_list]


def _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad=False):
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    out = []
    for i, t in enumerate(tensor_list_list[0]):
        shape = t.shape
        if enqueue_many:
            shape = TensorShape(None) if shape.ndims is None else TensorShape(shape.dims[1:])
        for tl in tensor_list_list[1:]:
            other = tl[i].shape
            if enqueue_many:
                other = TensorShape(None) if other.ndims is None else TensorShape(other.dims[1:])
            shape = shape.merge_with(other)
        if not shape.is_fully_defined() and not (dynamic_pad and shape.ndims is not None):
            raise ValueError(f"All shapes must be fully defined: {[t.shape for t in tensor_list_list[0]]}")
        out.append(shape)
    return out


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if len(original) == 1:
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _keep_input(keep_input, enqueue_many):
    """None for `True` (always enqueue), else a bool tensor: a scalar, or with `enqueue_many` a
    scalar or a vector (one flag per row)."""
    if keep_input is True:
        return None
    keep = core_ops.convert_to_tensor(keep_input, dtype=dtypes.bool_, name="keep_input")
    ndims = keep.shape.ndims
    if ndims is None or ndims > 1 or (ndims == 1 and not enqueue_many):
        raise ValueError("`keep_input` must be a scalar, or a vector with enqueue_many=True")
    return keep


def _enqueue_op(queue, tensors, enqueue_many, keep):
    """The enqueue op, kept to the rows / the elements that `keep` selects (TF1's rules)."""
    enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
    if keep is None:
        return enqueue(tensors)
    if keep.shape.ndims == 1:
        return enqueue([index_ops.boolean_mask(t, keep) for t in tensors])
    return control_flow_ops.cond(keep, lambda: enqueue(tensors), core_ops.no_op)


def _dequeue(queue, batch_size, allow_smaller_final_batch, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch_join_impl(tensors_list, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                     allow_smaller_final_batch, shared_name, name, default_name, threads=None,
                     min_after_dequeue=None, seed=None, keep_input=True):
    lists = [_as_tensor_list(t) for t in tensors_list]
    with name_scope(name, default_name, [t for tl in lists for t in tl]) as scope:
        lists = [_validate(tl) for tl in lists]
        keep = _keep_input(keep_input, enqueue_many)
        types = [t.dtype for t in lists[0]]
        for tl in lists[1:]:
            if [t.dtype for t in tl] != types:
                raise TypeError(f"Expected types to be {[t.name for t in types]}, got "
                                f"{[t.dtype.name for t in tl]}")
        queue_shapes = _shapes(lists, shapes, enqueue_many, dynamic_pad)
        if min_after_dequeue is not None:
            if capacity <= min_after_dequeue:
                raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue "
                                 f"{min_after_dequeue}.")
            queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                       seed=seed, dtypes=types, shapes=queue_shapes,
                                       shared_name=shared_name)
        else:
            kind = PaddingFIFOQueue if dynamic_pad else FIFOQueue
            queue = kind(capacity=capacity, dtypes=types, shapes=queue_shapes,
                         shared_name=shared_name)
        if threads is not None:  # batch / shuffle_batch: one op, run by `threads` threads
            ops = [_enqueue_op(queue, lists[0], enqueue_many, keep)] * threads
        else:
            ops = [_enqueue_op(queue, tl, enqueue_many, keep) for tl in lists]
        add_queue_runner(QueueRunner(queue, ops))
        if min_after_dequeue is None:
            _summary_scalar(f"fraction_of_{capacity}_full",
                            math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        else:
            full = math_ops.cast(math_ops.maximum(0, queue.size() - min_after_dequeue),
                                 dtypes.float32) * (1.0 / (capacity - min_after_dequeue))
            _summary_scalar(f"fraction_over_{min_after_dequeue}_of_"
                            f"{capacity - min_after_dequeue}_full", full)
        return _dequeue(queue, batch_size, allow_smaller_final_batch, scope)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.batch`: batches of `batch_size` of `tensors` (a list or dict), in the order
    `num_threads` threads enqueue them (`dynamic_pad`: elements of different sizes are padded)."""
    dequeued = _batch_join_impl([tensors], batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                                allow_smaller_final_batch, shared_name, name, "batch",
                                threads=num_threads)
    return _as_original_type(tensors, dequeued)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """`tf.train.shuffle_batch`: batches drawn at random from a RandomShuffleQueue of up to
    `capacity` elements that keeps at least `min_after_dequeue` (until its inputs end)."""
    dequeued = _batch_join_impl([tensors], batch_size, capacity, enqueue_many, shapes, False,
                                allow_smaller_final_batch, shared_name, name, "shuffle_batch",
                                threads=num_threads, min_after_dequeue=min_after_dequeue,
                                seed=seed)
    return _as_original_type(tensors, dequeued)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.batch_join`: like `batch`, one enqueue thread per list of `tensors_list`."""
    dequeued = _batch_join_impl(tensors_list, batch_size, capacity, enqueue_many, shapes,
                                dynamic_pad, allow_smaller_final_batch, shared_name, name,
                                "batch_join")
    return _as_original_type(tensors_list[0], dequeued)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """`tf.train.shuffle_batch_join`: like `shuffle_batch`, one enqueue thread per list."""
    dequeued = _batch_join_impl(tensors_list, batch_size, capacity, enqueue_many, shapes, False,
                                allow_smaller_final_batch, shared_name, name,
                                "shuffle_batch_join", min_after_dequeue=min_after_dequeue,
                                seed=seed)
    return _as_original_type(tensors_list[0], dequeued)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    """`tf.train.maybe_batch`: `batch` of the elements for which `keep_input` (a bool scalar, or
    with `enqueue_many` a vector over the rows) is true."""
    dequeued = _batch_join_impl([tensors], batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                                allow_smaller_final_batch, shared_name, name, "batch",
                                threads=num_threads, keep_input=keep_input)
    return _as_original_type(tensors, dequeued)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """`tf.train.maybe_shuffle_batch`: `shuffle_batch` of the elements `keep_input` keeps."""
    dequeued = _batch_join_impl([tensors], batch_size, capacity, enqueue_many, shapes, False,
                                allow_smaller_final_batch, shared_name, name, "shuffle_batch",
                                threads=num_threads, min_after_dequeue=min_after_dequeue,
                                seed=seed, keep_input=keep_input)
    return _as_original_type(tensors, dequeued)


__all__ = ["limit_epochs", "input_producer", "string_input_producer", "range_input_producer",
           "slice_input_producer", "batch", "shuffle_batch", "batch_join", "shuffle_batch_join",
           "maybe_batch", "maybe_shuffle_batch"]
