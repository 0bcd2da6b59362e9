"""Softmax, LogSoftmax and the fused softmax cross-entropies on the GPU (softmax.cu).

The class axis may be any axis: the input is seen as [outer, C, inner]. Rows of up to 1024 classes
get one warp each (8 rows per 256-thread block), longer rows one block each. Each cross-entropy op
is one launch producing both outputs (loss, backprop).
"""

import numpy as np

from graphflow.kernels.cuda import FLOAT_DTYPES, cuda_kernel, runtime
from graphflow.kernels.cuda.launch import SUFFIX, ceil_div, row_blocks

_LABELS = frozenset({np.dtype(np.int32), np.dtype(np.int64)})  # label dtypes of the sparse loss
_WARP_MAX = 1024


def split_axis(shape, axis):
    """(outer, C, inner) of `shape` around the class `axis`."""
    if not shape:
        raise ValueError("logits must have rank >= 1, got a scalar")
    ax = axis % len(shape)
    return (int(np.prod(shape[:ax])), int(shape[ax]), int(np.prod(shape[ax + 1:])))


def _geometry(rt, rows, C):
    if C <= _WARP_MAX:
        return "warp", (max(1, min(ceil_div(rows, 8), rt.sm_count * 64)), 1, 1)
    return "block", (row_blocks(rt, rows), 1, 1)


_KINDS = {"Softmax": "softmax", "LogSoftmax": "log_softmax"}


@cuda_kernel(*_KINDS, dtypes=(np.float32, np.float64))
def _softmax(node):
    rt = runtime()
    axis = node.attrs.get("axis", -1)
    kind = _KINDS[node.type]
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def softmax(x):
        outer, C, inner = split_axis(x.shape, axis)
        out = rt.empty(x.shape, x.dtype)
        rows = outer * inner
        if out.size:
            sched, grid = _geometry(rt, rows, C)
            fn = rt.kernel("softmax.cu", f"gf_{kind}_{sched}_{t}", "PPqqq")
            fn.prepared_call(grid, (256, 1, 1), int(x.gpudata), int(out.gpudata), np.int64(rows),
                             np.int64(C), np.int64(inner))
        return out
    return softmax


def _check_same(features, labels):
    if features.shape != labels.shape:
        raise ValueError(f"logits and labels must have the same shape, got {features.shape} and "
                         f"{labels.shape}")


@cuda_kernel("SoftmaxCrossEntropyWithLogits", dtypes=(np.float32, np.float64))
def _softmax_xent(node):
    rt = runtime()
    axis = node.attrs.get("axis", -1)
    t = SUFFIX[np.dtype(node.out_dtypes[0])]

    def softmax_cross_entropy_with_logits(features, labels):
        _check_same(features, labels)
        outer, C, inner = split_axis(features.shape, axis)
        ax = axis % len(features.shape)
        loss = rt.empty(features.shape[:ax] + features.shape[ax + 1:], features.dtype)
        backprop = rt.empty(features.shape, features.dtype)
        rows = outer * inner
        if rows and C == 0:
            rt.fill(loss, 0)
        elif rows:
            sched, grid = _geometry(rt, rows, C)
            fn = rt.kernel("softmax.cu", f"gf_xent_{sched}_{t}", "PPPPqqq")
            fn.prepared_call(grid, (256, 1, 1), int(features.gpudata), int(labels.gpudata), int(loss.gpudata),
                             int(backprop.gpudata), np.int64(rows), np.int64(C), np.int64(inner))
        return loss, backprop
    return softmax_cross_entropy_with_logits


def _sparse_supported(in_dtypes, out_dtypes, attrs):
    if in_dtypes[0] not in FLOAT_DTYPES or in_dtypes[1] not in _LABELS:
        return f"no CUDA kernel for {in_dtypes[0].name} logits with {in_dtypes[1].name} labels"
    return None


@cuda_kernel("SparseSoftmaxCrossEntropyWithLogits", dtypes=None, supports=_sparse_supported)
def _sparse_softmax_xent(node):
    rt = runtime()
    t = SUFFIX[np.dtype(node.in_dtypes[0])]
    i = SUFFIX[np.dtype(node.in_dtypes[1])]

    def sparse_softmax_cross_entropy_with_logits(features, labels):
        if labels.shape != features.shape[:-1]:
            raise ValueError(f"labels of shape {labels.shape} must have the shape of logits "
                             f"{features.shape} without its last dimension")
        C = features.shape[-1]
        rows = labels.size
        loss = rt.empty(labels.shape, features.dtype)
        backprop = rt.empty(features.shape, features.dtype)
        if rows and C == 0:
            raise ValueError("Received a label value outside the valid range of [0, 0): logits "
                             "have no classes")
        if rows:
            sched, grid = _geometry(rt, rows, C)
            fn = rt.kernel("softmax.cu", f"gf_sparse_xent_{sched}_{t}_{i}", "PPPPqq")
            fn.prepared_call(grid, (256, 1, 1), int(features.gpudata), int(labels.gpudata), int(loss.gpudata),
                             int(backprop.gpudata), np.int64(rows), np.int64(C))
        return loss, backprop
    return sparse_softmax_cross_entropy_with_logits
