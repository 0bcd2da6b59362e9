"""Variable storage of a session: `VariableStore` (host arrays; a run's writes pending until it
succeeds, so a failed run changes no variable; the locks of `use_locking=True` runs, `LockedWrites`)
and `DeviceVariableStore`, the same store whose values may also be device arrays (variables of
GPU-placed ops, kept on the device between runs). `SessionState` (`kernels/__init__.py`) holds one;
the session gives it a `DeviceVariableStore`, whose backends placement registers."""

import contextlib
import threading

import numpy as np

from graphflow.framework.errors import UninitializedVariableError


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
    committed only when the run succeeds, so a failed run changes no variable. A commit stores all
    of a run's writes under `lock` at once, so `settled_items` (the snapshot `Session.variable_values`
    and `Saver.save` read) holds whole runs' effects, never part of one.

    Stored arrays are never changed, with one exception: a run's last op, an optimizer update, may
    update its variables' arrays in place (`kernels/cpu/numba/update_kernels.py`) inside
    `updating_in_place`; from then until the run commits (or aborts), other threads' reads of those
    variables and snapshots wait, so no run sees a half-updated array and no snapshot sees those
    variables a step ahead of the run's other writes. The scatter ops (sparse updates) change the
    rows they name in place the same way at any point of a run, keeping the old rows to put back
    (`on_abort`) should a later op fail."""

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
        self._local.undo = None
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
        local = self._local
        try:
            yield
        except BaseException:
            self._release(names)
            raise
        if getattr(local, "pending", None) is None:
            self._release(names)  # not inside a run: nothing else to commit
        else:  # the run's commit (or abort) releases them, with its other writes
            held = getattr(local, "held", None)
            local.held = list(names) if held is None else held + list(names)

    def on_abort(self, undo):
        """Call `undo()` if the current run fails (after its other pending writes are dropped,
        before the variables it holds are released): a kernel that changed rows of a stored
        array in place (`reference/scatter_kernels.py`) puts them back. Outside a run: nothing
        to undo."""
        local = self._local
        if getattr(local, "pending", None) is None:
            return
        undos = getattr(local, "undo", None)
        if undos is None:
            local.undo = [undo]
        else:
            undos.append(undo)

    def _release(self, names, pending=None):
        """Stop holding `names` (variables updated in place), storing `pending` with them."""
        with self._updated:
            if pending:
                self.values.update(pending)
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

    def _prepare(self, value):
        value = np.array(value, copy=True) if not isinstance(value, np.ndarray) else value
        value.flags.writeable = False  # stored arrays are never mutated in place
        return value

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

    def write_many(self, values):
        """Store {name: array} outside a run, all at once (a snapshot sees all or none)."""
        prepared = {name: self._prepare(value) for name, value in values.items()}
        with self.lock:
            self.values.update(prepared)

    def commit(self):
        """Store the run's pending writes, all under one acquire of `lock` (the commit point)."""
        local = self._local
        pending = local.pending
        local.pending = None
        local.undo = None
        held = getattr(local, "held", None)
        if held is not None:
            local.held = None
            self._release(held, pending)
        elif pending:
            with self.lock:
                self.values.update(pending)

    def abort(self):
        local = self._local
        local.pending = None
        undos = getattr(local, "undo", None)
        if undos is not None:
            local.undo = None
            for undo in reversed(undos):
                undo()
        held = getattr(local, "held", None)
        if held is not None:
            local.held = None
            self._release(held)


class DeviceVariableStore(VariableStore):
    """A variable store whose values may be device arrays (variables of GPU-placed ops).

    `read`/`write` are the host view used by CPU kernels: `read` copies a device value to the host.
    GPU kernels use `read_device(name, backend)` (uploading a host value once and keeping the device
    copy as the stored value when nothing else changed it) and `write` with a device array."""

    def __init__(self):
        super().__init__()
        self.backends = []

    def _backend_of(self, value):
        for b in self.backends:
            if b.is_device_array(value):
                return b
        return None

    def read(self, name):
        value = VariableStore.read(self, name)
        if isinstance(value, np.ndarray):
            return value
        backend = self._backend_of(value)
        if backend is None:
            return value
        with backend.active():  # also called outside plan runs (saving, Variable.eval on CPU)
            host = backend.to_host(value)
        host.flags.writeable = False
        return host

    def read_device(self, name, backend):
        value = VariableStore.read(self, name)
        if backend.is_device_array(value):
            return value
        if not isinstance(value, np.ndarray):
            value = self.read(name)  # on another device: through the host
        with backend.active():
            device_value = backend.to_device(value)
        with self.lock:  # keep the value on the device from now on (same value, new home)
            if self.values.get(name) is value:
                self.values[name] = device_value
        return device_value

    def write(self, name, value):
        if isinstance(value, np.ndarray) or self._backend_of(value) is None:
            return VariableStore.write(self, name, value)
        return self._store(name, value)  # a device array, kept as it is

    def _prepare(self, value):
        if isinstance(value, np.ndarray) or self._backend_of(value) is None:
            return VariableStore._prepare(self, value)
        return value  # a device array, kept as it is

    def register(self, backend):
        if backend not in self.backends:
            self.backends.append(backend)

    def host_values(self):
        """{name: host array} of every stored value (device values copied back)."""
        out = {}
        for name, value in self.settled_items():
            if not isinstance(value, np.ndarray):
                backend = self._backend_of(value)
                if backend is not None:
                    with backend.active():
                        value = backend.to_host(value)
                    value.flags.writeable = False
            out[name] = value
        return out
