"""Data-parallel training over MPI with Horovod's names (`import graphflow.horovod as hvd`).

    hvd.init()
    opt = hvd.DistributedOptimizer(tf.train.AdamOptimizer(1e-3 * hvd.size()))
    train = opt.minimize(loss)
    sync = hvd.broadcast_global_variables(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer()); sess.run(sync)
        ...

and `mpirun -np 4 python train.py`. Collectives are graph ops (`ops/collective_ops.py`) that run
inside `Session.run` over `mpi4py` (`kernels/cpu/reference/mpi_runtime.py`); a collective that another process
never joins fails after a timeout with a clear error. DistributedOptimizer fuses the gradients into
buckets whose reduction starts as soon as they are computed and overlaps with the rest of the
backward pass. See docs/distributed.md.
"""

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_collection
from graphflow.kernels.cpu.reference import mpi_runtime
from graphflow.kernels.cpu.reference.mpi_runtime import CollectiveTimeoutError
from graphflow.ops import collective_ops, math_ops, state_ops
from graphflow.ops.core_ops import convert_to_tensor, group

DEFAULT_FUSION_THRESHOLD_BYTES = 64 << 20

__all__ = ["init", "shutdown", "is_initialized", "rank", "size", "local_rank", "local_size",
           "allreduce", "allgather", "broadcast", "broadcast_global_variables",
           "broadcast_variables", "DistributedOptimizer", "BroadcastGlobalVariablesHook",
           "Compression", "CollectiveTimeoutError", "DEFAULT_FUSION_THRESHOLD_BYTES"]


def init():
    """Initialize MPI for this process (call once, before building collectives)."""
    mpi_runtime.init()


def shutdown():
    """Nothing to release: MPI finalizes when the process exits (kept for Horovod programs)."""


def is_initialized():
    return mpi_runtime.is_initialized()


def rank():
    return mpi_runtime.comm().Get_rank()


def size():
    return mpi_runtime.comm().Get_size()


def _local_comm():
    MPI = mpi_runtime.mpi()
    return mpi_runtime.comm().Split_type(MPI.COMM_TYPE_SHARED)


def local_rank():
    """Rank among the processes on this machine."""
    return _local_comm().Get_rank()


def local_size():
    return _local_comm().Get_size()


class Compression:
    """How gradients travel: `none` as they are, `fp16` as float16 (half the bytes)."""
    none = "none"
    fp16 = "fp16"


def _compress(tensor, compression):
    if compression == Compression.fp16 and tensor.dtype.is_floating and tensor.dtype != dtypes.float16:
        return math_ops.cast(tensor, dtypes.float16), tensor.dtype
    if compression not in (Compression.none, Compression.fp16):
        raise ValueError(f"compression must be Compression.none or Compression.fp16, got {compression!r}")
    return tensor, None


def allreduce(tensor, average=True, name=None, compression=Compression.none):
    """The sum (or mean, `average=True`) of `tensor` over all processes."""
    value, original = _compress(convert_to_tensor(tensor), compression)
    reduced = collective_ops.allreduce(value, average, size(), name=name)
    return math_ops.cast(reduced, original) if original is not None else reduced


def allgather(tensor, name=None):
    """Every process's `tensor` concatenated along axis 0, in rank order."""
    return collective_ops.allgather(convert_to_tensor(tensor), name=name)


def broadcast(tensor, root_rank, name=None):
    """The value of `tensor` on process `root_rank`, on every process."""
    return collective_ops.broadcast(convert_to_tensor(tensor), root_rank, name=name)


def broadcast_variables(variables, root_rank):
    """One op assigning every variable the value it has on `root_rank`."""
    return group(*[state_ops.assign(v, broadcast(v.value(), root_rank)) for v in variables],
                 name="broadcast_variables")


def broadcast_global_variables(root_rank):
    """`broadcast_variables` over the default graph's global variables (run it after initializing)."""
    return broadcast_variables(get_collection(GraphKeys.GLOBAL_VARIABLES), root_rank)


class BroadcastGlobalVariablesHook:
    """A session hook (`MonitoredTrainingSession(hooks=[...])`) that broadcasts the global
    variables from `root_rank` once the session is created."""

    def __init__(self, root_rank, device=""):
        self.root_rank = root_rank
        self._op = None

    def begin(self):
        self._op = broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord=None):
        session.run(self._op)

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


def _buckets(grads, threshold):
    """Indexes of `grads` in buckets of one dtype and at most `threshold` bytes, in the order the
    gradients are computed (backpropagation makes the last layer's first), plus the indexes of
    gradients of unknown size (reduced on their own)."""
    known = [i for i, g in enumerate(grads) if g is not None and g.shape.is_fully_defined()]
    unknown = [i for i, g in enumerate(grads) if g is not None and not g.shape.is_fully_defined()]
    known.sort(key=lambda i: grads[i].op._id)
    buckets, current, current_bytes = [], [], 0
    for i in known:
        g = grads[i]
        nbytes = g.shape.num_elements() * g.dtype.as_numpy_dtype.itemsize
        if current and (current_bytes + nbytes > threshold or g.dtype != grads[current[0]].dtype):
            buckets.append(current)
            current, current_bytes = [], 0
        current.append(i)
        current_bytes += nbytes
    if current:
        buckets.append(current)
    return buckets, unknown


def _fused_allreduce(grads, average, compression, threshold, overlap):
    """Allreduce `grads` in few large buffers (Horovod's tensor fusion). Each bucket is packed and
    its reduction posted by a start op that runs as soon as the bucket's gradients exist, and
    completed by a wait op that runs just before the first update reading them: with `overlap`,
    the reduction of the last layers' gradients proceeds while the first layers' are computed.
    Without it, every start waits for all gradients (the same ops and values, no overlap).
    Returns the reduced gradients and, for each, the rank of its bucket."""
    reduced = [None] * len(grads)
    rank = [0] * len(grads)
    buckets, unknown = _buckets(grads, threshold)
    for i in unknown:
        reduced[i] = allreduce(grads[i], average, compression=compression)
    everything = [] if overlap else [grads[i] for bucket in buckets for i in bucket]
    for number, bucket in enumerate(buckets):
        values, originals = [], []
        for i in bucket:
            value, original = _compress(grads[i], compression)
            values.append(value)
            originals.append(original)
        outputs = collective_ops.fused_allreduce(values, average, name=f"fused_allreduce_{number}",
                                                 control_inputs=everything)
        for i, out, original in zip(bucket, outputs, originals):
            reduced[i] = math_ops.cast(out, original) if original is not None else out
            rank[i] = number
    return reduced, rank


class DistributedOptimizer:
    """Wraps any graphflow optimizer: `compute_gradients` averages the gradients over all processes
    (fused into buckets of at most `fusion_threshold_bytes`) before `apply_gradients` uses them.
    With `overlap` (the default) a bucket's reduction starts as soon as its gradients are computed
    and runs while the backward pass goes on; `apply_gradients` updates the variables in the order
    their buckets complete."""

    def __init__(self, optimizer, name=None, use_locking=False, device_dense="", device_sparse="",
                 compression=Compression.none, sparse_as_dense=False,
                 fusion_threshold_bytes=DEFAULT_FUSION_THRESHOLD_BYTES, average=True, overlap=True):
        if compression not in (Compression.none, Compression.fp16):
            raise ValueError(f"compression must be Compression.none or Compression.fp16, got "
                             f"{compression!r}")
        self._optimizer = optimizer
        self._compression = compression
        self._threshold = int(fusion_threshold_bytes)
        self._average = average
        self._overlap = bool(overlap)
        self._bucket_of = {}  # reduced gradient -> rank of its bucket

    def compute_gradients(self, *args, **kwargs):
        grads_and_vars = self._optimizer.compute_gradients(*args, **kwargs)
        if size() == 1:
            return grads_and_vars
        grads = [g for g, _ in grads_and_vars]
        reduced, rank = _fused_allreduce(grads, self._average, self._compression, self._threshold,
                                         self._overlap)
        self._bucket_of.update((r, k) for r, k in zip(reduced, rank) if r is not None)
        return [(r, v) for r, (_, v) in zip(reduced, grads_and_vars)]

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        """The wrapped optimizer's updates, those of the first reduced buckets first (so they run
        while later buckets are still being reduced)."""
        pairs = list(grads_and_vars)
        if self._overlap:  # (a stable sort: pairs of other gradients keep their order)
            pairs.sort(key=lambda gv: self._bucket_of.get(gv[0], -1))
        return self._optimizer.apply_gradients(pairs, *args, **kwargs)

    def minimize(self, loss, global_step=None, var_list=None, name=None, **kwargs):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, **kwargs)
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def __getattr__(self, name):  # get_slot, get_name, variables, ... of the wrapped optimizer
        return getattr(self._optimizer, name)



