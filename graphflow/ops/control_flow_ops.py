"""Control flow as functional ops: `If` and `While` hold their branches / loop body as sub-graphs.

`tf.cond(pred, true_fn, false_fn)` traces each branch function into a `FuncGraph`
(`framework/func_graph.py`) and adds ONE `If` op to the user's graph; `tf.while_loop` traces `cond`
and `body` and adds one `While` op. The op's inputs are the loop variables (for `While`) and every
outer tensor the functions use (captures); its kernel runs the sub-graphs as compiled sub-plans, so
only the taken branch runs and a loop runs as many iterations as its predicate says. The sub-graphs
are attrs, so they serialize with the graph, and the user's graph is never rewritten.

Gradients (`control_flow_grad.py`) are prepared when the op is built: each function graph is
differentiated once into a gradient function graph, and the forward op also returns the
intermediate values that gradient needs (per iteration, for `While`).
"""

import functools

from graphflow.framework import dtypes, nest
from graphflow.framework.func_graph import FuncGraph
from graphflow.framework.graph import Operation, _user_location, get_default_graph
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.registry import define, make_op
from graphflow.ops.tensor_array_ops import TensorArray


class ControlFlowError(ValueError):
    """A branch or loop body that does not fit its op (structure, dtype, shape, predicate)."""


def _at_user_line(message):
    where = _user_location()
    return f"{message} (at {where})" if where is not None else message


def _specs(tensors):
    return [(t.dtype, t.shape) for t in tensors]


def _while_infer(inputs, attrs):
    body = attrs["body"]
    specs = _specs(body.inputs)
    if attrs["grad"] is not None:
        specs.append((dtypes.variant, TensorShape([])))  # per-iteration values for the gradient
    return specs


def _if_infer(inputs, attrs):
    pred = inputs[0]
    if pred.dtype != dtypes.bool_ or not pred.shape.is_compatible_with(TensorShape([])):
        raise TypeError(f"the predicate must be a scalar bool tensor, got {pred.name} of dtype "
                        f"{pred.dtype.name} and shape {pred.shape}")
    then_graph, else_graph = attrs["then_branch"], attrs["else_branch"]
    specs = []
    for a, b in zip(then_graph.outputs, else_graph.outputs):
        shape = a.shape if a.shape == b.shape else _most_specific_common(a.shape, b.shape)
        specs.append((a.dtype, shape))
    return (specs + _specs(saved_tensors(then_graph, attrs["then_saved"]))
            + _specs(saved_tensors(else_graph, attrs["else_saved"])))


def saved_tensors(func_graph, names):
    """The tensors of `func_graph` named in a `saved` attr (values kept for the gradient)."""
    return [func_graph.get_tensor_by_name(n) for n in names]


def _most_specific_common(a, b):
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


# Both ops may return an input (or a variable value) unchanged: `returns_state` makes the session
# copy fetched outputs; `stateful` keeps them out of folding and merging (the sub-graphs may read
# variables or draw random numbers).
# `gradient_takes_none`: the gradient rules get None for outputs no gradient reached (an If's
# kept values normally get none; a gradient there means a second derivative).
define("While", _while_infer, stateful=True, returns_state=True,
       attrs="cond:function body:function saved:list(string) grad:none|function "
             "grad_sources:list(int) has_maximum_iterations:bool back_prop:bool",
       gradient_takes_none=True, onnx={"converter": "while"})
define("If", _if_infer, stateful=True, returns_state=True,
       attrs="then_branch:function else_branch:function then_saved:list(string) "
             "else_saved:list(string) then_grad:none|function else_grad:none|function",
       gradient_takes_none=True, conditional=True, onnx={"converter": "if"})


# ------------------------------------------------------------------------------- tracing
def _flatten_values(structure, what):
    """Leaves of a loop-var/branch-output structure as Tensors (a TensorArray as its flow; an
    Operation built in the function as a bool that is true once it has run)."""
    out = []
    for leaf in nest.flatten(structure):
        if isinstance(leaf, TensorArray):
            out.append(leaf.flow)
        elif isinstance(leaf, Operation):
            out.append(_ran(leaf, what))
        else:
            try:
                out.append(convert_to_tensor(leaf))
            except TypeError as exc:
                raise TypeError(_at_user_line(f"{what}: {exc}")) from None
    return out


def _ran(op, what):
    """A bool tensor that is available once `op` (built in the function being traced) has run."""
    graph = get_default_graph()
    if op.graph is not graph:
        raise ControlFlowError(_at_user_line(
            f"{what}: the operation '{op.name}' was built outside the function that returns it; "
            "build it inside (the function's ops are what runs when it is taken)"))
    with graph.control_dependencies([op]):
        return constant(True, name="ran")


def _pack(structure, tensors, arrays_like=None):
    """`tensors` packed like `structure`, TensorArray leaves rebuilt around their flow tensors."""
    templates = nest.flatten(structure if arrays_like is None else arrays_like)
    leaves = []
    for template, t in zip(templates, tensors):
        if isinstance(template, TensorArray):
            t = template._with_flow(t)
        elif isinstance(template, Operation):
            t = t.op  # an op returned by a branch: running the cond op runs it
        leaves.append(t)
    return nest.pack_sequence_as(structure, leaves)


def trace_function(name, fn, arg_structure=None, arg_shapes=None):
    """Call `fn` on placeholders standing for the leaves of `arg_structure` (None: no arguments)
    in a new FuncGraph; returns (graph, the structure fn returned)."""
    outer = get_default_graph()
    graph = FuncGraph(name, outer)
    with graph.as_default():
        if arg_structure is None:
            result = fn()
        else:
            leaves = _flatten_values(arg_structure, name)
            shapes = arg_shapes or [t.shape for t in leaves]
            graph.inputs = [graph.add_placeholder(t.dtype, s, "arg")
                            for t, s in zip(leaves, shapes)]
            args = _pack(arg_structure, graph.inputs)
            result = fn(*args)
        graph.outputs = [graph.capture(t) for t in _flatten_values(result, f"{name} result")]
    return graph, result


# ------------------------------------------------------------------------------- while_loop
def _check_body(body_graph, result, loop_vars, flat_in, shapes):
    mismatch = nest.structure_mismatch(loop_vars, result)
    if mismatch is not None:
        raise ControlFlowError(_at_user_line(
            f"tf.while_loop: the body must return the same structure as loop_vars, {mismatch}"))
    for i, (x, y, s) in enumerate(zip(flat_in, body_graph.outputs, shapes)):
        if x.dtype != y.dtype:
            raise ControlFlowError(_at_user_line(
                f"tf.while_loop: loop variable {i} ({x.name}) enters the loop as "
                f"{x.dtype.name} but the body returns {y.dtype.name}"))
        if not _fits(y.shape, s):
            raise ControlFlowError(_at_user_line(
                f"tf.while_loop: loop variable {i} ({x.name}) has shape {s} but the body "
                f"returns shape {y.shape} after one iteration. To allow the shape to vary "
                "across iterations, use the shape_invariants argument of tf.while_loop"))


def _fits(shape, invariant):
    """`shape` is at least as specific as `invariant` (TF1's shape-invariant rule)."""
    if invariant.dims is None:
        return True
    if shape.dims is None or len(shape.dims) != len(invariant.dims):
        return False
    return all(i is None or i == s for s, i in zip(shape.dims, invariant.dims))


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """`tf.while_loop`: repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`.

    loop_vars: a tuple/list (or any nest of tuples, lists, dicts, namedtuples) of tensors and
    TensorArrays. shape_invariants: the same nest of shapes, for variables whose shape changes
    across iterations. maximum_iterations: as TF1, the loop's predicate becomes
    `iteration < maximum_iterations and cond(...)`: the loop ends after that many iterations (it
    is not an error), runs none for a value <= 0, and `cond` runs once more than `body`.
    back_prop=False: no gradient flows through the loop.
    `parallel_iterations` and `swap_memory` are accepted for TF1 compatibility (iterations run
    one after another on the host; the body's ops may run on the device).
    """
    from graphflow.ops import control_flow_grad
    if not callable(cond) or not callable(body):
        raise TypeError(_at_user_line("tf.while_loop: cond and body must be callable"))
    if isinstance(loop_vars, (list, tuple)) and not hasattr(loop_vars, "_fields") \
            and len(loop_vars) == 0:
        raise ValueError(_at_user_line("tf.while_loop: no loop variables given"))
    graph = get_default_graph()
    with graph.name_scope(name or "while"):
        listed = isinstance(loop_vars, (list, tuple))
        structure = loop_vars if listed else [loop_vars]
        flat = _flatten_values(structure, "tf.while_loop loop_vars")
        if shape_invariants is None:
            shapes = [t.shape for t in flat]
        else:
            invariants = shape_invariants if listed else [shape_invariants]
            shapes = [s if isinstance(s, TensorShape) else TensorShape(s)
                      for s in _flatten_invariants(structure, invariants)]
            for t, s in zip(flat, shapes):
                if not t.shape.is_compatible_with(s):
                    raise ControlFlowError(_at_user_line(
                        f"tf.while_loop: loop variable {t.name} of shape {t.shape} does not fit "
                        f"its shape invariant {s}"))
        cond_graph, _ = trace_function("cond", cond, structure, shapes)
        _check_predicate(cond_graph, "tf.while_loop: cond")
        body_graph, result = trace_function("body", body, structure, shapes)
        if not nest.is_sequence(result) or (len(structure) == 1 and not (
                type(result) in (list, tuple) and len(result) == 1)):
            result = [result]  # one loop variable: the body may return it bare
        _check_body(body_graph, list(result), list(structure), flat, shapes)
        inputs = flat + cond_graph.captured_inputs + body_graph.captured_inputs
        if maximum_iterations is not None:
            limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if not limit.dtype.is_integer or not limit.shape.is_compatible_with(TensorShape([])):
                raise ControlFlowError(_at_user_line(
                    f"tf.while_loop: maximum_iterations must be a scalar integer, got "
                    f"{limit.dtype.name} of shape {limit.shape}"))
            inputs.append(limit)
        grad = control_flow_grad.prepare_while_gradient(body_graph) if back_prop else None
        attrs = {"cond": cond_graph, "body": body_graph,
                 "saved": grad.saved if grad else [], "grad": grad.graph if grad else None,
                 "grad_sources": grad.sources if grad else [],
                 "has_maximum_iterations": maximum_iterations is not None,
                 "back_prop": bool(back_prop)}
        op = make_op("While", inputs, attrs, name="While")
        packed = _pack(structure, op.outputs[:len(flat)], arrays_like=list(result))
    if not return_same_structure and (not listed or len(structure) == 1):
        return packed[0]
    return packed


def _flatten_invariants(structure, invariants):
    """Shape invariants flattened like the loop vars (a TensorShape is a leaf here)."""
    out = []
    stack = [(structure, invariants)]
    while stack:
        s, inv = stack.pop()
        if nest.is_sequence(s):
            items = [(s[k], inv[k]) for k in sorted(s)] if isinstance(s, dict) else list(
                zip(s, inv))
            stack.extend(reversed(items))
        else:
            out.append(TensorShape(None) if isinstance(s, TensorArray) else inv)
    return out


def _check_predicate(graph, what):
    (pred,) = graph.outputs if len(graph.outputs) == 1 else (None,)
    if pred is None or pred.dtype != dtypes.bool_ or not pred.shape.is_compatible_with(
            TensorShape([])):
        got = "several values" if pred is None else f"{pred.dtype.name} of shape {pred.shape}"
        raise ControlFlowError(_at_user_line(f"{what} must return a scalar bool tensor, got {got}"))


# ------------------------------------------------------------------------------- cond / case
def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`tf.cond`: `true_fn()` if the scalar bool `pred` is true at run time, else `false_fn()`.

    Only the taken branch runs. Both functions must return the same nest of tensors (same
    dtypes); a single-element list/tuple result is unpacked unless `strict=True`, as in TF1."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(_at_user_line("tf.cond: true_fn and false_fn must be callable"))
    graph = get_default_graph()
    with graph.name_scope(name or "cond"):
        pred = convert_to_tensor(pred, name="pred")
        if pred.dtype != dtypes.bool_ or not pred.shape.is_compatible_with(TensorShape([])):
            raise ControlFlowError(_at_user_line(
                f"tf.cond: pred must be a scalar bool tensor, got {pred.name} of dtype "
                f"{pred.dtype.name} and shape {pred.shape}"))
        then_graph, then_result = trace_function("cond_true", true_fn)
        else_graph, else_result = trace_function("cond_false", false_fn)
        mismatch = nest.structure_mismatch(then_result, else_result)
        if mismatch is not None:
            raise ControlFlowError(_at_user_line(
                f"tf.cond: true_fn and false_fn must return the same structure, {mismatch}"))
        for i, (a, b) in enumerate(zip(then_graph.outputs, else_graph.outputs)):
            if a.dtype != b.dtype:
                raise ControlFlowError(_at_user_line(
                    f"tf.cond: output {i} is {a.dtype.name} in true_fn but {b.dtype.name} in "
                    "false_fn"))
        if not then_graph.outputs:
            raise ControlFlowError(_at_user_line("tf.cond: the branches return no tensors"))
        from graphflow.ops.control_flow_grad import make_if  # registered after If is defined
        op = make_if(pred, then_graph, else_graph, name="If")
        packed = _pack(then_result, op.outputs[:len(then_graph.outputs)])
    if not strict and isinstance(packed, (list, tuple)) and len(packed) == 1 \
            and not hasattr(packed, "_fields"):
        return packed[0]
    return packed


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """`tf.case`: the function of the first pair whose predicate is true, else `default` (a chain
    of conds, each running only when the predicates before it are false), as TF1:

    - a dict of pairs is taken in the order of its predicates' names;
    - without `default`, the last pair's function is the default and the run fails with
      InvalidArgumentError ('None of conditions evaluated as True') when its predicate is false
      too;
    - `exclusive=True` checks at run time, before any branch runs, that at most one predicate is
      true, else InvalidArgumentError naming the predicates and their values."""
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(_at_user_line(
            f"tf.case: pred_fn_pairs must be a list, tuple or dict, got "
            f"{type(pred_fn_pairs).__name__}"))
    if isinstance(pred_fn_pairs, dict):
        pairs = sorted(pred_fn_pairs.items(), key=lambda item: getattr(item[0], "name", ""))
    else:
        pairs = list(pred_fn_pairs)
    for p in pairs:
        if not isinstance(p, tuple) or len(p) != 2 or not callable(p[1]):
            raise TypeError(_at_user_line("tf.case: pred_fn_pairs must be (pred, callable) pairs"))
    if default is not None and not callable(default):
        raise TypeError(_at_user_line("tf.case: default must be callable"))
    if default is None and not pairs:
        raise ValueError(_at_user_line("tf.case: no pairs and no default"))
    graph = get_default_graph()
    with graph.name_scope(name or "case"):
        preds = [convert_to_tensor(p) for p, _ in pairs]
        for pred in preds:
            if pred.dtype != dtypes.bool_ or not pred.shape.is_compatible_with(TensorShape([])):
                raise ControlFlowError(_at_user_line(
                    f"tf.case: each predicate must be a scalar bool tensor, got {pred.name} of "
                    f"dtype {pred.dtype.name} and shape {pred.shape}"))
        fns = [f for _, f in pairs]
        if default is None:  # TF1: the last pair is the default, checked when it is taken
            default = _asserted_default(preds, fns[-1])
            preds, fns = preds[:-1], fns[:-1]
        fn = default
        for p, branch in reversed(list(zip(preds, fns))):
            fn = functools.partial(cond, p, branch, fn, strict=True, name="case_cond")
        if exclusive and len(preds) > 1:
            check = _assert_at_most_one_true(preds)
            with graph.control_dependencies([check]):
                result = _after(fn(), check)
        else:
            result = fn()
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1 \
            and not hasattr(result, "_fields"):
        return result[0]
    return result


def _stacked_predicates(preds):
    from graphflow.ops import shape_ops
    return shape_ops.stack(preds, name="preds_c")


def _assert_at_most_one_true(preds):
    from graphflow.ops import math_ops
    from graphflow.ops.logging_ops import Assert
    stacked = _stacked_predicates(preds)
    count = math_ops.reduce_sum(math_ops.cast(stacked, dtypes.int32), name="num_true_conds")
    names = ", ".join(p.name for p in preds)
    return Assert(math_ops.less_equal(count, 1),
                  [f"Input error: exclusive=True: more than 1 conditions ({names}) evaluated "
                   "as True:", stacked], summarize=len(preds))


def _asserted_default(preds, action):
    """The last pair's function as the default of a case without one: fails the run unless its
    predicate is true (the others are false whenever the default runs)."""
    from graphflow.ops.logging_ops import Assert

    def default_action():
        graph = get_default_graph()  # a branch of the case's conds, or the user's graph
        here = [graph.capture(p) if isinstance(graph, FuncGraph) else p for p in preds]
        check = Assert(here[-1], ["Input error: None of conditions evaluated as True:",
                                  _stacked_predicates(here)], summarize=len(preds))
        with get_default_graph().control_dependencies([check]):
            return _after(action(), check)
    return default_action


def _after(result, check):
    """`result` with each tensor leaf passed through an identity that runs after `check` (a
    leaf may be a tensor built before `check`, which a control dependency cannot order)."""
    from graphflow.framework.graph import Tensor
    from graphflow.ops.core_ops import identity
    graph = get_default_graph()
    leaves = []
    for leaf in nest.flatten(result):
        if isinstance(leaf, Tensor):
            with graph.control_dependencies([check]):
                leaf = identity(leaf)
        leaves.append(leaf)
    return nest.pack_sequence_as(result, leaves)


__all__ = ["while_loop", "cond", "case"]
