"""Control flow written as ONNX sub-graph ops: graphflow's `If` (tf.cond) becomes ONNX `If` and
`While` (tf.while_loop) becomes ONNX `Loop`.

The branch and body function graphs become ONNX sub-graphs (`ExportContext.subgraph`); the outer
values a function captured are read by name, as ONNX sub-graphs read outer scope. `While`:
ONNX's `Loop` checks its condition after each body run, TF before each one, so the condition
function is emitted twice: once on the initial values (the Loop's `cond` input) and once inside
the body on the new values (the body's `cond_out`). `maximum_iterations` is the Loop's trip count
`M`. Only the ops' value outputs are exported; the extra outputs that keep per-iteration values
for a gradient have no ONNX form (they are consumed only by gradient ops, which do not export).
"""

from graphflow.interop.onnx.export_ops import _out, converter


@converter("if")
def _if(ctx, op):
    then_graph, else_graph = op.attrs["then_branch"], op.attrs["else_branch"]
    count = len(then_graph.outputs)
    # the op's inputs: pred, then the then-branch's captures, then the else-branch's (by position:
    # a graph read from a file keeps only that order, not the outer tensors themselves)
    outer = [ctx.name(t) for t in op.inputs[1:]]
    n_then = len(then_graph.captures)
    then_branch = ctx.subgraph(then_graph, then_graph.outputs, "then_branch", outer[:n_then])
    else_branch = ctx.subgraph(else_graph, else_graph.outputs, "else_branch", outer[n_then:])
    ctx.node("If", [ctx.name(op.inputs[0])], [_out(ctx, op, i) for i in range(count)],
             then_branch=then_branch, else_branch=else_branch)


@converter("while")
def _while(ctx, op):
    cond_graph, body_graph = op.attrs["cond"], op.attrs["body"]
    tensor_proto, helper = ctx.onnx.TensorProto, ctx.helper
    count = len(body_graph.inputs)
    initial = [ctx.name(t) for t in op.inputs[:count]]
    # the op's inputs: loop variables, cond's captures, body's captures (, maximum_iterations)
    n_cond, n_body = len(cond_graph.captures), len(body_graph.captures)
    cond_outer = [ctx.name(t) for t in op.inputs[count:count + n_cond]]
    body_outer = [ctx.name(t) for t in op.inputs[count + n_cond:count + n_cond + n_body]]
    (first_pred,) = ctx.inline(cond_graph, initial, cond_outer)
    trip_count = ""  # absent: no bound
    if op.attrs["has_maximum_iterations"]:
        trip_count = ctx.one("Cast", [ctx.name(op.inputs[-1])], to=tensor_proto.INT64)
    inputs = [(None, helper.make_tensor_value_info(ctx.fresh("iteration"), tensor_proto.INT64, [])),
              (None, helper.make_tensor_value_info(ctx.fresh("cond_in"), tensor_proto.BOOL, []))]
    for placeholder in body_graph.inputs:
        inputs.append((placeholder, helper.make_tensor_value_info(
            ctx.fresh("loop_var"), ctx.elem_type(placeholder.dtype), None)))

    def condition_on_new_values(sub):
        (pred,) = sub.inline(cond_graph, [sub.name(t) for t in body_graph.outputs], cond_outer)
        return [sub.one("Identity", [pred])]

    body = ctx.subgraph(body_graph, body_graph.outputs, "body", body_outer, inputs=inputs,
                        extra=condition_on_new_values)
    ctx.node("Loop", [trip_count, first_pred] + initial, [_out(ctx, op, i) for i in range(count)],
             body=body)
