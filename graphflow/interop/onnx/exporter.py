"""Export a graphflow inference graph to an ONNX model.

`export(outputs, path, inputs=..., session=..., opset=...)` walks the ops the outputs need (cut at
the inputs), turns variables into initializers holding the session's values (frozen), and asks the
converter table (`export_ops.CONVERTERS`, one function per graphflow op type) to emit ONNX nodes
for each op. Unknown dims become symbolic dims. An op without a converter is a clear error naming
the op, its type and the user's line that created it, listing every such op at once.

The `onnx` package builds and checks the protobufs (`onnx.helper`, `onnx.checker`); nothing here
writes protobuf bytes by hand.
"""

import numpy as np

from graphflow.fileformat import file_io
from graphflow.framework.graph import Operation, Tensor, describe_op, needed_ops
from graphflow.interop.onnx.support import require_onnx
from graphflow.ops import registry, static_value

DEFAULT_OPSET = 17
MIN_OPSET = 13


class ExportError(ValueError):
    """A graph (or one of its ops) that cannot be written as ONNX."""


class ExportContext:
    """What a converter sees: names of tensors, and ways to add nodes and constants."""

    def __init__(self, onnx, opset, variable_values):
        self.onnx = onnx
        self.helper = onnx.helper
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self._names = {}
        self._counter = 0
        self._variable_values = variable_values

    # ---- names
    def name(self, tensor):
        """The ONNX value name of a graphflow tensor (`op:0` as graphflow names it)."""
        return self._names.get(tensor, tensor.name)

    def alias(self, tensor, onnx_name):
        """Let `tensor` be the ONNX value `onnx_name` (for ops that become no node at all)."""
        self._names[tensor] = onnx_name

    def fresh(self, hint):
        self._counter += 1
        return f"{hint}__{self._counter}"

    # ---- emitting
    def node(self, op_type, inputs, outputs=None, name=None, **attrs):
        """Add one ONNX node; returns its output names (`outputs` default: one fresh name)."""
        outputs = list(outputs) if outputs is not None else [self.fresh(op_type)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outputs,
                                                name=name or self.fresh(op_type), **attrs))
        return outputs

    def one(self, op_type, inputs, output=None, **attrs):
        return self.node(op_type, inputs, None if output is None else [output], **attrs)[0]

    def const(self, value, hint="const", dtype=None):
        """An initializer holding `value`; returns its name."""
        array = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def int64(self, tensor, hint="ints"):
        """`tensor` (a shape, axes or sizes input) as an int64 ONNX value: a constant when its
        value is known at build time, else a Cast of the computed tensor."""
        value = static_value.constant_value(tensor)
        if value is not None:
            return self.const(np.asarray(value, dtype=np.int64), hint)
        if tensor.dtype.as_numpy_dtype == np.int64:
            return self.name(tensor)
        return self.one("Cast", [self.name(tensor)], to=self.onnx.TensorProto.INT64)

    def known(self, tensor, what):
        """The build-time value of `tensor`, which ONNX needs as an attribute."""
        value = static_value.constant_value(tensor)
        if value is None:
            raise ExportError(f"{what} must be known when the graph is built to export it to ONNX")
        return np.asarray(value)

    def variable_value(self, op):
        name = op.attrs["shared_name"]
        if name not in self._variable_values:
            raise ExportError(f"variable '{name}' has no value: pass the session that initialized it")
        return np.asarray(self._variable_values[name])

    def elem_type(self, dtype):
        return self.helper.np_dtype_to_tensor_dtype(np.dtype(dtype.as_numpy_dtype))


def _named(elements, what):
    if elements is None:
        return {}
    if isinstance(elements, dict):
        return dict(elements)
    if isinstance(elements, (Tensor, Operation)):
        elements = [elements]
    named = {}
    for element in elements:
        if not isinstance(element, Tensor):
            raise TypeError(f"ONNX {what} must be Tensors, got {element!r}")
        named[element.op.name] = element
    return named


def _value_info(ctx, name, tensor, symbolic_prefix):
    dims = []
    shape = tensor.shape
    if shape.ndims is None:
        return ctx.helper.make_tensor_value_info(name, ctx.elem_type(tensor.dtype), None)
    for i, d in enumerate(shape.as_list()):
        dims.append(d if d is not None else f"{symbolic_prefix}_d{i}")
    return ctx.helper.make_tensor_value_info(name, ctx.elem_type(tensor.dtype), dims)


def build_model(outputs, inputs=None, session=None, opset=DEFAULT_OPSET, variable_values=None,
                producer="graphflow"):
    """The ONNX ModelProto for `outputs` ({name: Tensor} or a list) fed through `inputs`."""
    onnx = require_onnx()
    from graphflow.interop.onnx.export_ops import CONVERTERS  # noqa: PLC0415 (needs onnx loaded)
    latest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= latest:
        raise ExportError(f"opset {opset} is not supported: use {MIN_OPSET}..{latest}")
    outputs = _named(outputs, "outputs")
    inputs = _named(inputs, "inputs")
    if not outputs:
        raise ExportError("nothing to export: give at least one output tensor")
    if variable_values is None:
        variable_values = session.variable_values() if session is not None else {}
    ctx = ExportContext(onnx, opset, variable_values)
    fed = set(inputs.values())
    ops = needed_ops([t.op for t in outputs.values()], fed)
    placeholders = [op for op in ops if registry.lookup(op.type).graph_input
                    and op.outputs[0] not in fed]
    if placeholders:
        names = ", ".join(f"'{op.name}'" for op in placeholders)
        raise ExportError(f"the outputs depend on placeholder(s) {names} that are not among the "
                          "inputs: pass them in inputs=")
    missing = [op for op in ops if op.type not in CONVERTERS]
    if missing:
        lines = "\n".join(f"  {describe_op(op)}" for op in missing)
        raise ExportError(f"{len(missing)} op(s) have no ONNX export:\n{lines}")
    graph_inputs = []
    for name, tensor in inputs.items():
        ctx.alias(tensor, name)
        graph_inputs.append(_value_info(ctx, name, tensor, name))
    for op in ops:
        CONVERTERS[op.type](ctx, op)
    graph_outputs = []
    for name, tensor in outputs.items():
        source = ctx.name(tensor)
        if source != name:
            ctx.one("Identity", [source], output=name)
        graph_outputs.append(_value_info(ctx, name, tensor, name))
    used = {name for node in ctx.nodes for name in node.input} | set(outputs)
    initializers = [init for init in ctx.initializers if init.name in used]  # e.g. shape consts
    graph = ctx.helper.make_graph(ctx.nodes, "graphflow", graph_inputs, graph_outputs,
                                  initializer=initializers)
    model = ctx.helper.make_model(graph, producer_name=producer,
                                  opset_imports=[ctx.helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, _max_ir_version(onnx, opset))
    onnx.checker.check_model(model, full_check=True)
    return model


def _max_ir_version(onnx, opset):
    for entry in onnx.helper.VERSION_TABLE:  # (release, ir_version, ai.onnx opset, ...)
        if entry[2] >= opset:
            return entry[1]
    return onnx.IR_VERSION


def export(outputs, path, inputs=None, session=None, opset=DEFAULT_OPSET, variable_values=None):
    """Write the ONNX model for `outputs` to `path` atomically (temp file + rename); returns path."""
    model = build_model(outputs, inputs, session, opset, variable_values)
    with file_io.atomic_write(path) as f:
        f.write(model.SerializeToString())
    return path
