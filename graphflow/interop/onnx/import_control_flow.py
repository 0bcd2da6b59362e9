"""ONNX control flow as graphflow control flow: `If` becomes `tf.cond` and `Loop` becomes
`tf.while_loop`, their sub-graphs traced into the branch / body functions (so an imported loop is
an ordinary graphflow `While` op: it runs only as many iterations as its condition says, and it
can be differentiated). An If whose branches give sequences (of one length) gives them too.

`Loop(M, cond, v...)` runs its body while `iteration < M` (when M is given) and `cond`; the body
takes (iteration, cond, v...) and returns (cond, v..., scan outputs...). The loop variables are
(iteration, cond, v..., one TensorArray per scan output); the scan outputs are the arrays stacked
after the loop. Scan (opset 9+) is a While over its scan inputs' slices; Scan-8, whose inputs
have a batch axis first, one such While per batch element.
"""

import numpy as np

import graphflow as tf
from graphflow.framework.tensor_shape import TensorShape
from graphflow.interop.onnx.import_ops import builder
from graphflow.interop.onnx.import_sequence_ops import Sequence
from graphflow.ops import control_flow_ops, static_value
from graphflow.ops.gradients import dense_gradients


def _scalar_bool(x):
    x = tf.reshape(x, [])
    return x if x.dtype == tf.bool else tf.cast(x, tf.bool)


@builder("If")
def _if(ctx, node, inputs):
    attrs = ctx.attrs(node)
    then_graph, else_graph = attrs["then_branch"], attrs["else_branch"]
    layouts = []  # per branch: None for a tensor output, (length, dtype) for a sequence

    def branch(graph):
        def build():
            flat, layout = [], []
            for value in ctx.build_subgraph(graph):
                if isinstance(value, Sequence):
                    layout.append((len(value), value.dtype))
                    flat.extend(value.tensors)
                else:
                    layout.append(None)
                    flat.append(value)
            layouts.append(layout)
            return flat
        return build
    flat = list(tf.cond(_scalar_bool(inputs[0]), branch(then_graph), branch(else_graph),
                        strict=True))
    if layouts[0] != layouts[1]:
        raise ValueError("the If branches give sequences of different lengths (or a sequence and "
                         "a tensor): graphflow needs sequence lengths known when the graph is built")
    outputs = []
    for item in layouts[0]:  # regroup the flat outputs into the branches' sequences
        if item is None:
            outputs.append(flat.pop(0))
        else:
            outputs.append(Sequence(flat[:item[0]], item[1]))
            del flat[:item[0]]
    return outputs


def _declared_shape(value_info, initial):
    """A loop variable's shape invariant: the body's declared input rank, else the initial
    value's rank; every dim free (ONNX loop variables may change size across iterations)."""
    t = value_info.type.tensor_type
    if t.HasField("shape"):
        return TensorShape([None] * len(t.shape.dim))
    if initial.shape.ndims is None:
        return TensorShape(None)
    return TensorShape([None] * initial.shape.ndims)


@builder("Loop")
def _loop(ctx, node, inputs):
    body = ctx.attrs(node)["body"]
    inputs = list(inputs) + [None] * (2 - len(inputs))
    trip_count, keep_going, carried = inputs[0], inputs[1], list(inputs[2:])
    n_carried = len(carried)
    n_scan = len(body.output) - 1 - n_carried
    if n_scan < 0:
        raise ValueError(f"the body returns {len(body.output)} values for {n_carried} loop variables")
    limit = None if trip_count is None else tf.cast(tf.reshape(trip_count, []), tf.int64)
    start = tf.constant(True) if keep_going is None else _scalar_bool(keep_going)
    scan_types = [info.type.tensor_type.elem_type for info in body.output[1 + n_carried:]]
    if all(scan_types):
        scan_types = [tf.as_dtype(ctx.onnx.helper.tensor_dtype_to_np_dtype(t)) for t in scan_types]
    else:  # a body output without a declared type: trace the body once to learn it
        probe, _ = control_flow_ops.trace_function(
            "loop_probe", lambda *args: ctx.build_subgraph(body, list(args)),
            [tf.constant(0, tf.int64), start] + carried)
        scan_types = [t.dtype for t in probe.outputs[1 + n_carried:]]
    arrays = [tf.TensorArray(dt, size=0, dynamic_size=True, infer_shape=False)
              for dt in scan_types]

    def condition(i, go, *rest):
        return go if limit is None else tf.logical_and(go, i < limit)

    def step(i, go, *rest):
        values, outs = list(rest[:n_carried]), list(rest[n_carried:])
        results = ctx.build_subgraph(body, [i, go] + values)
        index = tf.cast(i, tf.int32)
        outs = [ta.write(index, y) for ta, y in zip(outs, results[1 + n_carried:])]
        return [i + 1, _scalar_bool(results[0])] + list(results[1:1 + n_carried]) + outs

    invariants = [TensorShape([]), TensorShape([])]
    invariants += [_declared_shape(info, v) for info, v in zip(body.input[2:], carried)]
    invariants += [TensorShape(None)] * n_scan
    result = tf.while_loop(condition, step, [tf.constant(0, tf.int64), start] + carried + arrays,
                           shape_invariants=invariants, return_same_structure=True)
    finals = list(result[2:2 + n_carried])
    return finals + [ta.stack() for ta in result[2 + n_carried:]]


def _to_front(x, axis):
    """`x` with `axis` moved to the front (Scan walks axis 0)."""
    rank = x.shape.ndims
    if axis % rank == 0:
        return x
    axis %= rank
    return tf.transpose(x, [axis] + [d for d in range(rank) if d != axis])


def _from_front(x, axis):
    rank = x.shape.ndims
    if axis % rank == 0:
        return x
    axis %= rank
    perm = list(range(1, rank))
    perm.insert(axis, 0)
    return tf.transpose(x, perm)


@builder("Scan")
def _scan(ctx, node, inputs):
    """Scan (opset 9+): states carried through the body, scan inputs sliced along their scan
    axis (reversed where the direction is 1), scan outputs stacked along theirs."""
    attrs = ctx.attrs(node)
    body, n_scan_in = attrs["body"], attrs["num_scan_inputs"]
    if ctx.opset < 9:
        return _scan_8(ctx, attrs, inputs)
    states, scans = list(inputs[:len(inputs) - n_scan_in]), list(inputs[len(inputs) - n_scan_in:])
    n_scan_out = len(body.output) - len(states)
    return _scan_loop(ctx, body, states, scans,
                      attrs.get("scan_input_axes") or [0] * n_scan_in,
                      attrs.get("scan_input_directions") or [0] * n_scan_in,
                      attrs.get("scan_output_axes") or [0] * n_scan_out,
                      attrs.get("scan_output_directions") or [0] * n_scan_out)


def _scan_8(ctx, attrs, inputs):
    """Scan-8: states [batch, ...] and scan inputs [batch, sequence, ...]: one opset-9 scan per
    batch element (the batch size must be known when the graph is built), stacked; every
    sequence runs whole (sequence_lens, when given, must be the full length)."""
    body, n_scan_in = attrs["body"], attrs["num_scan_inputs"]
    lengths, rest = inputs[0], list(inputs[1:])
    states, scans = rest[:len(rest) - n_scan_in], rest[len(rest) - n_scan_in:]
    batch = scans[0].shape.as_list()[0] if scans[0].shape.ndims else None
    if batch is None:
        raise ValueError("Scan-8 needs a batch size known when the graph is built")
    if lengths is not None:
        known = static_value.constant_value(lengths)
        full = scans[0].shape.as_list()[1]
        if known is None or full is None or not np.all(np.asarray(known) == full):
            raise ValueError("Scan-8 with sequence_lens shorter than the sequences is not supported")
    n_scan_out = len(body.output) - len(states)
    dirs = attrs.get("directions") or [0] * n_scan_in
    per_batch = [_scan_loop(ctx, body, [s[b] for s in states], [x[b] for x in scans],
                            [0] * n_scan_in, dirs, [0] * n_scan_out, [0] * n_scan_out)
                 for b in range(batch)]
    return [tf.stack(list(parts)) for parts in zip(*per_batch)]


def _scan_loop(ctx, body, states, scans, in_axes, in_dirs, out_axes, out_dirs):
    """The opset-9 Scan over `states` and `scans` (sliced along their axes)."""
    n_states, n_scan_out = len(states), len(body.output) - len(states)
    for i, x in enumerate(scans):
        if x.shape.ndims is None:
            raise ValueError(f"scan input {i} needs a known rank")
        x = _to_front(x, in_axes[i])
        scans[i] = tf.reverse(x, [0]) if in_dirs[i] else x
    length = tf.shape(scans[0], out_type=tf.int64)[0]
    reads = [tf.TensorArray(x.dtype, size=tf.cast(length, tf.int32), clear_after_read=False,
                            element_shape=x.shape[1:]).unstack(x) for x in scans]
    out_types = [tf.as_dtype(ctx.onnx.helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type))
                 if info.type.tensor_type.elem_type else None for info in body.output[n_states:]]
    if None in out_types:
        probe, _ = control_flow_ops.trace_function(
            "scan_probe", lambda *args: ctx.build_subgraph(body, list(args)),
            states + [ta.read(0) for ta in reads])
        out_types = [t.dtype for t in probe.outputs[n_states:]]
    writes = [tf.TensorArray(dt, size=tf.cast(length, tf.int32), infer_shape=False)
              for dt in out_types]

    def step(i, *rest):
        values, outs = list(rest[:n_states]), list(rest[n_states:])
        index = tf.cast(i, tf.int32)
        results = ctx.build_subgraph(body, values + [ta.read(index) for ta in reads])
        outs = [ta.write(index, y) for ta, y in zip(outs, results[n_states:])]
        return [i + 1] + list(results[:n_states]) + outs

    invariants = [TensorShape([])]
    invariants += [_declared_shape(info, v) for info, v in zip(body.input[:n_states], states)]
    result = tf.while_loop(lambda i, *rest: i < length, step,
                           [tf.constant(0, tf.int64)] + states + writes,
                           shape_invariants=invariants + [TensorShape(None)] * n_scan_out,
                           return_same_structure=True)
    outputs = list(result[1:1 + n_states])
    for i, ta in enumerate(result[1 + n_states:]):
        y = ta.stack()
        y = tf.reverse(y, [0]) if out_dirs[i] else y
        outputs.append(_from_front(y, out_axes[i]) if y.shape.ndims is not None else y)
    return outputs


@builder("ai.onnx.preview.training.Gradient")
def _gradient(ctx, node, inputs):
    """ONNX's Gradient (preview training domain): d y / d x for each named x, as graphflow's own
    `tf.gradients` of the tensor named `y` (built earlier in the graph) with respect to the
    tensors named in `xs`; `zs` (names that are inputs of the differentiated sub-graph but not
    differentiated) stop the gradient. An x that y does not depend on gets zeros."""
    a = ctx.attrs(node)
    names = [n.decode() if isinstance(n, bytes) else n for n in a["xs"]]
    y_name = a["y"].decode() if isinstance(a["y"], bytes) else a["y"]
    zs = [n.decode() if isinstance(n, bytes) else n for n in a.get("zs", [])]
    missing = [n for n in [y_name, *names, *zs] if n not in ctx.values]
    if missing:
        raise ValueError(f"Gradient names {missing}, which no earlier node or input defines")
    xs = [ctx.values[n] for n in names]
    grads = dense_gradients(ctx.values[y_name], xs,
                            stop_gradients=[ctx.values[n] for n in zs] or None)
    return [tf.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
