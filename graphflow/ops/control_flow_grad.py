"""Gradients of `While` and `If`, prepared when the forward op is built.

A function graph F (a loop body, a branch) is differentiated ONCE into a gradient function graph G,
a child of F: G's inputs are the gradients of F's outputs; its outputs are the gradients of F's
differentiable inputs and captures (zeros where none flows). Built inside F, G captures the values
of F it needs (the intermediates the gradient rules read: activations, dropout masks, ...), which
tells the forward op exactly what to keep:
  - `While` keeps those values for every iteration (its last output, a per-iteration list) and its
    gradient is one `WhileGrad` op that runs G once per iteration, last iteration first, feeding
    each iteration's saved values, summing the gradients of the captured tensors;
  - `If` returns those values of the taken branch as extra outputs, and its gradient is another
    `If` on the same predicate whose branches are copies of the two G's. That gradient `If` is
    not prepared in turn (preparing every order eagerly makes nested conds cost time exponential
    in their depth): a gradient of it (a second derivative) recomputes its branch from its inputs
    and differentiates the copy, which is again an unprepared `If`.
When some op inside a function graph has no gradient rule, G is an empty graph holding the reason
(`G.error`); the error is raised only when a gradient must actually flow through it.
"""

from graphflow.framework import dtypes
from graphflow.framework.func_graph import FuncGraph
from graphflow.framework.graph import _user_location, describe_op
from graphflow.ops import no_onnx, shape_ops, tensor_array_grad
from graphflow.ops.gradients import dense_gradients as gradients
from graphflow.ops.registry import define, make_op, register_gradient


def differentiable(t):
    return t.dtype.is_floating or t.dtype == dtypes.variant


def zeros_for(t):
    """The zero gradient of `t` (a gradient array for a TensorArray flow)."""
    if t.dtype == dtypes.variant:
        return tensor_array_grad.zero_gradient()
    return shape_ops.zeros_like(t)


class PreparedGradient:
    """G, the names of the values of F it reads (`saved`), and for each G capture where its value
    comes from:
    `sources[i] = k >= 0`: saved value k; `-1 - j`: the forward op's capture input j."""

    def __init__(self, graph, saved, sources, error=None):
        self.graph = graph
        self.saved = saved
        self.sources = sources
        self.error = error


def differentiate_function(func, ys, xs):
    """G (a child FuncGraph of `func`) computing d(ys)/d(xs) given grads of ys as its inputs, or
    (None, error message) when some op inside has no gradient rule or its rule cannot be built in
    a function graph (the error is raised only if that gradient is asked for: a branch's gradient
    is prepared when its op is built, second order included)."""
    grad_graph = FuncGraph(func.name + "_grad", func)
    with grad_graph.as_default():
        grad_graph.inputs = [grad_graph.add_placeholder(y.dtype, y.shape, "grad") for y in ys]
        try:
            grads = gradients(ys, xs, grad_ys=list(grad_graph.inputs)) if ys and xs else []
        except (LookupError, ValueError) as exc:
            return None, str(exc)
        grads = grads or [None] * len(xs)
        outs = [zeros_for(x) if g is None else g for g, x in zip(grads, xs)]
        grad_graph.outputs = [grad_graph.capture(o) for o in outs]
    return grad_graph, None


def _prepare(func, ys, xs):
    """Differentiate and split G's captures into saved values of `func` and capture inputs."""
    grad_graph, error = differentiate_function(func, ys, xs)
    if grad_graph is None:
        return PreparedGradient(None, [], [], error)
    capture_index = {ph: j for j, (_, ph) in enumerate(func.captures)}
    saved, sources = [], []
    for value, _ in grad_graph.captures:
        j = capture_index.get(value)
        if j is not None:
            sources.append(-1 - j)
        else:
            sources.append(len(saved))
            saved.append(value.name)  # attrs name tensors of the function graph
    return PreparedGradient(grad_graph, saved, sources)


# ------------------------------------------------------------------------------- While
def prepare_while_gradient(body):
    """G for a loop body: gradients of the differentiable loop vars and captures; None when the
    loop has nothing differentiable."""
    loop = [j for j, t in enumerate(body.inputs) if differentiable(t)]
    caps = [ph for _, ph in body.captures if differentiable(ph)]
    if not loop and not caps:
        return None
    ys = [body.outputs[j] for j in loop]
    xs = [body.inputs[j] for j in loop] + caps
    prepared = _prepare(body, ys, xs)
    if prepared.graph is None:
        prepared.graph = FuncGraph(body.name + "_grad_unavailable", body)
        prepared.graph.outputs = []
        prepared.graph.error = prepared.error
    return prepared


def _while_grad_infer(inputs, attrs):
    return [(o.dtype, o.shape) for o in attrs["grad"].outputs]


# Inputs: the gradients of the loop's differentiable outputs, the loop's per-iteration history,
# the loop body's capture inputs. Outputs: G's outputs (gradients of the initial loop values, then
# of the captures listed in `grad_captures`, summed over iterations). Its gradient rule refuses:
# a second derivative through a while_loop is not supported (see `_while_grad_grad`).
define("WhileGrad", _while_grad_infer, stateful=True,
       attrs="grad:function grad_sources:list(int) num_grads:int>=0 grad_captures:list(int)",
       onnx=no_onnx.GRADIENT)


@register_gradient("WhileGrad")
def _while_grad_grad(op, *grads):
    """A gradient of a loop's gradient (a second derivative, a Hessian-vector product) is not
    supported: the backward loop reads per-iteration values the forward loop keeps in a form
    that has no gradient of its own. Raised only when such a gradient must actually flow."""
    loop = op.inputs[op.attrs["num_grads"]].op
    where = _user_location()
    called = f" (the second tf.gradients is called at {where})" if where is not None else ""
    raise LookupError(
        f"No second derivative through tf.while_loop: {describe_op(op)} is the gradient of the "
        f"loop {describe_op(loop)}, and graphflow cannot differentiate a loop's gradient again"
        f"{called}. For a second derivative or a Hessian-vector product, build that part with "
        "the loop unrolled in Python (a for loop calling the body), or take finite differences "
        "of the first derivative; tf.cond supports gradients of gradients.")


@register_gradient("While")
def _while_grad(op, *grads):
    body = op.attrs["body"]
    n = len(body.inputs)
    result = [None] * len(op.inputs)
    if not op.attrs["back_prop"] or op.attrs["grad"] is None:
        return result
    grad_graph = op.attrs["grad"]
    error = grad_graph.error
    if error is not None:
        raise LookupError(f"No gradient through the loop {describe_op(op)}: {error}")
    loop = [j for j in range(n) if differentiable(body.inputs[j])]
    out_grads = [grads[j] if grads[j] is not None else zeros_for(op.outputs[j]) for j in loop]
    history = op.outputs[n]
    num_cond_caps = len(op.attrs["cond"].captures)
    body_caps = list(op.inputs[n + num_cond_caps:n + num_cond_caps + len(body.captures)])
    diff_caps = [j for j, (_, ph) in enumerate(body.captures) if differentiable(ph)]
    inputs = out_grads + [history] + body_caps
    attrs = {"grad": grad_graph, "grad_sources": op.attrs["grad_sources"],
             "num_grads": len(loop), "grad_captures": diff_caps}
    grad_op = make_op("WhileGrad", inputs, attrs, name="WhileGrad")
    for k, j in enumerate(loop):
        result[j] = grad_op.outputs[k]
    for k, j in enumerate(diff_caps):
        result[n + num_cond_caps + j] = grad_op.outputs[len(loop) + k]
    return result


# ------------------------------------------------------------------------------- If
def prepare_branch_gradient(branch):
    """G for one branch: gradients of its differentiable captures given its outputs' gradients."""
    outs = [o for o in branch.outputs if differentiable(o)]
    caps = [ph for _, ph in branch.captures if differentiable(ph)]
    if not outs or not caps:
        return PreparedGradient(None, [], [])
    prepared = _prepare(branch, outs, caps)
    if prepared.graph is None:  # keep the reason; the gradient rule raises it if ever needed
        prepared.graph = FuncGraph(branch.name + "_grad_unavailable", branch)
        prepared.graph.error = prepared.error
    return prepared


def copy_function_ops(source, target, mapping):
    """Rebuild `source`'s ops (other than its mapped placeholders) in `target`, reading
    `mapping[t]` for each tensor t of `source`; fills `mapping` with the copies' outputs."""
    copied = {}
    for op in source.get_operations():
        if op.type == "Placeholder" and op.outputs[0] in mapping:
            continue
        inputs = [mapping[t] for t in op.inputs]
        controls = [copied[c] for c in op.control_inputs if c in copied]
        new = target.add_op(op.type, inputs, dict(op.attrs), [(t.dtype, t.shape) for t in
                                                              op.outputs],
                            name=op.name.rsplit("/", 1)[-1], control_inputs=controls,
                            source=op.source, device=op.device or None)
        copied[op] = new
        mapping.update(zip(op.outputs, new.outputs))


def _grad_branch(op, which, out_grads, positions, saved_grads):
    """A new branch FuncGraph (built in the current graph) computing this branch's part of the
    gradient: its G copied, fed from the If's saved outputs and inputs; zeros for positions
    (If inputs) belonging to the other branch."""
    from graphflow.framework.graph import get_default_graph
    branch = op.attrs[f"{which}_branch"]
    grad_graph = op.attrs[f"{which}_grad"]
    n_out = len(op.attrs["then_branch"].outputs)
    first_input = 1 if which == "then" else 1 + len(op.attrs["then_branch"].captures)
    first_saved = n_out if which == "then" else n_out + len(op.attrs["then_saved"])
    saved = op.attrs[f"{which}_saved"]
    result = FuncGraph(f"{which}_grad", get_default_graph())
    with result.as_default():
        own = {}
        if grad_graph is None and _unprepared(branch):
            _add_recomputed_gradients(op, branch, result, first_input, out_grads, own)
        elif grad_graph is not None:
            error = grad_graph.error
            if error is not None:
                raise LookupError(f"No gradient through the {which} branch of {describe_op(op)}:"
                                  f" {error}")
            mapping = {ph: result.capture(g) for ph, g in zip(grad_graph.inputs, out_grads)}
            capture_index = {ph: j for j, (_, ph) in enumerate(branch.captures)}
            for value, ph in grad_graph.captures:
                j = capture_index.get(value)
                outer = (op.inputs[first_input + j] if j is not None else
                         op.outputs[first_saved + saved.index(value.name)])
                mapping[ph] = result.capture(outer)
            copy_function_ops(grad_graph, result, mapping)
            diff_caps = [first_input + j for j, (_, ph) in enumerate(branch.captures)
                         if differentiable(ph)]
            own = {pos: mapping[g] for pos, g in zip(diff_caps, grad_graph.outputs)}
        if any(g is not None for g in saved_grads):
            _add_saved_value_gradients(op, branch, result, first_input, saved, saved_grads, own)
        result.outputs = [own[p] if p in own else result.capture(zeros_for(op.inputs[p]))
                          for p in positions]
    return result


def _unprepared(branch):
    """True for a branch of a gradient `If` (built without a prepared gradient, see make_if)
    whose gradient can be non-zero."""
    return (any(differentiable(o) for o in branch.outputs)
            and any(differentiable(ph) for _, ph in branch.captures))


def _add_recomputed_gradients(op, branch, result, first_input, out_grads, own):
    """The gradient of an unprepared branch: the branch is recomputed inside `result` from the
    If's inputs and differentiated there with respect to them."""
    mapping = {ph: result.capture(op.inputs[first_input + j])
               for j, (_, ph) in enumerate(branch.captures)}
    copy_function_ops(branch, result, mapping)
    outs = [mapping[o] for o in branch.outputs if differentiable(o)]
    positions = [first_input + j for j, (_, ph) in enumerate(branch.captures)
                 if differentiable(ph)]
    xs = [mapping[branch.captures[p - first_input][1]] for p in positions]
    try:
        grads = gradients(outs, xs, grad_ys=[result.capture(g) for g in out_grads])
    except (LookupError, ValueError) as exc:
        raise LookupError(f"No gradient through a branch of {describe_op(op)}: {exc}") from exc
    for p, g in zip(positions, grads):
        if g is not None:
            own[p] = g


def _add_saved_value_gradients(op, branch, result, first_input, saved, saved_grads, own):
    """Gradients that reach the values an If keeps for its gradient (taking a gradient of a
    gradient): the branch is recomputed inside `result` from the If's inputs and differentiated
    with respect to them (a second derivative re-runs the branch's forward ops)."""
    mapping = {ph: result.capture(op.inputs[first_input + j])
               for j, (_, ph) in enumerate(branch.captures)}
    copy_function_ops(branch, result, mapping)
    pairs = [(mapping[branch.get_tensor_by_name(name)], result.capture(g))
             for name, g in zip(saved, saved_grads) if g is not None]
    positions = [first_input + j for j, (_, ph) in enumerate(branch.captures)
                 if differentiable(ph)]
    xs = [mapping[branch.captures[p - first_input][1]] for p in positions]
    extra = gradients([y for y, _ in pairs], xs, grad_ys=[g for _, g in pairs])
    for p, g in zip(positions, extra):
        if g is not None:
            own[p] = own[p] + g if p in own else g


def _saved_grads(op, grads, first, count):
    return [g if differentiable(op.outputs[first + k]) else None
            for k, g in enumerate(grads[first:first + count])]


def make_if(pred, then_graph, else_graph, name="cond", prepare=True):
    """Add an `If` op running `then_graph` or `else_graph` (FuncGraphs with equal output dtypes);
    prepares its gradient (unless `prepare` is false: a gradient `If`, whose own gradient is
    built by recomputing its branches if it is ever asked for). Returns the op (its first
    outputs are the branch outputs). It lives with the gradient rules: building an If prepares
    its gradient, and that gradient is an If."""
    unprepared = PreparedGradient(None, [], [])
    then_grad = prepare_branch_gradient(then_graph) if prepare else unprepared
    else_grad = prepare_branch_gradient(else_graph) if prepare else unprepared
    attrs = {"then_branch": then_graph, "else_branch": else_graph,
             "then_saved": then_grad.saved, "else_saved": else_grad.saved,
             "then_grad": then_grad.graph, "else_grad": else_grad.graph}
    inputs = [pred] + then_graph.captured_inputs + else_graph.captured_inputs
    return make_op("If", inputs, attrs, name=name)


@register_gradient("If")
def _if_grad(op, *grads):
    then_graph = op.attrs["then_branch"]
    n_out = len(then_graph.outputs)
    diff_outs = [j for j in range(n_out) if differentiable(op.outputs[j])]
    positions = [p for p in range(1, len(op.inputs)) if differentiable(op.inputs[p])]
    result = [None] * len(op.inputs)
    if not positions or not any(g is not None for g in grads):
        return result
    out_grads = [grads[j] if grads[j] is not None else zeros_for(op.outputs[j])
                 for j in diff_outs]
    n_then = len(op.attrs["then_saved"])
    then_grad = _grad_branch(op, "then", out_grads, positions,
                             _saved_grads(op, grads, n_out, n_then))
    else_grad = _grad_branch(op, "else", out_grads, positions,
                             _saved_grads(op, grads, n_out + n_then, len(op.attrs["else_saved"])))
    grad_op = make_if(op.inputs[0], then_grad, else_grad, name="If_grad", prepare=False)
    for k, p in enumerate(positions):
        result[p] = grad_op.outputs[k]
    return result
