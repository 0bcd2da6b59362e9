"""TensorFlow `AttrValue`s <-> graphflow's plain attr values.

graphflow attrs are plain Python (`'float32'`, `(None, 3)`, `[1, 2, 2, 1]`, numpy arrays);
TensorFlow's are typed protobuf oneofs. `to_attr_value(value, tf_type)` writes a graphflow value
as the type TensorFlow's signature declares for the attr ("type", "list(int)", "shape", ...);
`from_attr_value(proto, what)` reads any AttrValue back (functions as `NameAttrList`s, which the
control-flow readers resolve), checking list lengths against `Limits` first.
"""


from graphflow.fileformat import tf_protos as pb
from graphflow.framework.tensor_shape import TensorShape
from graphflow.interop.tensorflow import tensor_protos
from graphflow.interop.tensorflow.tensor_protos import DEFAULT_LIMITS, TensorProtoError


def _shape_dims(value):
    if isinstance(value, TensorShape):
        return value.dims
    return None if value is None else tuple(value)


def to_attr_value(value, tf_type):
    """The AttrValue of graphflow attr value `value` as TensorFlow attr type `tf_type`."""
    av = pb.AttrValue()
    if tf_type == "type":
        av.type = tensor_protos.tf_dtype(value)
    elif tf_type == "shape":
        av.shape.CopyFrom(tensor_protos.shape_proto(_shape_dims(value)))
    elif tf_type == "tensor":
        av.tensor.CopyFrom(tensor_protos.from_array(value))
    elif tf_type == "string":
        av.s = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    elif tf_type == "int":
        av.i = int(value)
    elif tf_type == "float":
        av.f = float(value)
    elif tf_type == "bool":
        av.b = bool(value)
    elif tf_type == "func":
        av.func.name = value
    elif tf_type.startswith("list("):
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        inner = tf_type[5:-1]
        av.list.SetInParent()
        if inner == "type":
            av.list.type.extend(tensor_protos.tf_dtype(x) for x in items)
        elif inner == "shape":
            av.list.shape.extend(tensor_protos.shape_proto(_shape_dims(x)) for x in items)
        elif inner == "string":
            av.list.s.extend(x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in items)
        elif inner == "int":
            av.list.i.extend(int(x) for x in items)
        elif inner == "float":
            av.list.f.extend(float(x) for x in items)
        elif inner == "bool":
            av.list.b.extend(bool(x) for x in items)
        elif inner == "tensor":
            av.list.tensor.extend(tensor_protos.from_array(x) for x in items)
        else:
            raise ValueError(f"attr type {tf_type} is not written by graphflow")
    else:
        raise ValueError(f"attr type {tf_type} is not written by graphflow")
    return av


def from_attr_value(av, what="attr", limits=DEFAULT_LIMITS):
    """The plain value of an AttrValue: str, int, float, bool, dtype name, shape tuple (None for
    unknown rank), numpy array, list of those, or a NameAttrList (`func`)."""
    which = av.WhichOneof("value")
    if which is None:
        return None
    if which == "s":
        return _text(av.s, what)
    if which in ("i", "f", "b"):
        return getattr(av, which)
    if which == "type":
        return tensor_protos.gf_dtype_name(av.type, what)
    if which == "shape":
        return tensor_protos.shape_dims(av.shape, what)
    if which == "tensor":
        return tensor_protos.to_array(av.tensor, what, limits)
    if which == "func":
        return av.func
    if which == "placeholder":
        raise TensorProtoError(f"{what}: a placeholder attr ('{av.placeholder}') belongs to a "
                               "function signature, not a node")
    lst = av.list
    total = sum(len(getattr(lst, f)) for f in ("s", "i", "f", "b", "type", "shape", "tensor", "func"))
    if total > limits.max_list_length:
        raise TensorProtoError(f"{what}: a list of {total} values exceeds the limit of "
                               f"{limits.max_list_length}")
    if lst.s:
        return [_text(x, what) for x in lst.s]
    if lst.i:
        return list(lst.i)
    if lst.f:
        return list(lst.f)
    if lst.b:
        return list(lst.b)
    if lst.type:
        return [tensor_protos.gf_dtype_name(x, what) for x in lst.type]
    if lst.shape:
        return [tensor_protos.shape_dims(x, what) for x in lst.shape]
    if lst.tensor:
        return [tensor_protos.to_array(x, what, limits) for x in lst.tensor]
    if lst.func:
        return list(lst.func)
    return []


def _text(raw, what):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw  # binary string attrs stay bytes


def kind_of(av):
    """The TensorFlow attr type an AttrValue holds ("int", "list(int)", ... or "" when empty)."""
    which = av.WhichOneof("value")
    if which is None:
        return ""
    names = {"s": "string", "i": "int", "f": "float", "b": "bool", "type": "type", "shape": "shape",
             "tensor": "tensor", "func": "func", "placeholder": "placeholder"}
    if which != "list":
        return names[which]
    for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        if len(getattr(av.list, field)):
            return f"list({names[field]})"
    return "list"


def compatible(kind, tf_type):
    """An AttrValue of `kind` may stand for an attr declared `tf_type` (an empty list fits any
    list type)."""
    if kind == tf_type or (kind == "list" and tf_type.startswith("list(")):
        return True
    return False
