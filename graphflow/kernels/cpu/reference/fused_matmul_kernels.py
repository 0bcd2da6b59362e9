"""numpy reference of `FusedMatMul` (a matmul, its bias and an optional activation, from the fusion
pass), and what every FusedMatMul implementation shares: the operands oriented by the transpose
attrs (`math_kernels.oriented`), the activation as graphflow's numpy instruction (`Activation`), the
bias checked and added (`BiasAdder`) and errors naming the replaced op (`member_error`).

The other implementations register in their own modules: oneDNN's primitive with the bias and exact
activations as post-ops (`onednn/dnnl_fused_matmul.py`), products split over the intra-op pool
(`threads/split_matmul.py`), one compiled loop at batch 1 (`numba/jit_small.py`).
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.fused_instructions import instruction
from graphflow.kernels.cpu.reference.fused_kernels import member_error
from graphflow.kernels.cpu.reference.math_kernels import oriented


class Activation:
    """The activation of a fused op (FusedMatMul, FusedConv2D) as graphflow's numpy instruction."""

    __slots__ = ("name", "act", "alias_ok", "relu_or_none")

    def __init__(self, activation, attrs, dtype, compiled=None):
        self.name = activation or ""
        self.act, self.alias_ok = (None, True)
        if activation:  # (`compiled`: see `fused_instructions.instruction`)
            self.act, self.alias_ok = instruction(activation, attrs or {}, [dtype], dtype, compiled)
        # None: no activation; True: a Relu (max(x, 0)), which compiled loops apply themselves;
        # False: another one
        self.relu_or_none = None if self.act is None else activation == "Relu"

    def apply(self, out):
        """`out` activated (in place where the instruction may write over its operand)."""
        if self.act is None:
            return out
        if self.alias_ok:
            self.act(out, out=out)
            return out
        result = np.empty_like(out)
        self.act(out, out=result)
        return result


def activation_of(node, compiled=None):
    """The node's `Activation` (from its attrs `activation`, `activation_attrs`)."""
    return Activation(node.attrs.get("activation", ""), node.attrs.get("activation_attrs"),
                      node.out_dtypes[0], compiled)


class BiasAdder:
    """`add(out, bias)`: the bias added to a product's result in place, its shape checked once
    per pair of shapes (a bias that does not broadcast to the result is a clear error)."""

    __slots__ = ("fitting",)

    def __init__(self):
        self.fitting = set()  # (result shape, bias shape) pairs that broadcast to the result

    def add(self, out, bias):
        shapes = (out.shape, np.shape(bias))
        if shapes not in self.fitting:
            if np.broadcast_shapes(*shapes) != out.shape:
                raise ValueError(f"bias of shape {shapes[1]} does not match the matmul result of "
                                 f"shape {out.shape}")
            if len(self.fitting) >= 16:
                self.fitting.clear()
            self.fitting.add(shapes)
        np.add(out, bias, out=out)
        return out


def product_then_bias(node, product, compiled=None):
    """The FusedMatMul kernel that computes `product(a, b)` (a new array, the operands oriented),
    adds the bias, then applies the activation: the reference with `np.matmul`, the split
    products (`threads/split_matmul.py`) with theirs (and `compiled`, as `Activation` takes it)."""
    ta = node.attrs.get("transpose_a", False)
    tb = node.attrs.get("transpose_b", False)
    activation = activation_of(node, compiled)
    bias_adder = BiasAdder()

    def fused_matmul(a, b, bias):
        stage = 0  # the member being computed: matmul, bias, activation
        try:
            out = product(*oriented(a, b, ta, tb))
            stage = 1
            out = bias_adder.add(out, bias)
            stage = 2
            return activation.apply(out)
        except Exception as exc:
            raise member_error(exc, node.attrs, stage) from exc
    return fused_matmul


@cpu_kernel("FusedMatMul")
def _fused_matmul(node):
    return product_then_bias(node, np.matmul)
