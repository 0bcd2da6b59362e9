"""numpy kernel for Einsum (the equation attr is already explicit and validated)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("Einsum")
def _einsum(node):
    equation = node.attrs["equation"]
    out_dtype = node.out_dtypes[0]

    def einsum(*operands):
        optimize = len(operands) > 2 and "greedy"
        return np.asarray(np.einsum(equation, *operands, optimize=optimize), dtype=out_dtype)
    return einsum
