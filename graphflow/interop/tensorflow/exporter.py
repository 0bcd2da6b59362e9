"""graphflow graph -> TensorFlow `GraphDef`.

`export_graph_def(graph, add_shapes=False, ops=None, strip_devices=False)` walks the user's graph
(never a plan's optimized copy) and writes each op as TensorFlow NodeDefs the way its record in
`op_table.py` says: the generic writer (same name, renamed attrs, attrs kept as TensorFlow inputs
written as Const nodes) or an export rule (`export_rules.py`). TensorFlow's type attrs (`T`, `N`,
`Tidx`, lists of types) are filled from the tensors, every attr TensorFlow's signature requires is
written, and graphflow-only attrs (gradient bookkeeping) are left out. A graph holding ops with no
TensorFlow form is one `ExportError` listing them all (type, name, why). `If`/`While` become
TensorFlow's functional ops with a FunctionDefLibrary (`export_functions.py`).
"""

import re

import numpy as np

from graphflow.fileformat import tf_protos as pb
from graphflow.framework.graph import describe_op
from graphflow.interop.tensorflow import op_table, tensor_protos
from graphflow.interop.tensorflow.attr_values import to_attr_value
from graphflow.interop.tensorflow.export_ordering import order_reads_before_writes
from graphflow.interop.tensorflow.signatures import signature, tensorflow_version

PRODUCER = 1882  # a GraphDef producer version TensorFlow 2.x writes (versions.producer)
_NODE_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")


class ExportError(ValueError):
    """A graph (or some of its ops) that cannot be written as a TensorFlow GraphDef."""


RULES = {}  # export rule name -> rule(ctx, op, record); export_rules.py and export_functions.py


def rule(name):
    """Register an export rule under the name op records give in `export=`."""
    def register(fn):
        RULES[name] = fn
        return fn
    return register


class ExportContext:
    """Where NodeDefs go (a GraphDef's or a FunctionDef's node list) and how tensors are named
    there: 'op' / 'op:1' in a graph, 'op:arg:0' inside a function body."""

    def __init__(self, nodes, graph, library, in_function=False, strip_devices=False,
                 add_shapes=False):
        self.nodes = nodes
        self.graph = graph
        self.library = library  # the GraphDef's FunctionDefLibrary (shared by nested functions)
        self.in_function = in_function
        self.strip_devices = strip_devices
        self.add_shapes = add_shapes
        self.names = {}   # graphflow Tensor -> TF input string
        self.aliases = {}  # graphflow Tensor -> tensor standing for it (ops written as no node)
        self.used = {op.name for op in graph.get_operations()}
        self.variables = {}  # shared_name -> the TF input string of its variable node
        for op in graph.get_operations():
            if op.op_def.variable:
                self.variables.setdefault(op.attrs["shared_name"], op.name)
        self.functions = library_names(library)

    # ---- names
    def name(self, tensor):
        tensor = self.aliases.get(tensor, tensor)
        found = self.names.get(tensor)
        if found is None:
            raise ExportError(f"tensor {tensor.name} is read before the op making it was written "
                              "(or by an op outside the exported ops)")
        return found

    def fresh(self, hint):
        name, i = hint, 0
        while name in self.used:
            i += 1
            name = f"{hint}_{i}"
        self.used.add(name)
        return name

    def set_outputs(self, op, node, tensors=None):
        """Record the TF names of `op`'s outputs, read from `node`'s outputs in order."""
        tensors = op.outputs if tensors is None else tensors
        for i, t in enumerate(tensors):
            self.names[t] = self.output_name(node, i)

    def output_name(self, node, index):
        if not self.in_function:
            return node.name if index == 0 else f"{node.name}:{index}"
        arg, local = output_arg_of(node, index)
        return f"{node.name}:{arg}:{local}"

    # ---- nodes
    def add_node(self, op_type, name, inputs=(), attrs=None, device="", controls=()):
        node = self.nodes.add(name=name, op=op_type)
        node.input.extend(inputs)
        node.input.extend(f"^{c}" for c in controls)
        if device and not self.strip_devices:
            node.device = device
        for key, value in (attrs or {}).items():
            node.attr[key].CopyFrom(value)
        check_allowed_types(node)
        return node

    def const(self, value, hint, dtype=None):
        """A Const node holding `value`; returns its output's name."""
        proto = tensor_protos.from_array(value, dtype)
        node = self.add_node("Const", self.fresh(hint), attrs={
            "value": pb.AttrValue(tensor=proto), "dtype": pb.AttrValue(type=proto.dtype)})
        return self.output_name(node, 0)

    def controls(self, op):
        return [c.name for c in op.control_inputs]


def check_allowed_types(node):
    """TensorFlow refuses a node whose type attr is outside the list its op declares (MaxPool3D,
    LRN, FusedBatchNorm take no float64): an ExportError here, not a GraphDef TensorFlow rejects."""
    sig = signature(node.op)
    if sig is None:
        return
    for key, declared in sig.attrs.items():
        if declared.kind != "type" or declared.allowed is None or key not in node.attr:
            continue
        try:
            name = tensor_protos.gf_dtype_name(node.attr[key].type)
        except tensor_protos.TensorProtoError:
            continue
        if name not in declared.allowed:
            raise ExportError(f"node '{node.name}': TensorFlow's {node.op} does not take {name} "
                              f"({key} is one of {', '.join(declared.allowed)})")


def library_names(library):
    return {f.signature.name for f in library.function}


def output_arg_of(node, index):
    """(output arg name, index within it) of output `index` of `node` (by its TF signature)."""
    sig = signature(node.op)
    if sig is None:
        raise ExportError(f"no TensorFlow signature for op {node.op}")
    for arg in sig.outputs:
        count = arg_count(arg, node.attr)
        if index < count:
            return arg.name, index
        index -= count
    raise ExportError(f"{node.op} node '{node.name}' has no output {index}")


def arg_count(arg, attrs):
    """How many tensors `arg` stands for, given a node's attrs (a map of AttrValues)."""
    if arg.number_attr:
        return attrs[arg.number_attr].i if arg.number_attr in attrs else 0
    if arg.type_list_attr:
        return len(attrs[arg.type_list_attr].list.type) if arg.type_list_attr in attrs else 0
    return 1


def fill_type_attrs(sig, attrs, input_dtypes, output_dtypes):
    """Set `sig`'s type attrs (T, N, Tidx, type lists) that `attrs` lacks from the dtypes of the
    tensors each argument gets (inputs first; outputs for attrs only outputs use)."""
    for args, dts in ((sig.inputs, input_dtypes), (sig.outputs, output_dtypes)):
        if dts is None:
            continue
        fixed = sum(1 for a in args if not a.variadic)
        variadic = [a for a in args if a.variadic]
        spare = len(dts) - fixed
        if spare < 0 or (len(variadic) == 0 and spare) or (len(variadic) > 1 and spare):
            if len(variadic) > 1:
                continue  # several variadic args: the rule that writes the op sets them
            raise ExportError(f"{sig.op} takes {fixed} tensors here, got {len(dts)}")
        pos = 0
        for arg in args:
            count = spare if arg.variadic else 1
            group = dts[pos:pos + count]
            pos += count
            if arg.number_attr and arg.number_attr not in attrs:
                attrs[arg.number_attr] = pb.AttrValue(i=count)
            if arg.type_list_attr and arg.type_list_attr not in attrs:
                attrs[arg.type_list_attr] = to_attr_value(list(group), "list(type)")
            if arg.type_attr and arg.type_attr not in attrs and group:
                attrs[arg.type_attr] = to_attr_value(group[0], "type")


def finish_attrs(sig, attrs, what):
    """Check every required attr is set; returns the missing ones' names."""
    return [a for a in sig.required_attrs if a not in attrs] if sig else []


def write_generic(ctx, op, record, inputs=None, extra_attrs=None, tf_type=None, skip=()):
    """Write `op` as one NodeDef of TF type `record.tf`: graphflow inputs in order, the
    `attr_inputs` as Const inputs at their positions, attrs renamed, type attrs filled."""
    tf_type = tf_type or record.tf
    sig = signature(tf_type)
    names = [ctx.name(t) for t in op.inputs] if inputs is None else list(inputs)
    dts = [t.dtype.name for t in op.inputs] if inputs is None else None
    attrs = {}
    for position, gf_attr in sorted(record.attr_inputs.items(), key=lambda kv: kv[0] % 1000):
        value = op.attrs.get(gf_attr)
        if value is None:
            raise ExportError(f"{describe_op(op)}: attr '{gf_attr}' is unset; TensorFlow needs it "
                              "as an input")
        dtype = "int64" if abs(max(_flat(value), key=abs, default=0)) >= 2**31 else "int32"
        name = ctx.const(value, f"{op.name}/{gf_attr}", dtype)
        at = position if position >= 0 else len(names) + 1 + position
        names.insert(at, name)
        if dts is not None:
            dts.insert(at, dtype)
    renamed = dict(record.attrs)
    for key, value in op.attrs.items():
        if key in record.attr_inputs.values() or key in skip or key in record.gf_attrs:
            continue
        tf_name = renamed.get(key, key)
        if tf_name not in sig.attrs:
            continue  # graphflow bookkeeping TensorFlow has no attr for
        if value is None:
            continue  # unset: TensorFlow's default
        attrs[tf_name] = to_attr_value(value, sig.attrs[tf_name].kind)
    for key, value in record.tf_attrs.items():
        attrs[key] = to_attr_value(value, sig.attrs[key].kind)
    for key, value in (extra_attrs or {}).items():
        attrs[key] = value if isinstance(value, pb.AttrValue) else \
            to_attr_value(value, sig.attrs[key].kind)
    fill_type_attrs(sig, attrs, dts, [t.dtype.name for t in op.outputs])
    missing = finish_attrs(sig, attrs, op.name)
    if missing:
        raise ExportError(f"{describe_op(op)}: TensorFlow's {tf_type} requires attrs {missing}")
    node = ctx.add_node(tf_type, op.name, names, attrs, op.device, ctx.controls(op))
    ctx.set_outputs(op, node)
    return node


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [int(x) for x in value]
    try:
        return [int(x) for x in np.asarray(value).ravel()]
    except (TypeError, ValueError):
        return []


def unexportable(ops):
    """[(op, why)] for the ops that have no TensorFlow form."""
    out = []
    for op in ops:
        if op_table.for_export(op.type) is None:
            out.append((op, op_table.why_unexportable(op.type)))
        else:
            out.extend(unexportable(function_ops(op)))
    return out


def function_graphs(op):
    """The function graphs an If/While op holds that an export writes (not gradient graphs)."""
    keys = {"If": ("then_branch", "else_branch"), "While": ("cond", "body")}.get(op.type, ())
    return [op.attrs[k] for k in keys]


def function_ops(op):
    """The ops of the function graphs `op` holds (empty for ops holding none)."""
    return [inner for g in function_graphs(op) for inner in g.get_operations()]


def check_exportable(ops):
    problems = unexportable(ops)
    if problems:
        lines = "\n".join(f"  {op.type} '{op.name}': {why}" for op, why in problems)
        raise ExportError(f"{len(problems)} op(s) have no TensorFlow GraphDef form:\n{lines}")


def write_ops(ctx, ops):
    for op in ops:
        if not _NODE_NAME.match(op.name):
            raise ExportError(f"op name '{op.name}' is not a valid TensorFlow node name")
        record = op_table.for_export(op.type)
        if record.export:
            RULES[record.export](ctx, op, record)
        else:
            write_generic(ctx, op, record)
        if ctx.add_shapes and not ctx.in_function and op.outputs:
            node = ctx.nodes[-1] if ctx.nodes[-1].name == op.name else \
                next(n for n in ctx.nodes if n.name == op.name)
            shapes = pb.AttrValue()
            shapes.list.shape.extend(tensor_protos.shape_proto(t.shape.dims) for t in op.outputs)
            node.attr["_output_shapes"].CopyFrom(shapes)


def writable_ops(ops):
    """(the ops that have a TensorFlow form and read only such ops, [(op, why)] for the others:
    the ops with no TensorFlow form and those reading them, by data or control edges)."""
    skipped = {op: why for op, why in unexportable(ops)}
    kept = []
    for op in ops:  # creation order is topological
        if op in skipped:
            continue
        source = next((i.op for i in op.inputs if i.op in skipped), None) or \
            next((c for c in op.control_inputs if c in skipped), None)
        if source is not None:
            skipped[op] = f"reads {source.type} '{source.name}'"
        else:
            kept.append(op)
    return kept, [(op, skipped[op]) for op in ops if op in skipped]


def export_graph_def(graph, add_shapes=False, ops=None, strip_devices=False, skip_unexportable=False):
    """The TensorFlow GraphDef of `graph` (every op, or `ops`, in creation order). With
    `skip_unexportable`: (GraphDef of what can be written, [(op, why)] of what cannot)."""
    ops = graph.get_operations() if ops is None else list(ops)
    if skip_unexportable:
        ops, skipped = writable_ops(ops)
        return export_graph_def(graph, add_shapes, ops, strip_devices), skipped
    check_exportable(ops)
    graph_def = pb.GraphDef()
    graph_def.versions.producer = PRODUCER
    graph_def.versions.min_consumer = 12
    ctx = ExportContext(graph_def.node, graph, graph_def.library, strip_devices=strip_devices,
                        add_shapes=add_shapes)
    write_ops(ctx, ops)
    order_reads_before_writes(ops, graph_def.node)
    return graph_def


__all__ = ["export_graph_def", "ExportError", "tensorflow_version"]
