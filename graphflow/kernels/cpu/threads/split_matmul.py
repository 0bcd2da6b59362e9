"""MatMul and FusedMatMul as numpy products split over the intra-op pool (`blas.matmul`: row or
column blocks, each a single-threaded BLAS call on its own slice of the output), registered as
their implementation "blas_split".

It applies where the session runs kernels on several threads and graphflow holds numpy's BLAS to
one thread during runs (`blas.owns_blas_threads`), to 2-D products of at least
`blas.PARALLEL_MIN_MACS` multiply-adds that cut into two blocks or more; and, as the general
threaded path, to products whose shapes the plan does not know (a dim or rank unknown when the plan
is built): `blas.matmul` then cuts them by their size at run time (one block: one call), as it
sizes the blocks of any product by the session's thread count.
"""

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import fused_jit
from graphflow.kernels.cpu.reference.fused_matmul_kernels import product_then_bias
from graphflow.kernels.cpu.reference.math_kernels import oriented, product_dims, product_ranks
from graphflow.kernels.cpu.threads import blas


def split_applies(node):
    """Several session threads, BLAS held to one thread in runs, and a 2-D product that splits
    into two blocks or more, or one of unknown shape that may (see the module docstring)."""
    threads = blas.session_threads(node)
    if threads <= 1 or not blas.owns_blas_threads():
        return False
    ranks = product_ranks(node)
    if ranks is not None and ranks != (2, 2):
        return False  # batched products run as numpy's
    dims = product_dims(node)
    if dims is None:
        return True
    m, k, n = dims
    length = m if m >= n else n
    return m * k * n >= blas.PARALLEL_MIN_MACS and min(threads * 2, length // blas.MIN_BLOCK) >= 2


@cpu_kernel("MatMul", name="blas_split", preference=10, applies=split_applies)
def matmul_split(node):
    ta = node.attrs.get("transpose_a", False)
    tb = node.attrs.get("transpose_b", False)
    threads = blas.session_threads(node)
    return lambda a, b: blas.matmul(*oriented(a, b, ta, tb), threads)


@cpu_kernel("FusedMatMul", name="blas_split", preference=10, applies=split_applies)
def fused_matmul_split(node):
    threads = blas.session_threads(node)
    return product_then_bias(node, lambda a, b: blas.matmul(a, b, threads),
                             fused_jit.usable_kernel_function())
