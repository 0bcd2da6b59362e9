"""A graphflow `Graph` as a TensorBoard `GraphDef` protocol buffer (what the Graphs tab draws).

Each op becomes a `NodeDef`: name, type, inputs in TF's spelling ('op' for output 0, 'op:1',
'^op' for a control input), device, its attrs (numbers, strings, dtypes, shapes, lists and small
constant tensors) and `_output_shapes`, which TensorBoard uses to label edges with shapes.
"""

import numpy as np

from graphflow.fileformat.summary_encoding import protos
from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape

LARGEST_INLINED_TENSOR = 64  # elements; bigger constant values are shown by dtype and shape only

_DATA_TYPES = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE",
               "int8": "DT_INT8", "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64",
               "uint8": "DT_UINT8", "bool": "DT_BOOL", "string": "DT_STRING"}


def data_type(dtype):
    """The TensorFlow `DataType` enum value of a graphflow dtype."""
    return getattr(protos().types_pb2, _DATA_TYPES[dtypes.as_dtype(dtype).name])


def _shape_proto(shape):
    proto = protos().tensor_shape_pb2.TensorShapeProto()
    if shape.dims is None:
        proto.unknown_rank = True
    else:
        for d in shape.dims:
            proto.dim.add(size=-1 if d is None else int(d))
    return proto


def _tensor_proto(array):
    proto = protos().tensor_pb2.TensorProto(dtype=data_type(array.dtype))
    proto.tensor_shape.CopyFrom(_shape_proto(TensorShape(array.shape)))
    if array.size > LARGEST_INLINED_TENSOR:
        return proto
    flat = array.ravel()
    if array.dtype == object:
        proto.string_val.extend(flat.tolist())
    elif array.dtype.kind == "f":
        field = proto.double_val if array.dtype == np.float64 else proto.float_val
        field.extend(flat.astype(np.float64).tolist())
    elif array.dtype.kind == "b":
        proto.bool_val.extend(flat.tolist())
    elif array.dtype == np.int64:
        proto.int64_val.extend(flat.tolist())
    else:
        proto.int_val.extend(flat.astype(np.int64).tolist())
    return proto


def attr_value(value):
    """An `AttrValue` for one graphflow attr value, or None when it has no TensorFlow form."""
    pb = protos().attr_value_pb2
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return pb.AttrValue(b=bool(value))
    if isinstance(value, (int, np.integer)):
        return pb.AttrValue(i=int(value))
    if isinstance(value, (float, np.floating)):
        return pb.AttrValue(f=float(value))
    if isinstance(value, str):
        return pb.AttrValue(s=value.encode("utf-8"))
    if isinstance(value, dtypes.DType):
        return pb.AttrValue(type=data_type(value))
    if isinstance(value, TensorShape):
        return pb.AttrValue(shape=_shape_proto(value))
    if isinstance(value, np.ndarray):
        return pb.AttrValue(tensor=_tensor_proto(value))
    if isinstance(value, (list, tuple)):
        return _list_value(value)
    return None


def _list_value(items):
    pb = protos().attr_value_pb2
    out = pb.AttrValue(list=pb.AttrValue.ListValue())
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in items):
        out.list.i.extend(int(x) for x in items)
    elif all(isinstance(x, (int, float, np.number)) for x in items):
        out.list.f.extend(float(x) for x in items)
    elif all(isinstance(x, str) for x in items):
        out.list.s.extend(x.encode("utf-8") for x in items)
    elif all(isinstance(x, dtypes.DType) for x in items):
        out.list.type.extend(data_type(x) for x in items)
    elif all(x is None or isinstance(x, (int, np.integer)) for x in items):
        out.list.i.extend(-1 if x is None else int(x) for x in items)  # a partial shape
    else:
        return None
    return out


def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else f"{tensor.op.name}:{tensor.value_index}"


def graph_def(graph):
    """The `GraphDef` proto of `graph` (every op, in creation order)."""
    pb = protos()
    out = pb.graph_pb2.GraphDef()
    out.versions.producer = 27
    for op in graph.get_operations():
        node = out.node.add(name=op.name, op=op.type, device=op.device or "")
        node.input.extend(_input_name(t) for t in op.inputs)
        node.input.extend(f"^{c.name}" for c in op.control_inputs)
        for key, value in sorted(op.attrs.items()):
            encoded = attr_value(value)
            if encoded is not None:
                node.attr[key].CopyFrom(encoded)
        if op.outputs:
            shapes = pb.attr_value_pb2.AttrValue(list=pb.attr_value_pb2.AttrValue.ListValue())
            shapes.list.shape.extend(_shape_proto(t.shape) for t in op.outputs)
            node.attr["_output_shapes"].CopyFrom(shapes)
    return out
