"""Export a graphflow inference graph to an ONNX model.

`export(outputs, path, inputs=..., session=..., opset=...)` walks the ops the outputs need (cut at
the inputs), turns variables into initializers holding the session's values (frozen), and writes
each op as ONNX nodes the way its record's `onnx` fact says (`export_facts.converter_for`: one
ONNX node, or a named converter of `export_ops.py` and its siblings). Unknown dims become
symbolic dims. An op with no ONNX form is a clear error naming the op, its type, the user's line
that created it and the reason its record gives, listing every such op at once.

A `placeholder_with_default` the outputs read that is not among the inputs (a `training` flag)
is fixed to its default first and what it decides folded, as `graphflow.save` writes a file
(`fileformat/signature_graph.py`, on a copy of the graph): dropout's random numbers, batch
statistics and a cond's train branch do not reach the ONNX model.

The `onnx` package builds and checks the protobufs (`onnx.helper`, `onnx.checker`); nothing here
writes protobuf bytes by hand.
"""

import numpy as np

from graphflow.fileformat import file_io, signature_graph
from graphflow.framework.graph import Operation, Tensor, describe_op, needed_ops
from graphflow.interop.onnx import export_facts
from graphflow.interop.onnx.support import require_onnx
from graphflow.ops import registry, static_value

DEFAULT_OPSET = 17
MIN_OPSET = 13


class ExportError(ValueError):
    """A graph (or one of its ops) that cannot be written as ONNX."""


class ExportContext:
    """What a converter sees: names of tensors, and ways to add nodes and constants."""

    def __init__(self, onnx, opset, variable_values, parent=None, prefix="", graph=None):
        self.onnx = onnx
        self.helper = onnx.helper
        self.opset = opset
        self.nodes = []
        self.parent = parent
        self.prefix = prefix  # sub-graph values get it: ONNX names may not shadow outer ones
        self.graph = graph  # the function graph whose tensors this context names
        self.root = parent.root if parent is not None else self
        # constants go to the outermost graph (sub-graphs see outer values by name)
        self.initializers = parent.initializers if parent is not None else []
        self._names = {}
        self._counter = 0
        self._variable_values = variable_values

    # ---- names
    def name(self, tensor):
        """The ONNX value name of a graphflow tensor (`op:0` as graphflow names it, after the
        prefix of the sub-graph it is in)."""
        alias = self._names.get(tensor)
        if alias is not None:
            return alias
        if self.parent is not None and tensor.graph is not self.graph:
            return self.parent.name(tensor)  # a value of an enclosing graph
        return self.prefix + tensor.name

    def alias(self, tensor, onnx_name):
        """Let `tensor` be the ONNX value `onnx_name` (for ops that become no node at all)."""
        self._names[tensor] = onnx_name

    def fresh(self, hint):
        self.root._counter += 1
        return f"{hint}__{self.root._counter}"

    # ---- sub-graphs (If branches, Loop bodies)
    def subgraph(self, func_graph, outputs, name, captured, inputs=(), extra=None):
        """The ONNX GraphProto computing `outputs` (tensors of `func_graph`). `inputs`: pairs
        (placeholder of func_graph or None, ONNX value_info) that become the graph's inputs, in
        order; the function's captures read `captured` (the ONNX names of the op's inputs that
        feed them, in order: the outer values, read by name as ONNX sub-graphs do).
        `extra(sub_ctx)` may add nodes after the function's own and return more output names
        (a Loop body's condition)."""
        sub = ExportContext(self.onnx, self.opset, self._variable_values, parent=self,
                            prefix=self.fresh(name) + "/", graph=func_graph)
        for (_, placeholder), outer_name in zip(func_graph.captures, captured):
            sub.alias(placeholder, outer_name)
        graph_inputs = []
        for placeholder, info in inputs:
            if placeholder is not None:
                sub.alias(placeholder, info.name)
            graph_inputs.append(info)
        convert(sub, needed_ops([t.op for t in outputs], set(func_graph.all_inputs)))
        names = [sub.one("Identity", [sub.name(t)]) for t in outputs]
        tensors = list(outputs)
        if extra is not None:
            more = extra(sub)
            names = list(more) + names
            tensors = [None] * len(more) + tensors
        graph_outputs = [self.helper.make_tensor_value_info(
            n, sub.elem_type(t.dtype) if t is not None else self.onnx.TensorProto.BOOL, None)
            for n, t in zip(names, tensors)]
        return self.helper.make_graph(sub.nodes, name, graph_inputs, graph_outputs)

    def inline(self, func_graph, args, captured):
        """Emit `func_graph`'s ops into this graph with its argument placeholders reading
        `args` and its captures `captured` (ONNX names); returns the ONNX names of its outputs."""
        sub = ExportContext(self.onnx, self.opset, self._variable_values, parent=self,
                            prefix=self.fresh(func_graph.name) + "/", graph=func_graph)
        sub.nodes = self.nodes
        for (_, placeholder), outer_name in zip(func_graph.captures, captured):
            sub.alias(placeholder, outer_name)
        for placeholder, arg in zip(func_graph.inputs, args):
            sub.alias(placeholder, arg)
        convert(sub, needed_ops([t.op for t in func_graph.outputs], set(func_graph.all_inputs)))
        return [sub.name(t) for t in func_graph.outputs]

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

    def pads(self, paddings):
        """ONNX's pads (all befores, then all afters) from TF's [rank, 2] paddings: a constant
        when they are known at build time, else the transposed, flattened run-time tensor."""
        value = static_value.constant_value(paddings)
        if value is not None:
            p = np.asarray(value, dtype=np.int64).reshape(-1, 2)
            return self.const(np.concatenate([p[:, 0], p[:, 1]]), "pads")
        columns = self.one("Transpose", [self.int64(paddings)], perm=[1, 0])
        return self.one("Reshape", [columns, self.const(np.array([-1], np.int64), "shape")])

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
        raise ExportError(f"'{name}' ({describe_op(tensor.op)}) has an unknown rank: every input "
                          "and output of an ONNX graph needs a rank (give the placeholder a "
                          "shape; a reduction over axes read at run time keeps its rank only "
                          "with keepdims=True)")
    for i, d in enumerate(shape.as_list()):
        dims.append(d if d is not None else f"{symbolic_prefix}_d{i}")
    return ctx.helper.make_tensor_value_info(name, ctx.elem_type(tensor.dtype), dims)


def build_model(outputs, inputs=None, session=None, opset=DEFAULT_OPSET, variable_values=None,
                producer="graphflow"):
    """The ONNX ModelProto for `outputs` ({name: Tensor} or a list) fed through `inputs`."""
    onnx = require_onnx()
    latest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= latest:
        raise ExportError(f"opset {opset} is not supported: use {MIN_OPSET}..{latest}")
    outputs = _named(outputs, "outputs")
    inputs = _named(inputs, "inputs")
    if not outputs:
        raise ExportError("nothing to export: give at least one output tensor")
    if variable_values is None:
        variable_values = session.variable_values() if session is not None else {}
    inputs, outputs = _as_inference_sees_it(inputs, outputs)
    ctx = ExportContext(onnx, opset, variable_values)
    fed = set(inputs.values())
    ops = needed_ops([t.op for t in outputs.values()], fed)
    placeholders = [op for op in ops if registry.lookup(op.type).must_feed and op.outputs[0] not in fed]
    if placeholders:
        names = ", ".join(f"'{op.name}'" for op in placeholders)
        raise ExportError(f"the outputs depend on placeholder(s) {names} that are not among the "
                          "inputs: pass them in inputs=")
    missing = _without_converter(ops)
    if missing:
        lines = "\n".join(f"  {describe_op(op)}: {export_facts.why_not(op.type)}" for op in missing)
        raise ExportError(f"{len(missing)} op(s) have no ONNX export:\n{lines}")
    graph_inputs = []
    for name, tensor in inputs.items():
        ctx.alias(tensor, name)
        graph_inputs.append(_value_info(ctx, name, tensor, name))
    convert(ctx, ops)
    graph_outputs = []
    for name, tensor in outputs.items():
        source = ctx.name(tensor)
        if source != name:
            ctx.one("Identity", [source], output=name)
        graph_outputs.append(_value_info(ctx, name, tensor, name))
    used = _names_read(ctx.nodes) | set(outputs)
    initializers = [init for init in ctx.initializers if init.name in used]  # e.g. shape consts
    graph = ctx.helper.make_graph(ctx.nodes, "graphflow", graph_inputs, graph_outputs,
                                  initializer=initializers)
    model = ctx.helper.make_model(graph, producer_name=producer,
                                  opset_imports=[ctx.helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, _max_ir_version(onnx, opset))
    onnx.checker.check_model(model, full_check=True)
    return model


def _as_inference_sees_it(inputs, outputs):
    """(inputs, outputs) in the graph with each placeholder_with_default that the outputs read
    and `inputs` do not name fixed to its default and folded (a `training` flag: dropout's random
    numbers, batch statistics and a cond's train branch go), as `graphflow.save` writes a file:
    `signature_graph.inference_graph`, a copy. The user's own tensors when there is none."""
    try:
        inferred = signature_graph.inference_graph(inputs, outputs)
    except ValueError:  # a signature that cannot be copied: the ops it needs are refused below
        return inputs, outputs
    if inferred is None:
        return inputs, outputs
    return inferred.inputs, inferred.outputs


def all_converters():
    """The converter table derived from the op records: {op type: converter} for every
    registered op type that has an ONNX form."""
    table = {}
    for op_type in registry.registered_types():
        if export_facts.why_not(op_type) is None:
            table[op_type] = export_facts.converter_for(op_type)
    return table


def convert(ctx, ops):
    """Run each op's converter; a converter's refusal becomes an ExportError naming the op and
    the user's line that created it."""
    for op in ops:
        fn = export_facts.converter_for(op.type)
        if fn is None:
            raise ExportError(f"{describe_op(op)} has no ONNX export: {export_facts.why_not(op.type)}")
        try:
            fn(ctx, op)
        except ExportError as exc:
            if describe_op(op) in str(exc):
                raise
            raise ExportError(f"{describe_op(op)}: {exc}") from exc
        except ValueError as exc:
            raise ExportError(f"{describe_op(op)}: {exc}") from exc


def _without_converter(ops):
    """The ops (inside If/While sub-graphs too) that have no ONNX form (`export_facts.why_not`
    says why)."""
    missing, stack = [], [list(ops)]
    while stack:
        for op in stack.pop():
            if export_facts.why_not(op.type) is not None:
                missing.append(op)
            for func_graph in _function_attrs(op):
                stack.append(needed_ops([t.op for t in func_graph.outputs],
                                        set(func_graph.all_inputs)))
    return missing


def _function_attrs(op):
    names = {"If": ("then_branch", "else_branch"), "While": ("cond", "body")}.get(op.type, ())
    return [op.attrs[n] for n in names]


def _names_read(nodes):
    """Every value name the nodes (and the nodes of their sub-graphs) read."""
    names, stack = set(), [list(nodes)]
    while stack:
        for node in stack.pop():
            names.update(node.input)
            for attr in node.attribute:
                if attr.HasField("g"):
                    stack.append(list(attr.g.node))
                for g in attr.graphs:
                    stack.append(list(g.node))
    return names


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
