"""Session configuration: TF1's `tf.ConfigProto` (`Session(config=...)`) and the intra-op thread count.

Intra-op parallelism is how many threads one kernel call may use (today: the fused elementwise CPU
kernel, on large outputs). A session's count is fixed when it is created:

  1. `ConfigProto(intra_op_parallelism_threads=N)` passed as `Session(config=...)`, when N > 0;
  2. otherwise the process default `default_intra_op_threads()`: the value given to
     `set_intra_op_parallelism_threads(N)` (also `graphflow.framework.config.threading.…`, as in
     TF) when N > 0, else the environment variable GRAPHFLOW_INTRA_OP_THREADS when set to N > 0,
     else min(cores this process may run on, 4).

0 means "the default" everywhere, as in TF; `set_intra_op_parallelism_threads(0)` resets the process
default. 1 runs every kernel on the calling thread only. A kernel uses its session's count as
given, whatever the load of the machine: graphflow does not watch other processes, pin threads or
change any thread's CPU affinity (cores this process may run on: `os.sched_getaffinity(0)`, read
when the default is computed; a user who pins the process pins graphflow's threads with it).

Process-wide settings are changed only when asked: `keep_freed_memory()` raises glibc's malloc
thresholds (a whole-process change, never made by graphflow itself); numpy's BLAS is held to one
thread from a session's first run until it closes (`graphflow/kernels/cpu/threads/blas.py`).

`ConfigProto` accepts the fields TF1 scripts commonly set, so they run unchanged.
`intra_op_parallelism_threads` sets the thread count; `allow_soft_placement=True` runs ops placed on
a GPU that this process cannot use (none, or another index: `/gpu:1` in multi-tower code) on the CPU,
as TF1 does, where without it such a run is an error. Ops without a kernel for the requested device
always fall back to the CPU. The others are recorded as given: graphflow runs a plan's steps one
after another on the calling thread (`inter_op_parallelism_threads`), and does not log placement or
reserve GPU memory up front (`log_device_placement`, `gpu_options`).
"""

import ctypes
import os
import platform
import sys
import types

ENV_INTRA_OP_THREADS = "GRAPHFLOW_INTRA_OP_THREADS"
# The default never uses more threads than this: the fused kernels are mostly limited by memory
# bandwidth beyond a few cores.
MAX_DEFAULT_INTRA_OP_THREADS = 4

_intra_op_threads = 0  # set_intra_op_parallelism_threads; 0: not set
_inter_op_threads = 0  # set_inter_op_parallelism_threads (recorded: steps run one after another)


def _thread_count(value, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0 (0: the default), got {value}")
    return value


def available_cores():
    """Cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_intra_op_threads():
    """The process default intra-op thread count (see the module docstring), read now."""
    if _intra_op_threads:
        return _intra_op_threads
    env = os.environ.get(ENV_INTRA_OP_THREADS, "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"{ENV_INTRA_OP_THREADS}={env!r}: expected a number of threads "
                             "(0: the default)") from None
        if _thread_count(n, ENV_INTRA_OP_THREADS):
            return n
    return max(1, min(available_cores(), MAX_DEFAULT_INTRA_OP_THREADS))


def set_intra_op_parallelism_threads(num_threads):
    """Set the process default intra-op thread count for sessions created from now on (0 resets it
    to GRAPHFLOW_INTRA_OP_THREADS or the core count)."""
    global _intra_op_threads
    _intra_op_threads = _thread_count(num_threads, "num_threads")


def get_intra_op_parallelism_threads():
    """The value set by `set_intra_op_parallelism_threads` (0 when not set), as in TF."""
    return _intra_op_threads


def set_inter_op_parallelism_threads(num_threads):
    """Record the inter-op thread count, as TF1 programs set it (checked, then kept: graphflow runs
    a plan's steps one after another, as `inter_op_parallelism_threads` in ConfigProto)."""
    global _inter_op_threads
    _inter_op_threads = _thread_count(num_threads, "num_threads")


def get_inter_op_parallelism_threads():
    """The value given to `set_inter_op_parallelism_threads` (0 when not set), as in TF."""
    return _inter_op_threads


# glibc's mallopt parameters and the values `keep_freed_memory` sets: above 64 MB, since a
# 16M-element float32 array is exactly 64 MB and glibc mmaps blocks at the threshold
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
KEEP_MMAP_THRESHOLD = 128 << 20
KEEP_TRIM_THRESHOLD = 512 << 20
_kept_freed_memory = False


def keep_freed_memory():
    """Keep freed array memory in the process (glibc only; nothing elsewhere), when you ask: malloc
    then serves blocks up to 128 MB from its heap and keeps up to 512 MB of free heap instead of
    giving it back to the system, so a training step's arrays reuse the previous step's pages
    instead of page-faulting fresh ones. The process's resident memory then stays near its peak,
    as with TF's own allocator. graphflow never calls this itself: it changes the whole process's
    malloc (glibc's `mallopt`, once; it cannot be undone). True when the thresholds are set.
    Measured in docs/performance.md ("malloc's settings")."""
    global _kept_freed_memory
    if _kept_freed_memory:
        return True
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _kept_freed_memory = bool(mallopt(_M_MMAP_THRESHOLD, KEEP_MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, KEEP_TRIM_THRESHOLD))
    return _kept_freed_memory


# tf.config.threading.set_intra_op_parallelism_threads(...) spells it this way
threading = types.SimpleNamespace(
    set_intra_op_parallelism_threads=set_intra_op_parallelism_threads,
    get_intra_op_parallelism_threads=get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads=set_inter_op_parallelism_threads,
    get_inter_op_parallelism_threads=get_inter_op_parallelism_threads)


class _Message:
    """Fields with defaults, set by keyword or attribute; unknown names fail as in TF's protos."""

    _FIELDS = {}
    __slots__ = ()

    def __init__(self, **fields):
        for name, default in self._FIELDS.items():
            object.__setattr__(self, name, default() if callable(default) else default)
        for name, value in fields.items():
            if name not in self._FIELDS:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f'Assignment not allowed (no field "{name}" in protocol message '
                                 f"{type(self).__name__}).")
        object.__setattr__(self, name, self._check(name, value))

    def _check(self, name, value):
        return value

    def __eq__(self, other):
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    def __repr__(self):
        changed = [f"{n}={getattr(self, n)!r}" for n, d in self._FIELDS.items()
                   if getattr(self, n) != (d() if callable(d) else d)]
        return f"{type(self).__name__}({', '.join(changed)})"


class GPUOptions(_Message):
    """TF1's `tf.GPUOptions` (recorded; see the module docstring)."""

    _FIELDS = {"allow_growth": False, "per_process_gpu_memory_fraction": 0.0,
               "visible_device_list": ""}
    __slots__ = tuple(_FIELDS)


class ConfigProto(_Message):
    """TF1's `tf.ConfigProto`: `Session(config=ConfigProto(intra_op_parallelism_threads=2))`."""

    _FIELDS = {"intra_op_parallelism_threads": 0, "inter_op_parallelism_threads": 0,
               "allow_soft_placement": False, "log_device_placement": False,
               "gpu_options": GPUOptions}
    __slots__ = tuple(_FIELDS)

    def _check(self, name, value):
        if name.endswith("_threads"):
            return _thread_count(value, name)
        if name == "gpu_options" and not isinstance(value, GPUOptions):
            raise TypeError(f"gpu_options must be a GPUOptions, got {type(value).__name__}")
        return value


def session_intra_op_threads(config):
    """The intra-op thread count of a session created now with `config` (a ConfigProto or None)."""
    if config is None:
        return default_intra_op_threads()
    if not isinstance(config, ConfigProto):
        raise TypeError(f"config must be a tf.ConfigProto, but got {type(config).__name__}")
    return config.intra_op_parallelism_threads or default_intra_op_threads()


__all__ = ["ConfigProto", "GPUOptions", "threading", "set_intra_op_parallelism_threads",
           "get_intra_op_parallelism_threads", "set_inter_op_parallelism_threads",
           "get_inter_op_parallelism_threads", "default_intra_op_threads", "keep_freed_memory"]
