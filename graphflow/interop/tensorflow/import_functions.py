"""TensorFlow's functional control flow and function calls, read into graphflow's own.

A GraphDef's FunctionDefLibrary holds the bodies TensorFlow's `If`/`StatelessIf` (branches),
`While`/`StatelessWhile` (cond and body) and `PartitionedCall`/`StatefulPartitionedCall` (f) name.
An If becomes `tf.cond` and a While `tf.while_loop` whose Python functions build the FunctionDef's
nodes into the branch or body graph graphflow is tracing (through the same rules as the graph's
own nodes); a call is inlined. Inside a function an input reads `arg`, or `node:out_arg:index`,
resolved by the node's TensorFlow signature. `check_library` checks the library as untrusted
input first: unique names, node counts, every op known, no function calling itself.
"""

from graphflow.framework.errors import GraphFormatError
from graphflow.interop.tensorflow.import_core import (
    ImportContext,
    build_nodes,
    check_supported,
    parse_input,
    rule,
    topological_order,
)
from graphflow.interop.tensorflow.signatures import signature

_CALLERS = {"If": ("then_branch", "else_branch"), "StatelessIf": ("then_branch", "else_branch"),
            "While": ("cond", "body"), "StatelessWhile": ("cond", "body"),
            "PartitionedCall": ("f",), "StatefulPartitionedCall": ("f",)}


def _rets(fdef, used):
    """The `ret` texts of output args `used` (indices; None: all)."""
    return [fdef.ret[arg.name] for k, arg in enumerate(fdef.signature.output_arg)
            if (used is None or k in used) and arg.name in fdef.ret]


def needed_nodes(fdef, used=None):
    """The body nodes its outputs `used` (indices, None: all) and `control_ret` need, in body
    order: TensorFlow keeps values for gradients in branch bodies (OptionalFromValue ...) that no
    output reads, and returns some of them from branches whose callers never read them."""
    by_name = {n.name: n for n in fdef.node_def}
    stack = [t.lstrip("^").split(":")[0] for t in _rets(fdef, used) +
             list(fdef.control_ret.values())]
    keep = set()
    while stack:
        name = stack.pop()
        if name in keep or name not in by_name:
            continue
        keep.add(name)
        stack.extend(t.lstrip("^").split(":")[0] for t in by_name[name].input)
    return [n for n in fdef.node_def if n.name in keep]


def _where(source):
    return f"{source}: " if source else ""


def graph_reads(nodes):
    """{(node name, output index)} the GraphDef nodes read."""
    return {(s, i) for n in nodes for s, i, c in
            (p for p in (parse_input(t) for t in n.input) if p is not None) if not c}


def function_reads(fdef, nodes, used=None):
    """{(node name, output index)} the function body `nodes` and its outputs `used` read."""
    by_name = {n.name: n for n in nodes}
    out = set()
    for text in [t for n in nodes for t in n.input] + _rets(fdef, used):
        parts = text.split(":")
        if len(parts) == 3 and parts[0] in by_name and parts[2].isdigit():
            offsets = _output_offsets(by_name[parts[0]])
            if parts[1] in offsets:
                out.add((parts[0], offsets[parts[1]] + int(parts[2])))
    return out


def used_outputs(nodes, functions, reads):
    """{function name: output indices some caller reads}, from the graph's `nodes` (which read
    `reads`) down through the functions they call; a While's body and cond keep all."""
    used, queue = {}, []

    def visit(callers, read):
        for node in callers:
            for key in _CALLERS.get(node.op, ()):
                fdef = functions.get(node.attr[key].func.name if key in node.attr else "")
                if fdef is None:
                    continue
                count = len(fdef.signature.output_arg)
                want = set(range(count)) if "While" in node.op else \
                    {k for k in range(count) if (node.name, k) in read}
                have = used.get(fdef.signature.name)
                if have is None or not want <= have:
                    used[fdef.signature.name] = (have or set()) | want
                    queue.append(fdef.signature.name)

    visit(nodes, reads)
    while queue:  # sets only grow: each function is queued at most once per output it adds
        fdef = functions[queue.pop()]
        inner = needed_nodes(fdef, used[fdef.signature.name])
        visit(inner, function_reads(fdef, inner, used[fdef.signature.name]))
    return used


def check_library(library, limits, source, used=None):
    """{name: FunctionDef} of a FunctionDefLibrary, checked (of each function, the nodes that its
    outputs `used` ({name: indices}; all for a function not named) need)."""
    functions = {}
    total = 0
    for fdef in library.function:
        name = fdef.signature.name
        if not name or name in functions:
            raise GraphFormatError(f"{_where(source)}function name {name!r} is empty or repeated")
        functions[name] = fdef
        total += len(fdef.node_def)
        if total > limits.max_nodes:
            raise GraphFormatError(f"{_where(source)}the functions hold more than "
                                   f"{limits.max_nodes} nodes")
    for fdef in functions.values():
        names = set()
        for node in fdef.node_def:
            if node.name in names:
                raise GraphFormatError(f"{_where(source)}function '{fdef.signature.name}': "
                                       f"duplicate node name '{node.name}'")
            names.add(node.name)
        check_supported(needed_nodes(fdef, (used or {}).get(fdef.signature.name)), {},
                        f"{_where(source)}function '{fdef.signature.name}'")
    # calls between functions: every name exists, no cycle
    calls = {name: _called(fdef, functions, source, (used or {}).get(name))
             for name, fdef in functions.items()}
    state = {}
    for start in calls:
        stack = [(start, iter(calls[start]))]
        state[start] = 1
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[name] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                raise GraphFormatError(f"{_where(source)}function '{nxt}' calls itself")
            if state.get(nxt) is None:
                state[nxt] = 1
                if len(stack) >= limits.max_function_depth:
                    raise GraphFormatError(f"{_where(source)}functions nest deeper than "
                                           f"{limits.max_function_depth}")
                stack.append((nxt, iter(calls[nxt])))
    return functions


def _called(fdef, functions, source, used):
    out = []
    for node in needed_nodes(fdef, used):
        for key in _CALLERS.get(node.op, ()):
            target = node.attr[key].func.name if key in node.attr else ""
            if target not in functions:
                raise GraphFormatError(f"{_where(source)}function '{fdef.signature.name}', node "
                                       f"'{node.name}': calls unknown function {target!r}")
            out.append(target)
    return out


def function_of(ctx, node, key):
    attrs = ctx.attrs(node)
    func = attrs.get(key)
    name = getattr(func, "name", None)
    if name not in ctx.library:
        raise ctx.error(node, f"attr '{key}' names function {name!r}, which the library lacks")
    return ctx.library[name]


def _output_offsets(node):
    """{out arg name: first output index} of a function-body node, by its TF signature."""
    sig = signature(node.op)
    offsets, pos = {}, 0
    for arg in sig.outputs if sig is not None else ():
        offsets[arg.name] = pos
        if arg.number_attr:
            pos += node.attr[arg.number_attr].i if arg.number_attr in node.attr else 0
        elif arg.type_list_attr:
            pos += len(node.attr[arg.type_list_attr].list.type) if arg.type_list_attr in node.attr \
                else 0
        else:
            pos += 1
    return offsets


def build_function(ctx, fdef, args, used=None):
    """Build FunctionDef `fdef`'s nodes into the current default graph with its inputs reading
    `args`; returns its output tensors in signature order (None for those not in `used`)."""
    from graphflow.framework.graph import get_default_graph  # noqa: PLC0415
    sig = fdef.signature
    if len(args) != len(sig.input_arg):
        raise GraphFormatError(f"function '{sig.name}' takes {len(sig.input_arg)} inputs, "
                               f"got {len(args)}")
    if ctx.depth + 1 > ctx.limits.max_function_depth:
        raise GraphFormatError(f"functions nest deeper than {ctx.limits.max_function_depth}")
    sub = ImportContext(get_default_graph(), "", ctx.library, ctx.limits,
                        f"{_where(ctx.source)}function '{sig.name}'".rstrip(": "), ctx.depth + 1)
    arg_values = {a.name: t for a, t in zip(sig.input_arg, args)}
    nodes = needed_nodes(fdef, used)
    by_name = {n.name: n for n in nodes}
    sub.read = function_reads(fdef, nodes, used)
    sub.clear_devices = ctx.clear_devices

    def source_of(text):
        name = text.lstrip("^").split(":")[0]
        return name

    def resolve(c, node, text):
        if text.startswith("^"):
            return "control", c.ops.get(text[1:])
        parts = text.split(":")
        if len(parts) == 1 and parts[0] in arg_values:
            return "data", arg_values[parts[0]]
        if len(parts) == 3 and parts[0] in by_name and parts[2].isdigit():
            offsets = _output_offsets(by_name[parts[0]])
            if parts[1] not in offsets:
                raise c.error(node, f"input {text!r}: {by_name[parts[0]].op} has no output "
                                    f"'{parts[1]}'")
            return "data", c.output(node, parts[0], offsets[parts[1]] + int(parts[2]), text)
        raise c.error(node, f"malformed function input {text!r}")

    class _Shim:  # topological_order reads node.input as GraphDef names
        def __init__(self, node):
            self.name = node.name
            self.input = [source_of(t) for t in node.input
                          if source_of(t) in by_name]
            self.node = node
    shims = [_Shim(n) for n in nodes]
    order = [s.node for s in topological_order(shims, {s.name: s for s in shims}, sub.source)]
    with sub.graph.name_scope(None):
        build_nodes(sub, order, resolve=resolve)
    outs = []
    for k, arg in enumerate(sig.output_arg):
        if used is not None and k not in used:
            outs.append(None)
            continue
        text = fdef.ret.get(arg.name)
        if text is None:
            raise GraphFormatError(f"function '{sig.name}' returns nothing for '{arg.name}'")
        outs.append(resolve(sub, nodes[0] if nodes else _Named(sig.name), text)[1])
    return outs


class _Named:
    def __init__(self, name):
        self.name, self.op = name, "function"


def _public():
    import graphflow as tf  # noqa: PLC0415
    return tf


@rule("if")
def _if(ctx, node, inputs, record):
    then_f, else_f = function_of(ctx, node, "then_branch"), function_of(ctx, node, "else_branch")
    tf = _public()
    pred, args = inputs[0], inputs[1:]
    if pred.dtype.name != "bool":
        pred = tf.cast(pred, tf.bool)  # TensorFlow's If reads a non-bool predicate as != 0
    if pred.shape.ndims not in (None, 0):
        raise ctx.error(node, "the predicate must be a scalar")
    count = len(then_f.signature.output_arg)
    if len(else_f.signature.output_arg) != count:
        raise ctx.error(node, "the branches return different numbers of values")
    used = _read_outputs(ctx, node, count)

    def branch(fdef):
        outs = build_function(ctx, fdef, args, set(used))
        return [outs[k] for k in used]

    result = tf.cond(pred, lambda: branch(then_f), lambda: branch(else_f),
                     name=node.name.split("/")[-1])
    if not isinstance(result, (list, tuple)):
        result = [result]
    if len(result) != len(used):
        raise ctx.error(node, f"the branches return {len(result)} values, not {len(used)}")
    full = [None] * count
    for k, value in zip(used, result):
        full[k] = value
    return full


def _read_outputs(ctx, node, count):
    """The output indices of `node` that something reads (at least one, to keep the op), in
    order: outputs nothing reads are not built (TensorFlow's branches return gradient
    intermediates, OptionalFromValue ..., that only its gradient reads)."""
    if ctx.read is None:
        return list(range(count))
    used = [k for k in range(count) if (node.name, k) in ctx.read]
    return used or list(range(min(count, 1)))


@rule("while")
def _while(ctx, node, inputs, record):
    cond_f, body_f = function_of(ctx, node, "cond"), function_of(ctx, node, "body")
    tf = _public()
    if not inputs:
        raise ctx.error(node, "a loop without loop variables")
    from graphflow.framework.tensor_shape import TensorShape  # noqa: PLC0415
    declared = ctx.attrs(node).get("output_shapes") or []
    shapes = [TensorShape(s) if len(declared) == len(inputs) else TensorShape(None)
              for s in (declared if len(declared) == len(inputs) else inputs)]
    shapes = [TensorShape(None) if len(declared) != len(inputs) else s for s in shapes]

    def cond(*values):
        (pred,) = build_function(ctx, cond_f, list(values))[:1]
        return pred if pred.dtype.name == "bool" else tf.cast(pred, tf.bool)

    def body(*values):
        return list(build_function(ctx, body_f, list(values)))

    result = tf.while_loop(cond, body, list(inputs), shape_invariants=shapes,
                           name=node.name.split("/")[-1], return_same_structure=True)
    return list(result)


@rule("call")
def _call(ctx, node, inputs, record):
    fdef = function_of(ctx, node, "f")
    used = _read_outputs(ctx, node, len(fdef.signature.output_arg))
    return build_function(ctx, fdef, list(inputs), set(used))
