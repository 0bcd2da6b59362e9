"""Device placement: which device runs each step of a plan, and the copies between devices.

Every op of a plan goes to `/cpu:0` or to one GPU (`/gpu:N`). An op is *requested* on the GPU by
`with tf.device("/gpu:0")` (recorded as `op.device`) or by the session's default device
(`Session(device="/gpu:0")`); it then runs there when the GPU kernel table has a kernel for its type
that supports its dtypes and attrs. Otherwise it falls back to the CPU and the plan's placement
report lists it with the reason. Two deliberate exceptions keep work on the host:
  - `Const`: constants live on the host; a GPU consumer gets a device copy uploaded once, when the
    plan is compiled, not on every run;
  - integer shape arithmetic: an op whose inputs are all on the host and whose outputs are all
    int32/int64 (shape vectors, step counters) stays on the CPU, so a shape computed from
    `tf.shape(x)` never makes a round trip through the GPU.

Each value then has a location, host or device (a GPU kernel may declare inputs it reads on the host,
like a Reshape's target shape, and outputs it produces there, like Shape). Where a consumer needs a
value somewhere else, the plan gets a copy step (TF's Send/Recv pair, collapsed into one call):
one copy per (value, destination), made right before its first consumer and dropped with the value.
Fetched device values come back to the host as numpy arrays.

GPU-placed variable ops keep their values on the device between runs: the session's variable store
(`kernels/variable_store.py` `DeviceVariableStore`) holds device arrays for them and converts on
demand when the host reads.

The GPU backend is `graphflow.kernels.cuda` (PyCUDA). `use_backend(fake)` substitutes another backend
with the same small interface; tests use a numpy-backed fake to exercise placement and copies on
machines without a GPU.
"""

import contextlib
import logging
import threading
from typing import NamedTuple

import numpy as np

from graphflow.framework.graph import canonical_device, describe_op
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cuda import NoCudaDeviceError
from graphflow.kernels.registry import Implementation
from graphflow.kernels.variable_store import DeviceVariableStore
from graphflow.ops import registry

CPU = "/cpu:0"
_INT_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


# ------------------------------------------------------------------------------------- backends
class CudaBackend:
    """The PyCUDA backend: the `graphflow.kernels.cuda` table plus the device runtime.

    The interface a backend offers placement (a fake one in tests offers the same):
      device, table (spec(op_type) -> KernelSpec | None, lookup(op_type) -> builder),
      is_device_array(x), to_device(np_array), to_host(device_array), active() (a context
      manager around kernel building), wrap_run(fn) (around each plan run)."""

    def __init__(self, device, runtime, table):
        self.device = device
        self.runtime = runtime
        self.table = table
        self._array_type = runtime.array_type
        self.to_device = runtime.to_device
        self.to_host = runtime.to_host
        self.active = runtime.active
        self.wrap_run = runtime.wrap_run

    def is_device_array(self, value):
        return isinstance(value, self._array_type)


_overrides = {}
_cuda_backends = {}
_lock = threading.Lock()


@contextlib.contextmanager
def use_backend(backend):
    """Use `backend` for its device (e.g. '/gpu:0') instead of the CUDA backend, inside the block."""
    device = canonical_device(backend.device)
    with _lock:
        previous = _overrides.get(device)
        _overrides[device] = backend
    try:
        yield backend
    finally:
        with _lock:
            if previous is None:
                _overrides.pop(device, None)
            else:
                _overrides[device] = previous


def is_gpu(device):
    return bool(device) and device.startswith("/gpu:")


def gpu_backend(device="/gpu:0"):
    """The backend running `device`; NoCudaDeviceError ('no CUDA device available: ...') when the
    CUDA backend is needed and cannot run here."""
    device = canonical_device(device)
    backend = _overrides.get(device)
    if backend is not None:
        return backend
    backend = _cuda_backends.get(device)
    if backend is not None:
        return backend
    from graphflow.kernels import cuda
    rt = cuda.runtime()
    index = int(device.split(":")[1])
    if index != rt.device_index:
        raise cuda.NoCudaDeviceError(
            f"{device} was requested but this process runs on /gpu:{rt.device_index} "
            "(graphflow uses one GPU per process; choose it with GRAPHFLOW_CUDA_DEVICE)")
    with _lock:
        backend = _cuda_backends.setdefault(device, CudaBackend(device, rt, cuda))
    return backend


def list_devices():
    """'/cpu:0' and, when a CUDA device can be used, the GPU this process runs on."""
    from graphflow.kernels import cuda
    ok, _ = cuda.availability()
    return [CPU] + ([f"/gpu:{cuda.runtime().device_index}"] if ok else [])


def check_device(device):
    """Validate a session's default device early: canonical form, and a usable GPU if it is one."""
    device = canonical_device(device) if device else ""
    if is_gpu(device):
        gpu_backend(device)
    return device


# ---------------------------------------------------------------------------------- placement
class Copy(NamedTuple):
    """A value moved between the host and a device before `consumer` runs (None: a fetch, or a
    constant uploaded once when the plan is built, see `Placement.uploads`)."""

    tensor: object
    source: str
    target: str
    consumer: object


class Placement:
    """The devices of one plan's ops, the location of each value and the copies between them.

    Built by `place`: plain data the plan's later stages read. The executor asks it for each
    step's kernel implementation (`implementation`), the copies each step's inputs need
    (`input_copies`), the copy a fetched device value comes back through (`fetch_copy`), where a
    value lives (`on_host`) and a wrapper for the plan function (`wrap`). It writes no code: the
    emitter turns copies into calls.

    `host_int_arithmetic` (default True) keeps integer ops of host values on the CPU; with False
    every op with a kernel goes to the requested GPU (tests use it to run each kernel there)."""

    host_int_arithmetic = True

    def __init__(self, ops, fed, default_device, state, cpu_table=None):
        self.cpu_table = cpu_table or cpu_kernels
        self.default_device = default_device or ""
        self.device_of = {}
        self.fallbacks = []      # (op, requested device, reason)
        self.kept_on_host = []   # (op, reason)
        self.copies = []         # Copy records, in the order the steps need them
        self.uploads = {}        # Copy of a constant to the device -> its device value (made once)
        self.backend = None
        self._loc = {}
        self._copy_of = {}       # (tensor, destination) -> Copy
        self._specs = {}
        self._assign(ops, fed, state)
        _warn_fallbacks(self.fallbacks, state)

    # ---- decisions ----------------------------------------------------------------------------
    def _requested(self, op):
        return op.device or self.default_device

    def _assign(self, ops, fed, state):
        for t in fed:
            self._loc[t] = "host"
        for op in ops:
            requested = self._requested(op)
            device = CPU
            if is_gpu(requested) and registry.lookup(op.type).runs_kernel:
                device = self._gpu_choice(op, requested, state)
            self.device_of[op] = device
            if is_gpu(device):
                spec = self._specs[op]
                host_out = spec.host_outputs
                for i, t in enumerate(op.outputs):
                    if t not in fed:
                        self._loc[t] = "host" if i in host_out else device
            else:
                for t in op.outputs:
                    self._loc[t] = "host"

    def _gpu_choice(self, op, requested, state):
        if registry.lookup(op.type).constant:  # host value; GPU consumers get an uploaded copy
            return CPU
        soft = getattr(state, "allow_soft_placement", False)
        if self.backend is None:
            try:
                backend = gpu_backend(requested)
            except NoCudaDeviceError as exc:
                if soft:  # TF1's allow_soft_placement: run it on the CPU instead
                    self.fallbacks.append((op, requested, f"{exc.reason} (soft placement)"))
                    return CPU
                raise NoCudaDeviceError(f"{exc.reason} (op {describe_op(op)} is placed on "
                                        f"{requested})") from None
            self.backend = backend
            variables = getattr(state, "variables", None)
            if isinstance(variables, DeviceVariableStore):
                variables.register(self.backend)
        elif canonical_device(requested) != self.backend.device:
            if soft:
                self.fallbacks.append((op, requested, f"this plan runs on {self.backend.device}: "
                                                      "one GPU per plan (soft placement)"))
                return CPU
            raise ValueError(f"op {describe_op(op)} is placed on {requested} but this plan already "
                             f"runs on {self.backend.device}: one GPU per plan")
        spec = self.backend.table.spec(op.type)
        if spec is None:
            self.fallbacks.append((op, requested, f"no CUDA kernel for op type '{op.type}'"))
            return CPU
        reason = spec.unsupported([t.dtype.as_numpy_dtype for t in op.inputs],
                                  [t.dtype.as_numpy_dtype for t in op.outputs], op.attrs)
        if reason is not None:
            self.fallbacks.append((op, requested, reason))
            return CPU
        if (self.host_int_arithmetic and op.outputs
                and all(np.dtype(t.dtype.as_numpy_dtype) in _INT_DTYPES for t in op.outputs)
                and all(self._loc.get(t) == "host" for t in op.inputs)):
            self.kept_on_host.append((op, "integer result of host values (shape arithmetic)"))
            return CPU
        if registry.lookup(op.type).stateful and state is not None and \
                not isinstance(getattr(state, "variables", None), DeviceVariableStore):
            self.fallbacks.append((op, requested, "the session's variable store holds host "
                                                  "values only"))
            return CPU
        self._specs[op] = spec
        return requested

    @property
    def uses_device(self):
        return self.backend is not None and any(is_gpu(d) for d in self.device_of.values())

    # ---- what the plan's steps read -----------------------------------------------------------
    def implementation(self, op, node):
        """The implementation (`kernels.registry.Implementation`) that runs `op`, described by the
        KernelNode `node`, on its device: chosen among the CPU table's when the plan is built; on a
        GPU the CUDA table's one kernel, built with the device active (a LookupError names the op
        type)."""
        device = self.device_of[op]
        if not is_gpu(device):
            return self.cpu_table.choose(node)
        build = self.backend.table.lookup(op.type)
        active = self.backend.active

        def build_on_device(node):
            with active():
                return build(node)
        return Implementation(op.type, "cuda", build_on_device, 0, None, ())

    def _needed(self, op, index):
        device = self.device_of[op]
        if not is_gpu(device):
            return "host"
        return "host" if index in self._specs[op].host_inputs else device

    def input_copies(self, op):
        """For each input of `op` (a step, in schedule order): None when the step reads the value
        where it lives, else the `Copy` that brings it there (one per (value, destination), made
        before its first consumer and shared by the later ones)."""
        if self.backend is None:  # everything on the host
            return [None] * len(op.inputs)
        out = []
        for i, t in enumerate(op.inputs):
            want = self._needed(op, i)
            have = self._loc.get(t, "host")
            out.append(None if want == have else self._copy(t, have, want, op))
        return out

    def _copy(self, t, have, want, consumer):
        key = (t, want)
        copy = self._copy_of.get(key)
        if copy is not None:
            return copy
        if want != "host" and registry.lookup(t.op.type).constant:
            copy = Copy(t, have, want, None)
            with self.backend.active():  # uploaded once, now: the plan holds the device value
                self.uploads[copy] = self.backend.to_device(t.op.attrs["value"])
        else:
            copy = Copy(t, have, want, consumer)
        self._copy_of[key] = copy
        self.copies.append(copy)
        return copy

    def on_host(self, tensor):
        return self._loc.get(tensor, "host") == "host"

    def fetch_copy(self, tensor):
        """None for a fetched value on the host, else the `Copy` to the host it comes back
        through: the one a step already made, or a new one (consumer None) at the return."""
        if self.on_host(tensor):
            return None
        copy = self._copy_of.get((tensor, "host"))
        if copy is None:
            copy = Copy(tensor, self._loc[tensor], "host", None)
            self.copies.append(copy)
        return copy

    def wrap(self, fn):
        return self.backend.wrap_run(fn) if self.uses_device else fn

    # ---- report -----------------------------------------------------------------------------
    def report(self):
        """A text report: device counts, fallbacks (with reasons), host-kept ops and copies."""
        counts = {}
        for op, device in self.device_of.items():
            if not registry.lookup(op.type).runs_kernel:
                continue
            counts[device] = counts.get(device, 0) + 1
        lines = ["placement: " + (", ".join(f"{n} ops on {d}" for d, n in sorted(counts.items()))
                                  or "no ops")]
        if self.fallbacks:
            lines.append(f"fallback to {CPU} ({len(self.fallbacks)} ops requested on a GPU):")
            lines += [f"  {op.name} ({op.type}): {reason}" for op, _, reason in self.fallbacks]
        if self.kept_on_host:
            lines.append(f"kept on the host ({len(self.kept_on_host)} ops):")
            lines += [f"  {op.name} ({op.type}): {reason}" for op, reason in self.kept_on_host]
        if self.copies:
            lines.append(f"copies ({len(self.copies)}):")
            for t, have, want, consumer in self.copies:
                when = "once at plan build" if (t, have, want, consumer) in self.uploads \
                    else "every run"
                to = f" for {consumer.name}" if consumer is not None else \
                    (" (fetch)" if want == "host" else "")
                lines.append(f"  {t.name}: {have} -> {want}{to}, {when}")
        return "\n".join(lines)


_log = logging.getLogger("graphflow")
_MAX_NAMED = 10


def _warn_fallbacks(fallbacks, state):
    """One warning per session (its state) naming the ops asked for a GPU that run on the CPU
    (soft placement, or no GPU kernel for them): TF1 would place them or fail, graphflow runs them
    here, and says so once instead of silently."""
    if not fallbacks or state is None or getattr(state, "warned_gpu_fallback", False):
        return
    state.warned_gpu_fallback = True
    named = ", ".join(f"{op.name} ({op.type}: {reason})" for op, _, reason in fallbacks[:_MAX_NAMED])
    more = f" and {len(fallbacks) - _MAX_NAMED} more" if len(fallbacks) > _MAX_NAMED else ""
    _log.warning("%d op(s) placed on a GPU run on %s instead: %s%s (the plan's placement report "
                 "lists them all; this warning is given once per session)", len(fallbacks), CPU,
                 named, more)


def place(ops, fed, default_device, state, cpu_table=None):
    """Placement of `ops` (in schedule order); `fed` are the fed tensors (host values)."""
    return Placement(ops, fed, default_device, state, cpu_table)
