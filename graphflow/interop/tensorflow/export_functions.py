"""graphflow's `If`/`While` written as TensorFlow's functional `If`/`While` with their branches,
cond and body in the GraphDef's FunctionDefLibrary (TensorFlow 1.15 and 2.x import them).

A function graph becomes a FunctionDef: its argument and capture placeholders are the function's
input args, its ops NodeDefs named as inside a function body (`op:out_arg:index`), its outputs
the `ret` map. TensorFlow's If passes the same inputs to both branches, so each branch takes all
of the op's inputs (the then-branch's captures, then the else-branch's) and reads its own. A
While's captures ride along as loop variables the body passes through unchanged, and
`maximum_iterations` as a counter the cond compares and the body increments. Only the ops' value
outputs are written: the extra outputs graphflow keeps for gradients have no TensorFlow form.
"""

import numpy as np

from graphflow.fileformat import tf_protos as pb
from graphflow.framework.graph import describe_op, needed_ops
from graphflow.interop.tensorflow import tensor_protos
from graphflow.interop.tensorflow.exporter import (
    ExportContext,
    ExportError,
    check_exportable,
    rule,
    write_ops,
)


def _fresh_function_name(ctx, hint):
    names = {f.signature.name for f in ctx.library.function}
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
    name, i = base, 0
    while name in names:
        i += 1
        name = f"{base}_{i}"
    return name


def write_function(ctx, func_graph, hint, arg_dtypes, bind, outputs, extra=None, also=()):
    """Add a FunctionDef to ctx.library; returns its name. `arg_dtypes`: the dtype names of its
    inputs; `bind`: {placeholder of func_graph: arg index}; `outputs`: tensors of func_graph or
    arg indices (ints: the argument passed through). `extra(sub, arg_names)` may add nodes and
    returns (output names, dtype names) appended to the outputs."""
    fdef = ctx.library.function.add()
    fdef.signature.name = _fresh_function_name(ctx, hint)
    sub = ExportContext(fdef.node_def, func_graph, ctx.library, in_function=True,
                        strip_devices=ctx.strip_devices)
    arg_names = []
    for i, dtype in enumerate(arg_dtypes):
        name = f"arg{i}"
        fdef.signature.input_arg.add(name=name, type=tensor_protos.tf_dtype(dtype))
        arg_names.append(name)
    for placeholder, index in bind.items():
        sub.names[placeholder] = arg_names[index]
    tensors = [t for t in outputs if not isinstance(t, int)]
    ops = needed_ops([t.op for t in tensors + list(also)], set(bind))
    ops = [op for op in ops if not (op.op_def.graph_input and op.outputs[0] in bind)]
    check_exportable(ops)
    write_ops(sub, ops)
    rets = []
    for t in outputs:
        if isinstance(t, int):
            rets.append((arg_names[t], arg_dtypes[t]))
        else:
            rets.append((sub.name(t), t.dtype.name))
    if extra is not None:
        names, dtypes = extra(sub, arg_names)
        rets.extend(zip(names, dtypes))
    for i, (name, dtype) in enumerate(rets):
        out = f"out{i}"
        fdef.signature.output_arg.add(name=out, type=tensor_protos.tf_dtype(dtype))
        fdef.ret[out] = name
    return fdef.signature.name


def _types(dtypes):
    av = pb.AttrValue()
    av.list.SetInParent()
    av.list.type.extend(tensor_protos.tf_dtype(d) for d in dtypes)
    return av


def _shapes(tensors):
    av = pb.AttrValue()
    av.list.SetInParent()
    av.list.shape.extend(tensor_protos.shape_proto(t.shape.dims) for t in tensors)
    return av


def _func(name):
    av = pb.AttrValue()
    av.func.name = name
    return av


def write_if(ctx, op):
    then_graph, else_graph = op.attrs["then_branch"], op.attrs["else_branch"]
    count = len(then_graph.outputs)
    _only_value_outputs(op, count)
    args = list(op.inputs[1:])
    dtypes = [t.dtype.name for t in args]
    n_then = len(then_graph.captures)
    then_bind = {ph: i for i, (_, ph) in enumerate(then_graph.captures)}
    else_bind = {ph: n_then + i for i, (_, ph) in enumerate(else_graph.captures)}
    then_name = write_function(ctx, then_graph, f"{op.name}_then", dtypes, then_bind,
                               then_graph.outputs)
    else_name = write_function(ctx, else_graph, f"{op.name}_else", dtypes, else_bind,
                               else_graph.outputs)
    attrs = {"Tcond": pb.AttrValue(type=tensor_protos.tf_dtype(op.inputs[0].dtype.name)),
             "Tin": _types(dtypes), "Tout": _types([t.dtype.name for t in op.outputs[:count]]),
             "then_branch": _func(then_name), "else_branch": _func(else_name),
             "output_shapes": _shapes(op.outputs[:count])}
    node = ctx.add_node("If", op.name, [ctx.name(t) for t in op.inputs], attrs, op.device,
                        ctx.controls(op))
    ctx.set_outputs(op, node, op.outputs[:count])


def _only_value_outputs(op, count):
    for t in op.outputs[count:]:
        if t.consumers():
            raise ExportError(f"{describe_op(op)}: its gradient outputs are read by "
                              f"{t.consumers()[0].name}; export the graph before gradients")


def _small_node(sub, op_type, inputs, dtype, hint):
    node = sub.add_node(op_type, sub.fresh(hint), inputs,
                        {"T": pb.AttrValue(type=tensor_protos.tf_dtype(dtype))})
    return sub.output_name(node, 0)


def write_while(ctx, op):
    cond_graph, body_graph = op.attrs["cond"], op.attrs["body"]
    count = len(body_graph.inputs)
    _only_value_outputs(op, count)
    n_cond, n_body = len(cond_graph.captures), len(body_graph.captures)
    has_limit = bool(op.attrs.get("has_maximum_iterations"))
    loop = list(op.inputs[:count + n_cond + n_body])
    inputs = [ctx.name(t) for t in loop]
    dtypes = [t.dtype.name for t in loop]
    if has_limit:
        limit = op.inputs[-1]
        zero = ctx.const(np.zeros((), limit.dtype.as_numpy_dtype), f"{op.name}/iteration",
                         limit.dtype.name)
        inputs += [zero, ctx.name(limit)]
        dtypes += [limit.dtype.name, limit.dtype.name]
    total = len(dtypes)
    cond_bind = {ph: i for i, ph in enumerate(cond_graph.inputs)}
    cond_bind.update({ph: count + i for i, (_, ph) in enumerate(cond_graph.captures)})
    body_bind = {ph: i for i, ph in enumerate(body_graph.inputs)}
    body_bind.update({ph: count + n_cond + i for i, (_, ph) in enumerate(body_graph.captures)})

    def cond_extra(sub, names):
        if not has_limit:
            return [], []
        pred = sub.name(cond_graph.outputs[0])
        below = _small_node(sub, "Less", [names[-2], names[-1]], dtypes[-1], "below_limit")
        both = sub.add_node("LogicalAnd", sub.fresh("and_below_limit"), [below, pred])
        return [sub.output_name(both, 0)], ["bool"]

    cond_outputs = [] if has_limit else list(cond_graph.outputs)
    cond_name = write_function(ctx, cond_graph, f"{op.name}_cond", dtypes, cond_bind,
                               cond_outputs, cond_extra, also=cond_graph.outputs)

    def body_extra(sub, names):
        if not has_limit:
            return [], []
        one = sub.const(np.ones((), np.dtype(dtypes[-1])), "one", dtypes[-1])
        step = _small_node(sub, "AddV2", [names[-2], one], dtypes[-1], "next_iteration")
        return [step, names[-1]], dtypes[-2:]

    passthrough = list(range(count, count + n_cond + n_body))
    body_name = write_function(ctx, body_graph, f"{op.name}_body", dtypes, body_bind,
                               list(body_graph.outputs) + passthrough, body_extra)
    shapes = pb.AttrValue()
    shapes.list.SetInParent()
    shapes.list.shape.extend(tensor_protos.shape_proto(None) for _ in range(total))
    attrs = {"T": _types(dtypes), "cond": _func(cond_name), "body": _func(body_name),
             "output_shapes": shapes, "parallel_iterations": pb.AttrValue(i=10)}
    node = ctx.add_node("While", op.name, inputs, attrs, op.device, ctx.controls(op))
    ctx.set_outputs(op, node, op.outputs[:count])


@rule("if")
def _if_rule(ctx, op, record):
    write_if(ctx, op)


@rule("while")
def _while_rule(ctx, op, record):
    write_while(ctx, op)
