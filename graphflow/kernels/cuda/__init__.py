"""CUDA kernel table: PyCUDA kernel builders keyed by op type (same contract as `kernels.cpu`).

A builder receives a `KernelNode` and returns a function of device arrays (`pycuda.gpuarray.GPUArray`)
returning device arrays. The table itself is plain Python and importable everywhere: placement asks it
which ops can run on the GPU without touching a device. PyCUDA is imported lazily, the first time a
kernel is built or a device array is made (`runtime()`); without PyCUDA, a driver or a device that
raises `NoCudaDeviceError("no CUDA device available: <reason>")`.

Each entry may restrict the dtypes it handles (`dtypes=`, checked against every input and output) or
give a `supports(in_dtypes, out_dtypes, attrs)` check returning None or the reason it cannot run;
placement then keeps that op on the CPU and lists the reason in the plan's placement report.

Layout: each `.cu`/`.cuh` source sits next to the launcher module of the same name that calls it
(`reduce.cu` + `reduce.py`, `pool.cu` + `pool.py`, `optim.cu` + `optim.py`, `elementwise.cuh` +
`elementwise.py`, ...); `launch.py` holds what launchers share (geometry, `SUFFIX`: the one map from
numpy dtypes to kernel-name suffixes, and the fill kernels the runtime uses); `sources.py` loads
the sources and caches compiled modules, `device.py` owns the PyCUDA context, module cache and
device memory pool, `codegen.py` turns elementwise expression programs (single ops and fused
chains) into kernels; `state_kernels.py` updates variables with the elementwise kernels.
"""

import threading

import numpy as np

from graphflow.framework.errors import InvalidArgumentError

# numpy dtype -> CUDA C type of the kernels; float16 has no kernels (placement keeps it on the CPU)
CTYPES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int8): "signed char",
    np.dtype(np.int16): "short", np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
    np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "bool",
}
ALL_DTYPES = frozenset(CTYPES)
FLOAT_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


class NoCudaDeviceError(InvalidArgumentError):
    """No usable CUDA device in this process (no PyCUDA, no driver, or no GPU)."""

    def __init__(self, reason):
        self.reason = reason
        super().__init__(None, None, f"no CUDA device available: {reason}")


class KernelSpec:
    """One table entry: the builder plus what it supports."""

    __slots__ = ("op_type", "build", "dtypes", "check", "host_inputs", "host_outputs")

    def __init__(self, op_type, build, dtypes, check, host_inputs=(), host_outputs=()):
        self.op_type = op_type
        self.build = build
        self.dtypes = dtypes
        self.check = check
        self.host_inputs = frozenset(host_inputs)    # input positions read as host (numpy) values
        self.host_outputs = frozenset(host_outputs)  # output positions produced as host values

    def unsupported(self, in_dtypes, out_dtypes, attrs):
        """None if this kernel runs an op with these dtypes/attrs, else the reason it cannot."""
        if self.dtypes is not None:  # host inputs (shape vectors, axes) are numpy values of any dtype
            device_inputs = tuple(d for i, d in enumerate(in_dtypes) if i not in self.host_inputs)
            for dt in device_inputs + tuple(out_dtypes):
                if np.dtype(dt) not in self.dtypes:
                    return f"no CUDA kernel for dtype {np.dtype(dt).name}"
        if self.check is not None:
            return self.check(tuple(np.dtype(d) for d in in_dtypes),
                              tuple(np.dtype(d) for d in out_dtypes), attrs)
        return None


KERNELS = {}


def cuda_kernel(*op_types, dtypes=ALL_DTYPES, supports=None, host_inputs=(), host_outputs=()):
    """Register a builder `build(node) -> fn(*arrays)` for one or more op types.

    dtypes: the dtypes every input and output must have (None: any); supports: an extra check
    `(in_dtypes, out_dtypes, attrs) -> None | reason`; host_inputs / host_outputs: positions of
    inputs the kernel reads as numpy arrays (shape vectors, sizes) and outputs it returns as numpy
    arrays (shape queries); every other input and output is a device array."""
    def register(build):
        for t in op_types:
            if t in KERNELS:
                raise ValueError(f"CUDA kernel for '{t}' registered twice")
            KERNELS[t] = KernelSpec(t, build, frozenset(np.dtype(d) for d in dtypes)
                                    if dtypes is not None else None, supports,
                                    host_inputs, host_outputs)
        return build
    return register


class NoKernelError(LookupError):
    pass


def lookup(op_type):
    """The builder for `op_type`; a clear error naming the op type when there is none."""
    try:
        return KERNELS[op_type].build
    except KeyError:
        raise NoKernelError(f"No CUDA kernel is registered for op type '{op_type}'") from None


def spec(op_type):
    return KERNELS.get(op_type)


def registered_types():
    return sorted(KERNELS)


# ------------------------------------------------------------------ the device runtime, lazily
_runtime = None
_runtime_error = None
_runtime_lock = threading.Lock()


def runtime():
    """The process-wide `runtime.CudaRuntime` (PyCUDA context, module cache, memory pool).

    Raises NoCudaDeviceError with the reason when PyCUDA, the driver or a device is missing; the
    failure is remembered so later calls fail fast with the same reason."""
    global _runtime, _runtime_error
    if _runtime is not None:
        return _runtime
    with _runtime_lock:
        if _runtime is None:
            if _runtime_error is not None:
                raise NoCudaDeviceError(_runtime_error)
            try:
                from graphflow.kernels.cuda import device as device_module
                _runtime = device_module.CudaRuntime()
            except NoCudaDeviceError as exc:
                _runtime_error = exc.reason
                raise
            except ImportError as exc:
                _runtime_error = f"PyCUDA is not importable ({exc}); install graphflow[cuda]"
                raise NoCudaDeviceError(_runtime_error) from None
    return _runtime


def availability():
    """(True, device description) or (False, the reason no CUDA device can be used)."""
    try:
        rt = runtime()
    except NoCudaDeviceError as exc:
        return False, exc.reason
    return True, rt.description


def _load_all():
    """Import every launcher module: each one fills KERNELS for its op family (no PyCUDA needed)."""
    import importlib
    import pkgutil
    skip = {"device", "sources", "codegen", "launch"}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name not in skip:
            importlib.import_module(f"{__name__}.{info.name}")


_load_all()
