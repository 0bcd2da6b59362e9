"""Plan compilation and execution: prune -> schedule -> build kernels -> generate a flat step function.

A `Plan` is compiled once per (graph version, fetches, feeds) and then run many times. Compiling:
  1. prune: the ancestors of the fetches (data + control edges), cut at fed tensors;
  2. schedule: graph creation order restricted to those ops (always topological), with the ops
     whose type asks to run early or late moved accordingly (`engine/scheduling.py`);
  3. last use: each intermediate value is dropped right after its last consumer;
  4. build each op's kernel once (`kernels.cpu`) and emit a straight-line Python function
     `v3 = k0(f0, f1); v4 = k1(v3, f2); del v3; ...` so a run does no graph work, no dict lookups
     and no per-step bookkeeping. A failure is mapped back to its step by the line number.
"""

import itertools

import numpy as np

from graphflow.engine import placement
from graphflow.engine.scheduling import apply_schedule_hints
from graphflow.framework import dtypes
from graphflow.framework.errors import (
    CheckFailedError,
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    ResourceExhaustedError,
    UnimplementedError,
    UninitializedVariableError,
)
from graphflow.framework.graph import describe_op, needed_ops
from graphflow.kernels import KernelNode, kernel_accepts_out
from graphflow.kernels import cpu as cpu_kernels
from graphflow.ops import registry

_PLAN_IDS = itertools.count()


def may_alias_external(tensor, fed):
    """True if the value of `tensor` may be an array the user or the variable store also holds
    (a fed array, a constant, a variable value, or a view of one). Such values are copied
    before they are handed out or stored."""
    while True:
        if tensor in fed:
            return True
        op_def = registry.lookup(tensor.op.type)
        if op_def.returns_state or op_def.must_feed:
            return True
        if not op_def.may_alias_input or not tensor.op.inputs:
            return False
        tensor = tensor.op.inputs[0]


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class FeedSpec:
    """How one fed tensor's value is checked and converted before a run."""

    __slots__ = ("tensor", "np_dtype", "dtype", "rank", "fixed_dims", "exact_shape")

    def __init__(self, tensor):
        self.tensor = tensor
        self.dtype = tensor.dtype
        self.np_dtype = tensor.dtype.as_numpy_dtype
        dims = tensor.shape.dims
        self.rank = None if dims is None else len(dims)
        self.fixed_dims = () if dims is None else tuple((i, d) for i, d in enumerate(dims)
                                                         if d is not None)
        self.exact_shape = dims if tensor.shape.is_fully_defined() else None

    def convert(self, value):
        if self.np_dtype.kind == "O":  # tf.string: an object array of bytes
            try:
                arr = dtypes.string_array(value)
            except TypeError as exc:
                raise TypeError(self._message(f"cannot feed this value to a tf.string tensor "
                                              f"({exc})")) from None
        else:
            arr = value if type(value) is np.ndarray else self._from_python(value)
        if arr.dtype != self.np_dtype:
            if not dtypes.can_feed(arr.dtype, self.dtype):
                raise TypeError(self._message(f"cannot feed a value of dtype {arr.dtype} to a "
                                              f"tensor of dtype {self.dtype.name} (the cast "
                                              "would lose information)"))
            arr = arr.astype(self.np_dtype)
        if self.rank is not None:
            shape = arr.shape
            if shape == self.exact_shape:
                return arr
            if len(shape) != self.rank or any(shape[i] != d for i, d in self.fixed_dims):
                raise ValueError(self._message(f"cannot feed a value of shape {shape} to a tensor "
                                               f"of shape {self.tensor.shape}"))
        return arr

    def _from_python(self, value):
        """Python data (lists, numbers) or numpy scalars -> array. Ragged lists and Python ints
        that the tensor's integer dtype cannot hold are errors (numpy arrays of a wider integer
        dtype are cast as TF1 casts them, wrapping; see docs/security.md)."""
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueError(self._message(f"cannot feed {_short(value)}: it is not a rectangular "
                                           f"array of numbers (numpy: {exc})")) from None
        if arr.dtype == object:
            raise TypeError(self._message(f"cannot feed {_short(value)}: it holds values that are "
                                          "not numbers of one numeric type (e.g. integers "
                                          "beyond int64)"))
        if arr.dtype.kind in "iu" and arr.size and self.dtype.is_integer and \
                not isinstance(value, np.generic):
            info = np.iinfo(self.np_dtype)
            low, high = arr.min(), arr.max()
            if low < info.min or high > info.max:
                bad = int(high) if high > info.max else int(low)
                raise ValueError(self._message(f"cannot feed the Python integer {bad}: it does "
                                               f"not fit {self.dtype.name} [{info.min}, "
                                               f"{info.max}]"))
        return arr

    def _message(self, text):
        return f"{text}: tensor '{self.tensor.name}' of {describe_op(self.tensor.op)}"


class Plan:
    """A compiled, reusable execution plan for one (fetches, feeds) signature."""

    optimization = None  # the optimizer's report when the session optimized this plan's graph

    def __init__(self, fetch_elements, feed_tensors, state, kernel_table=None, device=None,
                 origin=None, memory_plan=None, optimizer=None):
        self.plan_id = next(_PLAN_IDS)
        kernel_table = kernel_table or cpu_kernels
        # An optimized plan runs a copy of the user's graph (graphflow.optimizer_passes): `origin`
        # maps its ops and fed tensors back to the user's for errors; `memory_plan` names the steps
        # that may write into a dead input's buffer (emitted below as `k3(v2, v5, out=v2)`).
        self._origin = origin or {}
        self.memory_plan = memory_plan
        self.inplace_steps = 0
        self.feed_specs = [FeedSpec(self._origin.get(t, t)) for t in feed_tensors]
        fed = set(feed_tensors)
        fetch_ops = [e if not hasattr(e, "value_index") else e.op for e in fetch_elements]
        fetch_ops = [op for op, e in zip(fetch_ops, fetch_elements) if e not in fed]
        self.ops = apply_schedule_hints(needed_ops(fetch_ops, fed))
        self._check_feeds_cover_placeholders(fed)
        self.has_state_writes = any(registry.lookup(op.type).stateful
                                    and not registry.lookup(op.type).variable for op in self.ops)
        self._state = state
        self._kernel_table = kernel_table
        self._device = device
        # optimizer(fetches, feeds) -> an optimized copy (optimizer_passes.PlanGraph), applied to
        # the sub-graphs of control-flow ops too; None: they run as built
        self._optimizer = optimizer
        # variables updated under use_locking=True: held in this (fixed) order for the whole run
        self.locked_variables = sorted({op.attrs["shared_name"] for op in self.ops
                                        if op.attrs.get("use_locking") is True
                                        and "shared_name" in op.attrs})
        # device of each step, value locations, host<->device copies (graphflow/placement.py)
        self.placement = placement.place(self.ops, fed, device, state, kernel_table)
        self._build(fetch_elements, feed_tensors, fed, kernel_table)

    def _check_feeds_cover_placeholders(self, fed):
        for op in self.ops:
            if registry.lookup(op.type).must_feed and op.outputs[0] not in fed:
                t = op.outputs[0]
                raise InvalidArgumentError(
                    None, self._origin.get(op, op), f"You must feed a value for placeholder "
                    f"tensor '{t.name}' with dtype {t.dtype.name} and shape {t.shape}: "
                    f"{describe_op(op)}")

    def _build(self, fetch_elements, feed_tensors, fed, kernel_table):
        var_of = {}
        for i, t in enumerate(feed_tensors):
            var_of[t] = f"f{i}"
        last_use = {}
        for step, op in enumerate(self.ops):
            for t in op.inputs:
                last_use[t] = step
        fetched = {e for e in fetch_elements if hasattr(e, "value_index")}
        lines = [f"def plan_{self.plan_id}(feeds):"]
        if feed_tensors:
            lines.append("    " + ", ".join(var_of[t] for t in feed_tensors) + ", = feeds")
        namespace = {}
        self.line_to_op = {}
        self._call_lines = {}  # index in `lines` of each kernel call -> its op (for tracing)
        self.kernels = []
        counter = 0
        for step, op in enumerate(self.ops):
            if not registry.lookup(op.type).runs_kernel:
                continue
            try:
                builder = self.placement.lookup(op)
            except LookupError as exc:
                raise UnimplementedError(None, op, f"{exc}: {describe_op(op)}") from None
            used = tuple(t not in fed and (t in last_use or t in fetched) for t in op.outputs)
            node = KernelNode(op.name, op.type, op.attrs,
                              tuple(t.dtype.as_numpy_dtype for t in op.inputs),
                              tuple(t.dtype.as_numpy_dtype for t in op.outputs),
                              tuple(t.shape.dims for t in op.outputs), self._state,
                              self.compile_function, used)
            kernel = builder(node)
            kname = f"k{len(self.kernels)}"
            self.kernels.append(kernel)
            namespace[kname] = kernel
            outs = []
            for t, is_used in zip(op.outputs, used):
                if not is_used:
                    outs.append("_")
                else:
                    name = f"v{counter}"
                    counter += 1
                    var_of[t] = name
                    outs.append(name)
            copies, arg_names = self.placement.args(op, var_of)
            for line in copies:
                lines.append(f"    {line}")
                self.line_to_op[len(lines)] = self._origin.get(op, op)
            reuse = self._reuse(op, step, kernel, arg_names, var_of, last_use, fetched, fed)
            call = f"{kname}({', '.join(arg_names + reuse)})"
            if not op.outputs:
                lines.append(f"    {call}")
            elif len(op.outputs) == 1:
                lines.append(f"    {outs[0]} = {call}")
            else:
                lines.append(f"    {', '.join(outs)}, = {call}")
            self.line_to_op[len(lines)] = self._origin.get(op, op)
            self._call_lines[len(lines) - 1] = op
            dead = [var_of[t] for t in dict.fromkeys(op.inputs)
                    if last_use.get(t) == step and t not in fetched and t not in fed]
            dead += [c for v in dead for c in self.placement.copies_of(v)]
            if dead:
                lines.append(f"    del {', '.join(dead)}")
        self.fetch_slots = []
        self.copy_fetch = []
        returns = []
        for e in fetch_elements:
            if hasattr(e, "value_index"):
                expr = self.placement.fetch(e, var_of[e])
                if e.dtype == dtypes.string and e.shape.ndims in (0, None):  # TF1: a scalar is bytes
                    expr = f"_string_scalar({expr})"
                    namespace["_string_scalar"] = _string_scalar
                returns.append(expr)
                self.copy_fetch.append(may_alias_external(e, fed) and e not in fed
                                       and self.placement.on_host(e))
            else:
                returns.append("None")
                self.copy_fetch.append(False)
        self.any_copy = any(self.copy_fetch)
        lines.append(f"    return ({', '.join(returns)}{',' if len(returns) == 1 else ''})")
        self.source = "\n".join(lines) + "\n"
        code = compile(self.source, f"<graphflow plan {self.plan_id}>", "exec")
        self._code_filename = code.co_filename
        namespace.update(self.placement.namespace)
        exec(code, namespace)  # our own generated code, never data from a file
        self.fn = self.placement.wrap(namespace[f"plan_{self.plan_id}"])
        self.num_steps = len(self.kernels)
        self._lines, self._namespace, self._traced = lines, namespace, None

    def _reuse(self, op, step, kernel, arg_names, var_of, last_use, fetched, fed):
        """`["out=v2"]` when the memory plan lets this step write into its dead input v2."""
        pos = None if self.memory_plan is None else self.memory_plan.inplace.get(op)
        if pos is None:
            return []
        t = op.inputs[pos]
        var = var_of.get(t, "")
        if (last_use.get(t) != step or t in fetched or t in fed or arg_names[pos] != var
                or not var.startswith("v") or not kernel_accepts_out(kernel)):
            return []
        self.inplace_steps += 1
        return [f"out={var}"]

    def compile_function(self, func_graph, extra_fetches=()):
        """A sub-plan for a control-flow op's function graph: `run(values)` feeds the graph's
        inputs then captures (`func_graph.all_inputs`) and returns its outputs, then the values
        of `extra_fetches` (tensors of the function graph), as a tuple. Errors inside name the
        function graph's op and the user's line that built it."""
        fetches = list(func_graph.outputs) + list(extra_fetches)
        feeds = func_graph.all_inputs
        if self._optimizer is None:
            plan = Plan(fetches, feeds, self._state, self._kernel_table, self._device)
        else:
            opt = self._optimizer(fetches, feeds)
            plan = Plan(opt.fetches, opt.feeds, self._state, self._kernel_table, self._device,
                        origin=opt.origin, memory_plan=opt.report.memory_plan,
                        optimizer=self._optimizer)
        return plan.call

    def call(self, values):
        """Run as a sub-plan: no feed conversion and no variable transaction (the enclosing run
        holds it); a failure becomes an OpError naming the op inside the function graph."""
        try:
            return self.fn(values)
        except Exception as exc:
            raise self._translate(exc) from exc

    # ------------------------------------------------------------------ running
    def run(self, feed_values):
        """Run with already-ordered feed values (validated here); returns a tuple of fetches."""
        specs = self.feed_specs
        if specs:
            feeds = [spec.convert(v) for spec, v in zip(specs, feed_values)]
        else:
            feeds = ()
        if self.has_state_writes:
            variables = self._state.variables
            locks = [variables.variable_lock(n) for n in self.locked_variables]
            for lock in locks:
                lock.acquire()
            try:
                variables.begin()
                try:
                    out = self.fn(feeds)
                except BaseException as exc:
                    variables.abort()
                    raise self._translate(exc) from exc
                variables.commit()
            finally:
                for lock in reversed(locks):
                    lock.release()
        else:
            try:
                out = self.fn(feeds)
            except Exception as exc:
                raise self._translate(exc) from exc
        if self.any_copy:
            out = tuple(np.array(v, copy=True) if c and isinstance(v, np.ndarray) else v
                        for v, c in zip(out, self.copy_fetch))
        return out

    # ------------------------------------------------------------------ tracing
    def _traced_variant(self):
        """The plan's function with a clock read around every kernel call (engine/tracing.py),
        generated and compiled on the first traced run; untraced runs never pay for it."""
        if self._traced is not None:
            return self._traced
        from graphflow.engine.tracing import Recorder
        lines = [f"def plan_{self.plan_id}_traced(feeds, _records):"]
        line_to_op, traced_ops = {}, []
        for index, line in enumerate(self._lines[1:], start=1):
            op = self._call_lines.get(index)
            if op is not None:
                lines.append("    _t = _clock()")
            lines.append(line)
            if self.line_to_op.get(index + 1) is not None:
                line_to_op[len(lines)] = self.line_to_op[index + 1]
            if op is not None:
                lines.append(f"    _records.append(({len(traced_ops)}, _t, _clock()))")
                traced_ops.append(self._origin.get(op, op))
        source = "\n".join(lines) + "\n"
        code = compile(source, f"<graphflow plan {self.plan_id} traced>", "exec")
        namespace = dict(self._namespace, _clock=Recorder.clock)
        exec(code, namespace)  # our own generated code, never data from a file
        fn = self.placement.wrap(namespace[f"plan_{self.plan_id}_traced"])
        self._traced = _TracedVariant(fn, source, line_to_op, code.co_filename, traced_ops)
        return self._traced

    def run_traced(self, feed_values):
        """`run` through the traced variant: (fetches, StepStats of this run)."""
        from graphflow.engine.tracing import Recorder
        traced = self._traced_variant()
        specs = self.feed_specs
        feeds = [spec.convert(v) for spec, v in zip(specs, feed_values)] if specs else ()
        recorder = Recorder()
        variables = self._state.variables
        if self.has_state_writes:
            variables.begin()
        try:
            out = traced.fn(feeds, recorder.records)
        except BaseException as exc:
            if self.has_state_writes:
                variables.abort()
            raise self._translate(exc, traced) from exc
        if self.has_state_writes:
            variables.commit()
        if self.any_copy:
            out = tuple(np.array(v, copy=True) if c and isinstance(v, np.ndarray) else v
                        for v, c in zip(out, self.copy_fetch))
        device_of = {self._origin.get(op, op): d for op, d in self.placement.device_of.items()}
        device_of.update(self.placement.device_of)
        return out, recorder.step_stats(traced.ops, device_of)

    def _translate(self, exc, generated=None):
        """Turn an exception from the generated function into an OpError naming the user's op
        (an OpError a kernel raised itself, e.g. OutOfRangeError, gets its `op` filled in)."""
        if not isinstance(exc, Exception) or (isinstance(exc, OpError) and exc.op is not None):
            return exc
        generated = generated or self
        tb = exc.__traceback__
        frame_locals, lineno = None, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == generated._code_filename:
                lineno = tb.tb_lineno
                frame_locals = tb.tb_frame.f_locals
            tb = tb.tb_next
        op = generated.line_to_op.get(lineno)
        if op is None:
            return exc
        if isinstance(exc, OpError):
            exc.op = op
            return exc
        if isinstance(exc, UninitializedVariableError):
            return FailedPreconditionError(
                None, op, f"Attempting to use uninitialized value {exc.variable_name}: "
                f"{describe_op(op)}. Run tf.global_variables_initializer() first.")
        if isinstance(exc, CheckFailedError):
            return InvalidArgumentError(None, op, f"{exc}\n  [[{describe_op(op)}]]")
        if isinstance(exc, MemoryError) or (isinstance(exc, ValueError)
                                            and "array is too big" in str(exc)):
            return ResourceExhaustedError(
                None, op, f"OOM: {op.type} {describe_op(op)} needs more memory than can be "
                f"allocated ({type(exc).__name__}: {exc})")
        inputs = []
        for t in op.inputs:
            line = generated.source.splitlines()[lineno - 1]
            value = _input_value(frame_locals, line, op.inputs.index(t))
            inputs.append(f"{t.name}: shape={getattr(value, 'shape', '?')} "
                          f"dtype={getattr(value, 'dtype', '?')}")
        detail = "; ".join(inputs) if inputs else "no inputs"
        return InvalidArgumentError(
            None, op, f"{op.type} kernel failed for {describe_op(op)} on inputs [{detail}]: "
            f"{type(exc).__name__}: {exc}")


class _TracedVariant:
    """A plan's traced function with what error translation needs (source, line -> op)."""

    __slots__ = ("fn", "source", "line_to_op", "_code_filename", "ops")

    def __init__(self, fn, source, line_to_op, code_filename, ops):
        self.fn, self.source, self.line_to_op = fn, source, line_to_op
        self._code_filename, self.ops = code_filename, ops


def _string_scalar(value):
    """A fetched tf.string value as TF1 returns it: `bytes` for a scalar, else the object array."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _input_value(frame_locals, line, index):
    """The value of the index-th argument of the kernel call on `line`, read from the frame."""
    if frame_locals is None or "(" not in line:
        return None
    args = line[line.index("(") + 1:line.rindex(")")].split(", ")
    if index >= len(args):
        return None
    name = args[index].strip()
    if name.startswith("f") and name[1:].isdigit():
        feeds = frame_locals.get("feeds")
        try:
            return feeds[int(name[1:])]
        except (TypeError, IndexError):
            return frame_locals.get(name)
    return frame_locals.get(name)
