"""Processes that disagree about a collective (its shape or dtype at the same byte size, the order
of two collectives, a broadcast's root, how a fused bucket is split) all get a
CollectiveMismatchError listing what each rank ran, instead of exiting 0 with garbage; a process
that hangs makes the job abort within the collective timeout (under real `mpirun -np 2`)."""

import time

import pytest

from tests.interop.distribute.test_distribute import mpirun, pytestmark  # noqa: F401


@pytest.mark.parametrize("program,ranks", [
    ("mismatch_shape", ["allreduce 'grads' of float32 [2x3]", "allreduce 'grads_' of float32 [3x2]"]),
    ("mismatch_dtype", ["allreduce 'sum' of float32 [4]", "allreduce 'sum' of int32 [4]"]),
    ("mismatch_order", ["allreduce 'first' of float32 [2]", "allreduce 'second' of float32 [2]"]),
    ("mismatch_root", ["broadcast 'sync' from rank 0", "broadcast 'sync' from rank 1"]),
    ("mismatch_fused", ["allreduce 'bucket_start' of float64 [(2,)x(2,)]",
                        "allreduce 'bucket_start' of float64 [(1,)x(3,)]"]),
])
def test_processes_that_disagree_about_a_collective_all_get_a_mismatch_error(program, ranks):
    results, _ = mpirun(2, program, env={"GRAPHFLOW_MPI_TIMEOUT": "20"}, timeout=60)
    assert len(results) == 2
    for res in results:
        error = res["error"]
        assert error is not None and "CollectiveMismatchError" in error, res
        assert f"rank 0: {ranks[0]}" in error and f"rank 1: {ranks[1]}" in error, error
        assert "mpi_programs.py" in error  # the user's line


def test_blocking_collectives_between_a_start_and_its_wait_keep_the_order():
    results, _ = mpirun(2, "queued_then_blocking", env={"GRAPHFLOW_MPI_TIMEOUT": "20"}, timeout=60)
    for res in results:
        assert res["error"] is None, res
        assert res["values"] == [[7.0, 10.0]] * 3  # sums 3 x (2, 3) elements, plain 1, root 0
        assert res["order"] == ["MpiAllreduceStart", "MpiAllreduce", "MpiBroadcast",
                                "MpiAllreduceWait"]
    results, _ = mpirun(2, "queued_then_blocking", "mismatch",
                        env={"GRAPHFLOW_MPI_TIMEOUT": "20"}, timeout=60)
    for res in results:
        assert "CollectiveMismatchError" in res["error"], res
        assert "rank 0: allreduce 'plain' of float64 [1]" in res["error"]
        assert "rank 1: allreduce 'plain' of float64 [2]" in res["error"]


def test_a_hung_process_makes_the_job_abort_within_the_timeout():
    start = time.monotonic()
    _, proc = mpirun(2, "hangs", env={"GRAPHFLOW_MPI_TIMEOUT": "3"}, timeout=60, check=False)
    assert time.monotonic() - start < 25  # rank 1 sleeps 600 s
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "CollectiveTimeoutError: allreduce 'step' did not complete within 3 s on rank 0" \
        in output and "MPI_Abort" in output
