"""numpy kernel for MaxPoolWithArgmax (graphflow/ops/pool_argmax_ops.py): the max pool of NHWC
input and the flattened input index of each window's first maximum (row-major window order; a
later tap must be strictly greater, and padding never wins, TF's CPU rule). One whole-batch pass
per window tap, as the other pools (`pool_kernels.py`)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference.conv_geometry import check4
from graphflow.kernels.cpu.reference.pool_kernels import Pool, lowest


@cpu_kernel("MaxPoolWithArgmax")
def _max_pool_with_argmax(node):
    pool = Pool(node)
    with_batch = node.attrs.get("include_batch_in_index", False)
    index_dtype = np.dtype(node.out_dtypes[1])

    def max_pool_with_argmax(x):
        check4(x, "input")
        n, h, w, c = x.shape
        geo = pool.geometry(x.shape)
        xp = geo.pad(x, lowest(x.dtype))
        # the input row and column each padded position holds (-1 for padding)
        rows = np.full(h + geo.pt + geo.pb, -1)
        rows[geo.pt:geo.pt + h] = np.arange(h)
        cols = np.full(w + geo.pl + geo.pr, -1)
        cols[geo.pl:geo.pl + w] = np.arange(w)
        best = where = None
        for i in range(geo.kh):
            for j in range(geo.kw):
                tap = geo.tap(i, j)
                r, q = rows[tap[1]], cols[tap[2]]                   # [oh], [ow]
                real = (r[:, None] >= 0) & (q[None, :] >= 0)        # [oh, ow]
                pos = np.where(real, r[:, None] * w + q[None, :], -1)
                candidate = xp[tap]
                if best is None:
                    best = np.array(candidate)
                    where = np.broadcast_to(pos[None, :, :, None], best.shape).copy()
                    continue
                take = (candidate > best) | ((where < 0) & real[None, :, :, None])
                np.copyto(best, candidate, where=take)
                np.copyto(where, pos[None, :, :, None], where=take)
        index = where.astype(np.int64) * c + np.arange(c)
        if with_batch:
            index += (np.arange(n) * (h * w * c)).reshape(n, 1, 1, 1)
        return best, index.astype(index_dtype)
    return max_pool_with_argmax
