"""MaxPoolGrad (and FusedMaxPoolGradReluMask) through oneDNN's max pooling primitives (`dnnl.py`)
for float32, when the optional oneDNN library is installed: the "onednn" implementation, chosen
when the plan is built for the nodes `applies` takes; the numpy kernel (`reference/pool_kernels.py`)
is the reference the tests compare with.

TF's MaxPoolGrad gets the input, the forward output and the output gradient; oneDNN's backward
pass needs the forward pass's workspace (the index of each window's maximum) instead. So each block
of images runs oneDNN's forward pass (training mode, which writes the workspace) and then its
backward pass. oneDNN keeps the first maximum of a window in row-major tap order (a later tap must
be strictly greater) and never lets padding win: the numpy kernel's routing, ties included
(tested). Only NaN inputs differ (oneDNN's comparisons skip NaN, the numpy kernel routes the gradient
to a NaN in first position): a NaN input makes the gradient meaningless either way.

Measured (one thread, [64, 28, 28, 16] input, 2x2 windows, stride 2, load average 1.8): the numba
loop 6.8 ms, oneDNN forward + backward 1.3 ms; [64, 32, 32, 32]: 4.8 -> 2.8 ms. MaxPool forward
stays on the numba loop (no faster through oneDNN on these shapes: 0.44 vs 0.18 ms, 1.6 vs 1.4 ms,
0.19 vs 1.0 ms, and its NaN semantics are the numpy kernel's).

NCHW arrays get primitives with NCHW memory descriptors (no transposes): [64, 32, 32, 32], 2x2
windows, one thread, 2.8 ms against 3.0 for a compiled NCHW window search (load average 1.2); 2x2
windows with stride 2 that cover the input stay on `jit_pool_nchw.py`'s flat passes (1.0 ms).

Images are split into blocks on graphflow's intra-op threads as for the convolutions
(`dnnl_conv.py`), each block one pair of oneDNN calls on one OpenMP thread.
"""

import ctypes

import numpy as np

from graphflow.kernels.cpu import TABLE, cpu_kernel
from graphflow.kernels.cpu.numba import jit_pool_kernels
from graphflow.kernels.cpu.onednn import dnnl, dnnl_conv
from graphflow.kernels.cpu.reference import fused_pool_kernels
from graphflow.kernels.cpu.reference.conv_geometry import check4 as _check4
from graphflow.kernels.cpu.reference.pool_kernels import Pool, node_geometry
from graphflow.kernels.cpu.threads import blas

PREFERENCE = 30  # above the compiled loops' (they step aside: `jit_pool_kernels.prefers_over_onednn`)


def _loops_take(node):
    """Whether the compiled loops (usable here) run `node` and beat oneDNN there."""
    loops = [i for i in TABLE.implementations(node.type) if i.name == "numba"]
    return any(TABLE.usable(i) and i.applies(node) for i in loops) \
        and jit_pool_kernels.prefers_over_onednn(node)


def applies(node):
    """float32 x, y and g of static shape with at least one element, a geometry oneDNN has
    primitives for, and not a node the compiled loops take for themselves (NHWC, where they reuse
    the forward pass's argmaxes; NCHW planes that 2x2 windows at stride 2 cover exactly)."""
    if any(np.dtype(d) != np.float32 for d in node.in_dtypes[:3]):
        return False
    static = node_geometry(node)
    if static is None or None in static[0] or 0 in static[0]:
        return False
    (n, _, _, c), geo = static
    if _loops_take(node):
        return False
    return _plan(geo, 1, c, Pool(node).fmt == "NCHW") is not None


# blocks of at least this many input bytes (dnnl_conv.image_blocks): the gradient of one image does
# not depend on the others, so any split gives the same result
BLOCK_MIN_BYTES = 256 << 10


class _Plan:
    """oneDNN's max pooling forward (training) and backward primitives for one block size."""

    def __init__(self, geo, nb, c, nchw):
        lib = dnnl.library()
        if nchw:
            x_shape, y_shape, axes = (nb, c, geo.h, geo.w), (nb, c, geo.oh, geo.ow), (0, 1, 2, 3)
        else:
            x_shape, y_shape = (nb, geo.h, geo.w, c), (nb, geo.oh, geo.ow, c)
            axes = dnnl_conv.NHWC_AXES
        src = dnnl.Desc.plain(lib, [x_shape[a] for a in axes], dnnl.element_strides(x_shape, axes))
        dst = dnnl.Desc.plain(lib, [y_shape[a] for a in axes], dnnl.element_strides(y_shape, axes))
        strides, kernel = dnnl.dims((geo.sh, geo.sw)), dnnl.dims((geo.kh, geo.kw))
        dilation = dnnl.dims((0, 0))
        pad_l, pad_r = dnnl.dims((geo.pt, geo.pl)), dnnl.dims((geo.pb, geo.pr))
        attr = dnnl.user_scratchpad_attr(lib)
        try:
            fwd = ctypes.c_void_p()
            lib.call("dnnl_pooling_forward_primitive_desc_create", ctypes.byref(fwd), lib.engine,
                     dnnl.FORWARD_TRAINING, dnnl.POOLING_MAX, src.handle, dst.handle, strides, kernel,
                     dilation, pad_l, pad_r, attr)
            bwd = ctypes.c_void_p()
            try:
                lib.call("dnnl_pooling_backward_primitive_desc_create", ctypes.byref(bwd),
                         lib.engine, dnnl.POOLING_MAX, src.handle, dst.handle, strides, kernel,
                         dilation, pad_l, pad_r, fwd, attr)
            except dnnl.DnnlError:
                lib.call("dnnl_primitive_desc_destroy", fwd)
                raise
        finally:
            dnnl.destroy_attr(lib, attr)
        ws_fwd = lib.raw("dnnl_primitive_desc_query_md", fwd, dnnl.QUERY_WORKSPACE_MD, 0)
        ws_bwd = lib.raw("dnnl_primitive_desc_query_md", bwd, dnnl.QUERY_WORKSPACE_MD, 0)
        self.workspace_bytes = lib.raw("dnnl_memory_desc_get_size", ws_fwd)
        if not self.workspace_bytes or not lib.raw("dnnl_memory_desc_equal", ws_fwd, ws_bwd):
            lib.call("dnnl_primitive_desc_destroy", fwd)
            lib.call("dnnl_primitive_desc_destroy", bwd)
            raise dnnl.DnnlError("oneDNN: max pooling has no workspace shared by its two passes",
                                 dnnl.UNIMPLEMENTED)
        self.forward = dnnl.Primitive(lib, fwd, {dnnl.ARG_SRC: src.handle, dnnl.ARG_DST: dst.handle,
                                                 dnnl.ARG_WORKSPACE: ws_fwd}).keep(src, dst)
        self.backward = dnnl.Primitive(lib, bwd, {dnnl.ARG_DIFF_SRC: src.handle,
                                                  dnnl.ARG_DIFF_DST: dst.handle,
                                                  dnnl.ARG_WORKSPACE: ws_bwd}).keep(src, dst)
        self.y_block = tuple(y_shape)


def _plan(geo, nb, c, nchw):
    key = ("max_pool", geo.h, geo.w, geo.kh, geo.kw, geo.sh, geo.sw, geo.pt, geo.pb, geo.pl,
           geo.pr, nb, c, nchw)
    return dnnl_conv.cached(key, lambda: _Plan(geo, nb, c, nchw))


def max_pool_grad(x, g, geo, threads, nchw=False):
    """MaxPoolGrad of float32 NHWC (`nchw`: NCHW) `x` and output gradient `g`: dx in that layout
    (None where oneDNN has no primitive for this geometry)."""
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(g)
    n = x.shape[0]
    c = x.shape[1 if nchw else 3]
    dx = np.empty(x.shape, np.float32)
    nb = dnnl_conv.image_blocks(n, x.nbytes, BLOCK_MIN_BYTES)
    plans = {nb: _plan(geo, nb, c, nchw)}
    if n % nb:
        plans[n % nb] = _plan(geo, n % nb, c, nchw)
    if None in plans.values():
        return None
    xb, gb = x.strides[0], g.strides[0]

    def work_on(lo, hi):
        plan = plans[hi - lo]
        y = np.empty(plan.y_block, np.float32)
        workspace = np.empty(plan.workspace_bytes, np.uint8)
        plan.forward.execute({dnnl.ARG_SRC: x.ctypes.data + lo * xb, dnnl.ARG_DST: y,
                              dnnl.ARG_WORKSPACE: workspace})
        plan.backward.execute({dnnl.ARG_DIFF_DST: g.ctypes.data + lo * gb,
                               dnnl.ARG_DIFF_SRC: dx.ctypes.data + lo * xb,
                               dnnl.ARG_WORKSPACE: workspace})
    dnnl_conv.run_blocks(n, nb, work_on, threads)
    return dx


def _grad_function(pool, threads):
    """oneDNN's MaxPoolGrad of `pool`'s layout, as a function of (x, y, g)."""
    nchw = pool.fmt == "NCHW"

    def max_pool_grad_onednn(x, y, g):
        _check4(x, "orig_input")
        shape = pool.nhwc(x.shape)
        geo = pool.geometry(shape)
        want = (shape[0], shape[3], geo.oh, geo.ow) if nchw else (shape[0], geo.oh, geo.ow, shape[3])
        if g.shape != want:
            raise ValueError(f"grad has shape {g.shape}, expected {want} ({pool.fmt})")
        dx = max_pool_grad(x, g, geo, threads, nchw)
        if dx is None:
            raise RuntimeError(f"oneDNN has no max pooling primitive for input {x.shape}")
        return dx
    return max_pool_grad_onednn


@cpu_kernel("MaxPoolGrad", name="onednn", preference=PREFERENCE, requires=("onednn",),
            applies=applies)
def _max_pool_grad_onednn(node):
    return _grad_function(Pool(node), blas.session_threads(node))


@cpu_kernel("FusedMaxPoolGradReluMask", name="onednn", preference=PREFERENCE,
            requires=("onednn",), applies=applies)
def _fused_max_pool_grad_relu_mask_onednn(node):
    """The numpy mask pass over the pooled arrays, then oneDNN's MaxPoolGrad."""
    return fused_pool_kernels.masked_max_pool_grad(
        _grad_function(Pool(node), blas.session_threads(node)))
