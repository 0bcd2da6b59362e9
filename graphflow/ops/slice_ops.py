"""Slicing ops: `slice`, `strided_slice` (and its gradient op), `split`, and `Tensor.__getitem__`.

`x[1:, ..., None, ::-1]` becomes one StridedSlice op whose begin/end/strides are int tensors and
whose masks are attrs, exactly as in TF1; indices may be Python ints, slices (with negative steps),
`None`/`tf.newaxis`, `Ellipsis` and scalar int tensors. `strided_slice_index`
(`framework/strided_slice.py`) turns such a spec into a numpy index tuple; the kernels and static
shape inference both use it, so they agree.
"""

import builtins
import numbers

import numpy as np

from graphflow.framework.strided_slice import strided_slice_index
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import constant, consumer_scope, convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor
from graphflow.ops.shape_ops import (
    INT_INDEX,
    is_tensor_like,
    normalize_axis,
    require_shape_input,
    shape_tensor,
    stack,
    static_int,
    static_ints,
)
from graphflow.ops.static_value import constant_value, output_dtype, shape_vector, simple_slice_spec

newaxis = None
MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
MASK_ATTRS = " ".join(f"{m}:int>=0" for m in MASKS)


# ---------------------------------------------------------------- the strided-slice spec
def _masks(attrs):
    return {m: attrs.get(m, 0) for m in MASKS}


class _Unknown:
    """Stands for a begin/end/stride entry only known at run time (static inference)."""

    def __repr__(self):
        return "?"


UNKNOWN = _Unknown()


def static_strided_shape(x_shape, begin, end, strides, attrs):
    """The static output shape of a strided slice; begin/end/strides are lists whose entries may
    be None (unknown until run time)."""
    if x_shape.dims is None:
        return TensorShape(None)
    begin, end, strides = ([UNKNOWN if v is None else v for v in vec] for vec in (begin, end, strides))
    index, dims = strided_slice_index(len(x_shape.dims), begin, end, strides, _masks(attrs))
    out = []
    for item, d in zip(index, dims):
        if d is None:  # a new axis
            out.append(1)
            continue
        size = x_shape.dims[d]
        if isinstance(item, builtins.slice):
            parts = (item.start, item.stop, item.step)
            if item.start is None and item.stop is None and item.step in (1, -1):
                out.append(size)
            elif size is None or any(p is UNKNOWN for p in parts):
                out.append(None)
            else:
                out.append(len(range(*item.indices(size))))
        elif item is not UNKNOWN and size is not None and not -size <= item < size:
            raise ValueError(f"index {item} is out of bounds for dimension {d} with size {size}")
    return TensorShape(out)


def _strided_slice_infer(inputs, attrs):
    x, begin, end, strides = inputs
    for t, what in ((begin, "begin"), (end, "end"), (strides, "strides")):
        require_shape_input(t, what)
    vectors = [shape_vector(t) for t in (begin, end, strides)]
    if any(v is None for v in vectors):
        return [(x.dtype, TensorShape(None))]
    return [(x.dtype, static_strided_shape(x.shape, *vectors, attrs))]


def _strided_slice_value(op, inputs):
    """e.g. tf.shape(x)[1] where dim 1 of x is static: a 1-D slice of a known shape vector."""
    spec = simple_slice_spec(op)
    vector = None if spec is None else inputs.vector(0)
    if vector is None:
        return None
    if op.attrs.get("shrink_axis_mask") == 1:
        if not -len(vector) <= spec[0] < len(vector) or vector[spec[0]] is None:
            return None
        return np.array(vector[spec[0]], dtype=output_dtype(op))
    part = vector[builtins.slice(*spec)]
    return None if None in part else np.array(part, dtype=output_dtype(op))


define("StridedSlice", _strided_slice_infer, may_alias_input=True, attrs=MASK_ATTRS,
       static_value=_strided_slice_value, onnx={"converter": "strided_slice"})


def _strided_slice_grad_infer(inputs, attrs):
    shape, begin, end, strides, dy = inputs
    require_shape_input(shape, "shape")
    vector = shape_vector(shape)
    out = TensorShape(None) if vector is None else TensorShape(vector)
    return [(dy.dtype, out)]


define("StridedSliceGrad", _strided_slice_grad_infer, attrs=MASK_ATTRS, onnx=no_onnx.GRADIENT)


def _index_vector(values, name):
    """begin/end/strides lists -> one int tensor (a constant unless an entry is a tensor)."""
    if any(is_tensor_like(v) for v in values):
        tensors = [convert_to_tensor(v) for v in values if is_tensor_like(v)]
        dtype = tensors[0].dtype
        return stack([v if is_tensor_like(v) else constant(v, dtype=dtype) for v in values],
                     name=name)
    return constant(np.array(values, dtype=np.int32).reshape(-1), name=name)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """`tf.strided_slice`: numpy basic slicing driven by begin/end/strides vectors and bit masks."""
    x = convert_to_tensor(input_)
    begin_t = shape_tensor(begin, name="begin")
    end_t = shape_tensor(end, name="end")
    if strides is None:
        strides = [1] * len(begin) if isinstance(begin, (list, tuple)) else None
        if strides is None:
            from graphflow.ops.shape_ops import ones_like
            strides_t = ones_like(begin_t)
        else:
            strides_t = shape_tensor(strides, name="strides")
    else:
        strides_t = shape_tensor(strides, name="strides")
    attrs = {"begin_mask": int(begin_mask), "end_mask": int(end_mask),
             "ellipsis_mask": int(ellipsis_mask), "new_axis_mask": int(new_axis_mask),
             "shrink_axis_mask": int(shrink_axis_mask)}
    return make_tensor("StridedSlice", (x, begin_t, end_t, strides_t), attrs,
                       name=name or "StridedSlice")


def strided_slice_grad(shape, begin, end, strides, dy, name=None, **masks):
    """The gradient of a strided slice: zeros of `shape` with `dy` written at the sliced places."""
    attrs = {m: int(masks.get(m, 0)) for m in MASKS}
    inputs = (shape_tensor(shape), convert_to_tensor(begin), convert_to_tensor(end),
              convert_to_tensor(strides), convert_to_tensor(dy))
    return make_tensor("StridedSliceGrad", inputs, attrs, name=name or "StridedSliceGrad")


_INDEX_TYPES = "integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar int tensors"


def _check_index_tensor(t):
    if t.dtype not in INT_INDEX:
        raise TypeError(f"Only {_INDEX_TYPES} are valid indices, got the tensor {t.name} of dtype "
                        f"{t.dtype.name}")
    if t.shape.ndims not in (None, 0):
        raise TypeError(f"Only {_INDEX_TYPES} are valid indices, got the tensor {t.name} of shape "
                        f"{t.shape} (use tf.gather or tf.boolean_mask for array indexing)")
    return t


def _index_entry(v):
    if v is None:
        return None
    if is_tensor_like(v):
        return _check_index_tensor(convert_to_tensor(v))
    if isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    raise TypeError(f"Only {_INDEX_TYPES} are valid indices, got {v!r}")


def getitem(tensor, key):
    """`tensor[key]` with TF1/numpy basic-indexing semantics, as one StridedSlice op."""
    key = key if isinstance(key, tuple) else (key,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(MASKS, 0)
    ellipsis_seen = False
    for i, k in enumerate(key):
        bit = 1 << i
        if k is Ellipsis:
            if ellipsis_seen:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_seen = True
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, builtins.slice):
            start, stop, step = (_index_entry(v) for v in (k.start, k.stop, k.step))
            if step is None:
                step = 1
            if isinstance(step, int) and step == 0:
                raise ValueError("slice step cannot be zero")
            if start is None:
                masks["begin_mask"] |= bit
                start = 0
            if stop is None:
                masks["end_mask"] |= bit
                stop = 0
            begin.append(start), end.append(stop), strides.append(step)
        else:
            if isinstance(k, (list, np.ndarray)) or (hasattr(k, "shape") and
                                                    not is_tensor_like(k) and np.ndim(k)):
                raise TypeError(f"Only {_INDEX_TYPES} are valid indices, got {k!r} (use tf.gather "
                                "or tf.boolean_mask for array indexing)")
            idx = _index_entry(k)
            masks["shrink_axis_mask"] |= bit
            # the kernel reads only `begin` for a shrunk dimension; end is begin + 1 for clarity
            begin.append(idx), end.append(idx if is_tensor_like(idx) else idx + 1)
            strides.append(1)
    x = convert_to_tensor(tensor)
    if not key:
        begin, end, strides = [0], [0], [1]
        masks["ellipsis_mask"] = 1
    inputs = (x, _index_vector(begin, "stack"), _index_vector(end, "stack_1"),
              _index_vector(strides, "stack_2"))
    return make_tensor("StridedSlice", inputs, masks, name="strided_slice")


# ---------------------------------------------------------------- slice
def _slice_infer(inputs, attrs):
    x, begin, size = inputs
    require_shape_input(begin, "begin")
    require_shape_input(size, "size")
    b, s = shape_vector(begin), shape_vector(size)
    dims = x.shape.dims
    n = next((len(v) for v in (b, s) if v is not None), None)
    if n is None:
        n = len(dims) if dims is not None else None
    if n is None:
        return [(x.dtype, TensorShape(None))]
    b = b or [None] * n
    s = s or [None] * n
    if len(b) != n or len(s) != n or (dims is not None and len(dims) != n):
        raise ValueError(f"begin ({len(b)} entries) and size ({len(s)} entries) must both have "
                         f"one entry per dimension of the input (shape {x.shape})")
    out = []
    for i in range(n):
        d = None if dims is None else dims[i]
        bi, si = b[i], s[i]
        if bi is not None and bi < 0:
            raise ValueError(f"begin[{i}] = {bi} must not be negative")
        if si is not None and si < -1:
            raise ValueError(f"size[{i}] = {si} must be -1 or non-negative")
        if si == -1:
            out.append(None if d is None or bi is None else d - bi)
        else:
            out.append(si)
        if d is not None and bi is not None and (bi > d or (si not in (None, -1) and bi + si > d)):
            raise ValueError(f"slice of dimension {i} [{bi}, {bi} + {si}) is out of bounds for "
                             f"shape {x.shape}")
    return [(x.dtype, TensorShape(out))]


define("Slice", _slice_infer, may_alias_input=True, onnx={"converter": "slice"})


def slice(input_, begin, size, name=None):  # noqa: A001 - TF1 name
    """`tf.slice`: the block starting at `begin` with extent `size` (-1 = to the end)."""
    x = convert_to_tensor(input_)
    with consumer_scope(name, "Slice", (begin, size)) as op_name:
        return make_tensor("Slice", (x, shape_tensor(begin, "begin"), shape_tensor(size, "size")),
                           name=op_name)


# ---------------------------------------------------------------- split
def _split_infer(inputs, attrs):
    x = inputs[0]
    num, sizes, axis = attrs["num_split"], attrs["size_splits"], attrs["axis"]
    if len(inputs) == 2:  # sizes fed at run time (TF1's SplitV with a computed size_splits)
        if sizes is not None:
            raise ValueError("split takes its sizes as an attr or as a second input, not both")
        if inputs[1].dtype not in INT_INDEX:
            raise TypeError(f"size_splits must be int32 or int64, got {inputs[1].dtype.name}")
        if inputs[1].shape.ndims is not None and inputs[1].shape.as_list() not in ([num], [None]):
            raise ValueError(f"size_splits of shape {inputs[1].shape} must hold {num} sizes")
    if x.shape.dims is None:
        return [(x.dtype, TensorShape(None))] * num
    dims = list(x.shape.dims)
    axis = normalize_axis(axis, len(dims))
    d = dims[axis]
    if len(inputs) == 2:
        parts = [None] * num
    elif sizes is None:
        if d is not None and d % num:
            raise ValueError(f"dimension {axis} of shape {x.shape} ({d}) is not divisible into "
                             f"{num} equal splits")
        parts = [None if d is None else d // num] * num
    else:
        if sum(1 for s in sizes if s == -1) > 1 or any(s < -1 for s in sizes):
            raise ValueError(f"size_splits {sizes} may hold at most one -1 and no other "
                             "negative values")
        parts = list(sizes)
        rest = sum(s for s in sizes if s != -1)
        if -1 in parts:
            if d is not None and rest > d:
                raise ValueError(f"size_splits {sizes} add up to more than dimension {axis} "
                                 f"of shape {x.shape}")
            parts[parts.index(-1)] = None if d is None else d - rest
        elif d is not None and rest != d:
            raise ValueError(f"size_splits {sizes} must add up to dimension {axis} of shape "
                             f"{x.shape} ({d}), got {rest}")
    out = []
    for p in parts:
        shape = list(dims)
        shape[axis] = p
        out.append((x.dtype, TensorShape(shape)))
    return out


define("Split", _split_infer, may_alias_input=True,
       attrs="num_split:int>=0 size_splits:none|list(int) axis:int", onnx={"converter": "split"})


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """`tf.split`: an int splits `axis` into that many equal parts; a list gives the part sizes
    (one may be -1); a 1-D int tensor known only at run time gives them then (its length, or
    `num`, must be known when the graph is built: it is the number of outputs). Returns a list of
    tensors."""
    x = convert_to_tensor(value)
    axis = static_int(axis, "axis")
    if is_tensor_like(num_or_size_splits) and not isinstance(num_or_size_splits, (list, tuple)):
        fed = convert_to_tensor(num_or_size_splits)
        if fed.shape.ndims == 1 and constant_value(fed) is None:
            count = fed.shape.as_list()[0] if num is None else num
            if count is None:
                raise ValueError("split sizes fed at run time need a known length (or num=)")
            attrs = {"num_split": int(count), "size_splits": None, "axis": axis}
            return make_op("Split", (x, fed), attrs, name=name).outputs
    if isinstance(num_or_size_splits, (numbers.Integral, np.integer)) or (
            is_tensor_like(num_or_size_splits) and
            convert_to_tensor(num_or_size_splits).shape.ndims == 0):
        n = static_int(num_or_size_splits, "num_or_size_splits")
        if n <= 0:
            raise ValueError(f"num_or_size_splits must be positive, got {n}")
        attrs = {"num_split": n, "size_splits": None, "axis": axis}
    else:
        sizes = static_ints(num_or_size_splits, "num_or_size_splits")
        if num is not None and num != len(sizes):
            raise ValueError(f"num={num} does not match {len(sizes)} size_splits")
        attrs = {"num_split": len(sizes), "size_splits": sizes, "axis": axis}
    return make_op("Split", (x,), attrs, name=name).outputs


__all__ = ["strided_slice", "slice", "split", "newaxis"]
