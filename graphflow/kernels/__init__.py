"""Kernels: HOW each op runs on a device. One kernel table per device (`kernels.cpu`, `kernels.cuda`).

A kernel *builder* is registered under an op type. The session calls it once per plan step with a
`KernelNode` (attrs, dtypes, per-session state) and gets back a plain function of arrays:

    @cpu_kernel("Transpose")
    def transpose(node):
        perm = node.attrs["perm"]
        return lambda x: np.transpose(x, perm)

so the executor's hot loop only calls prebuilt closures. Kernels never see Graph objects.
"""

import contextlib
import threading

import numpy as np

from graphflow.framework.errors import UninitializedVariableError


class KernelNode:
    """What a kernel builder may know about the op it runs: a read-only description, no graph."""

    __slots__ = ("name", "type", "attrs", "in_dtypes", "out_dtypes", "out_shapes", "state",
                 "compile_function", "outputs_used", "runs_last", "in_shapes")

    def __init__(self, name, op_type, attrs, in_dtypes, out_dtypes, out_shapes, state,
                 compile_function=None, outputs_used=None, runs_last=False, in_shapes=None):
        self.name = name
        self.type = op_type
        self.attrs = attrs
        self.in_dtypes = in_dtypes      # numpy dtypes
        self.out_dtypes = out_dtypes    # numpy dtypes
        self.out_shapes = out_shapes    # tuples with None for unknown dims, or None
        self.state = state              # SessionState
        # compile_function(func_graph, extra_fetches=()) -> run(input_values) -> output values:
        # how control-flow kernels (If, While) run the sub-graphs they hold (given by the engine)
        self.compile_function = compile_function
        # which outputs the plan reads (None: all may be); a kernel may skip computing the others
        self.outputs_used = outputs_used
        # the op is the last of a run's plan: nothing after it can fail, so an optimizer update
        # may write its variables in place (`engine/scheduling.py` sink_last_update)
        self.runs_last = runs_last
        # static input shapes (tuples with None for unknown dims, or None for an unknown rank):
        # what an implementation's predicate may look at when the plan chooses one
        self.in_shapes = in_shapes

    @classmethod
    def describing(cls, op, state, compile_function=None, outputs_used=None, runs_last=False):
        """The node describing graph op `op` (its name, type, attrs, dtypes and static shapes)."""
        return cls(op.name, op.type, op.attrs, tuple(t.dtype.as_numpy_dtype for t in op.inputs),
                   tuple(t.dtype.as_numpy_dtype for t in op.outputs),
                   tuple(t.shape.dims for t in op.outputs), state, compile_function, outputs_used,
                   runs_last, tuple(t.shape.dims for t in op.inputs))


def check_update_shapes(node, var, grad, slots=()):
    """An optimizer update's gradient and slots must have the variable's shape (every device)."""
    if grad.shape != var.shape:
        raise ValueError(f"gradient of shape {grad.shape} does not match variable "
                         f"'{node.attrs['shared_name']}' of shape {var.shape}")
    for slot in slots:
        if slot.shape != var.shape:
            raise ValueError(f"slot of shape {slot.shape} does not match variable "
                             f"'{node.attrs['shared_name']}' of shape {var.shape}")


def kernel_accepts_out(kernel):
    """True when a built kernel can be called as `kernel(*inputs, out=buffer)` (a one-output
    ufunc, or a function flagged `accepts_out`): the memory plan and the executor then let it
    write into a dead input's buffer."""
    if isinstance(kernel, np.ufunc):
        return kernel.nout == 1
    return bool(getattr(kernel, "accepts_out", False))


class LockedWrites(dict):
    """The pending writes of a run that updates variables under `use_locking=True`, until its first
    variable access: the run takes their locks then (all at once, in the given sorted order: no
    deadlock), not when it starts, so a run that first waits in a queue op holds no lock meanwhile.
    From that access on the run's pending writes are a plain dict; each locked variable is still
    read and committed under its lock. `release` (at the run's end) frees the locks it took."""

    __slots__ = ("locks", "acquired")

    def __init__(self, locks):
        super().__init__()
        self.locks = locks
        self.acquired = False

    def acquire(self):
        for lock in self.locks:
            lock.acquire()
        self.acquired = True

    def release(self):
        if self.acquired:
            self.acquired = False
            for lock in reversed(self.locks):
                lock.release()

    def __bool__(self):  # the run's first variable access reaches the pending branch
        return True


class VariableStore:
    """Variable values of one session. Writes during a run go to a per-thread pending dict and are
    committed only when the run succeeds, so a failed run changes no variable.

    Stored arrays are never changed, with one exception: a run's last op, an optimizer update, may
    update its variables' arrays in place (`kernels/cpu/reference/training_kernels.py`) inside
    `updating_in_place`; meanwhile other threads' reads of those variables wait, so no run sees a
    half-updated array."""

    def __init__(self):
        self.values = {}
        self.lock = threading.Lock()
        self._local = threading.local()
        self._variable_locks = {}
        self._updating = set()  # variables being updated in place
        self._updated = threading.Condition(self.lock)

    def variable_lock(self, name):
        """The lock a `use_locking=True` run holds on variable `name` from its first read to its
        commit; runs take the locks of several variables in sorted name order (no deadlock)."""
        with self.lock:
            lock = self._variable_locks.get(name)
            if lock is None:
                lock = self._variable_locks[name] = threading.Lock()
            return lock

    def begin(self, locks=None):
        """Start a run's pending writes; `locks`: the variable locks it takes at its first
        variable access (returns the LockedWrites, whose `release` the run calls at its end)."""
        self._local.pending = pending = {} if not locks else LockedWrites(locks)
        return pending

    def read(self, name):
        pending = getattr(self._local, "pending", None)
        if pending:
            if type(pending) is LockedWrites:
                pending = self._lock_variables(pending)
            value = pending.get(name)
            if value is not None:
                return value
        if self._updating:
            with self._updated:
                self._updated.wait_for(lambda: name not in self._updating)
        value = self.values.get(name)
        if value is None:
            raise UninitializedVariableError(name)
        return value

    @contextlib.contextmanager
    def updating_in_place(self, names):
        """While the block runs, other threads' reads of the variables `names` wait (the caller
        checks, inside it, that nothing else refers to their arrays, then changes them)."""
        with self.lock:
            self._updating.update(names)
        try:
            yield
        finally:
            with self._updated:
                self._updating.difference_update(names)
                self._updated.notify_all()

    def settled_items(self):
        """[(name, stored value)], taken while no update writes a variable in place."""
        with self._updated:
            self._updated.wait_for(lambda: not self._updating)
            return list(self.values.items())

    def write(self, name, value):
        value = np.array(value, copy=True) if not isinstance(value, np.ndarray) else value
        value.flags.writeable = False  # stored arrays are never mutated in place
        return self._store(name, value)

    def _store(self, name, value):
        """Keep `value` under `name`: in this thread's pending writes during a run, else now."""
        pending = getattr(self._local, "pending", None)
        if pending is None:
            with self.lock:
                self.values[name] = value
        else:
            if type(pending) is LockedWrites:
                pending = self._lock_variables(pending)
            pending[name] = value
        return value

    def _lock_variables(self, locked):
        """The run's first variable access: take its locks; its writes go to a plain dict."""
        locked.acquire()
        self._local.pending = pending = {}
        return pending

    def is_initialized(self, name):
        return name in self.values

    def commit(self):
        pending = self._local.pending
        self._local.pending = None
        if pending:
            with self.lock:
                self.values.update(pending)

    def abort(self):
        self._local.pending = None


class SessionState:
    """Everything a session's kernels share across runs: variables, random generators and
    resources (objects such as input-pipeline iterators, closed with the session)."""

    def __init__(self):
        self.variables = VariableStore()
        self._rngs = {}
        self._rng_lock = threading.Lock()
        self.resources = {}
        self.resource_lock = threading.Lock()
        self.intra_op_threads = None  # threads one kernel call may use (None: the process default)
        self.counters = {}  # per-op run counts kept across plans (tf.Print's first_n)
        self.allow_soft_placement = False  # ConfigProto: an unavailable GPU falls back to the CPU

    def rng(self, key, seed):
        """A numpy Generator for one random op, created once per session from its seed."""
        with self._rng_lock:
            gen = self._rngs.get(key)
            if gen is None:
                gen = np.random.default_rng(seed)
                self._rngs[key] = gen
            return gen

    def resource(self, key, create):
        """The session's resource under `key`, made by `create()` on first use."""
        with self.resource_lock:
            found = self.resources.get(key)
            if found is None:
                found = self.resources[key] = create()
            return found

    def clear(self):
        self.variables = VariableStore()
        self._rngs.clear()
        with self.resource_lock:
            resources, self.resources = list(self.resources.values()), {}
        for resource in resources:
            close = getattr(resource, "close", None)
            if close is not None:
                close()
        self.counters.clear()
