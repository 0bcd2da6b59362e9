"""`tf.GradientTape`: gradients in eager mode, by replaying the ops' own gradient rules.

While a tape records (inside its `with` block), the eager graph hands it every op it runs
(`EagerGraph.add_op`); the tape keeps the ops that depend on a watched value: a tensor given to
`watch`, or a variable read while `watch_accessed_variables` (trainable variables) or after
`watch(variable)`. `gradient(target, sources)` sweeps those ops backwards, newest first (the order
they ran is topological), and calls each op's registered gradient rule, the same rule
`tf.gradients` calls (`ops/gradients.py`): rules build ops, which run eagerly, so the gradient is
computed at once, and a tape that is still recording records those ops too. That is how nested
tapes give higher-order gradients. The sums of several paths, the zeros given to the unreached
outputs of a multi-output op and the checks of what a rule returns are `ops/gradients.py`'s.

Outside eager mode (building a graph) a tape records nothing and `gradient` is `tf.gradients`
on the graph, so a TF1 program may use a tape in either mode.
"""

import contextlib

from graphflow.framework import nest
from graphflow.framework.eager_tensor import EagerTensor
from graphflow.framework.graph import Operation, get_default_graph
from graphflow.ops import gradients as graph_gradients
from graphflow.ops import registry, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.state_ops import Variable

UnconnectedGradients = graph_gradients.UnconnectedGradients


def _is_variable(x):
    return isinstance(x, Variable)


class GradientTape:
    """`tf.GradientTape(persistent=False, watch_accessed_variables=True)`."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._graph = None
        self._used = False
        self.reset()

    # --- recording ------------------------------------------------------------------------------
    def __enter__(self):
        graph = get_default_graph()
        if graph.eager:
            self._graph = graph
            graph.tapes.append(self)
        return self

    def __exit__(self, *exc):
        self._stop()

    def _stop(self):
        if self._graph is not None and self in self._graph.tapes:
            self._graph.tapes.remove(self)

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops run inside this block are not recorded."""
        graph = self._graph
        if graph is None or self not in graph.tapes:
            raise RuntimeError("GradientTape.stop_recording() is only valid while the tape is "
                               "recording (inside its `with` block)")
        graph.tapes.remove(self)
        try:
            yield
        finally:
            graph.tapes.append(self)

    def reset(self):
        """Forget everything recorded so far (the tape keeps recording)."""
        self._ops = []          # recorded ops, in the order they ran
        self._tracked = set()   # tensors that depend on a watched value
        self._watched = []      # tensors given to watch()
        self._watched_names = set()  # shared_names of variables given to watch()
        self._reads = {}        # shared_name -> [recorded read tensors]
        self._variables = {}    # shared_name -> Variable, in first-read order

    def watch(self, tensor):
        """Record what is computed from `tensor` (a tensor, a variable or a structure of them)."""
        for t in nest.flatten(tensor):
            if _is_variable(t):
                name = t.op.attrs["shared_name"]
                self._watched_names.add(name)
                self._variables.setdefault(name, t)
            elif isinstance(t, EagerTensor):
                if t.dtype.is_floating and t not in self._tracked:
                    self._tracked.add(t)
                    self._watched.append(t)
            elif self._graph is not None:
                raise ValueError(f"GradientTape.watch: expected a tensor or a variable, got {t!r}")

    def watched_variables(self):
        """The variables the tape watches, in the order they were first read or watched."""
        return tuple(self._variables.values())

    def _record(self, op):
        """Called by the eager graph for each op it runs while this tape records."""
        op_def = registry.lookup(op.type)
        if op_def.reads_variable:
            name = op.attrs["shared_name"]
            watched = name in self._watched_names
            if not watched and self._watch_accessed:
                var = self._graph.eager_variables.get(name)
                if var is not None and var.trainable:
                    self._variables.setdefault(name, var)
                    watched = True
            if watched and op.outputs[0].dtype.is_floating:
                self._reads.setdefault(name, []).append(op.outputs[0])
                self._tracked.add(op.outputs[0])
            return
        tracked = self._tracked
        if not any(t in tracked for t in op.inputs):
            return
        if op_def.no_gradient and registry.gradient_override(op) is None:
            return
        self._ops.append(op)
        for t in op.outputs:
            if t.dtype.is_floating or t.dtype.name == "variant":
                tracked.add(t)

    def _record_call(self, op):
        """A call of a traced function (`engine/eager_function.py`): one op with its own
        gradient (`op.call_gradient`)."""
        if any(t in self._tracked for t in op.inputs):
            self._ops.append(op)
            for t in op.outputs:
                if t.dtype.is_floating:
                    self._tracked.add(t)

    # --- gradients ------------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of target)/d(source) for each source, in the structure of `sources`."""
        mode = getattr(unconnected_gradients, "value", unconnected_gradients)
        if mode not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
            raise ValueError(f"unconnected_gradients must be 'none' or 'zero', got "
                             f"{unconnected_gradients!r}")
        flat_sources = nest.flatten(sources)
        ys = [convert_to_tensor(y) if _is_variable(y) else y for y in nest.flatten(target)]
        grad_ys = None if output_gradients is None else nest.flatten(output_gradients)
        if self._graph is None:  # graph mode: the tape is tf.gradients on the graph
            result = graph_gradients.gradients(ys, flat_sources, grad_ys=grad_ys,
                                               unconnected_gradients=mode)
            return nest.pack_sequence_as(sources, result)
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent "
                               "tapes.")
        self._used = True
        recording = self in self._graph.tapes
        if recording:  # the tape does not record its own gradient (outer tapes do)
            self._graph.tapes.remove(self)
        try:
            result = self._backward(ys, flat_sources, grad_ys, mode)
        finally:
            if recording:
                self._graph.tapes.append(self)
        return nest.pack_sequence_as(sources, result)

    def _source_tensors(self, source):
        if _is_variable(source):
            return self._reads.get(source.op.attrs["shared_name"], [])
        if not isinstance(source, EagerTensor):
            raise ValueError(f"GradientTape.gradient: sources must be tensors or variables, got "
                             f"{source!r}")
        return [source]

    def _backward(self, ys, sources, grad_ys, mode):
        if grad_ys is not None and len(grad_ys) != len(ys):
            raise ValueError(f"GradientTape.gradient: got {len(grad_ys)} output_gradients for "
                             f"{len(ys)} targets")
        pending = {}
        for i, y in enumerate(ys):
            if y in self._tracked:
                seed = graph_gradients._seed(y, None if grad_ys is None else grad_ys[i], i)
                pending.setdefault(y, []).append(seed)
        wanted = {t for s in sources for t in self._source_tensors(s)}
        totals = {}
        for op in reversed(self._ops):
            for t in op.outputs:  # a source computed by a recorded op: keep its total
                if t in wanted and t in pending:
                    pending[t] = [graph_gradients._sum(pending[t])]
                    totals[t] = pending[t][0]
            if not any(t in pending for t in op.outputs):
                continue
            if type(op) is not Operation:  # a traced function's call
                in_grads = op.call_gradient([graph_gradients._sum(pending.pop(t, None))
                                             for t in op.outputs])
            else:
                rule = registry.gradient_rule(op)
                if rule is None:
                    raise graph_gradients._missing_rule_error(op)
                out_grads = graph_gradients._output_grads(op, pending)
                try:
                    in_grads = graph_gradients._apply_rule(rule, op, out_grads)
                except graph_gradients.EagerGradientsError:
                    in_grads = self._apply_rule_recorded(rule, op, out_grads)
            for t, g in zip(op.inputs, in_grads):
                if g is not None and t in self._tracked:
                    pending.setdefault(t, []).append(g)
        results = []
        for s in sources:
            parts = []
            for t in self._source_tensors(s):
                g = totals[t] if t in totals else graph_gradients._sum(pending.get(t))
                if g is not None:
                    parts.append(g)
            g = graph_gradients._sum(parts)
            if g is None and mode == UnconnectedGradients.ZERO:
                g = shape_ops.zeros_like(s)
            results.append(g)
        return results

    def _apply_rule_recorded(self, rule, op, out_grads):
        """Run a gradient rule that differentiates ops of its own with `tf.gradients` (fused
        batch norm's second derivative): again, while a tape watching the op's inputs records
        what it builds, and with its `tf.gradients` answered by that tape."""
        graph = self._graph
        inner = GradientTape(persistent=True, watch_accessed_variables=False)
        previous = graph.rule_gradients
        with inner:
            inner.watch([t for t in op.inputs if t.dtype.is_floating])

            def rule_gradients(ys, xs, grad_ys, mode):
                return inner.gradient(ys, xs, output_gradients=grad_ys,
                                      unconnected_gradients=mode)
            graph.rule_gradients = rule_gradients
            try:
                return graph_gradients._apply_rule(rule, op, out_grads)
            finally:
                graph.rule_gradients = previous

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE):
        """d(target[i])/d(source) for every element i of `target`, stacked: one gradient per
        element (the tape must be persistent, or the target a scalar)."""
        from graphflow.ops import array_ops
        target = convert_to_tensor(target)
        flat = array_ops.reshape(target, [-1])
        n = int(flat.shape[0])
        rows = []
        for i in range(n):
            self._used = False
            rows.append(self.gradient(flat[i], sources, unconnected_gradients=unconnected_gradients))

        def stack(parts, source):
            if any(p is None for p in parts):
                return None
            value = array_ops.stack(parts)
            return array_ops.reshape(value, target.shape.as_list() + convert_to_tensor(
                source).shape.as_list())
        flat_sources = nest.flatten(sources)
        stacked = [stack([nest.flatten(r)[j] for r in rows], s)
                   for j, s in enumerate(flat_sources)]
        return nest.pack_sequence_as(sources, stacked)


__all__ = ["GradientTape", "UnconnectedGradients"]
