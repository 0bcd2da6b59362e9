"""The symbolic graph: `Graph`, `Operation`, `Tensor`, the default-graph stack and scopes.

A Graph is a plain data structure: ops are appended in creation order (which is always a valid
topological order, since an op's inputs exist before it). What an op *means* (shape rules, kernels,
gradients) lives in `graphflow.ops` and `graphflow.kernels`; the graph only records it.
`Tensor` lives in `graphflow/tensor.py` and is re-exported here.
"""

import contextlib
import linecache
import os
import re
import sys
import threading

from graphflow.framework.device_spec import DeviceSpec, canonical_device
from graphflow.framework.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")


class GraphKeys:
    """Standard collection names (TF1's `tf.GraphKeys`)."""

    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    GLOBAL_STEP = "global_step"
    SUMMARIES = "summaries"
    TRAIN_OP = "train_op"
    SAVERS = "savers"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    QUEUE_RUNNERS = "queue_runners"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"


class SourceLocation:
    """Where user code created an op: file, line number, function (and the line's text, lazily).

    `text` None: the line is read from the (local, user's own) source file when shown. A location
    recorded in a loaded graph file is plain text: `text` is what the file stores ("" = nothing),
    and the named file is never opened (a file could name /dev/zero, a FIFO or a secret)."""

    __slots__ = ("filename", "lineno", "function", "text")

    def __init__(self, filename, lineno, function, text=None):
        self.filename = filename
        self.lineno = lineno
        self.function = function
        self.text = text

    @property
    def line(self):
        if self.text is not None:
            return self.text
        return linecache.getline(self.filename, self.lineno).strip()

    def to_json(self):
        return [self.filename, self.lineno, self.function]

    def __str__(self):
        text = self.line
        where = f"{self.filename}:{self.lineno}"
        return f"{where}: {text}" if text else where


def _user_location():
    """The first stack frame outside the graphflow package: the user's line that built the op."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    return SourceLocation(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def describe_op(op):
    """'Op 'name' (Type) created at file:line: code' — used by every error message about an op."""
    where = f" created at {op.source}" if op.source is not None else ""
    return f"'{op.name}' ({op.type}){where}"


class NodeDef:
    """TF1's `tf.NodeDef` fields for one op: `name`, `op` (the type), `input` ('x', 'x:1', '^ctrl'),
    `device`, `attr`. graphflow's graphs are not protocol buffers; this is a plain record."""

    __slots__ = ("name", "op", "input", "device", "attr")

    def __init__(self, name="", op="", input=(), device="", attr=None):
        self.name = name
        self.op = op
        self.input = list(input)
        self.device = device
        self.attr = {} if attr is None else attr

    def __repr__(self):
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"


_NO_OPS = ()  # shared by every op without control outputs (most ops): no list per op


def _no_op_defs(op_type):
    raise LookupError(f"no OpDef of '{op_type}': the op registry (graphflow.ops) is not loaded")


_op_defs = _no_op_defs  # op type -> OpDef, given by graphflow.ops when it loads (install_op_defs)


def install_op_defs(lookup):
    """`Operation.op_def` answers with `lookup(op.type)`: the op registry calls this when it loads
    (a graph records ops without knowing what they mean; the registry, a floor above, does)."""
    global _op_defs
    _op_defs = lookup


class Operation:
    """A node: `type` (registry key), unique scoped `name`, input Tensors, control inputs, JSON-able
    `attrs`, output Tensors, a `device` string and the user's `source` line that created it."""

    __slots__ = ("graph", "type", "name", "inputs", "control_inputs", "attrs", "outputs",
                 "device", "source", "_id", "_control_outputs", "__weakref__")

    def __init__(self, graph, op_type, name, inputs, control_inputs, attrs, device, source):
        self.graph = graph
        self.type = op_type
        self.name = name
        self.inputs = tuple(inputs)
        self.control_inputs = tuple(control_inputs)
        self.attrs = attrs
        self.outputs = []
        self.device = device
        self.source = source
        self._id = -1
        self._control_outputs = _NO_OPS  # a list once an op depends on this one

    def _add_control_output(self, op):
        if self._control_outputs is _NO_OPS:
            self._control_outputs = [op]
        else:
            self._control_outputs.append(op)

    @property
    def op_def(self):
        """The OpDef of this op's type: what it means (its shape rule, gradient, facts)."""
        return _op_defs(self.type)

    @property
    def traceback(self):
        return self.source

    @property
    def node_def(self):
        """A read-only `NodeDef` view (name, op, input, device, attr), as TF1 device functions and
        graph tools read it."""
        inputs = [t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"
                  for t in self.inputs]
        inputs += [f"^{c.name}" for c in self.control_inputs]
        return NodeDef(self.name, self.type, inputs, self.device, dict(self.attrs))

    def get_attr(self, name):
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"Operation {describe_op(self)} has no attr '{name}'") from None

    def run(self, feed_dict=None, session=None):
        from graphflow.framework.default_session import get_default_session_or_error
        session = session or get_default_session_or_error()
        session.run(self, feed_dict)

    def __repr__(self):
        return f"<graphflow.Operation '{self.name}' type={self.type}>"

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


class Graph:
    """A container of Operations plus naming, control-dependency and device scopes and collections.

    `version` increases with every op added; sessions key their compiled plans on it.
    `eager` is True only for the eager graph of `engine/eager.py`, which runs ops as they are built.
    """

    eager = False
    # in eager mode, while a tape runs a gradient rule that calls tf.gradients: what answers it
    rule_gradients = None

    def __init__(self):
        self._ops = []
        self._ops_by_name = {}
        self._names_in_use = {}
        self._unindexed_names = []  # [start, end) runs of self._ops not yet in _names_in_use
        self._name_stack = ""
        self._control_dependencies_stack = []
        self._device_stack = []
        self._gradient_override_map = {}  # op type -> gradient name, while gradient_override_map()
        self.gradient_overrides = {}      # Operation -> the RegisterGradient name of its gradient
        self._collections = {}
        self._finalized = False
        self._lock = threading.RLock()
        self.seed = None
        self.version = 0

    # --- defaults and scopes -------------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        _default_graph_stack.append(self)
        try:
            yield self
        finally:
            _default_graph_stack.remove_last(self)

    def unique_name(self, name, mark_as_used=True):
        """A name unique in this graph, prefixed by the current name scope ('scope/Name_1')."""
        if self._unindexed_names:
            self._index_names()
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = name
            while True:
                name = f"{base}_{count}"
                if name.lower() not in self._names_in_use:
                    break
                count += 1
            if mark_as_used:
                self._names_in_use[name.lower()] = 1
        return name

    def _index_names(self):
        """Enter the names of ops added by exact name (a loaded file's ops) into the name counts,
        on the first `unique_name` after them: loading a graph builds no second name table, and the
        counts end up as if each had been entered when its op was added (every such entry is 1)."""
        names = self._names_in_use
        for start, end in self._unindexed_names:
            for op in self._ops[start:end]:
                name = op.name
                key = name.lower()
                names[name if key == name else key] = 1  # no copy of an all-lowercase name
        self._unindexed_names = []

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """TF1 name scopes: 'a' -> 'a/' (or 'a_1/' if used); 'a/' is absolute; None/'' resets."""
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            if not _VALID_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """`with graph.gradient_override_map({"Square": "MySquare"}):` ops of those types built in
        the block take their gradient from the function `tf.RegisterGradient("MySquare")` named."""
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in op_type_map.items()):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = self._gradient_override_map
        self._gradient_override_map = {**saved, **op_type_map}
        try:
            yield
        finally:
            self._gradient_override_map = saved

    def in_control_dependencies(self):
        """True inside a `control_dependencies` block that adds control inputs to new ops."""
        return any(self._control_dependencies_stack)

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs`. `None` clears the outer dependencies."""
        if control_inputs is None:
            saved = self._control_dependencies_stack
            self._control_dependencies_stack = []
            try:
                yield
            finally:
                self._control_dependencies_stack = saved
            return
        ops = []
        for c in control_inputs:
            if isinstance(c, Tensor):
                c = c.op
            elif hasattr(c, "op") and isinstance(c.op, Operation):  # Variable
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"control_dependencies expects Operations or Tensors, got {c!r}")
            if c.graph is not self:
                raise ValueError(f"Control input {describe_op(c)} is from a different graph")
            ops.append(c)
        self._control_dependencies_stack.append(ops)
        try:
            yield
        finally:
            self._control_dependencies_stack.pop()

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Ops created inside get this device: a string ('/cpu:0', '/gpu:1', '/job:ps/task:0/...')
        or DeviceSpec merged over the outer scopes (None clears them), or a device function
        `fn(op) -> device string / DeviceSpec / None`, called for each new op (TF1's multi-tower
        idiom). graphflow places on the device part only (see `device_spec.canonical_device`)."""
        entry = device_name_or_function
        if callable(entry) and not isinstance(entry, DeviceSpec):
            self._device_stack.append(("function", entry))
        elif entry is None:
            self._device_stack.append(("clear", None))
        else:
            if not isinstance(entry, (str, DeviceSpec)):
                raise TypeError(f"tf.device expects a device string, a DeviceSpec, a function or "
                                f"None, got {entry!r}")
            self._device_stack.append(("spec", canonical_device(entry)))
        try:
            yield
        finally:
            self._device_stack.pop()

    def _device_for(self, op):
        """The device of a new op from the device scopes, outermost first (functions see `op`)."""
        device = ""
        for kind, value in self._device_stack:
            if kind == "clear":
                device = ""
            elif kind == "spec":
                device = value or device
            else:
                chosen = value(op)
                try:
                    device = canonical_device(chosen) or device if chosen else device
                except (ValueError, AttributeError, TypeError):
                    raise ValueError(f"the device function {getattr(value, '__name__', value)!r} "
                                     f"returned {chosen!r} for op {describe_op(op)}; expected a "
                                     "device string like '/gpu:0', a DeviceSpec or None") from None
        return device

    # --- building --------------------------------------------------------------------------------
    def finalize(self):
        """Make the graph read-only: a loop that keeps adding ops then fails loudly."""
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    def _unsafe_unfinalize(self):
        self._finalized = False

    def add_op(self, op_type, inputs, attrs, output_specs, name=None, control_inputs=(),
               source=None, device=None, use_scopes=True):
        """Append an Operation. Called by the op layer after shape inference (ops/registry.py).

        `output_specs` is a list of (DType, TensorShape). With `use_scopes`, the current name scope,
        control-dependency scope and device scope apply, as for ops built by user code.
        """
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified (an op of type "
                               f"'{op_type}' was being added). Build all ops before the loop.")
        with self._lock:
            for t in inputs:
                if t.op.graph is not self:
                    raise ValueError(f"Tensor {t.name} passed to a new '{op_type}' op is from a "
                                     "different graph")
            if use_scopes:
                if name and name.endswith("/"):  # TF convention: a trailing '/' names exactly
                    op_name = name[:-1]
                    if op_name in self._ops_by_name:
                        raise ValueError(f"Duplicate op name '{op_name}'")
                else:
                    op_name = self.unique_name(name or op_type)
                controls = list(control_inputs)
                if self._control_dependencies_stack:
                    # a set, not list membership: an optimizer's final `group` inside a
                    # control_dependencies block over 10k updates would be quadratic
                    seen = {t.op for t in inputs}
                    seen.update(controls)
                    for level in self._control_dependencies_stack:
                        for c in level:
                            if c not in seen:
                                seen.add(c)
                                controls.append(c)
                dev = canonical_device(device) if device is not None else None
            else:
                op_name = name
                if op_name in self._ops_by_name:
                    raise ValueError(f"Duplicate op name '{op_name}'")
                runs = self._unindexed_names  # named on the next unique_name (_index_names)
                if runs and runs[-1][1] == len(self._ops):
                    runs[-1][1] += 1
                else:
                    runs.append([len(self._ops), len(self._ops) + 1])
                controls = list(control_inputs)
                dev = device or ""
            if source is None:
                source = _user_location()
            op = Operation(self, op_type, op_name, inputs, controls, attrs, dev or "", source)
            op.outputs = [Tensor(op, i, dt, sh) for i, (dt, sh) in enumerate(output_specs)] \
                if output_specs else _NO_OPS
            if dev is None and self._device_stack:
                op.device = self._device_for(op)
            if op_type in self._gradient_override_map:
                self.gradient_overrides[op] = self._gradient_override_map[op_type]
            op._id = len(self._ops)
            self._ops.append(op)
            self._ops_by_name[op_name] = op
            for t in op.inputs:
                t._consumers.append(op)
            for c in controls:
                c._add_control_output(op)
            self.version += 1
            return op

    # --- TensorFlow's GraphDef ------------------------------------------------------------------
    def as_graph_def(self, from_version=None, add_shapes=False):
        """`Graph.as_graph_def`: this graph as a TensorFlow `GraphDef` protobuf (the ops created
        after graph version `from_version`, or all), which TensorFlow imports and runs. The
        writer is handed down by `graphflow/__init__.py` (graphflow.interop.tensorflow)."""
        if _GRAPH_DEF_WRITER is None:
            raise RuntimeError("the GraphDef writer is not installed (import graphflow)")
        writer = _GRAPH_DEF_WRITER.resolve() if hasattr(_GRAPH_DEF_WRITER, "resolve") \
            else _GRAPH_DEF_WRITER
        ops = None if from_version is None else [op for op in self._ops if op._id >= from_version]
        return writer(self, add_shapes=add_shapes, ops=ops)

    def _writable_graph_def(self, add_shapes=False):
        """(the GraphDef of the ops that have a TensorFlow form and read only such ops,
        [(op, why)] of the others): what files such as a Supervisor's graph.pbtxt can hold."""
        writer = _GRAPH_DEF_WRITER.resolve() if hasattr(_GRAPH_DEF_WRITER, "resolve") \
            else _GRAPH_DEF_WRITER
        return writer(self, add_shapes=add_shapes, skip_unexportable=True)

    @property
    def graph_def_versions(self):
        """The `VersionDef` of `as_graph_def()`."""
        return self.as_graph_def(from_version=len(self._ops)).versions

    # --- lookup -------------------------------------------------------------------------------
    def get_operations(self):
        return list(self._ops)

    def num_ops(self):
        return len(self._ops)

    def get_operation_by_name(self, name):
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name):
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"The name '{name}' looks like an Operation name, not a Tensor name "
                             "('op_name:output_index', e.g. 'x:0').")
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist: the "
                           f"operation '{op_name}' is not in the graph.")
        i = int(index)
        if i >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist: "
                           f"'{op_name}' has {len(op.outputs)} outputs.")
        return op.outputs[i]

    def as_graph_element(self, obj):
        """Resolve a fetch: a Tensor, Operation, Variable-like or a name ('x:0' or 'train_op')."""
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                kind = "Tensor" if isinstance(obj, Tensor) else "Operation"
                raise ValueError(f"{kind} {obj.name} is not an element of this graph (it belongs "
                                 "to a different Graph).")
            return obj
        if isinstance(obj, str):
            if ":" in obj:
                return self.get_tensor_by_name(obj)
            return self.get_operation_by_name(obj)
        as_tensor = getattr(obj, "_as_graph_element", None)
        if as_tensor is not None:
            return self.as_graph_element(as_tensor())
        raise TypeError(f"Cannot interpret {obj!r} as a graph element (a Tensor, Operation or name)")

    # --- collections ----------------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for n in ([names] if isinstance(names, str) else names):
            self.add_to_collection(n, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [x for x in items if pattern.match(getattr(x, "name", "") or "")]

    def get_all_collection_keys(self):
        return list(self._collections)

    def clear_collection(self, name):
        self._collections.pop(name, None)


_GRAPH_DEF_WRITER = None  # export_graph_def(graph, add_shapes=, ops=), or a lazy reference to it


def install_graph_def_writer(writer):
    """Hand down the GraphDef writer `Graph.as_graph_def` calls (an object with `resolve()`
    returning it, resolved on first use, so `import graphflow` loads no protobuf)."""
    global _GRAPH_DEF_WRITER
    _GRAPH_DEF_WRITER = writer


def needed_ops(fetch_ops, fed_tensors=frozenset()):
    """The ops needed to run `fetch_ops`: their ancestors over data and control edges, cut at
    `fed_tensors`. Iterative (no recursion limit), linear; returned in graph (topological) order."""
    needed = set()
    stack = list(fetch_ops)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op.inputs:
            if t not in fed_tensors and t.op not in needed:
                stack.append(t.op)
        for c in op.control_inputs:
            if c not in needed:
                stack.append(c)
    return sorted(needed, key=lambda o: o._id)


class _DefaultGraphStack(threading.local):
    """Per-thread stack of default graphs above one process-wide base graph."""

    base = None

    def __init__(self):
        self.stack = []

    def append(self, g):
        self.stack.append(g)

    def remove_last(self, g):
        if self.stack and self.stack[-1] is g:
            self.stack.pop()
        elif g in self.stack:
            self.stack.remove(g)

    def current(self):
        if self.stack:
            return self.stack[-1]
        if _DefaultGraphStack.base is None:
            _DefaultGraphStack.base = Graph()
        return _DefaultGraphStack.base


_default_graph_stack = _DefaultGraphStack()


def get_default_graph():
    return _default_graph_stack.current()


def reset_default_graph():
    """Replace the process-wide default graph with a fresh one (tests call this between cases)."""
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() inside a `with graph.as_default()` "
                             "block.")
    if _DefaultGraphStack.base is not None and _DefaultGraphStack.base.eager:
        return  # eager mode has no graph to reset (its ops are not kept)
    _DefaultGraphStack.base = Graph()


def name_scope(name, default_name=None, values=None):
    """`tf.name_scope(name)` on the default graph (or the graph of `values`)."""
    graph = get_default_graph()
    if values:
        for v in values:
            if isinstance(v, Tensor):
                graph = v.graph
                break
    return graph.name_scope(name if name is not None else default_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name):
    return get_default_graph().device(device_name)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def get_collection(name, scope=None):
    return get_default_graph().get_collection(name, scope)


def get_collection_ref(name):
    return get_default_graph().get_collection_ref(name)


def set_random_seed(seed):
    get_default_graph().seed = seed

