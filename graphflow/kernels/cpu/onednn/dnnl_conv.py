"""Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter through oneDNN's convolution primitives
(`dnnl.py`), for float32, when the optional oneDNN library is installed; `dnnl_conv_ops.py`
registers them as the ops' "onednn" implementations (`conv_kernels.py` is the reference the tests
compare with). Here:
the primitives (`Plan`, kept per geometry), the forward convolution and the input gradient, and
the blocks of images every kernel shares out (`run_tasks`); the filter gradient, which may also give
the bias gradient (`Conv2DBackpropFilterBias`) and share its blocks with the input gradient's
(`Conv2DBackpropInputFilter`), is in `dnnl_conv_grads.py`.

The arrays are described to oneDNN as they lie in memory (no copies): NHWC input and output as
oneDNN's `nhwc` (logical N, C, H, W with strides h*w*c, 1, w*c, c), and TF's HWIO filter as
oneDNN's `hwio` (logical O, I, H, W). NCHW convolutions are transposed to NHWC and back by
`conv_kernels.py`, as for its numpy kernels: oneDNN's `nchw` primitives sum in another order, and
a model's outputs would then depend on its data format (an ONNX round trip, NHWC -> NCHW, gave
differences of 4e-5 on a 5x5x16 convolution). TF's SAME padding may be uneven (more at the bottom
and right): `Geometry`'s pt/pb/pl/pr become oneDNN's padding_l/padding_r; a TF dilation d is
oneDNN's d - 1.

Threads: the filter gradient's oneDNN calls each run on one OpenMP thread, a batch cut into blocks
of images that the calling thread and graphflow's intra-op pool take from one shared iterator
(`intra_op.py`), each block one primitive execution: a busy core only means its thread takes fewer
blocks (an OpenMP team waits at a barrier for its slowest, descheduled thread). Its blocks do not
depend on the thread count, and its per-block partials are summed in block order, so the result
does not depend on how many threads ran, nor on which thread computed which block. A forward
convolution and an input gradient (from `TEAM_MIN_MACS`, on several threads) run the way the
matrix products' process-wide chooser picks (`dnnl_matmul._Chooser`, timed on the products and
these convolutions together): the whole batch as one primitive run by an OpenMP team, or blocks of
images as above (forward: one per thread). Each image's output is the same bits whatever the block
size or the team (checked at 8x8, 4x4, 28x28 and 32x32 forward; the input gradient with strides,
VALID padding and dilation in the tests), so its values never depend on the threads either. The
CIFAR-shaped step's input gradients each way (`GRAPHFLOW_MATMUL_THREADING=team|blocks python
benchmarks/bench_conv_kernels.py --threads 2`, load 0.9-1.0, ms, team / blocks): 32x32x3 <- 32
1.67 / 2.09, 32x32x32 <- 32 3.05 / 3.56, 16x16x32 <- 64 1.65 / 1.90.
Forward, measured (one call each way, batch 256, 2 cores, load 0.6, ms: team / the former
blocks, up to 8 of at least 8M multiply-adds / one block per thread): 8x8x32 -> 32 0.98 / 1.13 /
1.11, 4x4x32 -> 64 0.48 / 0.73 / 0.63; 8x8x1 -> 32 (one block: too small to split) team 0.155,
one thread 0.24. The digits CNN's step at batch 256: 2.54 ms with the team, 3.04 ms with blocks
only (with a CPU burner on the other core the chooser keeps the blocks: 4.11 ms against 4.21).

Primitives are created once per geometry (shapes, strides, padding, dilations, layout, block size)
and kept (`_plans`, least recently used dropped past `MAX_PLANS`); a step only executes them. A
geometry oneDNN implements no primitive for runs the numpy kernels: `implements` answers the
plan's question once per geometry (the functions here return None for one).

Measured (`benchmarks/bench_conv_kernels.py`, batch 64, one thread, load average 4): oneDNN takes
0.32-0.63 of the blocked im2col kernels' time forward, 0.42-0.50 for the input gradient and
0.36-0.59 for the filter gradient on the small CNN's and the CIFAR-shaped CNN's layers (e.g.
32x32x32 -> 32 3x3: 21.0 -> 7.4, 17.9 -> 7.5, 23.4 -> 9.2 ms).
"""

import collections
import ctypes
import threading
import time

import numpy as np

from graphflow.kernels.cpu.onednn import dnnl, dnnl_matmul, dnnl_team
from graphflow.kernels.cpu.onednn.dnnl_matmul import BLOCKS, TEAM
from graphflow.kernels.cpu.reference.conv_geometry import conv_macs  # noqa: F401 (re-exported)
from graphflow.kernels.cpu.threads import blas, intra_op

# A batch is cut into at most MAX_BLOCKS blocks of images, each of at least BLOCK_MIN_WORK
# multiply-adds (pooling: bytes of input, see dnnl_pool.py), whatever the thread count: the filter
# gradient's sum of per-block partials is then the same on any number of threads. More blocks
# share the work better on a busy machine; fewer run longer, more efficient oneDNN calls (measured
# on one thread, batch 64: 28x28x1 -> 16 5x5 forward 0.30 ms as one call, 0.34 ms as 4 blocks,
# 0.42 ms as 8; filter gradient 0.34 / 0.45 / 0.54 ms; the CIFAR-shaped layers' 3x3 convolutions
# on 32 channels the same or faster in 4-8 blocks).
# The first layer's filter gradient (bench_vs_tf1's CIFAR-shaped CNN: 64x32x32x3 -> 32 3x3, 56.6M
# multiply-adds, no bias; alone, quiet, ms; `benchmarks/bench_conv_few.py` times these): the blocks
# 0.79-0.89 on two threads, 1.06-1.24 on one; the whole batch as one primitive on one thread
# 0.86-1.0, as an OpenMP team of two 0.46-0.61 but 2.9-4.0 while another process kept a core busy
# (blocks then 1.1-1.3), and a team's sums depend on its thread count: not taken. With the bias
# gradient, on two threads: 6 or 8 blocks 0.94-1.08, 2-4 blocks 1.02-1.16, 16 1.37-1.43, 32 2.3-2.5
# (the block count forced).
MAX_BLOCKS = 8
BLOCK_MIN_WORK = 8 << 20
MAX_PLANS = 256
# Forward convolutions of this many multiply-adds and up, on several threads, run either way the
# matrix products' chooser picks (`dnnl_matmul._Chooser`, one choice for the whole process): the
# whole batch as one primitive run by an OpenMP team, or the blocks above.
TEAM_MIN_MACS = 1 << 21
# Convolutions (and pairs of gradients) of fewer multiply-adds than this run on the calling
# thread only, blocks one after the other (the same blocks, so the same bits): waking a thread
# costs more than it saves. The bound was 32M, measured when the small CNN's 20M-multiply-add
# convolutions ran their blocks on a sleeping pool (its step 3.09 -> 2.77 ms then). Since the
# forward convolutions run on the awake OpenMP team and the step's other ops moved to it, a lower
# bound pays: one process, the bounds interleaved in rounds, medians of round minima, ms, bounds
# 32M / 4M / 2M / 1M: the small CNN (bench_vs_tf1's) 1.92 / 1.79 / 1.77 / 1.78, the tf.layers
# ResNet 37.66 / 36.24 / 36.09 / 36.15 (its 1x1 stride-2 projections and its stem ran on one core
# while the other spun), the CIFAR-shaped CNN 36.90 / 37.20 / 36.91 / 37.24 (a one-off script).
PARALLEL_MIN_MACS = 1 << 21
# Forward convolutions below this many multiply-adds run the way the chooser picked but are not
# timed for it: with them timed too, bench_vs_tf1's table ended its ResNet rows on the blocks
# (tf.layers ResNet 1.17x TF1 instead of 1.12).
CHOOSER_MIN_MACS = 1 << 25
# oneDNN may store the filter (and its gradient) in a blocked layout of its choice, with a
# reorder from / to TF's HWIO around each call, instead of reading HWIO as it lies. On HWIO as it
# lies oneDNN 3.2 picks its gemm fallback for both gradients (measured, one thread, batch 64: filter
# gradient 2.36 ms on 28x28x1 -> 16 5x5, 42 ms on 32x32x32 -> 32 3x3; with its own layout, jit
# kernels: 0.40 and 14.9 ms; the forward pass is as fast either way). Letting it choose the
# activations' layout too (blocked, with reorders) was no faster: 32x32x32 -> 32 forward 9.4 ms
# in NHWC, 15.2 ms blocked, filter gradient 16.7 / 16.2 ms, input gradient 14.6 / 16.5 ms.
WEIGHTS_ANY = True

_plans = collections.OrderedDict()
_plans_lock = threading.Lock()


# Below this many multiply-adds the numpy kernels win: a oneDNN call costs tens of microseconds of
# ctypes calls and memory objects (8x8x32->32 3x3 on one image, 0.6M multiply-adds: 48 us through
# oneDNN, 27 us blocked numpy; four images: 73 us against 206 us).
MIN_MACS = 1 << 20


def applies(*arrays, macs=None):
    """True when oneDNN is loaded, every operand is float32 and non-empty, and the convolution
    (of `macs` multiply-adds) is large enough to gain from it."""
    return ((macs is None or macs >= MIN_MACS)
            and all(a.dtype == np.float32 and a.size > 0 for a in arrays)
            and dnnl.library() is not None)


NHWC_AXES = (0, 3, 1, 2)  # oneDNN's logical (N, C, H, W) in an NHWC array


_HWIO_AXES = (3, 2, 0, 1)  # oneDNN's logical (O, I, H, W) in TF's [kh, kw, in, out] filter


# The two gradient primitives: (descriptor function, whether it takes a diff-bias descriptor (the
# filter gradient's: given when a bias gradient is asked for, else none), the query of the weights'
# layout, the (source-side, weights) execution arguments, whether the weights are reordered to TF's
# HWIO after the call (a gradient) or from it before (an input)).
_BACKWARD = {
    "backward_data": ("dnnl_convolution_backward_data_primitive_desc_create", False,
                      dnnl.QUERY_WEIGHTS_MD, (dnnl.ARG_DIFF_SRC, dnnl.ARG_WEIGHTS), False),
    "backward_weights": ("dnnl_convolution_backward_weights_primitive_desc_create", True,
                         dnnl.QUERY_DIFF_WEIGHTS_MD, (dnnl.ARG_SRC, dnnl.ARG_DIFF_WEIGHTS), True),
}


class Plan:
    """One convolution's primitives (and weight reorders) for one block size."""

    def __init__(self, kind, geo, nb, c, oc, bias=False, eltwise=(), weights_any=None):
        lib = dnnl.library()
        self.lib = lib
        x_shape = (nb, geo.h, geo.w, c)
        y_shape = (nb, geo.oh, geo.ow, oc)
        f_shape = (geo.kh, geo.kw, c, oc)
        axes = NHWC_AXES
        src = dnnl.Desc.plain(lib, [x_shape[a] for a in axes], dnnl.element_strides(x_shape, axes))
        dst = dnnl.Desc.plain(lib, [y_shape[a] for a in axes], dnnl.element_strides(y_shape, axes))
        w_dims = [f_shape[a] for a in _HWIO_AXES]
        hwio = dnnl.Desc.plain(lib, w_dims, dnnl.element_strides(f_shape, _HWIO_AXES))
        any_layout = WEIGHTS_ANY if weights_any is None else weights_any  # None: the module's
        weights = dnnl.Desc.any(lib, w_dims) if any_layout else hwio
        strides = dnnl.dims((geo.sh, geo.sw))
        dilates = dnnl.dims((geo.dh - 1, geo.dw - 1))
        pad_l, pad_r = dnnl.dims((geo.pt, geo.pl)), dnnl.dims((geo.pb, geo.pr))
        attr = dnnl.user_scratchpad_attr(lib)
        # the forward pass may add a per-channel bias and apply elementwise post-ops (FusedConv2D);
        # the filter gradient's pass may also compute the bias gradient (Conv2DBackpropFilterBias)
        b = dnnl.Desc.plain(lib, [oc], [1]) if bias else None
        self.reorder = None
        try:
            if eltwise:
                dnnl.set_eltwise_post_ops(lib, attr, eltwise)
            fwd = self._pd("dnnl_convolution_forward_primitive_desc_create", lib.engine,
                           dnnl.FORWARD_TRAINING, dnnl.CONVOLUTION_DIRECT, src.handle, weights.handle,
                           b and b.handle, dst.handle, strides, dilates, pad_l, pad_r, attr)
            if kind == "forward":
                w_md = lib.raw("dnnl_primitive_desc_query_md", fwd, dnnl.QUERY_WEIGHTS_MD, 0)
                args = {dnnl.ARG_SRC: src.handle, dnnl.ARG_WEIGHTS: w_md, dnnl.ARG_DST: dst.handle}
                if b is not None:
                    args[dnnl.ARG_BIAS] = b.handle
                self.prim = dnnl.Primitive(lib, fwd, args)
                self._weights_reorder(hwio, w_md, to_hwio=False)
            else:
                create, bias_slot, query, (src_arg, weights_arg), to_hwio = _BACKWARD[kind]
                bias_md = (b and b.handle,) if bias_slot else ()
                try:
                    pd = self._pd(create, lib.engine, dnnl.CONVOLUTION_DIRECT, src.handle,
                                  weights.handle, *bias_md, dst.handle, strides, dilates, pad_l,
                                  pad_r, fwd, attr)
                finally:
                    lib.call("dnnl_primitive_desc_destroy", fwd)
                w_md = lib.raw("dnnl_primitive_desc_query_md", pd, query, 0)
                args = {src_arg: src.handle, weights_arg: w_md, dnnl.ARG_DIFF_DST: dst.handle}
                if b is not None:
                    args[dnnl.ARG_DIFF_BIAS] = b.handle
                self.prim = dnnl.Primitive(lib, pd, args)
                self._weights_reorder(hwio, w_md, to_hwio=to_hwio)
        finally:
            dnnl.destroy_attr(lib, attr)
        self.prim.keep(src, dst, hwio, weights, b)
        # bytes of the filter (or filter gradient) in the primitive's own layout
        self.weights_bytes = lib.raw("dnnl_memory_desc_get_size", w_md)
        self._w_md = w_md  # owned by the primitive's descriptor

    def same_weights(self, other):
        """True when both primitives read (or write) the filter in the same layout."""
        return bool(self.lib.raw("dnnl_memory_desc_equal", self._w_md, other._w_md))

    def _pd(self, name, *args):
        pd = ctypes.c_void_p()
        self.lib.call(name, ctypes.byref(pd), *args)
        return pd

    def _weights_reorder(self, hwio, w_md, to_hwio):
        if self.lib.raw("dnnl_memory_desc_equal", hwio.handle, w_md):
            return
        src, dst = (w_md, hwio.handle) if to_hwio else (hwio.handle, w_md)
        self.reorder = dnnl.reorder(self.lib, src, dst).keep(hwio)

    @property
    def implementation(self):
        return self.prim.implementation


def cached(key, create, omp=1):
    """The plan cached under `key`, created (for `omp` OpenMP threads) by `create()` if missing;
    None (also cached) where oneDNN implements no primitive for it: the numpy kernels run instead."""
    with _plans_lock:
        if key in _plans:
            _plans.move_to_end(key)
            return _plans[key]
    with dnnl.library().openmp_threads(omp):  # oneDNN picks a primitive's work split for these
        try:
            plan = create()
        except dnnl.DnnlError as e:
            if e.status != dnnl.UNIMPLEMENTED:
                raise
            plan = None
    with _plans_lock:
        plan = _plans.setdefault(key, plan)
        while len(_plans) > MAX_PLANS:
            _plans.popitem(last=False)
    return plan


_implemented = {}  # (kind, geometry, channels, bias, post-ops, layout) -> whether oneDNN has one


def implements(kind, geo, c, oc, bias=False, eltwise=()):
    """Whether oneDNN has a `kind` primitive ("forward", "backward_data", "backward_weights") for
    this geometry and these channels (asked once: a primitive for one image is made and dropped);
    other oneDNN errors are raised."""
    key = (kind, geo.key, c, oc, bias, tuple(eltwise), WEIGHTS_ANY)
    found = _implemented.get(key)
    if found is None:
        with dnnl.library().openmp_threads(1):
            try:
                Plan(kind, geo, 1, c, oc, bias, tuple(eltwise))
                found = True
            except dnnl.DnnlError as e:
                if e.status != dnnl.UNIMPLEMENTED:
                    raise
                found = False
        with _plans_lock:
            if len(_implemented) >= MAX_PLANS:
                _implemented.pop(next(iter(_implemented)))
            _implemented[key] = found
    return found


def _plan(kind, geo, nb, c, oc, bias=False, eltwise=(), omp=1):
    key = (kind, geo.h, geo.w, geo.kh, geo.kw, geo.sh, geo.sw, geo.dh, geo.dw, geo.pt, geo.pb,
           geo.pl, geo.pr, nb, c, oc, WEIGHTS_ANY, bias, tuple(eltwise), omp)
    return cached(key, lambda: Plan(kind, geo, nb, c, oc, bias, eltwise), omp)


class _Timing:
    """The threading chooser's record of one forward convolution (`dnnl_matmul._Chooser.record`):
    its last times each way and the chosen way's time when chosen."""

    __slots__ = ("times", "seen", "reference", "__weakref__")

    def __init__(self):
        self.times = {TEAM: collections.deque(maxlen=3), BLOCKS: collections.deque(maxlen=3)}
        self.seen = {TEAM: 0, BLOCKS: 0}
        self.reference = None


_timings = {}


def _timing(key):
    with _plans_lock:
        timing = _timings.get(key)
        if timing is None:
            if len(_timings) >= MAX_PLANS:
                _timings.pop(next(iter(_timings)))
            timing = _timings[key] = _Timing()
        return timing


def _team_mode(n, macs, threads):
    """TEAM or BLOCKS for a forward convolution or an input gradient run on `threads` threads
    (None: one thread)."""
    if (threads <= 1 or n < 2 or macs < TEAM_MIN_MACS or intra_op.in_worker()
            or not blas.owns_blas_threads()):
        return None
    return dnnl_matmul.current_way()


def image_blocks(n, work, min_work=None, max_blocks=None):
    """Images per block: up to `max_blocks` (MAX_BLOCKS) blocks of at least `min_work` each
    (BLOCK_MIN_WORK by default; one block for small work); independent of the thread count."""
    min_work = BLOCK_MIN_WORK if min_work is None else min_work
    max_blocks = MAX_BLOCKS if max_blocks is None else max_blocks
    blocks = max(1, min(max_blocks, n, work // max(1, min_work)))
    return -(-n // blocks)


def run_blocks(n, nb, work_on, threads):
    """Call `work_on(lo, hi)` for each block of nb images, shared with the intra-op pool, each
    oneDNN call on one OpenMP thread."""
    run_tasks([(work_on, lo, min(n, lo + nb)) for lo in range(0, n, nb)], threads)


def run_tasks(tasks, threads):
    """Call `work_on(lo, hi)` for each (work_on, lo, hi) of `tasks`, in that order on one thread
    or taken in that order from one iterator by this thread and the intra-op pool's, each oneDNN
    call on one OpenMP thread."""
    lib = dnnl.library()
    if len(tasks) == 1 or threads <= 1 or intra_op.in_worker() or not blas.owns_blas_threads():
        with lib.openmp_threads(1):  # the same blocks, one after the other on this thread
            for work_on, lo, hi in tasks:
                work_on(lo, hi)
        return
    pieces = intra_op.shared_iter(tasks)

    def work():
        with lib.openmp_threads(1):
            for work_on, lo, hi in pieces:
                work_on(lo, hi)
    intra_op.POOL.run_shared(work, threads)


def image_bytes(a):
    return a.strides[0]


def block_plans(kind, geo, n, nb, c, oc, bias=False, eltwise=()):
    """{images: plan} for the full blocks and the short last one (None: not all implemented)."""
    plans = {nb: _plan(kind, geo, nb, c, oc, bias, eltwise)}
    if n % nb:
        plans[n % nb] = _plan(kind, geo, n % nb, c, oc, bias, eltwise)
    return None if None in plans.values() else plans


def _weights_in(plans, f):
    """{images: the filter as that block's primitive reads it}: HWIO as it is, or reordered into
    the primitive's layout (once per call and layout)."""
    f = np.ascontiguousarray(f)
    weights = {}
    for size, plan in plans.items():
        if plan.reorder is None:
            weights[size] = f
            continue
        for other, done in weights.items():  # the short block's primitive may share the layout
            if plans[other].reorder is not None and plans[other].same_weights(plan):
                weights[size] = done
                break
        else:
            buf = np.empty(plan.weights_bytes // 4, np.float32)
            with dnnl.library().openmp_threads(1):
                plan.reorder.execute({dnnl.ARG_FROM: f, dnnl.ARG_TO: buf})
            weights[size] = buf
    return weights


def _through_filter(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, threads, bias=None,
                    eltwise=()):
    """Run the `kind` primitive ("forward" or "backward_data") that maps the NHWC `src` to the
    NHWC `dst` through the HWIO filter `f`, block by block; False where oneDNN has no primitive.
    The forward pass may add `bias` (float32 [oc]) and apply `eltwise` post-ops."""
    n = src.shape[0]
    macs = n * geo.oh * geo.ow * f.size
    extra = {} if bias is None else {dnnl.ARG_BIAS: bias}
    threads = threads if macs >= PARALLEL_MIN_MACS else 1
    mode = _team_mode(n, macs, threads)
    if mode is not None:
        key = (kind, geo.key, n, c, oc, bias is not None, eltwise, threads)
        timing = _timing(key)
        t0 = time.perf_counter()
        if mode == TEAM:
            done = _team(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, threads, bias, eltwise,
                         extra)
        else:
            done = _blocks(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, threads, bias,
                           eltwise, extra, macs)
        if done and macs >= CHOOSER_MIN_MACS and not dnnl_matmul.fixed_mode():
            dnnl_matmul.CHOOSER.record(timing, mode, time.perf_counter() - t0)
        return done
    return _blocks(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, threads, bias, eltwise, extra,
                   macs)


def _team(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, threads, bias, eltwise, extra):
    """The whole batch as one primitive run by an OpenMP team of `threads` threads."""
    plans = {src.shape[0]: _plan(kind, geo, src.shape[0], c, oc, bias is not None, eltwise,
                                 omp=threads)}
    if None in plans.values():
        return False
    weights = _weights_in(plans, f)
    dnnl_matmul.mark_team()
    with dnnl.library().openmp_threads(threads):
        plans[src.shape[0]].prim.execute({src_arg: src, dnnl.ARG_WEIGHTS: weights[src.shape[0]],
                                          dst_arg: dst, **extra})
    return True


def _blocks(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, threads, bias, eltwise, extra, macs):
    """Blocks of images, each a primitive on one OpenMP thread, shared with the intra-op pool."""
    # a forward block per thread: each image's output is the same bits in any block size
    nb = image_blocks(src.shape[0], macs,
                      max_blocks=max(1, threads) if kind == "forward" else None)
    tasks = block_tasks(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, nb, bias, eltwise, extra)
    if tasks is None:
        return False
    run_tasks(tasks, threads)
    return True


def block_tasks(kind, src_arg, src, dst_arg, dst, f, geo, c, oc, nb, bias=None, eltwise=(),
                 extra=None, team=False):
    """[(work_on, lo, hi)] running the `kind` primitive on each block of nb images of `src` into
    `dst` (see `_through_filter`); None where oneDNN has no primitive. `team`: the same blocks as
    `dnnl_team.Task`s instead (no `extra` arguments)."""
    n = src.shape[0]
    plans = block_plans(kind, geo, n, nb, c, oc, bias is not None, eltwise)
    if plans is None:
        return None
    weights = _weights_in(plans, f)
    sb, db = image_bytes(src), image_bytes(dst)
    extra = extra or {}
    if team:
        return [dnnl_team.Task(plans[hi - lo].prim, (src_arg, dnnl.ARG_WEIGHTS, dst_arg),
                               (src.ctypes.data + lo * sb, weights[hi - lo].ctypes.data,
                                dst.ctypes.data + lo * db), (src, weights, dst))
                for lo, hi in ((lo, min(n, lo + nb)) for lo in range(0, n, nb))]

    def work_on(lo, hi):
        plans[hi - lo].prim.execute({src_arg: src.ctypes.data + lo * sb,
                                     dnnl.ARG_WEIGHTS: weights[hi - lo],
                                     dst_arg: dst.ctypes.data + lo * db, **extra})
    return [(work_on, lo, min(n, lo + nb)) for lo in range(0, n, nb)]


def conv2d(x, f, geo, threads, bias=None, eltwise=()):
    """Forward convolution of float32 NHWC `x` with the HWIO filter `f`: NHWC output
    (None where oneDNN has no primitive for this geometry; so for the two gradients). With
    `bias` (float32 [out channels]) and `eltwise` post-ops ((algorithm, alpha, beta) each, see
    `dnnl.set_eltwise_post_ops`), one primitive computes eltwise(conv(x, f) + bias) (FusedConv2D)."""
    x = np.ascontiguousarray(x)
    c, oc = f.shape[2], f.shape[3]
    if bias is not None:
        bias = np.ascontiguousarray(bias, np.float32)
    out = np.empty((x.shape[0], geo.oh, geo.ow, oc), np.float32)
    done = _through_filter("forward", dnnl.ARG_SRC, x, dnnl.ARG_DST, out, f, geo, c, oc, threads,
                           bias, tuple(eltwise))
    return out if done else None


def conv2d_backprop_input(g, f, geo, n, c, threads):
    """NHWC input gradient from the NHWC output gradient `g` and the HWIO filter."""
    g = np.ascontiguousarray(g)
    dx = np.empty((n, geo.h, geo.w, c), np.float32)
    done = _through_filter("backward_data", dnnl.ARG_DIFF_DST, g, dnnl.ARG_DIFF_SRC, dx, f, geo,
                           c, f.shape[3], threads)
    return dx if done else None
