"""CPU kernels of the collective ops (`ops/collective_ops.py`) over the MPI runtime (`mpi_runtime.py`).

The allreduce kernels write into buffers they reuse from run to run (`mpi_runtime.BufferPool`) and
average in place. `MpiAllreduceStart` packs a bucket of gradients into one buffer and posts its
reduction (dividing float values by the process count as it packs them, for a mean); `MpiAllreduceWait`
completes it and returns the reduced gradients as views of the received buffer, so a fused bucket
costs one packing pass and no unpacking copy. Tensors that already lie back to back in one buffer,
in order (variables that stored the views of the previous run's reduction), are sent from where
they are, unpacked; their mean is then divided in place after the sum, while it is in cache (the
same values as dividing first up to rounding, bit for bit for a power-of-two process count).
"""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.kernels.cpu.reference import mpi_runtime


def _divide(x, size, out):
    """x / size into `out` (floating values). For real values and a power-of-two process count, a
    multiplication by the reciprocal: the same bits (both round x * 2**-k exactly), twice as fast as
    numpy's division on data in cache. (Complex division is not componentwise scaling in numpy.)"""
    if size & (size - 1) == 0 and out.dtype.kind == "f":
        return np.multiply(x, 1.0 / size, out=out)
    return np.divide(x, size, out=out)


def _divide_in_place(total, size):
    """The mean from the sum: in place for floating values, truncated like TF for integers."""
    if total.dtype.kind in "fc" and total.ndim:
        _divide(total, size, total)
        return total
    return (total / size).astype(total.dtype, copy=False)


@cpu_kernel("MpiAllreduce")
def _allreduce(node):
    average = node.attrs["average"]
    what = f"allreduce '{node.name}'"
    pool = mpi_runtime.BufferPool()

    def allreduce(x):
        total = mpi_runtime.allreduce(np.asarray(x), what, pool)
        if average:
            return _divide_in_place(total, mpi_runtime.comm().Get_size())
        return total
    return allreduce


def _prescaled(dtype):
    """Float buffers are divided by the process count while they are packed (no extra pass);
    float16 sums are averaged in float32 and integers after the sum (truncated like TF)."""
    return np.dtype(dtype).kind in "fc" and np.dtype(dtype) != np.float16


def _back_to_back(grads, dtype):
    """The tensors as one 1-d view of the buffer they share, when they lie there one after the
    other in order (C-contiguous, of `dtype`); else None. Fresh gradients (arrays of their own)
    fail the first test."""
    base = getattr(grads[0], "base", None) if grads else None
    if type(base) is not np.ndarray or base.ndim != 1 or base.dtype != dtype \
            or not base.flags.c_contiguous:
        return None
    origin = base.ctypes.data
    at = start = grads[0].ctypes.data
    for g in grads:
        if type(g) is not np.ndarray or g.base is not base or g.dtype != dtype \
                or not g.flags.c_contiguous or g.ctypes.data != at:
            return None
        at += g.nbytes
    first = (start - origin) // base.itemsize
    return base[first:first + (at - start) // base.itemsize]


@cpu_kernel("MpiAllreduceStart")
def _allreduce_start(node):
    what = f"allreduce '{node.name}'"
    average = node.attrs["average"]
    sends, recvs = mpi_runtime.BufferPool(), mpi_runtime.BufferPool()
    last = [None]
    gap = [None]  # seconds from this op's post to its wait, the previous run (mpi_runtime)

    def allreduce_start(*grads):
        if last[0] is not None:  # the previous run failed between start and wait
            mpi_runtime.abandon(last[0])
        dtype = np.result_type(*grads) if grads else np.float32
        total = sum(int(np.size(g)) for g in grads)
        size = mpi_runtime.comm().Get_size()
        scale = average and _prescaled(dtype) and size > 1
        send = _back_to_back(grads, dtype)
        divide_after = scale and send is not None
        if send is None:
            send = sends.get((total,), dtype)
            offset = 0
            for g in grads:
                n = int(np.size(g))
                part = send[offset:offset + n].reshape(np.shape(g))
                if scale:
                    _divide(g, size, part)
                else:
                    np.copyto(part, g)
                offset += n
        if dtype == np.float16:  # everyone's halves, summed in float32 by the wait
            recv = recvs.get((mpi_runtime.comm().Get_size(), total), np.uint16)
        else:
            recv = recvs.get((total,), dtype)
        # (the processes agree on the bucket before its data moves; the start does not wait)
        agree = (dtype, tuple(str(np.shape(g)) for g in grads))
        last[0] = mpi_runtime.start_allreduce(send, recv, what, divide_after, gap, agree)
        return np.array(last[0], np.int64)
    return allreduce_start


@cpu_kernel("MpiAllreduceWait")
def _allreduce_wait(node):
    average = node.attrs["average"]
    shapes = [tuple(s) for s in node.attrs["shapes"]]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    dtype = node.attrs["dtype"].as_numpy_dtype
    what = f"allreduce '{node.name}'"
    float16_out = mpi_runtime.BufferPool()

    def allreduce_wait(token):
        out = float16_out.get((sum(sizes),), np.float16) if dtype == np.float16 else None
        size = mpi_runtime.comm().Get_size()
        total, divide_after = mpi_runtime.finish(int(token), what, out, size if average else 1)
        if divide_after or (average and not _prescaled(dtype) and dtype != np.float16):
            total = _divide_in_place(total, size)
        outputs, offset = [], 0
        for shape, n in zip(shapes, sizes):
            outputs.append(total[offset:offset + n].reshape(shape))
            offset += n
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
    return allreduce_wait


@cpu_kernel("MpiAllgather")
def _allgather(node):
    what = f"allgather '{node.name}'"
    return lambda x: mpi_runtime.allgather(np.asarray(x), what)


@cpu_kernel("MpiAllgatherGrad")
def _allgather_grad(node):
    what = f"allgather gradient '{node.name}'"

    def allgather_grad(grad, x):
        rows = np.asarray(x).shape[0]
        counts = mpi_runtime.allgather(np.array([rows], np.int64), what + " (rows)")
        start = int(counts[:mpi_runtime.comm().Get_rank()].sum())
        return mpi_runtime.allreduce(np.asarray(grad), what)[start:start + rows]
    return allgather_grad


@cpu_kernel("MpiBroadcast")
def _broadcast(node):
    root = node.attrs["root"]
    what = f"broadcast '{node.name}' from rank {root}"
    return lambda x: mpi_runtime.broadcast(np.asarray(x), root, what)
