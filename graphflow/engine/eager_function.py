"""`tf.contrib.eager.defun` / `tf.function`: a Python function traced into an ordinary graph.

Called in eager mode, a decorated function is traced once per *input signature* into a
`TraceGraph` (a function graph whose inputs are placeholders for the tensor arguments), and that
graph runs as a plan: the optimizer passes (constant folding, CSE, fusion, ...) and the plan
compiler apply as to any session's graph. Later calls with the same signature only run the plan.

What makes a new trace (the retracing rules, docs/eager.md):
- a tensor argument (an eager tensor or a numpy array) with another dtype or shape;
- a Python argument (number, string, bool, None) with another value, or another structure of
  lists, tuples and dicts;
- a variable argument that is another variable.
A function traced with `input_signature=[(dtype, shape), ...]` (or objects with `dtype` and
`shape`, e.g. `tf.TensorSpec`-like) is traced once, for shapes whose unknown (None) dims take any size.

Inside the trace, an eager tensor the function closes over becomes a constant of the graph (eager
tensors never change, so it is the same value), and a variable becomes a read of the same
variable (`VariableV2` with its shared name), which the plan reads from and writes to in the eager
variables: a traced training step updates the model's variables. A variable the function creates
on its first call is created once, eagerly (`init_scope`). The graph holds no Python: a
`ConcreteFunction` saves it with `graphflow.save` (`concrete.save(path)`), and `graphflow run`
runs the file.

Gradients: while a `GradientTape` records, a call is recorded as one op whose gradient runs a
second plan of the same graph extended by `tf.gradients` (built on the first such call) with
respect to the tensor arguments and the variables the function reads.
"""

import functools
import inspect
import weakref

import numpy as np

from graphflow.engine import eager as eager_mode
from graphflow.engine.executor import Plan
from graphflow.framework import dtypes, nest
from graphflow.framework.eager_tensor import EagerTensor
from graphflow.framework.func_graph import FuncGraph
from graphflow.framework.graph import Operation, get_default_graph
from graphflow.framework.tensor_shape import as_shape
from graphflow.ops import registry
from graphflow.ops.core_ops import constant, convert_to_tensor
from graphflow.ops.gradients import gradients
from graphflow.ops.state_ops import Variable


class TraceGraph(FuncGraph):
    """The graph a traced function builds: eager tensors it uses become constants of it."""

    def capture(self, tensor):
        if type(tensor) is EagerTensor:
            found = self._captured.get(tensor)
            if found is None:
                with self.as_default(), self.control_dependencies(None), \
                        self.name_scope(None):
                    found = constant(tensor._value, dtype=tensor.dtype, name="captured")
                self._captured[tensor] = found
            return found
        return super().capture(tensor)


_NESTED = (list, tuple, dict)


def _leaf_key(leaf):
    if isinstance(leaf, EagerTensor):
        return ("tensor", leaf.dtype.name, tuple(leaf._value.shape))
    if isinstance(leaf, np.ndarray):
        return ("tensor", dtypes.as_dtype(leaf.dtype).name, leaf.shape)
    if isinstance(leaf, Variable):
        return ("variable", id(leaf))
    try:
        hash(leaf)
    except TypeError:
        return ("object", id(leaf))
    return ("value", type(leaf).__name__, leaf)


def _structure_key(value):
    """The structure of `value` with its leaves replaced by None (lists, tuples, dicts)."""
    return repr(nest.map_structure(lambda _: None, value))


def _is_tensor_leaf(leaf):
    return isinstance(leaf, (EagerTensor, np.ndarray))


class ConcreteFunction:
    """One trace of a function: its graph, the plan running it and (once asked) its gradient."""

    def __init__(self, name, python_function, args, kwargs, signature=None):
        self.name = name
        outer = eager_mode.eager_graph()
        self.graph = graph = TraceGraph(name, outer)
        flat = nest.flatten((args, kwargs))
        self._tensor_positions = [i for i, leaf in enumerate(flat) if _is_tensor_leaf(leaf)]
        names = _argument_names(python_function, args, kwargs)
        with graph.as_default():
            placeholders = []
            for n, i in enumerate(self._tensor_positions):
                leaf = flat[i]
                if signature is not None:
                    dtype, shape = signature[n]
                else:
                    dtype = leaf.dtype if isinstance(leaf, EagerTensor) else \
                        dtypes.as_dtype(leaf.dtype)
                    shape = as_shape(leaf.shape)
                placeholders.append(graph.add_placeholder(dtype, shape, names[n]))
            traced_flat = list(flat)
            for ph, i in zip(placeholders, self._tensor_positions):
                traced_flat[i] = ph
            t_args, t_kwargs = nest.pack_sequence_as((args, kwargs), traced_flat)
            result = python_function(*t_args, **t_kwargs)
            self._structure = result
            outputs = [convert_to_tensor(v) for v in nest.flatten(result) if v is not None]
        graph.inputs = placeholders
        graph.outputs = outputs
        self._none_positions = [i for i, v in enumerate(nest.flatten(result)) if v is None]
        self._single = len(outputs) == 1 and type(result) not in _NESTED and result is not None
        self._effects = [op for op in graph.get_operations()
                         if registry.lookup(op.type).stateful
                         and not registry.lookup(op.type).variable
                         and not registry.lookup(op.type).reads_variable]
        self._variables = [op for op in graph.get_operations()
                           if registry.lookup(op.type).variable]
        self._plan = self._compile(list(outputs) + self._effects, placeholders)
        self._gradient = None

    @property
    def inputs(self):
        return list(self.graph.inputs)

    @property
    def outputs(self):
        return list(self.graph.outputs)

    def _compile(self, fetches, feeds):
        from graphflow import optimizer_passes
        state = eager_mode.eager_graph().state
        optimizer = functools.partial(optimizer_passes.optimize_for_plan,
                                      passes=optimizer_passes.resolve_passes(None))
        opt = optimizer(fetches, feeds)
        plan = Plan(opt.fetches, opt.feeds, state, origin=opt.origin, optimizer=optimizer,
                    ops=opt.graph.get_operations())
        plan.optimization = opt.report
        return plan

    def variables(self):
        """The eager variables the function reads or writes."""
        known = eager_mode.eager_graph().eager_variables
        return [known[op.attrs["shared_name"]] for op in self._variables
                if op.attrs["shared_name"] in known]

    def __call__(self, *args, **kwargs):
        flat = nest.flatten((args, kwargs))
        return self._call_flat([flat[i] for i in self._tensor_positions])

    def _call_flat(self, tensors):
        values = [t._value if type(t) is EagerTensor else t for t in tensors]
        out = self._plan.run(values)
        graph = eager_mode.eager_graph()
        tapes = graph.tapes
        inputs = [t if type(t) is EagerTensor else convert_to_tensor(t) for t in tensors] \
            if tapes else ()
        op = FunctionCall(graph, self, inputs)
        outputs = [eager_mode._output(op, i, t.dtype, v)
                   for i, (t, v) in enumerate(zip(self.graph.outputs, out))]
        op.outputs = outputs
        if tapes:  # the tapes see the variables read, as eager reads
            known = graph.eager_variables
            op.read_indices = [j for j, v in enumerate(self._variables)
                               if v.attrs["shared_name"] in known]
            reads = [known[self._variables[j].attrs["shared_name"]]._eager_read()
                     for j in op.read_indices]
            op.inputs = tuple(inputs) + tuple(reads)
            for tape in tapes:
                tape._record_call(op)
        if self._single:
            return outputs[0]
        flat = list(outputs)
        for i in self._none_positions:
            flat.insert(i, None)
        return nest.pack_sequence_as(self._structure, flat)

    # --- gradient ---------------------------------------------------------------------------
    def _gradient_plan(self):
        """The plan computing d(outputs)/d(inputs, variable reads), given output gradients."""
        if self._gradient is None:
            graph = self.graph
            with graph.as_default():
                seeds = [graph.add_placeholder(t.dtype, t.shape, "output_gradient")
                         for t in graph.outputs]
                sources = list(graph.inputs) + [op.outputs[0] for op in self._variables]
                grads = gradients(graph.outputs, sources, grad_ys=seeds)
            present = [i for i, g in enumerate(grads) if g is not None]
            plan = self._compile([grads[i] for i in present], list(graph.inputs) + seeds) \
                if present else None
            self._gradient = (plan, present, len(sources))
        return self._gradient

    def call_gradient(self, op, out_grads):
        """The gradients of a recorded call's inputs (its tensor arguments, then its variable
        reads), as eager tensors; None where none flows."""
        plan, present, count = self._gradient_plan()
        grads = [None] * count
        if plan is not None:
            from graphflow.ops import shape_ops
            n_in = len(self.graph.inputs)
            seeds = [g if g is not None else shape_ops.zeros_like(t)
                     for g, t in zip(out_grads, op.outputs)]
            values = plan.run([t._value for t in op.inputs[:n_in]] + [g._value for g in seeds])
            sources = list(self.graph.inputs) + [v.outputs[0] for v in self._variables]
            for i, v in zip(present, values):
                grads[i] = eager_mode._output(op, 0, sources[i].dtype, v)
        n_in = len(self.graph.inputs)
        return grads[:n_in] + [grads[n_in + j] for j in op.read_indices]

    # --- saving -------------------------------------------------------------------------------
    def save(self, path, strip_source=False):
        """Write this trace as a graphflow file: its placeholders are the inputs, its outputs
        `output_0`, ... and its variables hold their current values. `graphflow run` runs it."""
        from graphflow.fileformat.serialization import save
        store = eager_mode.eager_graph().state.variables
        values = {op.attrs["shared_name"]: store.read(op.attrs["shared_name"])
                  for op in self._variables}
        inputs = {ph.op.name: ph for ph in self.graph.inputs}
        outputs = {f"output_{i}": t for i, t in enumerate(self.graph.outputs)}
        return save(path, inputs=inputs, outputs=outputs, graph=self.graph,
                    variable_values=values, strip_source=strip_source)

    def __repr__(self):
        shapes = ", ".join(f"{t.dtype.name}{t.shape}" for t in self.graph.inputs)
        return f"<ConcreteFunction {self.name}({shapes}) ops={self.graph.num_ops()}>"


class FunctionCall(Operation):
    """The one op a tape records for a call of a traced function (TF's `PartitionedCall`)."""

    __slots__ = ("function", "read_indices")

    def __init__(self, graph, function, inputs):
        Operation.__init__(self, graph, "PartitionedCall", function.name, inputs, (), {}, "",
                           None)
        self.function = function
        self.read_indices = ()

    def call_gradient(self, out_grads):
        return self.function.call_gradient(self, out_grads)


def _argument_names(fn, args, kwargs):
    """Names for the placeholders of the tensor arguments: the parameter names (x, x_1, ...)."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return ["input"] * len(nest.flatten((args, kwargs)))
    names = []
    for name, value in bound.arguments.items():
        for leaf in nest.flatten(value):
            if _is_tensor_leaf(leaf):
                names.append(name)
    return names


class Function:
    """A Python function that traces into a graph per input signature (see the module doc)."""

    def __init__(self, python_function, name=None, input_signature=None):
        self.python_function = python_function
        self.__name__ = name or getattr(python_function, "__name__", "function")
        self.__doc__ = getattr(python_function, "__doc__", None)
        self._signature = None if input_signature is None else [
            (dtypes.as_dtype(s.dtype if hasattr(s, "dtype") else s[0]),
             as_shape(s.shape if hasattr(s, "shape") else s[1])) for s in input_signature]
        self._traces = {}
        self._bound = weakref.WeakKeyDictionary()

    def __get__(self, instance, owner):
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:
            bound = None
        if bound is None:
            bound = Function(self.python_function.__get__(instance, owner), self.__name__,
                             None)
            bound._signature = self._signature
            try:
                self._bound[instance] = bound
            except TypeError:
                pass
        return bound

    def _flat_and_key(self, args, kwargs):
        """The arguments' leaves and the trace key; plain positional arguments (no lists,
        tuples or dicts: the common call) skip the structure walk."""
        if not kwargs and not any(type(a) in _NESTED for a in args):
            flat, structure = args, len(args)
        else:
            flat, structure = nest.flatten((args, kwargs)), _structure_key((args, kwargs))
        if self._signature is not None:
            return flat, ("signature", structure,
                          tuple([_leaf_key(x) for x in flat if not _is_tensor_leaf(x)]))
        return flat, (structure, tuple([_leaf_key(x) for x in flat]))

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (traced now if there is none yet)."""
        return self._concrete(self._flat_and_key(args, kwargs)[1], args, kwargs)

    def _concrete(self, key, args, kwargs):
        found = self._traces.get(key)
        if found is None:
            if eager_mode.eager_graph() is None:
                raise RuntimeError("tracing a function into a graph needs eager execution: call "
                                   "tf.enable_eager_execution() at program start")
            found = ConcreteFunction(self.__name__, self.python_function, args, kwargs,
                                     self._signature)
            self._traces[key] = found
        return found

    def __call__(self, *args, **kwargs):
        if not get_default_graph().eager:  # building a graph: the function's ops join it
            return self.python_function(*args, **kwargs)
        flat, key = self._flat_and_key(args, kwargs)
        concrete = self._traces.get(key) or self._concrete(key, args, kwargs)
        return concrete._call_flat([flat[i] for i in concrete._tensor_positions])

    @property
    def trace_count(self):
        """How many traces were made (one per input signature seen)."""
        return len(self._traces)

    def __repr__(self):
        return f"<graphflow.function {self.__name__}: {len(self._traces)} trace(s)>"


def defun(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
          experimental_relax_shapes=False):
    """`tf.contrib.eager.defun(func)`: `func` traced into a graph per input signature and run as
    a plan (see the module doc). Usable as `@defun` or `@defun(input_signature=...)`."""
    if func is None:
        return functools.partial(defun, input_signature=input_signature)
    return functools.wraps(func)(Function(func, input_signature=input_signature)) \
        if not inspect.ismethod(func) else Function(func, input_signature=input_signature)


def function(func=None, input_signature=None, autograph=True, experimental_implements=None,
             experimental_autograph_options=None, experimental_relax_shapes=False,
             experimental_compile=None):
    """`tf.function`: the same as `defun` (TF 1.14-1.15 name)."""
    return defun(func, input_signature=input_signature)


__all__ = ["ConcreteFunction", "Function", "TraceGraph", "defun", "function"]
