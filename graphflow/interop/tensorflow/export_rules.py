"""The export rules: graphflow ops whose TensorFlow form needs more than the table's generic
writer (`exporter.write_generic`). Each `rule(ctx, op, record)` adds the op's NodeDefs and
records the TensorFlow names of its outputs.
"""

import numpy as np

from graphflow.fileformat import tf_protos as pb
from graphflow.framework.graph import describe_op
from graphflow.interop.tensorflow import tensor_protos
from graphflow.interop.tensorflow.exporter import ExportError, rule, write_generic
from graphflow.interop.tensorflow.signatures import signature


@rule("const")
def _const(ctx, op, record):
    value = np.asarray(op.attrs["value"])
    dtype = op.outputs[0].dtype.name
    proto = tensor_protos.from_array(value, dtype)
    node = ctx.add_node("Const", op.name, attrs={"value": pb.AttrValue(tensor=proto),
                                                 "dtype": pb.AttrValue(type=proto.dtype)},
                        device=op.device, controls=ctx.controls(op))
    ctx.set_outputs(op, node)


@rule("placeholder")
def _placeholder(ctx, op, record):
    attrs = {"dtype": pb.AttrValue(type=tensor_protos.tf_dtype(op.attrs["dtype"])),
             "shape": pb.AttrValue(shape=tensor_protos.shape_proto(op.attrs.get("shape")))}
    node = ctx.add_node("Placeholder", op.name, attrs=attrs, device=op.device,
                        controls=ctx.controls(op))
    ctx.set_outputs(op, node)


def _rank(op, what):
    rank = op.inputs[0].shape.ndims
    if rank is None:
        raise ExportError(f"{describe_op(op)}: {what} needs the input's rank, which is unknown")
    return rank


@rule("reduce")
def _reduce(ctx, op, record):
    if len(op.inputs) == 2:  # axes computed at run time: already TensorFlow's form
        write_generic(ctx, op, record.__class__(record.tf, attrs=record.attrs))
        return
    axis = op.attrs.get("axis")
    if axis is None:
        axis = list(range(_rank(op, "reducing over all axes")))
    axes = np.asarray(axis, dtype=np.int32)
    name = ctx.const(axes, f"{op.name}/reduction_indices", "int32")
    extra = {"Tidx": "int32"}
    if "T" in signature(record.tf).attrs:  # All and Any take bool only: no T
        extra["T"] = op.inputs[0].dtype.name
    write_generic(ctx, op, record.__class__(record.tf, attrs=record.attrs),
                  inputs=[ctx.name(op.inputs[0]), name], extra_attrs=extra)


@rule("transpose")
def _transpose(ctx, op, record):
    perm = op.attrs.get("perm")
    if perm is None:
        perm = list(reversed(range(_rank(op, "transpose with perm=None"))))
    name = ctx.const(np.asarray(perm, np.int32), f"{op.name}/perm", "int32")
    write_generic(ctx, op, record.__class__("Transpose"), inputs=[ctx.name(op.inputs[0]), name],
                  extra_attrs={"T": op.inputs[0].dtype.name, "Tperm": "int32"})


@rule("matmul")
def _matmul(ctx, op, record):
    a, b = op.inputs
    if a.shape.ndims == 2 and b.shape.ndims == 2:
        write_generic(ctx, op, record)
        return
    attrs = {"adj_x": bool(op.attrs.get("transpose_a")), "adj_y": bool(op.attrs.get("transpose_b"))}
    write_generic(ctx, op, record.__class__("BatchMatMulV2"), extra_attrs=attrs,
                  skip=("transpose_a", "transpose_b"))


@rule("split")
def _split(ctx, op, record):
    axis = ctx.const(np.int32(op.attrs["axis"]), f"{op.name}/split_dim", "int32")
    x = ctx.name(op.inputs[0])
    sizes = op.attrs.get("size_splits")
    if len(op.inputs) == 2:  # sizes read at run time: TensorFlow's SplitV takes them as a tensor
        size_tensor = op.inputs[1]
        write_generic(ctx, op, record.__class__("SplitV"),
                      inputs=[x, ctx.name(size_tensor), axis],
                      extra_attrs={"T": op.inputs[0].dtype.name, "Tlen": size_tensor.dtype.name},
                      skip=("axis", "size_splits"))
        return
    if sizes is None:
        write_generic(ctx, op, record.__class__("Split"), inputs=[axis, x],
                      extra_attrs={"T": op.inputs[0].dtype.name}, skip=("axis",))
        return
    size_name = ctx.const(np.asarray(sizes, np.int64), f"{op.name}/size_splits", "int64")
    write_generic(ctx, op, record.__class__("SplitV"), inputs=[x, size_name, axis],
                  extra_attrs={"T": op.inputs[0].dtype.name, "Tlen": "int64"},
                  skip=("axis", "size_splits"))


@rule("pad")
def _pad(ctx, op, record):
    tf_type = "PadV2" if len(op.inputs) == 3 else "Pad"
    write_generic(ctx, op, record.__class__(tf_type))


@rule("real_div")
def _real_div(ctx, op, record):
    """graphflow's RealDiv of integers divides as floats (Python's `/`, tf.truediv); TensorFlow's
    tf.truediv writes Casts to the float type before its RealDiv, and so does the export."""
    out = op.outputs[0].dtype
    if not op.inputs[0].dtype.is_integer or out.is_integer:
        write_generic(ctx, op, record)
        return
    names = []
    for t in op.inputs:
        node = ctx.add_node("Cast", ctx.fresh(f"{op.name}/Cast"), [ctx.name(t)], {
            "SrcT": pb.AttrValue(type=tensor_protos.tf_dtype(t.dtype.name)),
            "DstT": pb.AttrValue(type=tensor_protos.tf_dtype(out.name)),
            "Truncate": pb.AttrValue(b=False)}, op.device)
        names.append(ctx.output_name(node, 0))
    write_generic(ctx, op, record, inputs=names)


@rule("select")
def _select(ctx, op, record):
    """graphflow's Select broadcasts its three inputs (np.where); TensorFlow's Select takes equal
    shapes (a vector condition there picks rows), its SelectV2 broadcasts as graphflow does."""
    shapes = [t.shape for t in op.inputs]
    same = all(s.is_fully_defined() for s in shapes) and \
        shapes[0].as_list() == shapes[1].as_list() == shapes[2].as_list()
    write_generic(ctx, op, record, tf_type="Select" if same else "SelectV2")


@rule("softmax_axis")
def _softmax_axis(ctx, op, record):
    axis = op.attrs.get("axis", -1)
    rank = op.inputs[0].shape.ndims
    if axis != -1 and (rank is None or axis != rank - 1):
        raise ExportError(f"{describe_op(op)}: TensorFlow's {op.type} works on the last axis only, "
                          f"this one on axis {axis}")
    write_generic(ctx, op, record, skip=("axis",))


@rule("softmax_xent")
def _softmax_xent(ctx, op, record):
    if op.attrs.get("axis", -1) not in (-1, 1):
        raise ExportError(f"{describe_op(op)}: TensorFlow's op works on the last axis only")
    write_generic(ctx, op, record, skip=("axis", "labels_stop_gradient"))


@rule("variable")
def _variable(ctx, op, record):
    shared = op.attrs["shared_name"]
    attrs = {"dtype": pb.AttrValue(type=tensor_protos.tf_dtype(op.attrs["dtype"])),
             "shape": pb.AttrValue(shape=tensor_protos.shape_proto(op.attrs.get("shape"))),
             "container": pb.AttrValue(s=b""),
             "shared_name": pb.AttrValue(s=b"" if shared == op.name else shared.encode())}
    node = ctx.add_node("VariableV2", op.name, attrs=attrs, device=op.device,
                        controls=ctx.controls(op))
    ctx.set_outputs(op, node)


def _variable_input(ctx, op, shared_name):
    name = ctx.variables.get(shared_name)
    if name is None:
        raise ExportError(f"{describe_op(op)} names variable '{shared_name}', which is not an op "
                          "of the exported graph")
    return name


@rule("read_variable")
def _read_variable(ctx, op, record):
    var = _variable_input(ctx, op, op.attrs["shared_name"])
    node = ctx.add_node("Identity", op.name, [var],
                        {"T": pb.AttrValue(type=tensor_protos.tf_dtype(op.attrs["dtype"]))},
                        op.device, ctx.controls(op))
    ctx.set_outputs(op, node)


@rule("refs")
def _refs(ctx, op, record):
    refs = [_variable_input(ctx, op, op.attrs[a]) for a in record.refs]
    inputs = refs + [ctx.name(t) for t in op.inputs]
    dtype = op.attrs["dtype"]
    sig = signature(record.tf)
    extra = {"T": dtype} if "T" in sig.attrs else {"dtype": dtype}
    if "Tindices" in sig.attrs:  # the scatter ops: (ref, indices, updates)
        extra["Tindices"] = op.inputs[0].dtype.name
    write_generic(ctx, op, record, inputs=inputs, extra_attrs=extra,
                  skip=tuple(record.refs) + ("dtype", "shape"))
