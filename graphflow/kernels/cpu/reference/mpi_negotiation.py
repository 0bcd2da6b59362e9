"""Every collective is agreed on by all processes before it runs, as Horovod negotiates its
tensors: a process that reduces a tensor of another shape or dtype (even of the same byte size),
calls its collectives in another order, or broadcasts from another root would otherwise get
garbage, or variables that silently diverge.

Before its data moves, a collective exchanges a 62-bit hash `h` of what this process is about
to run (the collective and its op's name, dtype, shape, and root for a broadcast; an allgather's
first dim may differ) in one small allreduce of `[h, -h]` with MPI_MAX: every process holds the
same hash exactly when the result is `[h, -h]`. That costs one 16-byte message round per
collective (a few microseconds between processes of one machine), no matter the tensor's size.
On a mismatch every process gathers all the descriptions and raises `CollectiveMismatchError`
listing what each rank was running. GRAPHFLOW_MPI_NEGOTIATE=0 turns the check off.
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


def negotiate(runtime, what, dtype, shape):
    """Agree with every other process that all run `what` on tensors of `dtype` and `shape`
    (a tuple; None for a dim that may differ); raise CollectiveMismatchError if not.
    `runtime` is mpi_runtime (its communicator and deadline)."""
    if not enabled():
        return
    description, signature = _signature(what, np.dtype(dtype).str, tuple(shape))
    c = runtime.comm()
    if c.Get_size() == 1:
        return
    agreed = np.empty(2, np.int64)
    runtime.wait_request(c.Iallreduce(signature, agreed, op=runtime.mpi().MAX),
                         what)  # (a process that never comes times out here)
    if agreed[0] != signature[0] or agreed[1] != signature[1]:
        raise _mismatch(runtime, c, description, what)


def _mismatch(runtime, c, description, what):
    mine = np.zeros(DESCRIPTION_BYTES, np.uint8)
    text = description.encode()[:DESCRIPTION_BYTES]
    mine[:len(text)] = np.frombuffer(text, np.uint8)
    everyone = np.empty((c.Get_size(), DESCRIPTION_BYTES), np.uint8)
    runtime.wait_request(c.Iallgather(mine, everyone), f"{what} (reporting a mismatch)")
    texts = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in everyone]
    lines = [f"  rank {r}: {text}" for r, text in enumerate(texts)]
    return CollectiveMismatchError(
        f"the processes reached different collectives (rank {c.Get_rank()} of {c.Get_size()} "
        "reports):\n" + "\n".join(lines) + "\nEvery process must run the same collectives (the "
        "same op names, dtypes, shapes and broadcast roots) in the same order.")
