"""Plan compilation and execution. A `Plan` is compiled once per (graph version, fetches, feeds)
and then run many times. Compiling is a chain of stages, each returning plain data:
  1. schedule (`schedule_ops`): the ops to run in creation order (always topological): the
     optimizer's already-pruned copy, or here the ancestors of the fetches cut at fed tensors,
     with the ops whose type asks to run early or late moved accordingly (`engine/scheduling.py`);
  2. place (`engine/placement.py`): the device of each op and the host<->device copies;
  3. kernels: each op's kernel built once on its device;
  4. memory plan (`engine/memory_plan.py`, always): last use of each value, in-place reuse;
  5. steps (`engine/steps.py`): the step list with slots, copies, frees and reused buffers;
  6. emit (`engine/emit.py`), the only stage writing code: a straight-line Python function
     `v3 = k0(f0, f1); v4 = k1(v3, f2); del v3; ...` so a run does no graph work, no dict lookups
     and no per-step bookkeeping. A failure maps back to its step through the failing line and
     the step's slots (`Plan._translate`).
"""

import itertools
import warnings

import numpy as np

from graphflow.engine import memory_plan, placement
from graphflow.engine.emit import emit, slot_name
from graphflow.engine.scheduling import apply_schedule_hints, sink_last_update
from graphflow.engine.steps import Schedule, build_steps
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
from graphflow.framework.gc_pause import gc_paused
from graphflow.framework.graph import describe_op, needed_ops
from graphflow.kernels import KernelNode
from graphflow.kernels import cpu as cpu_kernels
from graphflow.ops import registry

_PLAN_IDS = itertools.count()


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class FeedSpec:
    """How one fed tensor's value is checked and converted before a run."""

    __slots__ = ("tensor", "np_dtype", "dtype", "rank", "fixed_dims", "exact_shape", "castable",
                 "accepted")

    def __init__(self, tensor):
        self.tensor = tensor
        self.dtype = tensor.dtype
        self.np_dtype = tensor.dtype.as_numpy_dtype
        dims = tensor.shape.dims
        self.rank = None if dims is None else len(dims)
        self.fixed_dims = () if dims is None else tuple((i, d) for i, d in enumerate(dims)
                                                         if d is not None)
        self.exact_shape = dims if tensor.shape.is_fully_defined() else None
        self.castable = {}  # fed numpy dtype -> whether TF1's feed rule lets it cast to `dtype`
        # the last shape that passed the check (a feed of a partly known shape is usually fed the
        # same shape run after run: one tuple comparison instead of the per-dimension check)
        self.accepted = None

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
            castable = self.castable.get(arr.dtype)
            if castable is None:
                castable = self.castable[arr.dtype] = dtypes.can_feed(arr.dtype, self.dtype)
            arr = arr.astype(self.np_dtype) if castable else self._cast_if_exact(arr)
        if self.rank is not None:
            shape = arr.shape
            if shape == self.exact_shape or shape == self.accepted:
                return arr
            if len(shape) != self.rank or any(shape[i] != d for i, d in self.fixed_dims):
                raise ValueError(self._message(f"cannot feed a value of shape {shape} to a tensor "
                                               f"of shape {self.tensor.shape}"))
            self.accepted = shape
        return arr

    def _cast_if_exact(self, arr):
        """`arr` cast to the tensor's dtype where every value survives the cast (float64 [1., 2.]
        into int32, as TF1 casts it), else TypeError naming the first value that would change
        (3.5 -> 3, 1e20 out of int32's range, NaN): decided by the values, not by the dtypes."""
        if arr.dtype.kind not in "biufc" or self.np_dtype.kind not in "biufc":
            raise TypeError(self._message(f"cannot feed a value of dtype {arr.dtype} to a "
                                          f"tensor of dtype {self.dtype.name}"))
        with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", getattr(np, "exceptions", np).ComplexWarning)
            cast = arr.astype(self.np_dtype)
            changed = cast.astype(arr.dtype) != arr
        if changed.any():
            bad = arr[changed].flat[0].item()
            raise TypeError(self._message(
                f"cannot feed a value of dtype {arr.dtype} to a tensor of dtype {self.dtype.name}: "
                f"the value {bad!r} would change in the cast (graphflow casts a feed only where "
                f"every value survives it, e.g. whole numbers in range into an integer tensor)"))
        return cast

    def _from_python(self, value):
        """Python data (lists, numbers) or numpy scalars -> array. Ragged lists and Python ints
        that the tensor's integer dtype cannot hold are errors (numpy arrays of a wider integer
        dtype are cast as TF1 casts them, wrapping; see docs/security.md)."""
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueError(self._message(f"cannot feed {_short(value)}: it is not a rectangular "
                                           f"array of numbers (numpy: {exc})")) from None
        if arr.size == 0 and arr.dtype != self.np_dtype and self.np_dtype.kind != "O":
            return arr.astype(self.np_dtype)  # `[]` has no dtype of its own (TF1 feeds it as is)
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


def schedule_ops(fetch_elements, fed, pruned=None, sink_update=True):
    """The order the plan's steps run in (the one place it is decided): graph creation order,
    always topological, of the ops the fetches need. `pruned`: ops the optimizer already pruned
    (its graph copy), taken as they are; else the ancestors of the fetches over data and control
    edges, cut at the fed tensors. Then the schedule hints and, for a run's own plan
    (`sink_update`; not a control-flow op's sub-plan), the largest movable optimizer update moved
    to the end (`engine/scheduling.py`)."""
    if pruned is not None:
        ops = list(pruned)
    else:
        fetch_ops = [e if not hasattr(e, "value_index") else e.op for e in fetch_elements]
        fetch_ops = [op for op, e in zip(fetch_ops, fetch_elements) if e not in fed]
        ops = needed_ops(fetch_ops, fed)
    ops = apply_schedule_hints(ops)
    return sink_last_update(ops) if sink_update else ops


class Plan:
    """A compiled, reusable execution plan for one (fetches, feeds) signature."""

    optimization = None  # the optimizer's report when the session optimized this plan's graph

    def __init__(self, fetch_elements, feed_tensors, state, kernel_table=None, device=None,
                 origin=None, optimizer=None, ops=None, sub_plan=False):
        self.plan_id = next(_PLAN_IDS)
        kernel_table = kernel_table or cpu_kernels
        # An optimized plan runs a copy of the user's graph (graphflow.optimizer_passes): `origin`
        # maps its ops and fed tensors back to the user's for errors, and `ops` are that copy's
        # ops, already pruned by the optimizer (None: prune here).
        self._origin = origin or {}
        self.feed_specs = [FeedSpec(self._origin.get(t, t)) for t in feed_tensors]
        fed = set(feed_tensors)
        self.ops = schedule_ops(fetch_elements, fed, ops, sink_update=not sub_plan)
        # the run's last op, an optimizer update, may write in place (a sub-plan's last op is
        # not its run's: a control-flow op runs it in the middle of the enclosing run)
        self._runs_last = (self.ops[-1] if self.ops and not sub_plan
                           and registry.lookup(self.ops[-1].type).updates_in_place else None)
        self._check_feeds_cover_placeholders(fed)
        self.has_state_writes = any(registry.lookup(op.type).stateful
                                    and not registry.lookup(op.type).variable for op in self.ops)
        self._state = state
        self._kernel_table = kernel_table
        self._device = device
        # optimizer(fetches, feeds) -> an optimized copy (optimizer_passes.PlanGraph), applied to
        # the sub-graphs of control-flow ops too; None: they run as built
        self._optimizer = optimizer
        # variables updated under use_locking=True: locked in this (fixed) order from the run's
        # first variable access to its commit
        self.locked_variables = sorted({op.attrs["shared_name"] for op in self.ops
                                        if op.attrs.get("use_locking") is True
                                        and "shared_name" in op.attrs})
        self._locks = None  # (variable store, its locks of locked_variables), made on first run
        # the stages allocate many long-lived objects and no garbage: no collections meanwhile
        with gc_paused():
            self._compile(Schedule(self.ops, feed_tensors, fetch_elements), feed_tensors,
                          fetch_elements, kernel_table)

    def _compile(self, schedule, feed_tensors, fetch_elements, kernel_table):
        """The compile stages after the schedule, in order; each hands the next plain data."""
        fed = schedule.fed
        # device of each step, value locations, host<->device copies (engine/placement.py)
        self.placement = placement.place(self.ops, fed, self._device, self._state, kernel_table)
        kernel_of = self._build_kernels(schedule)
        self.kernels = list(kernel_of.values())
        self.num_steps = len(self.kernels)
        on_cpu = {op: k for op, k in kernel_of.items()
                  if not placement.is_gpu(self.placement.device_of[op])}
        self.memory_plan = memory_plan.plan_memory(
            self.ops, fed | schedule.fetched, fed, schedule.last_use, on_cpu,
            self.placement.on_host)
        self.inplace_steps = len(self.memory_plan.inplace)
        self.step_list = build_steps(schedule, kernel_of, self.placement, self.memory_plan.inplace,
                                     feed_tensors, fetch_elements, self._origin,
                                     self.memory_plan.adopt)
        self.copy_fetch = [f.slot is not None and memory_plan.may_alias_external(e, fed) and e not in fed
                           and self.placement.on_host(e)
                           for f, e in zip(self.step_list.fetches, fetch_elements)]
        self.any_copy = any(self.copy_fetch)
        self._generated = self._emit(traced=False)
        self.fn = self.placement.wrap(self._generated.fn)
        self._traced = None

    def _check_feeds_cover_placeholders(self, fed):
        for op in self.ops:
            if registry.lookup(op.type).must_feed and op.outputs[0] not in fed:
                t = op.outputs[0]
                raise InvalidArgumentError(
                    None, self._origin.get(op, op), f"You must feed a value for placeholder "
                    f"tensor '{t.name}' with dtype {t.dtype.name} and shape {t.shape}: "
                    f"{describe_op(op)}")

    def _build_kernels(self, schedule):
        """{op: kernel} of every op that runs one, built once on its device, in schedule order."""
        kernel_of = {}
        self.implementation_of = {}  # op -> the name of the implementation chosen for it
        for op in schedule.ops:
            if not registry.lookup(op.type).runs_kernel:
                continue
            node = KernelNode.describing(op, self._state, self.compile_function,
                                         tuple(schedule.used(t) for t in op.outputs),
                                         runs_last=op is self._runs_last)
            try:
                impl = self.placement.implementation(op, node)
            except LookupError as exc:
                raise UnimplementedError(None, op, f"{exc}: {describe_op(op)}") from None
            self.implementation_of[op] = impl.name
            kernel_of[op] = impl.build(node)
        return kernel_of

    def kernel_choices(self):
        """[(op name, op type, device, implementation)] of every step that runs a kernel, in
        schedule order: which implementation the plan chose for each op (`kernels/registry.py`)."""
        return [(op.name, op.type, self.placement.device_of[op] or "CPU", name)
                for op, name in self.implementation_of.items()]

    def _emit(self, traced):
        backend = self.placement.backend
        clock = None
        if traced:
            from graphflow.engine.tracing import Recorder
            clock = Recorder.clock
        name = f"plan_{self.plan_id}" + ("_traced" if traced else "")
        return emit(self.step_list, name, backend and backend.to_device,
                    backend and backend.to_host, traced, clock)

    @property
    def source(self):
        """The generated function's Python source (for reading; runs never parse it)."""
        return self._generated.source

    @property
    def line_to_op(self):
        """{line number of the generated source: the user's op of the step it belongs to}."""
        steps = self.step_list.steps
        return {line: steps[i].origin for line, i in self._generated.step_at.items()}

    def compile_function(self, func_graph, extra_fetches=()):
        """A sub-plan for a control-flow op's function graph: `run(values)` feeds the graph's
        inputs then captures (`func_graph.all_inputs`) and returns its outputs, then the values
        of `extra_fetches` (tensors of the function graph), as a tuple. Errors inside name the
        function graph's op and the user's line that built it."""
        fetches = list(func_graph.outputs) + list(extra_fetches)
        feeds = func_graph.all_inputs
        if self._optimizer is None:
            plan = Plan(fetches, feeds, self._state, self._kernel_table, self._device,
                        sub_plan=True)
        else:
            opt = self._optimizer(fetches, feeds)
            plan = Plan(opt.fetches, opt.feeds, self._state, self._kernel_table, self._device,
                        origin=opt.origin, optimizer=self._optimizer,
                        ops=opt.graph.get_operations(), sub_plan=True)
        return plan.call

    def call(self, values):
        """Run as a sub-plan: no feed conversion and no variable transaction (the enclosing run
        holds it); a failure becomes an OpError naming the op inside the function graph."""
        try:
            return self.fn(values)
        except Exception as exc:
            raise self._translate(exc) from exc

    # ------------------------------------------------------------------ running
    def pick(self, feed_values):
        """The plan that runs these feed values: this one (a session's `_SpecializedPlans` picks
        among plans made for what the feeds hold)."""
        return self

    def run(self, feed_values):
        """Run with already-ordered feed values (validated here); returns a tuple of fetches.
        The session's first run holds numpy's BLAS to one thread until it closes
        (`SessionState.hold_blas`)."""
        state = self._state
        if state is not None and not state.holds_blas:
            state.hold_blas()
        specs = self.feed_specs
        if specs:
            feeds = [spec.convert(v) for spec, v in zip(specs, feed_values)]
        else:
            feeds = ()
        if self.has_state_writes:
            variables = self._state.variables
            # use_locking variables: locked from the run's first variable access to its commit
            # (kernels/variable_store.py LockedWrites), so a wait in a queue op before it holds no lock
            locks = self._locks
            if locks is None or locks[0] is not variables:
                locks = self._locks = (variables, [variables.variable_lock(n)
                                                   for n in self.locked_variables])
            pending = variables.begin(locks[1])
            try:
                try:
                    out = self.fn(feeds)
                except BaseException as exc:
                    variables.abort()
                    raise self._translate(exc) from exc
                variables.commit()
            finally:
                if self.locked_variables:
                    pending.release()
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
        generated from the same steps and compiled on the first traced run; untraced runs never
        pay for it."""
        if self._traced is None:
            generated = self._emit(traced=True)
            self._traced = (generated, self.placement.wrap(generated.fn))
        return self._traced

    def run_traced(self, feed_values):
        """`run` through the traced variant: (fetches, StepStats of this run)."""
        from graphflow.engine.tracing import Recorder
        generated, fn = self._traced_variant()
        specs = self.feed_specs
        feeds = [spec.convert(v) for spec, v in zip(specs, feed_values)] if specs else ()
        recorder = Recorder()
        variables = self._state.variables
        if self.has_state_writes:
            variables.begin()
        try:
            if self._state is not None and not self._state.holds_blas:
                self._state.hold_blas()
            out = fn(feeds, recorder.records)
        except BaseException as exc:
            if self.has_state_writes:
                variables.abort()
            raise self._translate(exc, generated) from exc
        if self.has_state_writes:
            variables.commit()
        if self.any_copy:
            out = tuple(np.array(v, copy=True) if c and isinstance(v, np.ndarray) else v
                        for v, c in zip(out, self.copy_fetch))
        device_of = {self._origin.get(op, op): d for op, d in self.placement.device_of.items()}
        device_of.update(self.placement.device_of)
        kernel_of = {self._origin.get(op, op): name for op, name in self.implementation_of.items()}
        return out, recorder.step_stats([step.origin for step in self.step_list.steps], device_of,
                                        kernel_of)

    def _translate(self, exc, generated=None):
        """Turn an exception from the generated function into an OpError naming the user's op
        (an OpError a kernel raised itself, e.g. OutOfRangeError, gets its `op` filled in). The
        failing line gives the step; the step's slots give its input values from the frame."""
        if not isinstance(exc, Exception) or (isinstance(exc, OpError) and exc.op is not None):
            return exc
        generated = generated or self._generated
        tb = exc.__traceback__
        frame_locals, lineno = None, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == generated.filename:
                lineno = tb.tb_lineno
                frame_locals = tb.tb_frame.f_locals
            tb = tb.tb_next
        index = generated.step_at.get(lineno)
        if index is None:
            return exc
        step = self.step_list.steps[index]
        op = step.origin
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
        for t, slot in zip(op.inputs, step.args):
            value = self._slot_value(frame_locals, slot)
            inputs.append(f"{t.name}: shape={getattr(value, 'shape', '?')} "
                          f"dtype={getattr(value, 'dtype', '?')}")
        detail = "; ".join(inputs) if inputs else "no inputs"
        return InvalidArgumentError(
            None, op, f"{op.type} kernel failed for {describe_op(op)} on inputs [{detail}]: "
            f"{type(exc).__name__}: {exc}")

    def _slot_value(self, frame_locals, slot):
        """The value a slot held in the failed run's frame (a feed also from `feeds`)."""
        if slot in self.step_list.constants:
            return self.step_list.constants[slot]
        if frame_locals is None:
            return None
        if slot[0] == "f":
            try:
                return frame_locals["feeds"][slot[1]]
            except (KeyError, TypeError, IndexError):
                pass
        return frame_locals.get(slot_name(slot))
