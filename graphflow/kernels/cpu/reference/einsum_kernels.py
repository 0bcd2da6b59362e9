"""numpy kernel for Einsum (the equation attr is already explicit and validated). With two or
more operands the contraction order comes from numpy's greedy path search, computed once per
combination of operand shapes, so pairwise contractions run as BLAS matrix products."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("Einsum")
def _einsum(node):
    equation = node.attrs["equation"]
    out_dtype = node.out_dtypes[0]
    paths = {}

    def einsum(*operands):
        if len(operands) < 2:
            return np.asarray(np.einsum(equation, *operands), dtype=out_dtype)
        key = tuple(x.shape for x in operands)
        path = paths.get(key)
        if path is None:
            path = paths[key] = np.einsum_path(equation, *operands, optimize="greedy")[0]
        return np.asarray(np.einsum(equation, *operands, optimize=path), dtype=out_dtype)
    return einsum
