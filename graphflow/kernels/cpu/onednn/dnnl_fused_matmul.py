"""MatMul and FusedMatMul as oneDNN's matmul primitive (`dnnl_matmul.py`), registered as their
implementation "onednn": 2-D float32 products of at least `dnnl_matmul.MIN_MACS` multiply-adds whose
shapes the plan knows (a batch dim unknown when the plan is built leaves the product to the numpy
implementations). FusedMatMul's bias is the primitive's, and so is its activation where oneDNN
computes it exactly (`dnnl.activation_post_ops`: ReLU, ReLU6, LeakyReLU), else graphflow's numpy
instruction applies it after the primitive (`FusedActivation`, shared with FusedConv2D).

Every product of MIN_MACS or more goes here except a vector times a matrix (one row of a, or one
column of b: batch-1 inference's dense layers), which numpy's BLAS computes as a matrix-vector
product reading the matrix once, where oneDNN's primitive first packs it: one thread, min of 40
calls, [1, 3136] @ [3136, 1024] 0.675 ms through oneDNN, 0.208 through numpy; [1, 4096] @
[4096, 512] 0.502 / 0.148; from two rows on the two are level (0.73-1.29).
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.numba import fused_jit
from graphflow.kernels.cpu.onednn import dnnl, dnnl_matmul
from graphflow.kernels.cpu.reference.fused_kernels import member_error
from graphflow.kernels.cpu.reference.fused_matmul_kernels import Activation
from graphflow.kernels.cpu.reference.math_kernels import oriented, product_dims
from graphflow.kernels.cpu.threads import blas

_F32 = np.dtype(np.float32)


class FusedActivation(Activation):
    """The activation of a fused op run by a oneDNN primitive: as post-ops where those compute
    graphflow's values exactly (`dnnl.activation_post_ops`), else as graphflow's instruction applied
    to the primitive's result (`finish`)."""

    __slots__ = ("post_ops", "exact_post_ops")

    def __init__(self, activation, attrs, dtype):
        super().__init__(activation, attrs, dtype, fused_jit.usable_kernel_function())
        exact = dnnl.activation_post_ops(activation, attrs)
        self.exact_post_ops = exact is not None
        self.post_ops = exact if exact is not None else ()  # what a primitive is asked to apply

    def finish(self, out, by_primitive):
        """`out` activated: as it is when a primitive applied the post-ops (`by_primitive`) and
        they were the whole activation, else through the instruction (in place if it may)."""
        if self.act is None or (by_primitive and self.exact_post_ops):
            return out
        return self.apply(out)


def fused_activation_of(node):
    """The FusedActivation of a fused op's node (its attrs `activation`, `activation_attrs`)."""
    return FusedActivation(node.attrs.get("activation", ""), node.attrs.get("activation_attrs"),
                           node.out_dtypes[0])


def matmul_applies(node):
    """A 2-D float32 product of known shape and at least MIN_MACS multiply-adds."""
    if any(np.dtype(d) != _F32 for d in node.in_dtypes[:2]):
        return False
    dims = product_dims(node)
    return dims is not None and dnnl_matmul.takes_product(*dims)


def fused_matmul_applies(node):
    """`matmul_applies`, with a float32 bias of the product's columns ([n] or [1, n])."""
    if not matmul_applies(node) or np.dtype(node.in_dtypes[2]) != _F32:
        return False
    n = product_dims(node)[2]
    return node.in_shapes[2] in ((n,), (1, n))


def _product(a, b, threads, bias=None, ops=()):
    out = dnnl_matmul.matmul(a, b, threads, bias, ops)
    if out is None:
        raise ValueError(f"oneDNN cannot compute the product of shapes {a.shape} x {b.shape}"
                         + ("" if bias is None else f" + bias {np.shape(bias)}"))
    return out


@cpu_kernel("MatMul", name="onednn", preference=30, requires=("onednn",), applies=matmul_applies)
def matmul_onednn(node):
    ta = node.attrs.get("transpose_a", False)
    tb = node.attrs.get("transpose_b", False)
    threads = blas.session_threads(node)
    return lambda a, b: _product(*oriented(a, b, ta, tb), threads)


@cpu_kernel("FusedMatMul", name="onednn", preference=30, requires=("onednn",),
            applies=fused_matmul_applies)
def fused_matmul_onednn(node):
    ta = node.attrs.get("transpose_a", False)
    tb = node.attrs.get("transpose_b", False)
    activation = FusedActivation(node.attrs.get("activation", ""),
                                 node.attrs.get("activation_attrs"), node.out_dtypes[0])
    threads = blas.session_threads(node)

    def fused_matmul(a, b, bias):
        stage = 0  # the member being computed: matmul (with the bias), activation
        try:
            out = _product(*oriented(a, b, ta, tb), threads, bias, activation.post_ops)
            stage = 2
            return activation.finish(out, True)
        except Exception as exc:
            raise member_error(exc, node.attrs, stage) from exc
    return fused_matmul
