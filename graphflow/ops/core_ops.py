"""Core ops: constants, placeholders, identity, no_op/group, and `convert_to_tensor`."""

import contextlib
import numbers

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import Operation, Tensor, _user_location, get_default_graph
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops.registry import define, lookup, make_op, make_tensor, normalize_axis, same_dtype
from graphflow.ops.static_value import constant_value


def _const_infer(inputs, attrs):
    value = attrs["value"]
    return [(dtypes.as_dtype(value.dtype), TensorShape(value.shape))]


def _placeholder_infer(inputs, attrs):
    return [(dtypes.as_dtype(attrs["dtype"]), as_shape(attrs["shape"]))]


def _placeholder_with_default_infer(inputs, attrs):
    (default,) = inputs
    shape = as_shape(attrs["shape"])
    if not shape.is_compatible_with(default.shape):
        raise ValueError(f"default value of shape {default.shape} is not compatible with {shape}")
    return [(default.dtype, shape)]


def _same_as_input(inputs, attrs):
    return [(inputs[0].dtype, inputs[0].shape)]


def _no_outputs(inputs, attrs):
    return []


define("Const", _const_infer, returns_state=True, attrs="value:tensor", constant=True,
       static_value=lambda op, inputs: op.attrs["value"], onnx={"converter": "const"})
define("Placeholder", _placeholder_infer, attrs="dtype:dtype shape:none|shape", must_feed=True,
       onnx={"converter": "placeholder"})
define("PlaceholderWithDefault", _placeholder_with_default_infer, may_alias_input=True,
       attrs="shape:none|shape", graph_input=True, onnx="Identity")
define("Identity", _same_as_input, may_alias_input=True, elementwise=True, onnx="Identity",
       static_value=lambda op, inputs: inputs.value(0))
define("IdentityN", lambda inputs, attrs: [(t.dtype, t.shape) for t in inputs],
       may_alias_input=True, onnx={"converter": "identity_n"})
define("NoOp", _no_outputs, control_only=True, onnx={"converter": "no_op"})


def _as_array(value):
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"Cannot convert {_short(value)} to a tensor: it is not a rectangular "
                         f"array of numbers ({exc})") from None
    if arr.dtype == object and _holds_big_int(value):
        raise ValueError(f"Cannot convert {_short(value)} to a tensor: it holds an integer that "
                         "does not fit int64")
    return arr


def _holds_big_int(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif type(v) is int and not -2**63 <= v < 2**63:
            return True
    return False


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_fits(arr, dtype, value):
    """Python numbers must fit the requested integer dtype: never wrap silently (TF1 refuses)."""
    if not dtype.is_integer or arr.size == 0 or arr.dtype.kind not in "iuf":
        return
    info = np.iinfo(dtype.as_numpy_dtype)
    low, high = arr.min(), arr.max()
    if low < info.min or high > info.max:
        bad = high if high > info.max else low
        raise ValueError(f"Cannot convert {_short(value)} to a tensor of dtype {dtype.name}: "
                         f"{bad} is out of its range [{info.min}, {info.max}]")


def _to_numpy(value, dtype):
    """Python/numpy data -> numpy array of `dtype` (a DType or None = infer as TF1 does: Python
    ints are int32 unless one does not fit, then int64; Python floats are float32)."""
    if dtype is None:
        if _is_text(value):
            return dtypes.string_array(value), dtypes.string
        if isinstance(value, np.ndarray) or isinstance(value, np.generic):
            arr = np.asarray(value)
            return arr, dtypes.as_dtype(arr.dtype)
        arr = _as_array(value)
        if arr.dtype.kind == "f":
            return arr.astype(np.float32), dtypes.float32
        if arr.dtype.kind in "iu":
            fits = arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)
            target = np.int32 if fits else np.int64
            return arr.astype(target), dtypes.as_dtype(target)
        if arr.dtype.kind == "b":
            return arr, dtypes.bool_
        if arr.dtype.kind == "c":
            return arr.astype(np.complex128), dtypes.complex128
        raise TypeError(f"Cannot convert {value!r} to a graphflow constant (unsupported type "
                        f"{arr.dtype})")
    dtype = dtypes.as_dtype(dtype)
    if dtype == dtypes.string:
        return dtypes.string_array(value), dtype
    arr = _as_array(value)
    if arr.dtype.kind in "OUS":
        raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {dtype.name}")
    if dtype.is_integer and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {dtype.name} "
                            "without losing its fractional part")
    if dtype.is_bool and arr.dtype.kind != "b":
        raise TypeError(f"Cannot convert {value!r} to a tensor of dtype bool")
    if not isinstance(value, (np.ndarray, np.generic)):
        _check_fits(arr, dtype, value)
    return arr.astype(dtype.as_numpy_dtype), dtype


def _is_text(value):
    """str/bytes data (a scalar, nested lists or a numpy text array): a tf.string constant."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "USO"
    return isinstance(value, (str, bytes, np.str_, np.bytes_))


def constant(value, dtype=None, shape=None, name="Const"):
    """`tf.constant`: a tensor holding `value` (broadcast/reshaped to `shape` when given)."""
    try:
        arr, dt = _to_numpy(value, dtype)
    except ValueError as exc:
        where = _user_location()
        raise ValueError(f"{exc} (at {where})" if where is not None else str(exc)) from None
    if shape is not None:
        shape = as_shape(shape).as_list()
        if arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise ValueError(f"tf.constant: value of {arr.size} elements cannot have shape {shape}")
    arr = np.array(arr, order="C")  # not np.ascontiguousarray: it turns scalars into 1-D arrays
    arr.flags.writeable = False
    return make_tensor("Const", (), {"value": arr}, name=name)


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None):
    """A Tensor for `value`: Tensors pass through (dtype-checked), other data becomes a Const."""
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise TypeError(f"Tensor {value.name} has dtype {value.dtype.name}, expected "
                            f"{dtypes.as_dtype(dtype).name}; use tf.cast")
        return value
    as_element = getattr(value, "_as_graph_element", None)
    if as_element is not None:
        return convert_to_tensor(as_element(), dtype=dtype, name=name)
    to_tensor = getattr(type(value), "__tf_tensor__", None)  # e.g. IndexedSlices: densified
    if to_tensor is not None:
        return to_tensor(value, dtype=dtype, name=name)
    if isinstance(value, Operation):
        raise TypeError(f"Cannot use the Operation {value.name} as a tensor; it has no value")
    if isinstance(value, (list, tuple)) and any(_contains_tensor(v) for v in value):
        return stack(list(value), name=name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except TypeError:
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def _contains_tensor(value):
    if (isinstance(value, Tensor) or hasattr(value, "_as_graph_element")
            or hasattr(type(value), "__tf_tensor__")):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


def _is_tensor_like(value):
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


# ---------------------------------------------------------------- Pack: lists holding tensors
# `convert_to_tensor([t, 1.0])` stacks, so Pack (`tf.stack`) lives with the conversions.
def static_int(value, what):
    """A Python int from an int, numpy integer or a tensor whose value is known at build time."""
    if _is_tensor_like(value):
        known = constant_value(convert_to_tensor(value))
        if known is None or np.ndim(known) != 0:
            raise TypeError(f"{what} must be a static integer (a Python int or a constant), got "
                            f"the tensor {convert_to_tensor(value).name}")
        return int(known)
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise TypeError(f"{what} must be an integer, got {value!r}")


def _pack_infer(inputs, attrs):
    if not inputs:
        raise ValueError("stack needs at least one tensor")
    dt = same_dtype(inputs, "stack inputs")
    merged = TensorShape(None)
    for t in inputs:
        if not merged.is_compatible_with(t.shape):
            shapes = ", ".join(str(t.shape) for t in inputs)
            raise ValueError(f"all inputs must have the same shape, got {shapes}")
        merged = merged.merge_with(t.shape)
    if merged.dims is None:
        return [(dt, TensorShape(None))]
    axis = normalize_axis(attrs["axis"], len(merged.dims) + 1)
    dims = list(merged.dims)
    dims.insert(axis, len(inputs))
    return [(dt, TensorShape(dims))]


def joined_static_value(join):
    """The `static_value` rule of Pack (`np.stack`) and ConcatV2 (`np.concatenate`): the inputs'
    values joined along the `axis` attr, when all are known."""
    def rule(op, inputs):
        values = inputs.values()
        if values is None:
            return None
        return join(values, axis=op.attrs["axis"]).astype(op.outputs[0].dtype.as_numpy_dtype)
    return rule


define("Pack", _pack_infer, attrs="axis:int", static_value=joined_static_value(np.stack),
       onnx={"converter": "pack"})


def _pack_leaf_dtype(values):
    """The dtype of the first tensor among nested `values` (Python numbers adopt it)."""
    stack_ = [values]
    while stack_:
        v = stack_.pop()
        if _is_tensor_like(v):
            return convert_to_tensor(v).dtype
        if isinstance(v, (list, tuple)):
            stack_.extend(reversed(v))
    return None


def stack(values, axis=0, name="stack"):
    """`tf.stack`: join same-shape tensors along a new `axis`. Nested lists of tensors and Python
    numbers are stacked level by level (what `convert_to_tensor([[t, 1.0]])` uses)."""
    dtype = _pack_leaf_dtype(values)
    tensors = []
    for v in values:
        if isinstance(v, (list, tuple)) and _contains_tensor(v):
            tensors.append(stack(v, axis=0, name="stack"))
        else:
            tensors.append(convert_to_tensor(v, dtype=None if _is_tensor_like(v) else dtype))
    return make_tensor("Pack", tuple(tensors), {"axis": static_int(axis, "axis")}, name=name)


@contextlib.contextmanager
def consumer_scope(name, default_name, operands):
    """TF1's `with name_scope(name, default) as scope` around an op constructor: constants made
    from Python/numpy `operands` are named under their consumer ('Mul/y'), never at the top level
    where they could take a name the user asks for later. Yields the name to give the op: the
    scope's own name exactly ('Mul/'), or `name or default_name` when every operand is already a
    tensor (then no constant is made and the naming is the same)."""
    if all(_is_tensor_like(v) for v in operands):
        yield name or default_name
        return
    with get_default_graph().name_scope(name or default_name) as scope:
        yield scope


def convert_pair(x, y):
    """Convert binary-op operands: a Python/numpy value adopts the other operand's dtype."""
    x_is = isinstance(x, Tensor) or hasattr(x, "_as_graph_element")
    y_is = isinstance(y, Tensor) or hasattr(y, "_as_graph_element")
    if x_is:
        x = convert_to_tensor(x)
        y = y if y_is else convert_to_tensor(y, dtype=x.dtype, name="y")
        y = convert_to_tensor(y)
    elif y_is:
        y = convert_to_tensor(y)
        x = convert_to_tensor(x, dtype=y.dtype, name="x")
    else:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype if isinstance(y, numbers.Number) else None,
                              name="y")
    return x, y


def placeholder(dtype, shape=None, name=None):
    """`tf.placeholder`: an input that must be fed (shape may be partial: `[None, 784]`)."""
    dt = dtypes.as_dtype(dtype)
    dims = None if shape is None else as_shape(shape).dims
    return make_tensor("Placeholder", (), {"dtype": dt.name, "shape": dims},
                       name=name or "Placeholder")


def placeholder_with_default(input, shape, name=None):
    """A placeholder that evaluates to `input` when it is not fed."""
    default = convert_to_tensor(input)
    return make_tensor("PlaceholderWithDefault", (default,), {"shape": as_shape(shape).dims},
                       name=name or "PlaceholderWithDefault")


def identity(input, name=None):
    """`tf.identity`. Of a variable inside `tf.control_dependencies`, it reads the variable when it
    runs, as TF1's ref variables do: `with tf.control_dependencies([assign]): tf.identity(v)` is
    the assigned value (a fresh read op carries the block's control inputs; gradients with respect
    to the variable reach it, `ops/gradients.py`)."""
    x = _fresh_variable_read(input)
    return make_tensor("Identity", (x if x is not None else convert_to_tensor(input),),
                       name=name or "Identity")


def _fresh_variable_read(value):
    """A new read op of `value` when it is a variable (or a variable op's output) and new ops get
    control inputs; else None."""
    graph = get_default_graph()
    if not graph.in_control_dependencies():
        return None
    element = value._as_graph_element() if hasattr(value, "_as_graph_element") else value
    if not isinstance(element, Tensor) or element.graph is not graph:
        return None
    if not lookup(element.op.type).variable:
        return None
    return make_tensor("ReadVariableOp", (), dict(element.op.attrs), name="read")


def identity_n(input, name=None):
    """`tf.identity_n`: the tensors of the list `input`, unchanged, as one op (the op that
    `tf.custom_gradient` gives its gradient)."""
    tensors = [convert_to_tensor(t) for t in input]
    if not tensors:
        raise ValueError("identity_n needs at least one tensor")
    return list(make_op("IdentityN", tensors, name=name or "IdentityN").outputs)


def no_op(name=None):
    return make_op("NoOp", (), name=name or "NoOp", graph=get_default_graph())


def group(*inputs, name=None):
    """An op that runs all `inputs` (ops or tensors) and produces nothing."""
    flat = []
    for x in inputs:
        if isinstance(x, (list, tuple, set)):
            flat.extend(x)
        else:
            flat.append(x)
    graph = get_default_graph()
    ops = []
    for x in flat:
        if isinstance(x, Tensor):
            ops.append(x.op)
        elif isinstance(x, Operation):
            ops.append(x)
        elif hasattr(x, "op"):
            ops.append(x.op)
        else:
            raise TypeError(f"tf.group expects Operations or Tensors, got {x!r}")
    if ops:
        graph = ops[0].graph
    with graph.control_dependencies(ops):
        return make_op("NoOp", (), name=name or "group_deps", graph=graph)


def tuple_(tensors, name=None, control_inputs=None):
    """`tf.tuple`: identities of `tensors` that only become available once all of them are
    (None entries stay None)."""
    given = [None if t is None else convert_to_tensor(t) for t in tensors]
    present = [t for t in given if t is not None]
    if not present:
        raise ValueError("Must have at least one Tensor: []")
    gate = group(*present, *(control_inputs or []), name=name)
    with gate.graph.control_dependencies([gate]):
        return [None if t is None else identity(t) for t in given]


__all__ = ["constant", "convert_to_tensor", "placeholder", "placeholder_with_default", "identity",
           "identity_n", "no_op", "group"]
