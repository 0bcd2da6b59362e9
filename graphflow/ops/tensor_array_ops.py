"""`tf.TensorArray`: a list of tensors that a loop writes one element at a time.

The array travels through the graph as one `variant` tensor (TF1's "flow"): each op takes the
array value and returns it, so the data edges order the reads and writes, and a `tf.while_loop`
carries a TensorArray as an ordinary loop variable. The Python `TensorArray` object is a thin view
holding that flow tensor plus what is statically known (dtype, element shape). As in TF1 the array
is one mutable buffer per run: a write updates it and passes the same array on.

Gradients flow through the variant tensors as "gradient arrays" (index -> gradient, missing
entries are zeros); the rules are in `tensor_array_grad.py`.
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape, as_shape
from graphflow.ops import no_onnx
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import define, make_op, make_tensor
from graphflow.ops.static_value import scalar_value


def _variant():
    return [(dtypes.variant, TensorShape([]))]


def _require_array(t, what="the TensorArray"):
    if t.dtype != dtypes.variant:
        raise TypeError(f"{what} input must be a TensorArray flow (variant), got {t.name} of "
                        f"dtype {t.dtype.name}")


def _require_int(t, what):
    if not t.dtype.is_integer:
        raise TypeError(f"{what} must be an integer tensor, got {t.name} of dtype {t.dtype.name}")


def _create_infer(inputs, attrs):
    _require_int(inputs[0], "size")
    return _variant()


def _write_infer(inputs, attrs):
    ta, index, value = inputs
    _require_array(ta)
    _require_int(index, "index")
    if index.shape.dims is not None and len(index.shape.dims) != 0:
        raise ValueError(f"index must be a scalar, got shape {index.shape}")
    return _variant()


def _scatter_infer(inputs, attrs):
    ta, indices, value = inputs
    _require_array(ta)
    _require_int(indices, "indices")
    return _variant()


def _element(attrs):
    return dtypes.as_dtype(attrs["dtype"]), as_shape(attrs["element_shape"])


def _read_infer(inputs, attrs):
    _require_array(inputs[0])
    _require_int(inputs[1], "index")
    return [_element(attrs)]


def _gather_infer(inputs, attrs):
    _require_array(inputs[0])
    _require_int(inputs[1], "indices")
    dt, elem = _element(attrs)
    n = inputs[1].shape.dims[0] if inputs[1].shape.dims else None
    return [(dt, TensorShape([n]).concatenate(elem))]


def _stack_infer(inputs, attrs):
    _require_array(inputs[0])
    dt, elem = _element(attrs)
    return [(dt, TensorShape([None]).concatenate(elem))]


def _concat_infer(inputs, attrs):
    _require_array(inputs[0])
    dt, elem = _element(attrs)
    rest = elem.dims[1:] if elem.dims else None
    shape = TensorShape(None) if rest is None else TensorShape([None] + list(rest))
    return [(dt, shape), (dtypes.int64, TensorShape([None]))]


def _size_infer(inputs, attrs):
    _require_array(inputs[0])
    return [(dtypes.int32, TensorShape([]))]


_ELEMENT_ATTRS = "dtype:dtype element_shape:shape|none"
# Every array op is `stateful`: the array is a per-run buffer, never folded into a constant nor
# merged with another array op.
define("TensorArrayV3", _create_infer, stateful=True,
       attrs="dtype:dtype element_shape:shape|none dynamic_size:bool clear_after_read:bool",
       onnx=no_onnx.TENSOR_ARRAY)
define("TensorArrayWriteV3", _write_infer, stateful=True, onnx=no_onnx.TENSOR_ARRAY)
define("TensorArrayScatterV3", _scatter_infer, stateful=True, onnx=no_onnx.TENSOR_ARRAY)
define("TensorArrayUnstack", lambda i, a: (_require_array(i[0]), _variant())[1], stateful=True,
       onnx=no_onnx.TENSOR_ARRAY)
define("TensorArrayReadV3", _read_infer, stateful=True, attrs=_ELEMENT_ATTRS, onnx=no_onnx.TENSOR_ARRAY)
define("TensorArrayGatherV3", _gather_infer, stateful=True, attrs=_ELEMENT_ATTRS, onnx=no_onnx.TENSOR_ARRAY)
define("TensorArrayStack", _stack_infer, stateful=True, attrs=_ELEMENT_ATTRS, onnx=no_onnx.TENSOR_ARRAY)
define("TensorArrayConcatV3", _concat_infer, stateful=True, attrs=_ELEMENT_ATTRS,
       value_dependent_shape=True,
       onnx=no_onnx.TENSOR_ARRAY)  # the lengths of the elements are known at run time
define("TensorArraySizeV3", _size_infer, stateful=True, onnx=no_onnx.TENSOR_ARRAY)


class TensorArray:
    """`tf.TensorArray(dtype, size=None, dynamic_size=None, clear_after_read=None,
    tensor_array_name=None, handle=None, flow=None, infer_shape=True, element_shape=None,
    colocate_with_first_write_call=True, name=None)`.

    Every method that changes the array returns a new TensorArray object (use it, as in TF1:
    `ta = ta.write(i, x)`)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._element_shape = as_shape(element_shape) if element_shape is not None \
            else TensorShape(None)
        self._size = None  # the static size, when known (fixed-size arrays of a constant size)
        if flow is not None:
            self._flow = convert_to_tensor(flow)
            _require_array(self._flow, "flow")
            return
        if size is None:
            raise ValueError("tf.TensorArray needs a size (use size=0, dynamic_size=True to grow)")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        if not self._dynamic_size:
            known = scalar_value(size)
            self._size = None if known is None else int(known)
        attrs = {"dtype": self._dtype.name, "element_shape": self._element_shape.dims,
                 "dynamic_size": self._dynamic_size, "clear_after_read": self._clear_after_read}
        self._flow = make_tensor("TensorArrayV3", (size,), attrs,
                                 name=name or tensor_array_name or "TensorArray")

    # --- static facts ------------------------------------------------------------------------
    @property
    def flow(self):
        return self._flow

    @property
    def handle(self):
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._element_shape

    @property
    def dynamic_size(self):
        return self._dynamic_size

    def _with_flow(self, flow, element_shape=None):
        """The same array seen through a new flow tensor (after a write, or inside a loop)."""
        out = TensorArray.__new__(TensorArray)
        out._dtype = self._dtype
        out._dynamic_size = self._dynamic_size
        out._clear_after_read = self._clear_after_read
        out._infer_shape = self._infer_shape
        out._element_shape = self._element_shape if element_shape is None else element_shape
        out._size = getattr(self, "_size", None)
        out._flow = flow
        return out

    def _merge_element_shape(self, shape):
        if not self._infer_shape:
            return self._element_shape
        if not self._element_shape.is_compatible_with(shape):
            raise ValueError(f"TensorArray element shape {self._element_shape} is incompatible "
                             f"with the written value's shape {shape}")
        return self._element_shape.merge_with(shape)

    def _check_dtype(self, value):
        value = convert_to_tensor(value, dtype=self._dtype)
        return value

    def _element_attrs(self, shape=None):
        shape = self._element_shape if shape is None else shape
        return {"dtype": self._dtype.name, "element_shape": shape.dims}

    # --- ops -----------------------------------------------------------------------------------
    def write(self, index, value, name=None):
        value = self._check_dtype(value)
        index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
        shape = self._merge_element_shape(value.shape)
        flow = make_tensor("TensorArrayWriteV3", (self._flow, index, value),
                           name=name or "TensorArrayWrite")
        return self._with_flow(flow, shape)

    def read(self, index, name=None):
        index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
        return make_tensor("TensorArrayReadV3", (self._flow, index), self._element_attrs(),
                           name=name or "TensorArrayRead")

    def unstack(self, value, name=None):
        value = self._check_dtype(value)
        dims = value.shape.dims
        shape = self._element_shape if dims is None else self._merge_element_shape(
            TensorShape(dims[1:]))
        flow = make_tensor("TensorArrayUnstack", (self._flow, value),
                           name=name or "TensorArrayUnstack")
        return self._with_flow(flow, shape)

    def scatter(self, indices, value, name=None):
        value = self._check_dtype(value)
        indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
        dims = value.shape.dims
        shape = self._element_shape if dims is None else self._merge_element_shape(
            TensorShape(dims[1:]))
        flow = make_tensor("TensorArrayScatterV3", (self._flow, indices, value),
                           name=name or "TensorArrayScatter")
        return self._with_flow(flow, shape)

    def stack(self, name=None):
        value = make_tensor("TensorArrayStack", (self._flow,), self._element_attrs(),
                            name=name or "TensorArrayStack")
        if self._size is not None:
            value.set_shape(TensorShape([self._size]).concatenate(self._element_shape))
        return value

    def gather(self, indices, name=None):
        indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
        return make_tensor("TensorArrayGatherV3", (self._flow, indices), self._element_attrs(),
                           name=name or "TensorArrayGather")

    def concat(self, name=None):
        op = make_op("TensorArrayConcatV3", (self._flow,), self._element_attrs(),
                     name=name or "TensorArrayConcat")
        return op.outputs[0]

    def size(self, name=None):
        return make_tensor("TensorArraySizeV3", (self._flow,), name=name or "TensorArraySize")

    def identity(self):
        return self._with_flow(self._flow)

    def close(self, name=None):
        from graphflow.ops.core_ops import no_op
        return no_op(name=name or "TensorArrayClose")

    def __repr__(self):
        return f"<graphflow.TensorArray dtype={self._dtype.name} flow={self._flow.name}>"


__all__ = ["TensorArray"]
