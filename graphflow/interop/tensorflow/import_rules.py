"""The import rules: how a TensorFlow node becomes graphflow ops. `generic` serves every op the
table maps by record or by name (renamed attrs, TensorFlow inputs graphflow keeps as attrs read
from their build-time values); the others handle variables (ref and resource), and ops graphflow
builds from its public functions (DepthwiseConv2dNative, FusedBatchNormV3, SplitV, ...).

A rule is `rule(ctx, node, inputs, record) -> [graphflow Tensor or None per TF output]` (None for
an output graphflow does not have; reading it is an error naming the node).
"""

import numpy as np

from graphflow.interop.tensorflow.import_core import rule
from graphflow.ops import registry, static_value
from graphflow.ops.registry import make_op

# graphflow op types whose axes may also be a run-time tensor (the reductions)
_TENSOR_AXES = frozenset(("Sum", "Mean", "Prod", "Max", "Min", "All", "Any"))
# TF attrs graphflow has no use for: any value is fine (devices, cuDNN, layout hints)
_IGNORED = frozenset(("use_cudnn_on_gpu", "Truncate", "container", "message", "debug_name",
                      "allowed_devices", "validate_indices", "_class", "output_shapes",
                      "_output_shapes", "parallel_iterations", "_lower_using_switch_merge",
                      "_read_only_resource_inputs", "is_constant",
                      # hints TensorFlow's gradient code puts on the MatMuls it adds
                      "grad_a", "grad_b", "grad_x", "grad_y"))


def _attr_value(value):
    """A build-time value as an attr: an int, or a list of ints."""
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise ValueError(f"expected integer values, got {array.dtype}")
    return int(array) if array.ndim == 0 else [int(x) for x in array.ravel()]


def _check_unused(ctx, node, attrs, used, record):
    """A TF attr graphflow cannot honour, set to something other than its default, is an error."""
    from graphflow.interop.tensorflow.signatures import signature  # noqa: PLC0415
    sig = signature(node.op)
    for key, value in attrs.items():
        if key in used or key in _IGNORED or sig is None:
            continue
        declared = sig.attrs[key]
        if declared.kind in ("type", "list(type)") or declared.kind == "int" and \
                any(a.number_attr == key for a in sig.inputs + sig.outputs):
            continue  # type and count attrs follow from the tensors
        if key in record.tf_attrs:
            if value != record.tf_attrs[key]:
                raise ctx.error(node, f"attr '{key}' = {value!r}: graphflow supports "
                                      f"{record.tf_attrs[key]!r} only")
            continue
        if declared.has_default and _same(value, declared.default):
            continue
        raise ctx.error(node, f"attr '{key}' = {value!r} is not supported by graphflow's "
                              f"{record.gf}")


def _same(a, b):
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return list(a or []) == list(b or [])
    return a == b


@rule("generic")
def _generic(ctx, node, inputs, record, gf_type=None, extra=None):
    gf_type = gf_type or record.gf
    op_def = registry.lookup(gf_type)
    attrs = ctx.attrs(node)
    rename = {tf_name: gf_name for gf_name, tf_name in record.attrs.items()}
    gf_attrs, used = {}, set()
    for key, value in attrs.items():
        gf_name = rename.get(key, key)
        if gf_name in op_def.attr_types and gf_name not in record.attr_inputs.values():
            gf_attrs[gf_name] = value
            used.add(key)
    data = list(inputs)
    positions = sorted(((p if p >= 0 else len(data) + p), a) for p, a in record.attr_inputs.items())
    for position, gf_attr in reversed(positions):
        if position >= len(data):
            raise ctx.error(node, f"has {len(data)} inputs, TensorFlow's {node.op} takes more")
        tensor = data[position]
        value = static_value.constant_value(tensor)
        if value is None:
            if gf_type in _TENSOR_AXES:
                continue  # axes read at run time: graphflow's two-input form
            raise ctx.error(node, f"input {position} ('{gf_attr}') must be known when the graph "
                                  "is built (a constant); graphflow keeps it as an attr")
        data.pop(position)
        gf_attrs[gf_attr] = _attr_value(value)
    gf_attrs.update(record.gf_attrs)
    gf_attrs.update(extra or {})
    _check_unused(ctx, node, attrs, used, record)
    _no_handles(ctx, node, data)
    op = make_op(gf_type, data, gf_attrs, name=ctx.op_name(node))
    return op.outputs if op.outputs else op


def _no_handles(ctx, node, inputs):
    for t in inputs:
        if t in ctx.variables and ctx.variables[t].get("resource"):
            raise ctx.error(node, "reads a resource variable handle; graphflow reads resource "
                                  "variables through ReadVariableOp/AssignVariableOp only")


@rule("const")
def _const(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    value = attrs["value"]
    if not isinstance(value, np.ndarray):
        raise ctx.error(node, "attr 'value' is not a tensor")
    from graphflow.framework import dtypes  # noqa: PLC0415
    if value.dtype != object and dtypes.as_dtype(value.dtype).name != attrs["dtype"]:
        raise ctx.error(node, f"value of dtype {value.dtype} disagrees with attr dtype "
                              f"{attrs['dtype']}")
    return make_op("Const", [], {"value": value}, name=ctx.op_name(node)).outputs


@rule("variable")
def _variable(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    name = ctx.op_name(node)[:-1]
    shared = attrs.get("shared_name") or name
    var_attrs = {"shared_name": shared, "dtype": attrs["dtype"], "shape": attrs.get("shape")}
    op = make_op("VariableV2", [], var_attrs, name=ctx.op_name(node))
    ctx.variables[op.outputs[0]] = dict(var_attrs, resource=node.op == "VarHandleOp")
    return op.outputs


def _variable_attrs(ctx, node, tensor):
    found = ctx.variables.get(tensor)
    if found is None:
        raise ctx.error(node, f"input {tensor.name} is not a variable (TensorFlow passes a "
                              "variable here)")
    return {k: found[k] for k in ("shared_name", "dtype", "shape")}


@rule("read_variable")
def _read_variable(ctx, node, inputs, record):
    var = _variable_attrs(ctx, node, inputs[0])
    return make_op("ReadVariableOp", [], var, name=ctx.op_name(node)).outputs


@rule("assign_variable")
def _assign_variable(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    var = _variable_attrs(ctx, node, inputs[0])
    if record.gf == "Assign":
        var.update(validate_shape=attrs.get("validate_shape", False) is not False
                   and var["shape"] is not None, use_locking=False)
    elif record.gf in ("AssignAdd", "AssignSub"):
        var.update(use_locking=False)
    op = make_op(record.gf, inputs[1:], var, name=ctx.op_name(node))
    return op.outputs if node.op == "VarIsInitializedOp" else op


@rule("refs")
def _refs(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    n = len(record.refs)
    refs = [_variable_attrs(ctx, node, t) for t in inputs[:n]]
    extra = dict(refs[0])
    for gf_attr, var in zip(record.refs[1:], refs[1:]):
        extra[gf_attr] = var["shared_name"]
    op_def = registry.lookup(record.gf)
    for key in ("validate_shape", "use_locking", "use_nesterov", "limit"):
        if key in op_def.attr_types and key in attrs:
            extra[key] = attrs[key]
    extra = {k: v for k, v in extra.items() if k in op_def.attr_types}
    op = make_op(record.gf, inputs[n:], extra, name=ctx.op_name(node))
    return op.outputs


@rule("drop_message")
def _drop_message(ctx, node, inputs, record):
    return make_op("Identity", inputs, {}, name=ctx.op_name(node)).outputs


@rule("identity_n")
def _identity_n(ctx, node, inputs, record):
    return make_op("IdentityN", inputs, {}, name=ctx.op_name(node)).outputs


def _public():
    import graphflow as tf  # noqa: PLC0415
    return tf


@rule("depthwise")
def _depthwise(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    if attrs.get("explicit_paddings"):
        raise ctx.error(node, "explicit paddings are not supported")
    tf = _public()
    rate = attrs.get("dilations") or [1, 1, 1, 1]
    fmt = attrs.get("data_format", "NHWC")
    rate2 = rate[1:3] if fmt == "NHWC" else rate[2:4]
    out = tf.nn.depthwise_conv2d(inputs[0], inputs[1], attrs["strides"], attrs["padding"],
                                 rate=rate2 if rate2 != [1, 1] else None, data_format=fmt,
                                 name=ctx.op_name(node))
    return [out]


@rule("fused_batch_norm")
def _fused_batch_norm(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    gf = {"epsilon": attrs.get("epsilon", 1e-4), "data_format": attrs.get("data_format", "NHWC"),
          "is_training": attrs.get("is_training", True)}
    if attrs.get("exponential_avg_factor", 1.0) != 1.0:
        raise ctx.error(node, "exponential_avg_factor other than 1 is not supported")
    x = inputs[0]
    if x.dtype.name != inputs[1].dtype.name:  # float16 x with float32 statistics (V2/V3)
        raise ctx.error(node, "x and scale of different dtypes are not supported")
    if len(inputs) != 5:
        raise ctx.error(node, f"takes 5 inputs (x, scale, offset, mean, variance), got "
                              f"{len(inputs)}")
    op = make_op("FusedBatchNorm", inputs, gf, name=ctx.op_name(node))
    outs = list(op.outputs)
    if node.op == "FusedBatchNormV3":  # reserve_space_3: empty on CPU, read by the gradient op
        empty = np.zeros(0, x.dtype.as_numpy_dtype)
        outs.append(make_op("Const", [], {"value": empty},
                            name=ctx.op_name(node) + "reserve_space_3").outputs[0])
    return outs + [None] * (6 - len(outs))


@rule("pad")
def _pad(ctx, node, inputs, record):
    """TensorFlow's Pad pads with zeros; graphflow's takes the value as a third input (PadV2)."""
    ctx.attrs(node)
    if len(inputs) != 2:
        raise ctx.error(node, f"takes 2 inputs (input, paddings), got {len(inputs)}")
    zero = _public().zeros([], dtype=inputs[0].dtype)
    return [make_op("Pad", [inputs[0], inputs[1], zero], {}, name=ctx.op_name(node)).outputs[0]]


@rule("split")
def _split(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    axis = static_value.constant_value(inputs[0])
    if axis is None:
        raise ctx.error(node, "split_dim must be a constant")
    op = make_op("Split", [inputs[1]], {"num_split": attrs["num_split"], "size_splits": None,
                                        "axis": int(axis)}, name=ctx.op_name(node))
    return op.outputs


@rule("split_v")
def _split_v(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    sizes = static_value.constant_value(inputs[1])
    axis = static_value.constant_value(inputs[2])
    if axis is None:
        raise ctx.error(node, "split_dim must be a constant")
    if sizes is None:  # sizes read at run time: graphflow's two-input Split
        op = make_op("Split", [inputs[0], inputs[1]], {"num_split": attrs["num_split"],
                                                       "size_splits": None, "axis": int(axis)},
                     name=ctx.op_name(node))
        return op.outputs
    sizes = [int(s) for s in np.asarray(sizes).ravel()]
    if -1 in sizes:
        dim = inputs[0].shape.dims[int(axis)] if inputs[0].shape.dims is not None else None
        if dim is None:
            raise ctx.error(node, "a -1 split size needs the static dimension")
        sizes[sizes.index(-1)] = dim - sum(s for s in sizes if s != -1)
    op = make_op("Split", [inputs[0]], {"num_split": attrs["num_split"], "size_splits": sizes,
                                        "axis": int(axis)}, name=ctx.op_name(node))
    return op.outputs


@rule("select")
def _select(ctx, node, inputs, record):
    """TensorFlow's Select: a vector condition picks rows (tf.where's TF1 rule)."""
    return [_public().where(*inputs, name=ctx.op_name(node))]


@rule("select_v2")
def _select_v2(ctx, node, inputs, record):
    tf = _public()
    return [tf.where_v2(*inputs, name=ctx.op_name(node))] if hasattr(tf, "where_v2") else \
        _generic(ctx, node, inputs, record)


@rule("div")
def _div(ctx, node, inputs, record):
    tf = _public()
    if inputs[0].dtype.is_integer:
        return [tf.floordiv(inputs[0], inputs[1], name=ctx.op_name(node))]
    return _generic(ctx, node, inputs, record)


@rule("batch_matmul_v3")
def _batch_matmul_v3(ctx, node, inputs, record):
    attrs = ctx.attrs(node)
    if attrs.get("Ta") != attrs.get("Tb") or attrs.get("Ta") != attrs.get("Tout"):
        raise ctx.error(node, "mixed dtypes are not supported")
    return _generic(ctx, node, inputs, record)
