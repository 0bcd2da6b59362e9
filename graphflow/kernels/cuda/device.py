"""The PyCUDA runtime of one process: device context, module cache, device memory pool, copies.

Imported only when a GPU is actually used (`graphflow.kernels.cuda.runtime()`); importing it without
PyCUDA raises ImportError, which the package turns into NoCudaDeviceError with the reason.

- Context: the device's *primary* context, pushed around each plan run (`wrap_run`) and around kernel
  building (`active()`), so any thread may run a session.
- Modules: `sources.ModuleCache` over PyCUDA `SourceModule` with a persistent `cache_dir`: each source
  is compiled once per process, and once per machine while the cache directory lives.
- Memory: every device array comes from one `pycuda.tools.DeviceMemoryPool`; a freed array returns
  its block to the pool, so steady-state runs make no cudaMalloc/cudaFree calls.
- Kernels run on the default stream in launch order; `to_host` synchronizes. A kernel fault
  therefore surfaces at the next copy; with GRAPHFLOW_CUDA_SYNC=1 every launch synchronizes, so
  the error names the op whose kernel failed (for debugging: it costs a round trip per launch).
"""

import contextlib
import os
import threading

import numpy as np
import pycuda.driver as drv

from graphflow.kernels.cuda import NoCudaDeviceError, launch, sources

_BLOCK = 256


class CudaRuntime:
    def __init__(self, device_index=None):
        if device_index is None:
            device_index = int(os.environ.get("GRAPHFLOW_CUDA_DEVICE", "0"))
        try:
            drv.init()
            count = drv.Device.count()
        except drv.Error as exc:
            raise NoCudaDeviceError(f"the CUDA driver could not be initialised ({exc})") from None
        if count == 0:
            raise NoCudaDeviceError("the CUDA driver reports no devices")
        if not 0 <= device_index < count:
            raise NoCudaDeviceError(f"device {device_index} requested, the driver reports {count}")
        from pycuda import compiler, gpuarray, tools
        self._gpuarray = gpuarray
        self.array_type = gpuarray.GPUArray
        self.device_index = device_index
        self.device = drv.Device(device_index)
        self.context = self.device.retain_primary_context()
        self.compute_capability = self.device.compute_capability()
        self.sm_count = self.device.get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT)
        self.max_shared = self.device.get_attribute(
            drv.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK)
        self.description = (f"/gpu:{device_index}: {self.device.name()} "
                            f"(sm_{self.compute_capability[0]}{self.compute_capability[1]}, "
                            f"{self.device.total_memory() / 2**30:.1f} GiB)")
        self.cache_dir = sources.default_cache_dir()
        os.makedirs(self.cache_dir, exist_ok=True)
        self._source_module = compiler.SourceModule
        self.modules = sources.ModuleCache(self._compile)
        self._functions = {}
        self._named = {}
        self._functions_lock = threading.Lock()
        self.sync_launches = os.environ.get("GRAPHFLOW_CUDA_SYNC", "") not in ("", "0")
        with self.active():
            self.pool = tools.DeviceMemoryPool()
        self._allocate = self.pool.allocate

    # ---- context --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def active(self):
        """Make this device's context current in the calling thread."""
        self.context.push()
        try:
            yield self
        finally:
            drv.Context.pop()

    def wrap_run(self, fn):
        """`fn(feeds, ...)` with the context current for its duration (plan functions; a traced
        run's function also takes the trace's record list)."""
        ctx = self.context
        pop = drv.Context.pop

        def run_on_device(*args):
            ctx.push()
            try:
                return fn(*args)
            finally:
                pop()
        return run_on_device

    def synchronize(self):
        with self.active():
            drv.Context.synchronize()

    # ---- modules -------------------------------------------------------------------------------
    def _compile(self, text):
        return self._source_module(text, no_extern_c=True, cache_dir=self.cache_dir,
                                   options=["-O3"])

    def function(self, text, name, arg_format):
        """A prepared kernel `name` of source `text` (compiled once per process)."""
        key = (sources.digest(text), name)
        fn = self._functions.get(key)
        if fn is None:
            with self._functions_lock:
                fn = self._functions.get(key)
                if fn is None:
                    fn = self.modules.function(text, name)
                    fn.prepare(arg_format)
                    if self.sync_launches:
                        fn = _SyncedFunction(fn, name)
                    self._functions[key] = fn
        return fn

    def kernel(self, source_name, name, arg_format):
        """A prepared kernel `name` from the package source file `source_name` (a dict lookup
        once loaded: launchers call this on every run)."""
        key = (source_name, name)
        fn = self._named.get(key)
        if fn is None:
            fn = self.function(sources.load(source_name), name, arg_format)
            self._named[key] = fn
        return fn

    # ---- memory ------------------------------------------------------------------------------
    def is_device_array(self, value):
        return isinstance(value, self.array_type)

    def empty(self, shape, dtype):
        return self.array_type(tuple(int(d) for d in shape), np.dtype(dtype),
                               allocator=self._allocate)

    def to_device(self, value):
        host = np.asarray(value, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        out = self.array_type(host.shape, host.dtype, allocator=self._allocate)
        if host.size:
            drv.memcpy_htod(out.gpudata, host)
        return out

    def to_host(self, array):
        out = np.empty(array.shape, array.dtype)
        if array.size:
            drv.memcpy_dtoh(out, array.gpudata)
        return out

    def copy(self, array):
        out = self.array_type(array.shape, array.dtype, allocator=self._allocate)
        if array.size:
            drv.memcpy_dtod(out.gpudata, array.gpudata, array.nbytes)
        return out

    def fill(self, array, value):
        """Set every element of `array` to `value` (one kernel, any dtype)."""
        return launch.fill(self, array, value)

    def reshape(self, array, shape):
        """A view of contiguous `array` with another shape (no copy)."""
        shape = tuple(int(d) for d in shape)
        if shape == array.shape:
            return array
        return self.array_type(shape, array.dtype, gpudata=array.gpudata, base=array)

    def pool_stats(self):
        return {"active_blocks": self.pool.active_blocks, "held_blocks": self.pool.held_blocks,
                "managed_bytes": getattr(self.pool, "managed_bytes", None),
                "active_bytes": getattr(self.pool, "active_bytes", None)}

    # ---- launch geometry ------------------------------------------------------------------------
    def grid_for(self, n, block=_BLOCK, per_thread=1):
        """A 1-D grid covering `n` items with grid-stride loops (at most 32 blocks per SM)."""
        blocks = (int(n) + block * per_thread - 1) // (block * per_thread)
        return (max(1, min(blocks, self.sm_count * 32)), 1, 1)




class _SyncedFunction:
    """A prepared kernel that waits for its own completion (GRAPHFLOW_CUDA_SYNC=1)."""

    def __init__(self, fn, name):
        self._fn = fn
        self.name = name

    def prepared_call(self, grid, block, *args, **kwargs):
        self._fn.prepared_call(grid, block, *args, **kwargs)
        try:
            drv.Context.synchronize()
        except drv.Error as exc:
            raise RuntimeError(f"CUDA kernel {self.name} failed: {exc}") from exc
