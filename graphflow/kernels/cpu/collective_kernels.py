"""CPU kernels of the collective ops (`ops/collective_ops.py`) over the MPI runtime (`mpi_runtime.py`)."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel, mpi_runtime


@cpu_kernel("MpiAllreduce")
def _allreduce(node):
    average = node.attrs["average"]
    what = f"allreduce '{node.name}'"

    def allreduce(x):
        total = mpi_runtime.allreduce(np.asarray(x), what)
        if average:
            size = mpi_runtime.comm().Get_size()
            return (total / size).astype(total.dtype, copy=False)
        return total
    return allreduce


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
