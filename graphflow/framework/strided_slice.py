"""TF strided-slice specs as numpy index tuples: the one index arithmetic that the StridedSlice
shape rule (`ops/slice_ops.py`) and the CPU and CUDA kernels share, so they agree. A leaf: it
imports numpy only, so kernels reach it without importing op constructors.
"""

import builtins

import numpy as np


def strided_slice_index(ndims, begin, end, strides, masks):
    """A numpy basic-index tuple for a TF strided-slice spec on a tensor of rank `ndims`.

    begin/end/strides are equal-length lists of ints (entries may be None when unknown: the index
    then holds None for them, usable only for shape reasoning). Returns (index, dims) where index
    holds ints (shrunk dims), slices, `np.newaxis` and `dims` maps each index entry that consumes
    an input dimension to that dimension (None for new axes).
    """
    n = len(begin)
    if not len(end) == len(strides) == n:
        raise ValueError(f"begin, end and strides must have the same length, got {len(begin)}, "
                         f"{len(end)} and {len(strides)}")
    bit = [1 << i for i in range(n)]
    ellipsis = [i for i in range(n) if masks["ellipsis_mask"] & bit[i]]
    if len(ellipsis) > 1:
        raise ValueError("only one ellipsis ('...') is allowed in a slice")
    new_axis = [bool(masks["new_axis_mask"] & b) for b in bit]
    consumed = sum(1 for i in range(n) if not new_axis[i] and i not in ellipsis)
    if consumed > ndims:
        raise ValueError(f"too many indices ({consumed}) for a tensor of rank {ndims}")
    index, dims = [], []
    dim = 0
    for i in range(n):
        if i in ellipsis:
            fill = ndims - consumed
            index.extend([builtins.slice(None)] * fill)
            dims.extend(range(dim, dim + fill))
            dim += fill
        elif new_axis[i]:
            index.append(np.newaxis)
            dims.append(None)
        elif masks["shrink_axis_mask"] & bit[i]:
            index.append(begin[i])
            dims.append(dim)
            dim += 1
        else:
            if strides[i] == 0:
                raise ValueError(f"slice step of dimension {dim} must not be 0")
            b = None if masks["begin_mask"] & bit[i] else begin[i]
            e = None if masks["end_mask"] & bit[i] else end[i]
            index.append(builtins.slice(b, e, strides[i]))
            dims.append(dim)
            dim += 1
    if not ellipsis and dim < ndims:  # an implicit trailing ellipsis
        index.extend([builtins.slice(None)] * (ndims - dim))
        dims.extend(range(dim, ndims))
    return tuple(index), dims
