"""Shape ops: shape/size/rank queries, reshape, fill/zeros/ones(_like), broadcast_to, expand_dims,
squeeze, concat, stack/unstack and range.

Shape-like arguments (`shape`, `dims`) are int32/int64 tensors, so they may be computed by the graph
(`tf.reshape(x, [tf.shape(x)[0], -1])`); static shape inference reads whatever of them is known at
build time through `graphflow.ops.static_value`. Axes are static Python ints (attrs).
"""

import numbers

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Tensor
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.core_ops import (
    constant,
    consumer_scope,
    convert_to_tensor,
    joined_static_value,
    stack,
    static_int,
)
from graphflow.ops.registry import define, make_op, make_tensor, normalize_axis, same_dtype
from graphflow.ops.static_value import SymbolicDim, constant_value, output_dtype, shape_vector

INT_INDEX = (dtypes.int32, dtypes.int64)


# ---------------------------------------------------------------- argument helpers
def is_tensor_like(x):
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_element")


def _contains_tensor(value):
    if is_tensor_like(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


def shape_tensor(shape, name="shape"):
    """A 1-D int tensor from a shape argument: list/tuple (may contain scalar tensors), TensorShape,
    numpy array or int tensor."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"shape {shape} is not fully defined; pass tf.shape(x) instead")
        shape = shape.as_list()
    if is_tensor_like(shape):
        t = convert_to_tensor(shape)
    elif isinstance(shape, (list, tuple)) and _contains_tensor(shape):
        t = stack([convert_to_tensor(s, dtype=dtypes.int32) if not is_tensor_like(s) else s
                   for s in shape], name=name)
    else:
        arr = np.asarray(shape)
        if arr.dtype.kind not in "iu" and arr.size:
            if arr.dtype == object:
                raise ValueError(f"shape {shape!r} has a dimension that does not fit int64")
            raise TypeError(f"a shape must hold integers, got {shape!r}")
        if arr.dtype.kind == "u" and arr.size and arr.max() > 2**63 - 1:
            raise ValueError(f"shape {shape!r} has a dimension that does not fit int64")
        t = constant(arr.astype(np.int64 if arr.size and np.abs(arr).max() >= 2**31 else np.int32),
                     name=name)
    if t.dtype not in INT_INDEX:
        raise TypeError(f"a shape must be an int32 or int64 tensor, got {t.name} of dtype "
                        f"{t.dtype.name}")
    return t


def static_ints(value, what):
    """A list of Python ints (for perm/axis lists), from a list, array or constant tensor."""
    if is_tensor_like(value):
        known = constant_value(convert_to_tensor(value))
        if known is None:
            raise TypeError(f"{what} must be static (Python ints or a constant tensor), got the "
                            f"tensor {convert_to_tensor(value).name}")
        value = np.asarray(known).reshape(-1).tolist()
    if isinstance(value, (numbers.Integral, np.integer)):
        return [int(value)]
    return [static_int(v, what) for v in value]


def require_shape_input(t, what="shape"):
    if t.dtype not in INT_INDEX:
        raise TypeError(f"{what} must be int32 or int64, got {t.name} of dtype {t.dtype.name}")
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"{what} must be a 1-D tensor, got {t.name} of shape {t.shape}")


def _num_elements(dims):
    n = 1
    for d in dims:
        n *= d
    return n


# ---------------------------------------------------------------- shape, size, rank
def _shape_infer(inputs, attrs):
    (x,) = inputs
    return [(dtypes.as_dtype(attrs["out_type"]), TensorShape([x.shape.ndims]))]


def _size_infer(inputs, attrs):
    return [(dtypes.as_dtype(attrs["out_type"]), TensorShape([]))]


def _rank_infer(inputs, attrs):
    return [(dtypes.int32, TensorShape([]))]


def _shape_value(op, inputs):
    shape = op.inputs[0].shape
    return np.array(shape.dims, dtype=output_dtype(op)) if shape.is_fully_defined() else None


def _size_value(op, inputs):
    n = op.inputs[0].shape.num_elements()
    return None if n is None else np.array(n, dtype=output_dtype(op))


def _rank_value(op, inputs):
    r = op.inputs[0].shape.ndims
    return None if r is None else np.array(r, dtype=output_dtype(op))


define("Shape", _shape_infer, attrs="out_type:dtype", reads_shape_only=True, static_value=_shape_value,
       onnx={"converter": "shape"})
define("Size", _size_infer, attrs="out_type:dtype", reads_shape_only=True, static_value=_size_value,
       onnx={"converter": "shape"})
define("Rank", _rank_infer, reads_shape_only=True, static_value=_rank_value, onnx={"converter": "rank"})


def shape(input, name=None, out_type=dtypes.int32):
    """`tf.shape`: the run-time shape of `input` as a 1-D int tensor (works with unknown dims)."""
    x = convert_to_tensor(input)
    return make_tensor("Shape", (x,), {"out_type": dtypes.as_dtype(out_type).name},
                       name=name or "Shape")


def size(input, name=None, out_type=dtypes.int32):
    """`tf.size`: the number of elements of `input` as an int scalar."""
    x = convert_to_tensor(input)
    return make_tensor("Size", (x,), {"out_type": dtypes.as_dtype(out_type).name},
                       name=name or "Size")


def rank(input, name=None):
    """`tf.rank`: the number of dimensions of `input` as an int32 scalar."""
    return make_tensor("Rank", (convert_to_tensor(input),), name=name or "Rank")


# ---------------------------------------------------------------- reshape
def _reshape_infer(inputs, attrs):
    x, s = inputs
    require_shape_input(s)
    target = shape_vector(s, symbolic=True)
    if target is None:
        return [(x.dtype, TensorShape(None))]
    if sum(1 for d in target if d == -1) > 1:
        raise ValueError(f"can only infer one dimension of the new shape (one -1), got "
                         f"{_show(target)}")
    bad = [d for d in target if isinstance(d, int) and d < -1]
    if bad:
        raise ValueError(f"new shape {_show(target)} has a negative dimension {bad[0]}")
    # Entries that are x's own unknown dims (`tf.shape(x)[0]`) cancel against them.
    xdims = x.shape.dims
    matched = set()
    for d in target:
        if isinstance(d, SymbolicDim) and d.tensor is x and d.index not in matched:
            matched.add(d.index)
    rest = None
    if xdims is not None:
        rest_dims = [d for i, d in enumerate(xdims) if i not in matched]
        rest = None if None in rest_dims else _num_elements(rest_dims)
    dims, unknown, known = [], [], 1
    for i, d in enumerate(target):
        if isinstance(d, int) and d >= 0:
            dims.append(d)
            known *= d
        else:
            dims.append(None)
            if not (isinstance(d, SymbolicDim) and d.tensor is x and d.index in matched):
                unknown.append(i)
    if rest is not None:
        what = f"{rest} elements" + (" besides the dimensions kept" if matched else "")
        if not unknown and known != rest:
            raise ValueError(f"Cannot reshape a tensor of shape {x.shape} ({what}) to shape "
                             f"{_show(target)} ({known} elements)")
        if len(unknown) == 1 and known > 0:
            if rest % known:
                raise ValueError(f"Cannot reshape a tensor of shape {x.shape} ({what}) to shape "
                                 f"{_show(target)}: {rest} is not a multiple of {known}")
            dims[unknown[0]] = rest // known
    return [(x.dtype, TensorShape(dims))]


def _show(target):
    return "[" + ", ".join("?" if d is None else str(d) for d in target) + "]"


define("Reshape", _reshape_infer, may_alias_input=True, onnx={"converter": "reshape"})


def reshape(tensor, shape, name=None):
    """`tf.reshape`: same elements, new shape; one entry may be -1 (inferred). `shape` may be a
    list (entries may be scalar tensors) or an int tensor such as `tf.shape(y)`."""
    x = convert_to_tensor(tensor)
    with consumer_scope(name, "Reshape", (shape,)) as op_name:
        return make_tensor("Reshape", (x, shape_tensor(shape)), name=op_name)


# ---------------------------------------------------------------- fill, zeros, ones
def _dims_from_vector(s, what="dims"):
    require_shape_input(s, what)
    vector = shape_vector(s)
    if vector is None:
        return TensorShape(None)
    for d in vector:
        if d is not None and d < 0:
            raise ValueError(f"{what} {vector} has a negative dimension {d}")
    return TensorShape(vector)


def _fill_infer(inputs, attrs):
    dims, value = inputs
    if value.shape.ndims not in (None, 0):
        raise ValueError(f"value must be a scalar, got {value.name} of shape {value.shape}")
    return [(value.dtype, _dims_from_vector(dims))]


def _like_infer(inputs, attrs):
    return [(inputs[0].dtype, inputs[0].shape)]


define("Fill", _fill_infer, shape_input=0, onnx={"converter": "fill"})
define("ZerosLike", _like_infer, elementwise=True, reads_shape_only=True, onnx={"converter": "fill_like"})
define("OnesLike", _like_infer, elementwise=True, reads_shape_only=True, onnx={"converter": "fill_like"})


def fill(dims, value, name=None):
    """`tf.fill`: a tensor of shape `dims` with every element equal to the scalar `value`."""
    with consumer_scope(name, "Fill", (dims, value)) as op_name:
        value = convert_to_tensor(value)
        return make_tensor("Fill", (shape_tensor(dims), value), name=op_name)


def _filled(shape, dtype, scalar, name):
    if isinstance(shape, (numbers.Integral, np.integer)):
        shape = [shape]  # tf.zeros(3) is tf.zeros([3])
    dt = dtypes.as_dtype(dtype)
    with consumer_scope(name, "Fill", (shape, scalar)) as op_name:
        value = constant(np.array(scalar, dtype=dt.as_numpy_dtype), name="value")
        return make_tensor("Fill", (shape_tensor(shape), value), name=op_name)


def zeros(shape, dtype=dtypes.float32, name=None):
    """`tf.zeros`: `shape` may be a list (entries may be scalar tensors) or an int tensor."""
    return _filled(shape, dtype, 0, name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """`tf.ones`: `shape` may be a list (entries may be scalar tensors) or an int tensor."""
    return _filled(shape, dtype, 1, name or "ones")


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """`tf.zeros_like`: zeros with the (run-time) shape of `tensor`, same dtype unless given."""
    x = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        return zeros(shape(x), dtype=dtype, name=name or "zeros_like")
    return make_tensor("ZerosLike", (x,), name=name or "zeros_like")


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """`tf.ones_like`: ones with the (run-time) shape of `tensor`, same dtype unless given."""
    x = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != x.dtype:
        return ones(shape(x), dtype=dtype, name=name or "ones_like")
    return make_tensor("OnesLike", (x,), name=name or "ones_like")


# ---------------------------------------------------------------- broadcast_to
def _broadcast_to_infer(inputs, attrs):
    x, s = inputs
    target = _dims_from_vector(s, "shape")
    if target.dims is None or x.shape.dims is None:
        return [(x.dtype, target)]
    xd, td = list(x.shape.dims), list(target.dims)
    if len(xd) > len(td):
        raise ValueError(f"cannot broadcast a tensor of shape {x.shape} to the lower-rank shape "
                         f"{target}")
    out = list(td)
    offset = len(td) - len(xd)
    for i, d in enumerate(xd):
        t = td[offset + i]
        if d is not None and t is not None and d != t and d != 1:
            raise ValueError(f"cannot broadcast a tensor of shape {x.shape} to shape {target}: "
                             f"dimension {i} is {d}, target is {t}")
        if t is None and d is not None and d != 1:
            out[offset + i] = d
    return [(x.dtype, TensorShape(out))]


define("BroadcastTo", _broadcast_to_infer, onnx={"converter": "broadcast_to"})


def broadcast_to(input, shape, name=None):
    """`tf.broadcast_to`: numpy broadcasting of `input` to `shape`."""
    x = convert_to_tensor(input)
    with consumer_scope(name, "BroadcastTo", (shape,)) as op_name:
        return make_tensor("BroadcastTo", (x, shape_tensor(shape)), name=op_name)


# ---------------------------------------------------------------- expand_dims, squeeze
def _expand_dims_infer(inputs, attrs):
    (x,) = inputs
    axis = attrs["axis"]
    r = x.shape.ndims
    if r is None:
        return [(x.dtype, TensorShape(None))]
    axis = normalize_axis(axis, r + 1)
    dims = list(x.shape.dims)
    dims.insert(axis, 1)
    return [(x.dtype, TensorShape(dims))]


define("ExpandDims", _expand_dims_infer, may_alias_input=True, attrs="axis:int",
       onnx={"converter": "expand_dims"})


def expand_dims(input, axis=None, name=None, dim=None):
    """`tf.expand_dims`: insert a dimension of size 1 at `axis` (negative counts from the end)."""
    if axis is None:
        if dim is None:
            raise ValueError("tf.expand_dims needs `axis`")
        axis = dim
    x = convert_to_tensor(input)
    return make_tensor("ExpandDims", (x,), {"axis": static_int(axis, "axis")},
                       name=name or "ExpandDims")


def _squeeze_infer(inputs, attrs):
    (x,) = inputs
    axes = attrs["axis"]
    dims = x.shape.dims
    if dims is None:
        return [(x.dtype, TensorShape(None))]
    if not axes:
        if any(d is None for d in dims):
            return [(x.dtype, TensorShape(None))]
        return [(x.dtype, TensorShape([d for d in dims if d != 1]))]
    axes = {normalize_axis(a, len(dims)) for a in axes}
    for a in sorted(axes):
        if dims[a] is not None and dims[a] != 1:
            raise ValueError(f"cannot squeeze dimension {a} of shape {x.shape}: expected a "
                             f"dimension of 1, got {dims[a]}")
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axes]))]


define("Squeeze", _squeeze_infer, may_alias_input=True, attrs="axis:none|list(int)",
       onnx={"converter": "squeeze"})


def squeeze(input, axis=None, name=None, squeeze_dims=None):
    """`tf.squeeze`: drop dimensions of size 1 (all of them, or those in `axis`)."""
    if axis is None:
        axis = squeeze_dims
    axes = [] if axis is None else static_ints(axis, "axis")
    return make_tensor("Squeeze", (convert_to_tensor(input),), {"axis": axes},
                       name=name or "Squeeze")


# ---------------------------------------------------------------- concat, stack, unstack
def _concat_infer(inputs, attrs):
    if not inputs:
        raise ValueError("concat needs at least one tensor")
    dt = same_dtype(inputs, "concat inputs")
    ranks = {t.shape.ndims for t in inputs if t.shape.ndims is not None}
    if len(ranks) > 1:
        shapes = ", ".join(str(t.shape) for t in inputs)
        raise ValueError(f"all inputs must have the same rank, got shapes {shapes}")
    if not ranks:
        return [(dt, TensorShape(None))]
    r = ranks.pop()
    if r == 0:
        raise ValueError("cannot concatenate scalars (use tf.stack)")
    axis = normalize_axis(attrs["axis"], r)
    out = [None] * r
    total = 0
    for t in inputs:
        if t.shape.dims is None:
            total = None
            continue
        for i, d in enumerate(t.shape.dims):
            if i == axis:
                total = None if total is None or d is None else total + d
            elif d is not None:
                if out[i] is not None and out[i] != d:
                    shapes = ", ".join(str(t.shape) for t in inputs)
                    raise ValueError(f"dimension {i} of the inputs must match (except on axis "
                                     f"{axis}), got shapes {shapes}")
                out[i] = d
    out[axis] = total
    return [(dt, TensorShape(out))]


define("ConcatV2", _concat_infer, attrs="axis:int", static_value=joined_static_value(np.concatenate),
       onnx={"op": "Concat", "attrs": {"axis": "axis"}})


def concat(values, axis, name="concat"):
    """`tf.concat`: join tensors along an existing `axis` (negative counts from the end)."""
    if is_tensor_like(values):
        values = [values]
    tensors = [convert_to_tensor(v) for v in values]
    return make_tensor("ConcatV2", tuple(tensors), {"axis": static_int(axis, "axis")}, name=name)


def _unpack_infer(inputs, attrs):
    (x,) = inputs
    num, axis = attrs["num"], attrs["axis"]
    if x.shape.dims is None:
        return [(x.dtype, TensorShape(None))] * num
    r = len(x.shape.dims)
    if r == 0:
        raise ValueError("cannot unstack a scalar")
    axis = normalize_axis(axis, r)
    if x.shape.dims[axis] is not None and x.shape.dims[axis] != num:
        raise ValueError(f"num={num} does not match dimension {axis} of shape {x.shape}")
    dims = [d for i, d in enumerate(x.shape.dims) if i != axis]
    return [(x.dtype, TensorShape(dims))] * num


define("Unpack", _unpack_infer, may_alias_input=True, attrs="num:int>=0 axis:int",
       onnx={"converter": "unpack"})


def unstack(value, num=None, axis=0, name="unstack"):
    """`tf.unstack`: split along `axis` into a list of tensors of one rank less."""
    x = convert_to_tensor(value)
    axis = static_int(axis, "axis")
    if num is None:
        dims = x.shape.dims
        d = None
        if dims is not None and -len(dims) <= axis < len(dims):
            d = dims[axis]
        if d is None:
            raise ValueError(f"Cannot infer num from shape {x.shape} of {x.name}: pass num=")
        num = d
    return make_op("Unpack", (x,), {"num": int(num), "axis": axis}, name=name).outputs


__all__ = ["shape", "size", "rank", "reshape", "fill", "zeros", "ones", "zeros_like", "ones_like",
           "broadcast_to", "expand_dims", "squeeze", "concat", "stack", "unstack"]
