"""A small ctypes binding to oneDNN's C API (libdnnl.so.3): graphflow's install brings
the `onednn-cpu-gomp` wheel on Linux x86-64 (oneDNN built on OpenMP, libgomp). Without it, or with
`GRAPHFLOW_NO_DNNL=1`, `library()` is None and the numpy kernels run unchanged.

Only what graphflow's convolutions, MaxPoolGrad and matrix products (`dnnl_conv.py`, `dnnl_pool.py`,
`dnnl_matmul.py`) use is bound:
memory descriptors from dims and strides (so a numpy array is described as it lies in memory, no
copy), primitive descriptors, primitive attributes (user scratchpad, elementwise post-ops),
primitives, memory objects wrapping numpy buffers, and execution on
a CPU stream. Every call's
status is checked (`DnnlError` names the function and the status). Memory descriptors, primitive
descriptors and primitives are owned by Python objects (`Desc`, `Primitive`) and destroyed with
them. The headers are not needed at run time: the few enum values used are spelled out below
(oneDNN 3.x, `dnnl_types.h` / `dnnl_common_types.h`).

Threads: oneDNN parallelizes with OpenMP, whose thread count is a per-thread setting
(`omp_set_num_threads` sets it for the calling thread only). graphflow sets it around creating
and executing a primitive and restores it after (`Library.openmp_threads`; oneDNN picks its work
split when a primitive is created, for the thread count then current). graphflow runs every
oneDNN call on one OpenMP thread and shares the work out on its own intra-op threads
(`dnnl_conv.py`), so OpenMP never starts a team for them: no second pool of threads next to
graphflow's intra-op pool and BLAS. Matrix products may run as a team (`dnnl_matmul.py` times
both ways); for them graphflow shortens libgomp's spin-waiting (`GOMP_SPINCOUNT` while the library
loads, unless the user set it or OMP_WAIT_POLICY).
"""

import contextlib
import ctypes
import importlib.metadata
import os
import sys
import threading
from pathlib import Path

import numpy as np

LIBRARY = "libdnnl.so.3"
DISTRIBUTION = "onednn-cpu-gomp"

# enum values of oneDNN 3.x
SUCCESS = 0
UNIMPLEMENTED = 3
_STATUS = {1: "out_of_memory", 2: "invalid_arguments", 3: "unimplemented", 4: "last_impl_reached",
           5: "runtime_error", 6: "not_required"}
F32 = 3  # dnnl_f32
FORMAT_ANY = 1  # dnnl_format_tag_any
CPU = 1  # dnnl_cpu
STREAM_IN_ORDER = 1
FORWARD_TRAINING = 64
BACKWARD_DATA = 160
BACKWARD_WEIGHTS = 192
CONVOLUTION_DIRECT = 1
POOLING_MAX = 0x1ff
FORWARD_INFERENCE = 96
SCRATCHPAD_USER = 1
QUERY_IMPL_INFO_STR = 8
QUERY_SRC_MD, QUERY_DIFF_SRC_MD, QUERY_WEIGHTS_MD, QUERY_DIFF_WEIGHTS_MD = 129, 130, 131, 132
QUERY_DST_MD, QUERY_DIFF_DST_MD, QUERY_WORKSPACE_MD, QUERY_SCRATCHPAD_MD = 133, 134, 135, 136
ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_WORKSPACE, ARG_SCRATCHPAD = 1, 17, 33, 64, 80
ARG_DIFF_SRC, ARG_DIFF_DST, ARG_DIFF_WEIGHTS = 129, 145, 161
ARG_BIAS, ARG_DIFF_BIAS = 41, 169
# eltwise algorithms (post-ops): dnnl_alg_kind_t; relu(x) = x > 0 ? x : alpha * x,
# clip(x) = min(max(x, alpha), beta)
ELTWISE_RELU, ELTWISE_TANH, ELTWISE_ELU, ELTWISE_LINEAR = 0x20, 0x21, 0x22, 0x26
ELTWISE_SOFT_RELU, ELTWISE_LOGISTIC, ELTWISE_CLIP = 0x27, 0x29, 0x2e
ARG_FROM, ARG_TO = ARG_SRC, ARG_DST
MAX_NDIMS = 12

Dims = ctypes.c_int64 * MAX_NDIMS


class ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


class DnnlError(RuntimeError):
    """A oneDNN call returned a status other than success (`status`: oneDNN's code)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_DIMS = ctypes.POINTER(ctypes.c_int64)
_SIGNATURES = {  # name: argument types (all return dnnl_status_t unless listed in _RESTYPES)
    "dnnl_engine_create": [_PP, ctypes.c_int, ctypes.c_size_t],
    "dnnl_stream_create": [_PP, _P, ctypes.c_uint],
    "dnnl_stream_destroy": [_P],
    "dnnl_memory_desc_create_with_strides": [_PP, ctypes.c_int, _DIMS, ctypes.c_int, _DIMS],
    "dnnl_memory_desc_create_with_tag": [_PP, ctypes.c_int, _DIMS, ctypes.c_int, ctypes.c_int],
    "dnnl_memory_desc_destroy": [_P],
    "dnnl_memory_desc_equal": [_P, _P],
    "dnnl_memory_desc_get_size": [_P],
    "dnnl_memory_create": [_PP, _P, _P, _P],
    "dnnl_memory_set_data_handle": [_P, _P],
    "dnnl_memory_destroy": [_P],
    "dnnl_primitive_attr_create": [_PP],
    "dnnl_primitive_attr_destroy": [_P],
    "dnnl_primitive_attr_set_scratchpad_mode": [_P, ctypes.c_int],
    "dnnl_primitive_attr_set_post_ops": [_P, _P],
    "dnnl_post_ops_create": [_PP],
    "dnnl_post_ops_destroy": [_P],
    "dnnl_post_ops_append_eltwise": [_P, ctypes.c_int, ctypes.c_float, ctypes.c_float],
    "dnnl_convolution_forward_primitive_desc_create":
        [_PP, _P, ctypes.c_int, ctypes.c_int, _P, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P],
    "dnnl_convolution_backward_data_primitive_desc_create":
        [_PP, _P, ctypes.c_int, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P, _P],
    "dnnl_convolution_backward_weights_primitive_desc_create":
        [_PP, _P, ctypes.c_int, _P, _P, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _P, _P],
    "dnnl_reorder_primitive_desc_create": [_PP, _P, _P, _P, _P, _P],
    "dnnl_pooling_forward_primitive_desc_create":
        [_PP, _P, ctypes.c_int, ctypes.c_int, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _DIMS, _P],
    "dnnl_pooling_backward_primitive_desc_create":
        [_PP, _P, ctypes.c_int, _P, _P, _DIMS, _DIMS, _DIMS, _DIMS, _DIMS, _P, _P],
    "dnnl_primitive_desc_query": [_P, ctypes.c_int, ctypes.c_int, _P],
    "dnnl_primitive_desc_query_md": [_P, ctypes.c_int, ctypes.c_int],
    "dnnl_primitive_desc_destroy": [_P],
    "dnnl_primitive_create": [_PP, _P],
    "dnnl_primitive_destroy": [_P],
    "dnnl_primitive_execute": [_P, _P, ctypes.c_int, ctypes.POINTER(ExecArg)],
    "dnnl_matmul_primitive_desc_create": [_PP, _P, _P, _P, _P, _P, _P],
    "dnnl_sgemm": [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_float, _P, ctypes.c_int64, _P, ctypes.c_int64, ctypes.c_float, _P,
                   ctypes.c_int64],
}
_RESTYPES = {"dnnl_memory_desc_equal": ctypes.c_int, "dnnl_memory_desc_get_size": ctypes.c_size_t,
             "dnnl_primitive_desc_query_md": ctypes.c_void_p}


class Library:
    """The loaded libdnnl (every bound function checked), its CPU engine, and OpenMP's setter."""

    def __init__(self, path):
        self.path = str(path)
        self._dll = ctypes.CDLL(self.path)
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(self._dll, name)
            fn.argtypes = argtypes
            fn.restype = _RESTYPES.get(name, ctypes.c_int)
        # libdnnl links libgomp: this finds the copy already loaded with it
        gomp = ctypes.CDLL("libgomp.so.1")
        self._set_num_threads = gomp.omp_set_num_threads
        self._set_num_threads.argtypes = [ctypes.c_int]
        self._set_num_threads.restype = None
        self._get_max_threads = gomp.omp_get_max_threads
        self._get_max_threads.argtypes = []
        self._get_max_threads.restype = ctypes.c_int
        self._local = threading.local()
        engine = ctypes.c_void_p()
        self.call("dnnl_engine_create", ctypes.byref(engine), CPU, 0)
        self.engine = engine  # lives as long as the process

    def call(self, name, *args):
        status = getattr(self._dll, name)(*args)
        if status != SUCCESS:
            raise DnnlError(f"oneDNN: {name} failed with status {status} "
                            f"({_STATUS.get(status, 'unknown')})", status)

    def raw(self, name, *args):
        """A bound function whose result is not a status (queries)."""
        return getattr(self._dll, name)(*args)

    def function(self, name):
        """A bound function itself, for hot paths that check its status themselves."""
        return getattr(self._dll, name)

    @contextlib.contextmanager
    def openmp_threads(self, threads):
        """OpenMP's thread count for the calling thread (oneDNN's primitives created or executed
        inside), restored on exit: other OpenMP code on the thread keeps its own setting."""
        before = self._get_max_threads()
        self._set_num_threads(int(threads))
        try:
            yield
        finally:
            self._set_num_threads(before)

    def stream(self):
        """The calling thread's CPU stream (streams are not shared between threads)."""
        stream = getattr(self._local, "stream", None)
        if stream is None:
            stream = self._local.stream = self.new_stream()
        return stream

    def new_stream(self):
        """A new in-order CPU stream (kept for the process, like the threads' own)."""
        stream = ctypes.c_void_p()
        self.call("dnnl_stream_create", ctypes.byref(stream), self.engine, STREAM_IN_ORDER)
        return stream


def dims(values):
    return Dims(*(int(v) for v in values))


class Desc:
    """An owned memory descriptor: `Desc.plain(shape, strides)` (element strides) or `Desc.any`."""

    def __init__(self, lib, handle):
        self._lib, self.handle = lib, handle

    @classmethod
    def plain(cls, lib, shape, strides):
        md = ctypes.c_void_p()
        lib.call("dnnl_memory_desc_create_with_strides", ctypes.byref(md), len(shape), dims(shape),
                 F32, dims(strides))
        return cls(lib, md)

    @classmethod
    def any(cls, lib, shape):
        md = ctypes.c_void_p()
        lib.call("dnnl_memory_desc_create_with_tag", ctypes.byref(md), len(shape), dims(shape), F32,
                 FORMAT_ANY)
        return cls(lib, md)

    def __del__(self):
        if self.handle:
            self._lib.raw("dnnl_memory_desc_destroy", self.handle)
            self.handle = None


def element_strides(array_shape, axes):
    """Element strides of a C-contiguous array of `array_shape`, listed in the order `axes` (a
    permutation: oneDNN's logical dims in terms of the array's axes)."""
    strides = [1] * len(array_shape)
    for i in range(len(array_shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * array_shape[i + 1]
    return [strides[a] for a in axes]


class Primitive:
    """A primitive created from a primitive descriptor (which it keeps, with its scratchpad size).
    `execute({arg: array or raw pointer})` runs it on this thread's stream. Each thread keeps one
    memory object per argument (of the descriptor the primitive expects for it), made on its first
    call with those arguments and only pointed at each call's buffers after that
    (`dnnl_memory_set_data_handle`): creating and destroying them around every call cost about as
    much again as the calls that remain (a tiny convolution's execute 16.7 us before)."""

    def __init__(self, lib, pd, descs):
        self._lib, self._pd = lib, pd
        self._descs = descs  # arg -> memory descriptor handle (owned by pd or by a kept Desc)
        self._keep = []
        self._bound = {}  # (thread id, args) -> (memory objects, their ExecArg array)
        self._set_handle = lib.function("dnnl_memory_set_data_handle")
        self._execute = lib.function("dnnl_primitive_execute")
        prim = ctypes.c_void_p()
        try:
            lib.call("dnnl_primitive_create", ctypes.byref(prim), pd)
        except DnnlError:
            lib.call("dnnl_primitive_desc_destroy", pd)
            self._pd = None
            raise
        self.handle = prim
        md = lib.raw("dnnl_primitive_desc_query_md", pd, QUERY_SCRATCHPAD_MD, 0)
        self.scratchpad_bytes = lib.raw("dnnl_memory_desc_get_size", md) if md else 0
        if self.scratchpad_bytes:
            self._descs[ARG_SCRATCHPAD] = md

    def keep(self, *objects):
        """Keep Python objects (descriptors the primitive's args use) alive as long as it lives."""
        self._keep.extend(objects)
        return self

    @property
    def implementation(self):
        name = ctypes.c_char_p()
        self._lib.call("dnnl_primitive_desc_query", self._pd, QUERY_IMPL_INFO_STR, 0,
                       ctypes.byref(name))
        return name.value.decode()

    def execute(self, buffers):
        if self.scratchpad_bytes and ARG_SCRATCHPAD not in buffers:
            buffers = dict(buffers)
            buffers[ARG_SCRATCHPAD] = scratchpad(self.scratchpad_bytes)
        self.run(tuple(buffers), [buf.ctypes.data if isinstance(buf, np.ndarray) else buf
                                  for buf in buffers.values()])

    def run(self, args, pointers):
        """Execute with the buffers at `pointers` (addresses) as the arguments `args` (a tuple of
        ARG_* in the same order; the scratchpad's included where it has one): the hot path of
        callers that keep their argument list."""
        mems, exec_args = self.bound(threading.get_ident(), args)
        set_handle = self._set_handle
        for mem, ptr in zip(mems, pointers):
            if set_handle(mem, ptr) != SUCCESS:
                raise DnnlError("oneDNN: dnnl_memory_set_data_handle failed")
        status = self._execute(self.handle, self._lib.stream(), len(mems), exec_args)
        if status != SUCCESS:
            raise DnnlError(f"oneDNN: dnnl_primitive_execute failed with status {status} "
                            f"({_STATUS.get(status, 'unknown')})", status)

    def bound(self, owner, args):
        """(memory objects, their ExecArg array) of `owner` (a thread, or another single user:
        never two at once) for the arguments `args`, made on first use."""
        key = (owner, args)
        return self._bound.get(key) or self._bind(key)

    def _bind(self, key):
        """The memory objects for the arguments key[1] (made once)."""
        lib, args = self._lib, key[1]
        mems = []
        exec_args = (ExecArg * len(args))()
        try:
            for k, arg in enumerate(args):
                mem = ctypes.c_void_p()
                lib.call("dnnl_memory_create", ctypes.byref(mem), self._descs[arg], lib.engine, None)
                mems.append(mem)
                exec_args[k].arg, exec_args[k].memory = arg, mem
        except DnnlError:
            for mem in mems:
                lib.raw("dnnl_memory_destroy", mem)
            raise
        bound = self._bound[key] = (mems, exec_args)
        return bound

    def __del__(self):  # raw calls: a destructor cannot report a status (nor fail at exit)
        for mems, _ in getattr(self, "_bound", {}).values():
            for mem in mems:
                self._lib.raw("dnnl_memory_destroy", mem)
        if getattr(self, "handle", None):
            self._lib.raw("dnnl_primitive_destroy", self.handle)
            self.handle = None
        if getattr(self, "_pd", None):
            self._lib.raw("dnnl_primitive_desc_destroy", self._pd)
            self._pd = None


_scratch = threading.local()


def scratchpad(nbytes):
    """This thread's scratchpad buffer of at least `nbytes` (grown, never shared between threads)."""
    _scratch.buffer, address = grown_scratchpad(getattr(_scratch, "buffer", None), nbytes)
    return address


def grown_scratchpad(buf, nbytes):
    """(`buf`, or a larger new buffer where `buf` cannot hold `nbytes` from a 64-byte aligned
    address; that address)."""
    if buf is None or buf.nbytes < nbytes + 64:
        buf = np.empty(max(nbytes, 1 << 16) + 64, np.uint8)
    return buf, buf.ctypes.data + (-buf.ctypes.data % 64)


def user_scratchpad_attr(lib):
    """A primitive attribute with user-managed scratchpad (the caller destroys it with
    `destroy_attr`): a primitive then keeps no scratch memory of its own and may run on several
    threads at once, each with its own scratchpad."""
    attr = ctypes.c_void_p()
    lib.call("dnnl_primitive_attr_create", ctypes.byref(attr))
    lib.call("dnnl_primitive_attr_set_scratchpad_mode", attr, SCRATCHPAD_USER)
    return attr


def set_eltwise_post_ops(lib, attr, eltwise):
    """Append elementwise post-ops to `attr`: `eltwise` a sequence of (algorithm, alpha, beta),
    applied in order to a primitive's result before it is written."""
    post = ctypes.c_void_p()
    lib.call("dnnl_post_ops_create", ctypes.byref(post))
    try:
        for alg, alpha, beta in eltwise:
            lib.call("dnnl_post_ops_append_eltwise", post, alg, alpha, beta)
        lib.call("dnnl_primitive_attr_set_post_ops", attr, post)  # (the attr keeps a copy)
    finally:
        lib.call("dnnl_post_ops_destroy", post)


def activation_post_ops(activation, attrs):
    """The eltwise post-ops ((algorithm, alpha, beta), ...) computing a fused op's `activation`
    with exactly the values of graphflow's numpy instruction (comparisons and one multiply: ReLU,
    ReLU6, LeakyReLU); () for no activation; None where oneDNN's version would differ in the last
    bits (its tanh, logistic, elu ... are approximations), and the activation then runs in numpy
    after the primitive. FusedMatMul and FusedConv2D both take their post-ops from here, so a fused
    op gives the unfused graph's bits."""
    if not activation:
        return ()
    make = _EXACT_POST_OPS.get(activation)
    return None if make is None else make(attrs or {})


RELU_POST_OPS = ((ELTWISE_RELU, 0.0, 0.0),)  # max(x, 0)
_EXACT_POST_OPS = {
    "Relu": lambda attrs: RELU_POST_OPS,
    "Relu6": lambda attrs: ((ELTWISE_CLIP, 0.0, 6.0),),                    # min(max(x, 0), 6)
    # x > 0 ? x : alpha * x, alpha rounded to float32 as numpy's float32 instruction rounds it
    "LeakyRelu": lambda attrs: ((ELTWISE_RELU, float(np.float32(attrs.get("alpha", 0.2))), 0.0),),
}


def destroy_attr(lib, attr):
    lib.call("dnnl_primitive_attr_destroy", attr)


def reorder(lib, src_md, dst_md):
    """A reorder primitive between two memory descriptor handles (both must outlive it)."""
    attr = user_scratchpad_attr(lib)
    pd = ctypes.c_void_p()
    try:
        lib.call("dnnl_reorder_primitive_desc_create", ctypes.byref(pd), src_md, lib.engine, dst_md,
                 lib.engine, attr)
    finally:
        destroy_attr(lib, attr)
    return Primitive(lib, pd, {ARG_FROM: src_md, ARG_TO: dst_md})


# ------------------------------------------------------------------ loading
_lock = threading.Lock()
_library = None  # None: not tried; False: unavailable or switched off; Library: loaded


def disabled():
    return os.environ.get("GRAPHFLOW_NO_DNNL", "").strip() not in ("", "0")


def find_library():
    """libdnnl.so.3 of the onednn-cpu-gomp distribution: under sys.prefix/lib (where its wheel puts
    it), else wherever the distribution's file list says; None when not installed."""
    candidate = Path(sys.prefix) / "lib" / LIBRARY
    if candidate.exists():
        return candidate
    try:
        files = importlib.metadata.distribution(DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == LIBRARY:
            path = Path(f.locate()).resolve()
            if path.exists():
                return path
    return None


def library():
    """The loaded oneDNN library, or None (not installed, not loadable, or GRAPHFLOW_NO_DNNL=1)."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                _library = _load() or False
    return _library or None


# How long an OpenMP team's idle threads spin before sleeping (libgomp reads GOMP_SPINCOUNT once,
# when it is loaded). Only the matrix products start teams (`dnnl_matmul.py`); libgomp's default,
# 300000 spins (milliseconds), keeps a core busy long after a product, and with another process
# on the machine a team's spinning thread takes the time slices its parked partner needs. 30000
# rather than 10000: a recurrent loop's products come every ~0.2 ms, and a team asleep by then
# takes ~0.07 ms to wake (bench_rnn.py's LSTM step, two threads, 106.6-108.1 -> 92.5-96.6 ms);
# the training rows of bench_vs_tf1.py measured the same either way, 100000 slowed the CIFAR row
# (docs/performance.md).
GOMP_SPINCOUNT = "30000"


def _load():
    if disabled():
        return None
    path = find_library()
    if path is None:
        return None
    # set for libgomp's loading only (a user's own OpenMP settings win), not left to child processes
    spin = not any(k in os.environ for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY"))
    if spin:
        os.environ["GOMP_SPINCOUNT"] = GOMP_SPINCOUNT
    try:
        return Library(path)
    except (OSError, AttributeError, DnnlError):  # a broken install: the numpy kernels run
        return None
    finally:
        if spin:
            del os.environ["GOMP_SPINCOUNT"]
