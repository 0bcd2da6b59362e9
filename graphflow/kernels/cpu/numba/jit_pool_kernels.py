"""The "numba" implementations of the pooling ops (MaxPool, MaxPoolGrad, AvgPool, AvgPoolGrad,
FusedMaxPoolGradReluMask): the compiled loops of `jit_pool.py` and `jit_avg_pool.py` (NHWC) and
`jit_pool_nchw.py` (NCHW, no transposes), for the nodes `jit_pool.applies` takes (float32/float64,
an input of static size large enough to pay the compile). The layout is an attribute, so each
kernel's loops are fixed when it is built; the loops give the reference's values
(`reference/pool_kernels.py`; see each loop module for the exact rules).

NHWC MaxPool records its argmaxes for the gradient once a gradient kernel has asked for them
(`pool_records.py`); the NHWC MaxPoolGrad then scatters `g` through them, and searches the windows
where the forward pass kept none (another run's output, a fed array). Float32 NCHW MaxPoolGrad is
oneDNN's (`dnnl_pool.py`, preferred) except where `prefers_over_onednn`.
"""

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import jit_avg_pool, jit_pool, jit_pool_nchw
from graphflow.kernels.cpu.reference import fused_pool_kernels, pool_records
from graphflow.kernels.cpu.reference.conv_geometry import check4 as _check4
from graphflow.kernels.cpu.reference.pool_kernels import Pool, avg_pool_grad_sizes, node_geometry
from graphflow.kernels.cpu.threads import blas

PREFERENCE = 20


def prefers_over_onednn(node):
    """Whether these loops beat oneDNN's MaxPoolGrad on `node` (which `jit_pool.applies` takes):
    NHWC (the forward pass's recorded argmaxes), and NCHW planes that 2x2 windows at stride 2
    cover exactly (`jit_pool_nchw.max_pool_grad_pairs`)."""
    if Pool(node).fmt == "NHWC":
        return True
    static = node_geometry(node)
    return static is not None and jit_pool_nchw.covers_in_pairs(static[1])


def _check_nchw_grad(g, n, c, geo, what="grad"):
    want = (n, c, geo.oh, geo.ow)
    if g.shape != want:
        raise ValueError(f"{what} has shape {g.shape}, expected {want} (NCHW)")


def _numba(*op_types):
    return cpu_kernel(*op_types, name="numba", preference=PREFERENCE, requires=("numba",),
                      applies=jit_pool.applies)


# ---------------------------------------------------------------- max pooling
@_numba("MaxPool")
def _max_pool(node):
    pool = Pool(node)
    threads = blas.session_threads(node)
    if pool.fmt == "NCHW":
        def max_pool_nchw(x):
            _check4(x, "input")
            return jit_pool_nchw.max_pool(x, pool.geometry(pool.nhwc(x.shape)), threads)
        return max_pool_nchw
    recorder = pool_records.Recorder()
    fast = {}  # (shape, dtype) of C-contiguous inputs -> jit_pool.runner, or None

    def max_pool(x):
        run = fast.get((x.shape, x.dtype), False) if x.flags.c_contiguous else False
        if run:
            return run(x)
        _check4(x, "input")
        geo = pool.geometry(x.shape)
        if run is not None and x.flags.c_contiguous and len(fast) < 16:
            run = fast[(x.shape, x.dtype)] = jit_pool.runner(x, geo, threads)
            if run:
                return run(x)
        return jit_pool.max_pool(x, geo, threads, recorder)
    return max_pool


def max_pool_grad(pool, threads):
    """The compiled MaxPoolGrad of `pool`'s layout, as a function of (x, y, g)."""
    if pool.fmt == "NCHW":
        def max_pool_grad_nchw(x, y, g):
            _check4(x, "orig_input")
            n, c = x.shape[:2]
            geo = pool.geometry(pool.nhwc(x.shape))
            _check_nchw_grad(g, n, c, geo)
            return jit_pool_nchw.max_pool_grad(x, g, geo, threads)
        return max_pool_grad_nchw

    def max_pool_grad_nhwc(x, y, g):
        _check4(x, "orig_input")
        geo = pool.geometry(x.shape)
        pool.check_grad(g, geo, x.shape[0], x.shape[3])
        arg = pool_records.recall(y, x.shape)  # the forward pass's argmaxes, when it kept them
        if arg is not None:
            return jit_pool.max_pool_grad_from_argmax(x.shape, g, arg, threads)
        return jit_pool.max_pool_grad(x, g, geo, threads)
    return max_pool_grad_nhwc


@_numba("MaxPoolGrad")
def _max_pool_grad(node):
    pool_records.recalling_kernel_built()  # MaxPool records argmaxes for it from now on
    return max_pool_grad(Pool(node), blas.session_threads(node))


@_numba("FusedMaxPoolGradReluMask")
def _fused_max_pool_grad_relu_mask(node):
    """The mask pass and MaxPoolGrad compiled; where the forward pass recorded argmaxes of windows
    that tile the input, the mask inside the recorded gradient's loop (`tiled_grad_relu_mask`, the
    plain loop plus a read of y per window)."""
    pool = Pool(node)
    threads = blas.session_threads(node)
    pool_records.recalling_kernel_built()
    masked = fused_pool_kernels.masked_max_pool_grad(max_pool_grad(pool, threads),
                                                     jit_pool.positive_grad)
    if pool.fmt == "NCHW":
        return masked

    def max_pool_grad_relu_mask(x, y, g):
        _check4(x, "orig_input")
        geo = pool.geometry(x.shape)
        pool.check_grad(y, geo, x.shape[0], x.shape[3], what="orig_output")
        pool.check_grad(g, geo, x.shape[0], x.shape[3])
        arg = pool_records.recall(y, x.shape)
        if arg is not None and arg[1].tiles_input:
            dx = jit_pool.tiled_grad_relu_mask(x.shape, g, y, arg, threads)
            if dx is not None:  # None: y holds a NaN, the unfused pair's bits below
                return dx
        return masked(x, y, g)
    return max_pool_grad_relu_mask


# ---------------------------------------------------------------- average pooling
@_numba("AvgPool")
def _avg_pool(node):
    pool = Pool(node)
    threads = blas.session_threads(node)

    def avg_pool(x):
        _check4(x, "input")
        geo = pool.geometry(pool.nhwc(x.shape))
        if pool.fmt == "NCHW":
            return jit_pool_nchw.avg_pool(x, geo, threads)
        return jit_avg_pool.avg_pool(x, geo, threads)
    return avg_pool


@_numba("AvgPoolGrad")
def _avg_pool_grad(node):
    pool = Pool(node)
    threads = blas.session_threads(node)

    def avg_pool_grad(orig_input_shape, g):
        (n, h, w, c), geo = avg_pool_grad_sizes(pool, orig_input_shape, g)
        if pool.fmt == "NCHW":
            _check_nchw_grad(g, n, c, geo)
            return jit_pool_nchw.avg_pool_grad((n, c, h, w), g, geo, threads)
        pool.check_grad(g, geo, n, c)
        return jit_avg_pool.avg_pool_grad((n, h, w, c), g, geo, threads)
    return avg_pool_grad
