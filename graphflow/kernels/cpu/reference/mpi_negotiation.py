"""Every collective is agreed on by all processes before it runs, as Horovod negotiates its
tensors: a process that reduces a tensor of another shape or dtype (even of the same byte size),
calls its collectives in another order, or broadcasts from another root would otherwise get
garbage, or variables that silently diverge.

Before its data moves, a collective exchanges a 62-bit hash `h` of what this process is about
to run (the collective and its op's name, dtype, shape, and root for a broadcast; an allgather's
first dim may differ) in one small allreduce of `[h, -h]` with MPI_MAX: every process holds the
same hash exactly when the result is `[h, -h]`. That costs one 16-byte message round per
collective (a few microseconds between processes of one machine), no matter the tensor's size.
On a mismatch every process gathers all the descriptions (where the collective's data would have
gone) and raises `CollectiveMismatchError` listing what each rank was running.
GRAPHFLOW_MPI_NEGOTIATE=0 turns the check off.

The exchange travels on a communicator of its own (`runtime.negotiation_comm()`), always posted
by the calling thread in program order, so the k-th exchange of every process pairs with the k-th
of the others; `post` and `resolve` let a caller go on before it completes (a split allreduce's
start: mpi_runtime's progress thread resolves it and posts the data).
"""

import functools
import hashlib
import os

import numpy as np

ENV_NEGOTIATE = "GRAPHFLOW_MPI_NEGOTIATE"
DESCRIPTION_BYTES = 400  # of one rank's description, in the error message


class CollectiveMismatchError(RuntimeError):
    """The processes reached different collectives (name, shape, dtype, root or order)."""


def enabled():
    return os.environ.get(ENV_NEGOTIATE, "1").strip() != "0"


@functools.lru_cache(maxsize=1024)
def _signature(what, dtype, shape):
    """(the description, the [h, -h] array exchanged) of one collective."""
    dims = "x".join("?" if d is None else str(d) for d in shape) or "scalar"
    description = f"{what} of {np.dtype(dtype).name} [{dims}]"
    h = int.from_bytes(hashlib.blake2b(description.encode(), digest_size=8).digest(), "little")
    h &= (1 << 62) - 1
    return description, np.array([h, -h], np.int64)


class Pending:
    """One posted exchange: its request, what it describes and the agreed result once complete;
    after a mismatch, the request and buffer of the report (every rank's description)."""

    __slots__ = ("what", "description", "signature", "agreed", "request", "report", "everyone")

    def __init__(self, what, description, signature, request, agreed):
        self.what, self.description, self.signature = what, description, signature
        self.request, self.agreed = request, agreed
        self.report = self.everyone = None

    def ok(self):
        """(once `request` completed) whether every process described the same collective; the
        same answer on every process, since all hold the same MAX."""
        return self.agreed[0] == self.signature[0] and self.agreed[1] == self.signature[1]


def post(runtime, what, dtype, shape):
    """Post the exchange for `what` on tensors of `dtype` and `shape` (a tuple; None for a dim that
    may differ) on `runtime.negotiation_comm()`, and return its `Pending`; None when the check is
    off or this process is alone. `runtime` is mpi_runtime (its communicators and deadline)."""
    if not enabled():
        return None
    c = runtime.negotiation_comm()
    if c.Get_size() == 1:
        return None
    description, signature = _signature(what, np.dtype(dtype).str, tuple(shape))
    agreed = np.empty(2, np.int64)
    return Pending(what, description, signature,
                   c.Iallreduce(signature, agreed, op=runtime.mpi().MAX), agreed)


def post_report(runtime, pending):
    """After a mismatch: post the gathering of every rank's description (on the data
    communicator, `runtime.comm()`, where the collective's data would have gone); returns its
    request (also kept in `pending.report`)."""
    c = runtime.comm()
    mine = np.zeros(DESCRIPTION_BYTES, np.uint8)
    text = pending.description.encode()[:DESCRIPTION_BYTES]
    mine[:len(text)] = np.frombuffer(text, np.uint8)
    pending.everyone = np.empty((c.Get_size(), DESCRIPTION_BYTES), np.uint8)
    pending.report = c.Iallgather(mine, pending.everyone)
    return pending.report


def mismatch_error(runtime, pending):
    """The CollectiveMismatchError of `pending` (its report completed)."""
    c = runtime.comm()
    texts = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in pending.everyone]
    lines = [f"  rank {r}: {text}" for r, text in enumerate(texts)]
    return CollectiveMismatchError(
        f"the processes reached different collectives (rank {c.Get_rank()} of {c.Get_size()} "
        "reports):\n" + "\n".join(lines) + "\nEvery process must run the same collectives (the "
        "same op names, dtypes, shapes and broadcast roots) in the same order.")


def resolve(runtime, pending):
    """Wait for `pending` (None: nothing to agree on); raise CollectiveMismatchError if the
    processes disagree. (A process that never comes times out here.)"""
    if pending is None:
        return
    runtime.wait_request(pending.request, pending.what)
    if not pending.ok():
        runtime.wait_request(post_report(runtime, pending),
                             f"{pending.what} (reporting a mismatch)")
        raise mismatch_error(runtime, pending)


def negotiate(runtime, what, dtype, shape):
    """Agree with every other process that all run `what` on tensors of `dtype` and `shape`
    (see `post`); raise CollectiveMismatchError if not."""
    resolve(runtime, post(runtime, what, dtype, shape))
