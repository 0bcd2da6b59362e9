"""numpy kernel for LRN (local response normalization along the depth axis). float16 inputs are
computed in float32 and rounded once at the end."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


@cpu_kernel("LRN")
def _lrn(node):
    a = node.attrs
    r, bias, alpha, beta = a["depth_radius"], a["bias"], a["alpha"], a["beta"]

    def lrn(x):
        if x.ndim != 4:
            raise ValueError(f"input must be 4-D, got shape {x.shape}")
        work = x.astype(np.float32) if x.dtype == np.float16 else x
        sq = np.square(work)
        depth = x.shape[3]
        total = np.zeros_like(sq)
        for k in range(-r, r + 1):  # each entry's depth window, clipped at the ends
            lo, hi = max(0, -k), min(depth, depth - k)
            if lo < hi:
                total[..., lo:hi] += sq[..., lo + k:hi + k]
        norm = total * work.dtype.type(alpha) + work.dtype.type(bias)
        return (work * np.power(norm, work.dtype.type(-beta))).astype(x.dtype, copy=False)
    return lrn
