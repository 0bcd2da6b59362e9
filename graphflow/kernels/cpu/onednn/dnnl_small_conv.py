"""Small forward convolutions (inference at batch 1: an 8x8x32 -> 32 3x3 layer) as one oneDNN
primitive whose memory objects are made once per thread, when the optional oneDNN library is
installed (`dnnl.py`): FusedConv2D's "onednn_small" implementation, chosen for NHWC float32
convolutions small enough for the gathered im2col product (`conv_gather.py`) and below oneDNN's
usual minimum (`dnnl_conv.MIN_MACS`) where `get` has a primitive for them (the gathered product
runs the others).

`dnnl_conv.py` wraps each buffer in a new memory object per call and reorders the filter into the
primitive's blocked layout: about 20 us of ctypes calls, more than the convolution itself at batch 1.
Here the primitive reads TF's HWIO filter as it lies (oneDNN's `brgconv:avx512_core` takes it
unreordered, as fast), the input and output are NHWC as in `dnnl_conv.py`, the bias is the
primitive's bias and Relu, Relu6 and LeakyRelu its post-ops; each thread keeps one memory object per
argument, its scratchpad set once, and only points the others at the call's arrays
(`dnnl_memory_set_data_handle`), from one numba function calling oneDNN's C functions where numba
is installed (`compiled_run`), else through ctypes. No im2col matrix is written:
the digits CNN's 8x8x32 -> 32 FusedConv2D at batch 1 took 12-14.5 us as the gathered product (its
window copy 2.7 us, the product 7) with the bias and Relu pass, 6.7 us here; 4x4x32 -> 64 6.8
and 4.1 us (one thread, load 1.5-2.4). oneDNN's own `dnnl_conv.conv2d` took 44 and 42 us.
The values are oneDNN's sums, in another order than the im2col product: equal to rounding (the
tests bound them against the numpy reference), as on oneDNN's route for larger convolutions.
"""

import ctypes
import threading

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.blocked import conv_gather
from graphflow.kernels.cpu.numba import jit_updates
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv
from graphflow.kernels.cpu.onednn.dnnl_fused_matmul import fused_activation_of
from graphflow.kernels.cpu.reference.conv_geometry import Conv, dtypes_are, static_conv
from graphflow.kernels.cpu.reference.fused_kernels import member_error

_lock = threading.RLock()  # get() makes a SmallConv, which asks for compiled_run()
_convs = {}  # (geometry, batch, channels, out channels, post-ops) -> SmallConv or None
_MAX_KEPT = 32


_run = None


def compiled_run(lib):
    """One numba function that points the four memory objects at the arrays, runs the primitive
    on one OpenMP thread and restores the count, calling oneDNN's and libgomp's C functions itself
    (4.5 us for the 4x4x32 -> 64 convolution, 6.9 through ctypes: each ctypes call and
    `.ctypes.data` costs 0.2-0.8 us); None without numba."""
    global _run
    if _run is None:
        with _lock:
            if _run is None:
                _run = _compile(lib) if jit_updates.loops() is not None else False
    return _run or None


def _compile(lib):
    from numba import njit

    def c_function(function, restype, *argtypes):
        address = ctypes.cast(function, ctypes.c_void_p).value
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)
    p, i = ctypes.c_void_p, ctypes.c_int
    set_handle = c_function(lib.function("dnnl_memory_set_data_handle"), i, p, p)
    execute = c_function(lib.function("dnnl_primitive_execute"), i, p, p, i, p)
    set_threads = c_function(lib._set_num_threads, None, i)
    get_threads = c_function(lib._get_max_threads, i)

    @njit(nogil=True, cache=False)
    def run(x, f, bias, out, handles):
        """handles: this thread's memory objects of x, f, bias and out, the primitive, the
        stream, the ExecArg array and its length; oneDNN's status."""
        for k, a in enumerate((x.ctypes.data, f.ctypes.data, bias.ctypes.data, out.ctypes.data)):
            status = set_handle(handles[k], a)
            if status != 0:
                return status
        before = get_threads()
        set_threads(1)  # the primitive on this thread alone, as it was created
        status = execute(handles[4], handles[5], handles[7], handles[6])
        set_threads(before)
        return status
    return run


class SmallConv:
    """One NHWC float32 convolution's primitive (with bias and post-ops) and, per thread, its bound
    memory objects: `conv(x, f, bias)` is eltwise(conv2d(x, f) + bias), a new NHWC array."""

    def __init__(self, geo, n, c, oc, eltwise):
        lib = self.lib = dnnl.library()
        with lib.openmp_threads(1):
            self.plan = dnnl_conv.Plan("forward", geo, n, c, oc, True, eltwise, weights_any=False)
        if self.plan.reorder is not None or self.implementation.startswith("ref"):
            # not the HWIO filter as it lies, or oneDNN's slow reference loops: the gathered route
            raise dnnl.DnnlError("oneDNN: no fast primitive on the HWIO filter", dnnl.UNIMPLEMENTED)
        prim = self.plan.prim
        self._args = [dnnl.ARG_SRC, dnnl.ARG_WEIGHTS, dnnl.ARG_BIAS, dnnl.ARG_DST]
        if prim.scratchpad_bytes:
            self._args.append(dnnl.ARG_SCRATCHPAD)
        self.out_shape = (n, geo.oh, geo.ow, oc)
        self._local = threading.local()
        self._made = []  # every thread's memory objects, destroyed with this object
        self._keep = []  # every thread's scratchpad buffer
        self._set = lib.function("dnnl_memory_set_data_handle")
        self._execute = lib.function("dnnl_primitive_execute")
        self._run = compiled_run(lib)

    @property
    def implementation(self):
        return self.plan.prim.implementation

    def _bind(self):
        """This thread's memory objects (the scratchpad's pointed at a buffer of its own once), their
        ExecArg array, its stream, and all of these as the integers `compiled_run` takes."""
        lib, prim = self.lib, self.plan.prim
        mems = []
        args = (dnnl.ExecArg * len(self._args))()
        for k, arg in enumerate(self._args):
            mem = ctypes.c_void_p()
            lib.call("dnnl_memory_create", ctypes.byref(mem), prim._descs[arg], lib.engine, None)
            mems.append(mem)
            self._made.append(mem)
            args[k].arg, args[k].memory = arg, mem
        if prim.scratchpad_bytes:
            scratch = np.empty(prim.scratchpad_bytes + 64, np.uint8)
            address = scratch.ctypes.data
            lib.call("dnnl_memory_set_data_handle", mems[4], address + (-address % 64))
            self._keep.append(scratch)
        stream = lib.stream()
        handles = np.array([m.value for m in mems[:4]] + [prim.handle.value, stream.value,
                                                          ctypes.addressof(args), len(args)],
                           np.int64)
        bound = self._local.bound = (mems[:4], args, stream, handles)
        return bound

    def __call__(self, x, f, bias):
        bound = getattr(self._local, "bound", None) or self._bind()
        out = np.empty(self.out_shape, np.float32)
        if self._run is not None:
            status = self._run(x, f, bias, out, bound[3])
        else:
            status = self._through_ctypes(bound, x, f, bias, out)
        if status != dnnl.SUCCESS:
            raise dnnl.DnnlError(f"oneDNN: a small convolution failed with status {status}",
                                 status)
        return out

    def _through_ctypes(self, bound, x, f, bias, out):
        mems, args, stream, _ = bound
        for mem, array in zip(mems, (x, f, bias, out)):
            if self._set(mem, array.ctypes.data) != dnnl.SUCCESS:
                raise dnnl.DnnlError("oneDNN: dnnl_memory_set_data_handle failed")
        with self.lib.openmp_threads(1):  # the primitive on this thread alone, as it was created
            return self._execute(self.plan.prim.handle, stream, len(args), args)

    def __del__(self):
        for mem in getattr(self, "_made", ()):
            self.lib.raw("dnnl_memory_destroy", mem)


def applies(x, f, bias):
    """Whether `get` may have a primitive for these operands: float32, NHWC input and HWIO filter
    C-contiguous (the memory objects describe dense arrays), a bias of the output channels."""
    return (x.dtype == f.dtype == bias.dtype == np.float32 and x.ndim == 4 and f.ndim == 4
            and x.shape[3] == f.shape[2] and bias.shape == f.shape[3:] and x.size > 0
            and f.size > 0 and x.flags.c_contiguous and f.flags.c_contiguous
            and bias.flags.c_contiguous and dnnl.library() is not None)


def get(geo, n, c, oc, eltwise):
    """The kept `SmallConv` of this geometry, shapes and post-ops, made on first use; None where
    oneDNN has no such primitive (or none reading the HWIO filter as it lies)."""
    key = (geo.key, n, c, oc, tuple(eltwise))
    try:
        return _convs[key]
    except KeyError:
        pass
    with _lock:
        if key not in _convs:
            try:
                conv = SmallConv(geo, n, c, oc, tuple(eltwise))
            except dnnl.DnnlError as e:
                if e.status != dnnl.UNIMPLEMENTED:
                    raise
                conv = None
            if len(_convs) >= _MAX_KEPT:
                _convs.pop(next(iter(_convs)))
            _convs[key] = conv
        return _convs[key]


def fused_conv2d_applies(node):
    """The plan's test of a FusedConv2D node: NHWC, float32 operands, a bias of the output
    channels, small enough for the gathered product and below oneDNN's minimum, and a primitive
    reading the HWIO filter as it lies (made here, once per geometry)."""
    shapes = static_conv(node)
    if (shapes is None or shapes.fmt != "NHWC" or not dtypes_are(node, np.float32, (0, 1, 2))
            or not node.in_shapes or len(node.in_shapes) < 3
            or tuple(node.in_shapes[2] or ()) != (shapes.oc,)
            or not conv_gather.gathered_below_dnnl(shapes.n, shapes.geo, shapes.c, shapes.oc)):
        return False
    post_ops = fused_activation_of(node).post_ops
    return get(shapes.geo, shapes.n, shapes.c, shapes.oc, post_ops) is not None


@cpu_kernel("FusedConv2D", name="onednn_small", preference=45, requires=("onednn",),
            applies=fused_conv2d_applies)
def fused_conv2d_small(node):
    """activation(conv2d(x, f) + bias) as one bound primitive (the post-ops it applies; the other
    activations after it, as numpy's instruction)."""
    conv = Conv(node)
    activation = fused_activation_of(node)
    kept = {}  # (x, filter, bias shapes) -> SmallConv

    def bound(x, f, bias):
        geo = conv.biased_geometry(x, f, bias)
        small = get(geo, x.shape[0], x.shape[3], f.shape[3], activation.post_ops)
        if small is None:
            raise RuntimeError(f"oneDNN has no small convolution primitive for {x.shape} * "
                               f"{f.shape}")
        if len(kept) >= 16:
            kept.clear()
        kept[(x.shape, f.shape, bias.shape)] = small
        return small

    def fused_conv2d(x, f, bias):
        stage = 0  # conv and bias (one primitive), activation
        try:
            bias = np.asarray(bias)
            run = kept.get((x.shape, f.shape, bias.shape)) or bound(x, f, bias)
            if not (x.flags.c_contiguous and f.flags.c_contiguous and bias.flags.c_contiguous):
                x, f, bias = (np.ascontiguousarray(a) for a in (x, f, bias))
            out = run(x, f, bias)
            stage = 2
            return activation.finish(out, True)
        except Exception as exc:
            raise member_error(exc, node.attrs, stage) from exc
    return fused_conv2d
