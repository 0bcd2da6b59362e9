"""Eager execution: ops run one at a time, as they are built, on the same kernels as plans.

`tf.enable_eager_execution()` makes an `EagerGraph` the process's default graph. Every op still
enters through `registry.make_op` (its attr checks and shape/dtype rule, with errors naming the op
and the user's line); the eager graph's `add_op` then, instead of recording the op, runs its CPU
kernel at once on the inputs' values and returns `EagerTensor`s holding the results. Nothing is
kept: an eager op does not join the graph (no name table, no consumers), so a long loop holds
only the values it still refers to.

Dispatch: the kernel of an (op type, attrs, input dtypes and shapes) is chosen and built once
(`KernelTable.choose`, the choice a plan would make for a node of those static shapes) and kept
in a bounded cache; a repeated small op pays the shape rule, one dict lookup and the kernel call.
Variables live in the eager graph's `SessionState`, as a session's do; control-flow kernels run
their function graphs as sub-plans (`compile_function`). While a `GradientTape` records
(`engine/tape.py`), each op keeps its inputs so the tape can replay the op's gradient rule.

Eager mode is process-global and meant to be switched on once at program start, before any
graph is built (TF1's rule); `disable()` switches it off again (tests). Graph-only calls raise
TF's errors: `tf.placeholder` (`RuntimeError`), `tf.gradients` and `Tensor.eval`.
"""

import contextlib
import weakref

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework import graph as graph_module
from graphflow.framework.eager_tensor import VALUE_READS, EagerTensor
from graphflow.framework.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    UnimplementedError,
    UninitializedVariableError,
)
from graphflow.framework.graph import Graph, Operation, _user_location, describe_op
from graphflow.framework.tensor_shape import TensorShape
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.ops import registry

KERNELS_KEPT = 4096  # built kernels kept per eager graph (the cache is emptied when it is full)

_READS_VALUES = (None, None)  # kept for a key whose shape rule reads input values

_SHAPES = {}  # shape tuple -> TensorShape, shared by every eager tensor of that shape


def _shape(dims):
    found = _SHAPES.get(dims)
    if found is None:
        if len(_SHAPES) > 10000:
            _SHAPES.clear()
        found = _SHAPES[dims] = TensorShape(list(dims))
    return found


def _freeze(value):
    """A hashable form of an attr value (lists to tuples); raises TypeError when there is none."""
    kind = type(value)
    if kind is list or kind is tuple:
        return tuple(_freeze(v) for v in value)
    if kind is dict:
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        raise TypeError("array attrs are not cached")
    hash(value)
    return value


def _attrs_key(attrs):
    try:
        return tuple((k, _freeze(v)) for k, v in attrs.items())
    except TypeError:
        return None


class EagerGraph(Graph):
    """The default graph in eager mode: `add_op` runs each op at once (see the module doc)."""

    eager = True

    def __init__(self):
        super().__init__()
        self.state = SessionState()
        self._kernels = {}
        self.tapes = []  # the GradientTapes recording now (engine/tape.py), innermost last
        # shared_name -> Variable: what a tape watches when it sees a variable read
        self.eager_variables = weakref.WeakValueDictionary()
        self.variables_made = 0

    # --- scopes that mean nothing when ops run as they are built ----------------------------------
    def control_dependencies(self, control_inputs):
        """Ops run in program order, so control dependencies add nothing (as in TF)."""
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def name_scope(self, name):
        """A name scope; when nothing inside it made a variable, its name and the names taken
        inside are given back, so a loop that opens `tf.name_scope("loss")` every step reuses
        'loss/' (as TF's eager scopes do) instead of making 'loss_1/', 'loss_2/', ... forever."""
        names = self._names_in_use
        if self._unindexed_names:
            self._index_names()
        made, size = self.variables_made, len(names)
        key = None
        if name and not name.endswith("/"):
            key = (f"{self._name_stack}/{name}" if self._name_stack else name).lower()
        count = names.get(key)
        with Graph.name_scope(self, name) as scope:
            yield scope
        if self.variables_made == made:
            while len(names) > size:
                names.popitem()  # the names first taken inside the scope (the newest entries)
            if key is not None:
                if count is None:
                    names.pop(key, None)
                else:
                    names[key] = count

    def add_to_collection(self, name, value):
        """Eager tensors are one-off values: not kept in collections (a loss per step would
        pile up); variables and other objects are."""
        if type(value) is not EagerTensor:
            Graph.add_to_collection(self, name, value)

    def add_to_collections(self, names, value):
        if type(value) is not EagerTensor:
            Graph.add_to_collections(self, names, value)

    def register_variable(self, variable):
        """A variable made in eager mode (what tapes watch; its name stays taken)."""
        self.eager_variables[variable.op.attrs["shared_name"]] = variable

    def finalize(self):
        raise RuntimeError("Graph.finalize() is not supported when eager execution is enabled")

    # --- running ops ------------------------------------------------------------------------
    def run_op(self, op_def, inputs, attrs, name):
        """`registry.make_op` in eager mode: the op's shape rule, then its kernel, at once. The
        kernel and the shape rule's answer for an op type, attrs, input dtypes and shapes are
        kept for later calls; for a rule that reads input values (a reshape's shape, a range's
        limits) the rule runs on every call and the kernel is kept per output shapes too."""
        for t in inputs:
            if type(t) is not EagerTensor:
                raise _graph_tensor_error(op_def.type, t)
        if op_def.constant or op_def.variable or op_def.must_feed or op_def.control_only:
            specs = registry.infer_outputs(op_def, inputs, attrs, name)
            return self._execute(op_def, inputs, attrs, specs, name, None, None)
        frozen = _attrs_key(attrs) if attrs else ()
        if frozen is None:  # attrs with arrays: nothing kept
            specs = registry.infer_outputs(op_def, inputs, attrs, name)
            return self._execute(op_def, inputs, attrs, specs, name, None, None)
        n = len(inputs)
        if n == 2:  # the common binary op, without a comprehension's frame
            x, y = inputs
            signature = ((x.dtype.name, x._shape.dims), (y.dtype.name, y._shape.dims))
        elif n == 1:
            x = inputs[0]
            signature = ((x.dtype.name, x._shape.dims),)
        else:
            signature = tuple([(t.dtype.name, t._shape.dims) for t in inputs]) if n else ()
        key = (op_def.type, frozen, signature)
        kernels = self._kernels
        entry = kernels.get(key)
        if entry is not None and entry[1] is not None:
            return self._execute(op_def, inputs, attrs, entry[1], name, None, entry[0])
        reads = VALUE_READS[0]
        specs = registry.infer_outputs(op_def, inputs, attrs, name)
        if entry is not None or VALUE_READS[0] != reads:  # the rule reads values
            if entry is None:
                kernels[key] = _READS_VALUES
            key = (key, tuple([(dt, sh.dims) for dt, sh in specs]))
            entry = kernels.get(key)
            kernel = entry[0] if entry is not None else self._build(op_def.type, attrs, name,
                                                                      specs, inputs)
            if entry is None:
                self._keep(key, (kernel, None))
        else:
            kernel = self._build(op_def.type, attrs, name, specs, inputs)
            self._keep(key, (kernel, specs))
        return self._execute(op_def, inputs, attrs, specs, name, None, kernel)

    def _keep(self, key, entry):
        if len(self._kernels) >= KERNELS_KEPT:
            self._kernels.clear()
        self._kernels[key] = entry

    def add_op(self, op_type, inputs, attrs, output_specs, name=None, control_inputs=(),
               source=None, device=None, use_scopes=True):
        op_def = registry.lookup(op_type)
        for t in inputs:
            if type(t) is not EagerTensor:
                raise _graph_tensor_error(op_type, t)
        return self._execute(op_def, inputs, attrs, output_specs, name, source, None, None)

    def _execute(self, op_def, inputs, attrs, output_specs, name, source, kernel):
        op_type = op_def.type
        if op_def.must_feed:
            raise RuntimeError("tf.placeholder() is not compatible with eager execution.")
        if name and name[-1] == "/":
            op_name = name[:-1]
        else:
            scope = self._name_stack
            op_name = f"{scope}/{name or op_type}" if scope else (name or op_type)
        tapes = self.tapes
        op = Operation(self, op_type, op_name, inputs if tapes else (), (), attrs, "", source)
        if op_def.constant:
            value = attrs["value"]
            op.outputs = [EagerTensor(op, 0, output_specs[0][0], _shape(value.shape), value)]
            return op
        if op_def.control_only:
            op.outputs = []
            return op
        if op_def.variable:  # the variable's storage: its value is read by ReadVariableOp
            self.variables_made += 1  # (its name scope keeps its name: name_scope)
            value = self.state.variables.values.get(attrs["shared_name"])
            dt, sh = output_specs[0]
            op.outputs = [EagerTensor(op, 0, dt, sh if value is None else _shape(value.shape),
                                      value)]
            return op
        if kernel is None:
            kernel = self._build(op_type, attrs, op_name, output_specs, inputs, op)
        try:
            n = len(inputs)
            if n == 2:
                result = kernel(inputs[0]._value, inputs[1]._value)
            elif n == 1:
                result = kernel(inputs[0]._value)
            else:
                result = kernel(*[t._value for t in inputs])
        except Exception as exc:
            raise _run_error(exc, op, inputs) from exc
        if not output_specs:
            op.outputs = []
        elif len(output_specs) == 1:
            op.outputs = [_output(op, 0, output_specs[0][0], result)]
        else:
            op.outputs = [_output(op, i, spec[0], v)
                          for i, (spec, v) in enumerate(zip(output_specs, result))]
        if tapes:
            for tape in tapes:
                tape._record(op)
        return op

    def _build(self, op_type, attrs, name, output_specs, inputs, op=None):
        """The kernel a plan would choose and build for a node of these inputs' dtypes and
        shapes."""
        node = KernelNode(name or op_type, op_type, attrs,
                          tuple([t.dtype.as_numpy_dtype for t in inputs]),
                          tuple([dt.as_numpy_dtype for dt, _ in output_specs]),
                          tuple([sh.dims for _, sh in output_specs]), self.state,
                          self.compile_function, None, False,
                          tuple([t._shape.dims for t in inputs]))
        try:
            impl = cpu_kernels.TABLE.choose(node)
        except LookupError as exc:
            if op is None:
                op = Operation(self, op_type, name or op_type, (), (), attrs, "", None)
            op.source = _user_location()
            raise UnimplementedError(None, op, f"{exc}: {describe_op(op)}") from None
        return impl.build(node)

    def compile_function(self, func_graph, extra_fetches=()):
        """A control-flow op's function graph as a sub-plan over the eager variables."""
        from graphflow.engine.executor import Plan
        fetches = list(func_graph.outputs) + list(extra_fetches)
        return Plan(fetches, func_graph.all_inputs, self.state, sub_plan=True).call


def _output(op, index, dt, value):
    if type(value) is not np.ndarray:
        if (dt is dtypes.variant or dt is dtypes.string) and not isinstance(value, (bytes, str)):
            # a handle (TensorArray flow, queue, reader): passed on to the next kernel as it is
            return EagerTensor(op, index, dt, _shape(()), value)
        value = np.asarray(value)
    kind = dt.as_numpy_dtype  # a numpy dtype
    if value.dtype is not kind and value.dtype != kind and dt is not dtypes.string:
        value = value.astype(kind)
    shape = _SHAPES.get(value.shape)
    return EagerTensor(op, index, dt, shape if shape is not None else _shape(value.shape), value)


def _graph_tensor_error(op_type, t):
    if hasattr(t, "_as_graph_element"):
        t = t._as_graph_element()
    return ValueError(f"{op_type}: the input {t.name} is a graph tensor, and eager ops take eager "
                      "tensors; build graph tensors inside `with tf.Graph().as_default():` and "
                      "run them in a tf.Session there")


def _run_error(exc, op, inputs):
    """A kernel's failure as TF's OpError, naming the op and the user's line."""
    op.source = _user_location()
    if isinstance(exc, OpError):
        if exc.op is None:
            exc.op = op
        return exc
    if isinstance(exc, UninitializedVariableError):
        return FailedPreconditionError(None, op, f"Attempting to use uninitialized value "
                                       f"{exc.variable_name}: {describe_op(op)}")
    detail = "; ".join(f"shape={t._shape} dtype={t.dtype.name}" for t in inputs)
    return InvalidArgumentError(None, op, f"{op.type} kernel failed for {describe_op(op)} on "
                                f"inputs [{detail or 'none'}]: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------- switching eager mode on and off

def enable(config=None, device_policy=None, execution_mode=None):
    """`tf.enable_eager_execution()`: from now on ops run as they are built. TF1's rule: call it at
    program start; once graph ops exist in the default graph it is a ValueError."""
    current = graph_module.get_default_graph()
    if isinstance(current, EagerGraph):
        return
    if graph_module._default_graph_stack.stack:
        raise ValueError("tf.enable_eager_execution must be called at program startup (not "
                         "inside a `with graph.as_default()` block).")
    if current.num_ops():
        raise ValueError("tf.enable_eager_execution must be called at program startup: the "
                         f"default graph already holds {current.num_ops()} ops.")
    graph = EagerGraph()
    # as a session does from its first run: numpy's BLAS on one thread, so that the kernels' own
    # threads (oneDNN's, the intra-op pool's) do not compete with BLAS threads spinning idle
    graph.state.hold_blas()
    graph_module._DefaultGraphStack.base = graph


def disable():
    """Switch eager mode off: the default graph is a fresh, empty graph again (tests call this);
    the eager variables and numpy's BLAS threads are released."""
    base = graph_module._DefaultGraphStack.base
    if isinstance(base, EagerGraph):
        graph_module._DefaultGraphStack.base = Graph()
        base.state.clear()


def executing_eagerly():
    """True when ops built now run at once: eager mode is on and no graph (a `tf.Graph`, a
    function being traced) is the default."""
    return isinstance(graph_module.get_default_graph(), EagerGraph)


def eager_graph():
    """The eager graph, or None when eager mode is off."""
    base = graph_module._DefaultGraphStack.base
    return base if isinstance(base, EagerGraph) else None


class EagerVariables:
    """The eager variables as `train.Saver` reads and writes a session's (`variable_values`,
    `set_variable_values`, `graph`)."""

    def __init__(self, graph):
        self.graph = graph

    def variable_values(self):
        return dict(self.graph.state.variables.settled_items())

    def set_variable_values(self, values):
        self.graph.state.variables.write_many(values)

    def run(self, fetches):
        value = getattr(fetches, "numpy", None)
        return value() if value is not None else fetches


def eager_variables():
    """The eager variables as a Saver sees a session (None when eager mode is off)."""
    graph = eager_graph()
    return None if graph is None else EagerVariables(graph)


__all__ = ["EagerGraph", "EagerVariables", "enable", "disable", "executing_eagerly",
           "eager_graph", "eager_variables"]
