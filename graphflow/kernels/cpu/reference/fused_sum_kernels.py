"""CPU kernel of the fusion pass's `FusedElementwiseSum`: a FusedElementwise program's value summed
(or averaged) over its leading axes, e.g. `sum(g * x, [0, 1, 2])` or `mean((x - m)^2, [0, 1, 2])`
in a batch norm and its gradient.

The rows of the reduced axes are cut into blocks of about `BLOCK_ELEMENTS` elements, a block size
that does not depend on the thread count. For each block the program runs on that block's rows of
its inputs (an input that broadcasts over the rows is passed whole) into a block-sized value that
stays in the core's cache, and one BLAS product ones @ value sums its rows; the per-block sums are
added in block order. The blocks run on the calling thread: shared with the intra-op pool they
measured slower on two threads than on one (a one-off script, mean((x - m)^2) over [64, 32, 32,
16]'s first three axes, four blocks: 0.83 ms on two threads, 0.41 on one, 0.82-0.87 unfused; the
program alone on the four blocks, each one compiled run, 0.34 ms on two threads, 0.29 on one). The
unfused plan writes the program's whole value out and reads it back for the Sum kernel (ones @ X
over all rows at once): the same sum in another order, equal to float rounding. Inputs whose
leading axes neither match the value's nor all broadcast take the unfused route here: the program,
then that sum. The program is the numpy `FusedProgram` here; with numba the plan chooses the
compiled program's version (`numba/fused_program.py`, through `fused_sum_kernel`).
"""

import math

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.fused_kernels import FusedProgram

# Elements of the program's value per block (1 MB of float32: in a core's L2 on the machines
# measured).
BLOCK_ELEMENTS = 1 << 18


@cpu_kernel("FusedElementwiseSum")
def _fused_elementwise_sum(node):
    return fused_sum_kernel(node, FusedProgram)


def fused_sum_kernel(node, program_class):
    """The FusedElementwiseSum kernel of `node` with its program a `program_class` (FusedProgram
    or the compiled one)."""
    attrs = node.attrs
    program = program_class(attrs["program"], node.in_dtypes, node.name, attrs, threads=1,
                            chunk_elements=BLOCK_ELEMENTS)  # a block: one compiled run
    leading, keepdims, mean = attrs["leading_axes"], attrs["keepdims"], attrs["mean"]

    def fused_elementwise_sum(*inputs):
        arrays = [x if type(x) is np.ndarray else np.asarray(x) for x in inputs]
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        if len(shape) <= leading:
            raise ValueError(f"cannot sum over the {leading} leading axes of a value of shape "
                             f"{shape} and keep the others")
        rows, kept = math.prod(shape[:leading]), shape[leading:]
        views = _row_views(arrays, shape, leading)
        if views is None or rows == 0 or math.prod(kept) == 0:
            value = program(*arrays)
            total = np.add.reduce(value.reshape(rows, -1), axis=0, dtype=_acc(program.out_dtype))
        else:
            total = _blocks_summed(program, views, rows, kept)
        if mean:
            total = np.divide(total, rows, out=total)  # (no rows: 0 / 0, as numpy's mean)
        return np.asarray(total, program.out_dtype).reshape(
            (1,) * leading + kept if keepdims else kept)
    return fused_elementwise_sum


def _row_views(arrays, shape, leading):
    """[(cut by rows?, view)] with each input as [rows or 1, *its kept axes]; None when an input
    broadcasts over some but not all of the reduced axes."""
    rank = len(shape)
    views = []
    for a in arrays:
        padded = (1,) * (rank - a.ndim) + a.shape
        if padded[:leading] == shape[:leading]:
            views.append((True, a.reshape((-1,) + padded[leading:])))
        elif all(d == 1 for d in padded[:leading]):
            views.append((False, a.reshape((1,) + padded[leading:])))
        else:
            return None
    return views


def _acc(dtype):  # float16 sums accumulate in float32 (rounded once), as the Sum kernel's
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def _blocks_summed(program, views, rows, kept):
    cols = math.prod(kept)
    block_rows = max(1, BLOCK_ELEMENTS // cols)
    starts = range(0, rows, block_rows)
    acc = _acc(program.out_dtype)
    partials = np.empty((len(starts), cols), acc)
    ones = np.ones(block_rows, acc)

    for b, lo in enumerate(starts):
        hi = min(rows, lo + block_rows)
        value = program(*[v[lo:hi] if cut else v for cut, v in views])
        value = np.broadcast_to(value, (hi - lo,) + kept).reshape(hi - lo, cols)
        np.dot(ones[:hi - lo], value.astype(acc, copy=False), out=partials[b])
    return partials[0].copy() if len(starts) == 1 else np.add.reduce(partials, axis=0)
