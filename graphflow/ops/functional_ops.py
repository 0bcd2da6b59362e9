"""`tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr`: loops over the first dimension of tensors,
written as TF1 writes them, with `tf.while_loop` and `tf.TensorArray` (so gradients, saving and
placement come from those)."""

from graphflow.framework import dtypes, nest
from graphflow.framework.graph import get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import shape_ops
from graphflow.ops.control_flow_ops import while_loop
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.tensor_array_ops import TensorArray


def _elements(elems, what):
    """(flat element tensors, their common static length or None, the run-time length)."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must hold at least one tensor")
    for e in flat:
        if e.shape.dims is not None and len(e.shape.dims) == 0:
            raise ValueError(f"{what}: elems must have a first dimension to loop over, got the "
                             f"scalar {e.name}")
    static = next((e.shape.dims[0] for e in flat if e.shape.dims and e.shape.dims[0] is not None),
                  None)
    length = constant(static, dtype=dtypes.int32) if static is not None else \
        shape_ops.shape(flat[0], out_type=dtypes.int32)[0]
    return flat, static, length


def _input_arrays(flat):
    return [TensorArray(e.dtype, size=shape_ops.shape(e, out_type=dtypes.int32)[0],
                        element_shape=TensorShape(e.shape.dims[1:]) if e.shape.dims else None,
                        clear_after_read=False).unstack(e) for e in flat]


def _output_arrays(dtype_leaves, length):
    return [TensorArray(dt, size=length, clear_after_read=False) for dt in dtype_leaves]


def _stacked(arrays, static):
    out = []
    for ta in arrays:
        value = ta.stack()
        value.set_shape(TensorShape([static]).concatenate(ta.element_shape))
        out.append(value)
    return out


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """`tf.map_fn`: stack `fn(x)` for each x unstacked from `elems` on dimension 0. `elems` may be
    a nest of tensors (fn gets the same nest of slices); `dtype` gives the output nest's dtypes
    when it differs from `elems`."""
    with get_default_graph().name_scope(name or "map"):
        flat, static, length = _elements(elems, "tf.map_fn")
        out_dtypes = nest.flatten(dtype) if dtype is not None else [e.dtype for e in flat]
        out_structure = dtype if dtype is not None else elems
        inputs = _input_arrays(flat)

        def body(i, outputs):
            x = nest.pack_sequence_as(elems, [ta.read(i) for ta in inputs])
            y = [convert_to_tensor(v) for v in nest.flatten(fn(x))]
            if len(y) != len(outputs):
                raise ValueError(f"tf.map_fn: fn returned {len(y)} tensors but dtype describes "
                                 f"{len(outputs)}")
            return i + 1, [ta.write(i, v) for ta, v in zip(outputs, y)]

        _, outputs = while_loop(lambda i, _: i < length, body,
                                (constant(0), _output_arrays(out_dtypes, length)),
                                parallel_iterations=parallel_iterations or 10,
                                back_prop=back_prop, swap_memory=swap_memory)
        return nest.pack_sequence_as(out_structure, _stacked(outputs, static))


def _accumulate(fn, elems, initializer, reverse, keep_outputs, what, back_prop, name):
    with get_default_graph().name_scope(name):
        flat, static, length = _elements(elems, what)
        inputs = _input_arrays(flat)

        def element(i):
            index = length - 1 - i if reverse else i
            return index, nest.pack_sequence_as(elems, [ta.read(index) for ta in inputs])

        start = constant(0)
        if initializer is None:  # the first element starts the accumulator
            _, first = element(start)
            acc, start = first, constant(1)
        else:
            acc = initializer
        acc_flat = [convert_to_tensor(a) for a in nest.flatten(acc)]
        acc_structure = acc
        outputs = _output_arrays([a.dtype for a in acc_flat], length) if keep_outputs else []
        if keep_outputs and initializer is None:
            first_index = length - 1 if reverse else constant(0)
            outputs = [ta.write(first_index, a) for ta, a in zip(outputs, acc_flat)]

        def body(i, a, outs):
            index, x = element(i)
            new = fn(nest.pack_sequence_as(acc_structure, a), x)
            mismatch = nest.structure_mismatch(acc_structure, new)
            if mismatch is not None:
                raise ValueError(f"{what}: fn must return the structure of its accumulator, "
                                 f"{mismatch}")
            new_flat = [convert_to_tensor(v) for v in nest.flatten(new)]
            outs = [ta.write(index, v) for ta, v in zip(outs, new_flat)]
            return i + 1, new_flat, outs

        _, final, outputs = while_loop(lambda i, a, o: i < length, body,
                                       (start, acc_flat, outputs), back_prop=back_prop)
        if keep_outputs:
            return nest.pack_sequence_as(acc_structure, _stacked(outputs, static))
        return nest.pack_sequence_as(acc_structure, final)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """`tf.scan`: a = fn(a, x) over the elements of `elems` (last to first with `reverse`),
    stacking every a. Without `initializer`, the first element starts a (and is output first)."""
    return _accumulate(fn, elems, initializer, reverse, True, "tf.scan", back_prop,
                       name or "scan")


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
          name=None):
    """`tf.foldl`: the final a of a = fn(a, x) over the elements of `elems`, first to last."""
    return _accumulate(fn, elems, initializer, False, False, "tf.foldl", back_prop,
                       name or "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
          name=None):
    """`tf.foldr`: the final a of a = fn(a, x) over the elements of `elems`, last to first."""
    return _accumulate(fn, elems, initializer, True, False, "tf.foldr", back_prop,
                       name or "foldr")


__all__ = ["map_fn", "scan", "foldl", "foldr"]
