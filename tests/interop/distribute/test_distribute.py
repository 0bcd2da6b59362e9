"""graphflow.distribute (`graphflow.horovod`) under real `mpirun -np 2` and `-np 3`: collective
values and gradients, N-process training equal to one process on the whole batch (fused buffers,
fp16 compression), the start-of-training broadcast, a process that never joins a collective (a
clear timeout error, variables unchanged), a process that dies (the job ends), and rank-0
checkpoints restored on every rank."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from tests.tooling import required

PROGRAMS = os.path.join(os.path.dirname(__file__), "mpi_programs.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def _mpi_available():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return shutil.which("mpirun") is not None


pytestmark = pytest.mark.skipif(not _mpi_available() and not required("mpirun"),
                                reason="`mpirun` or mpi4py is not installed (Open MPI from the OS, "
                                       'pip install "graphflow[distributed]"); CI provides them')


def mpirun(n, *args, timeout=120, env=None, check=True):
    results_dir = tempfile.mkdtemp(prefix="graphflow-mpi-")
    environ = dict(os.environ, PYTHONPATH=ROOT, OMPI_MCA_rmaps_base_oversubscribe="1",
                   GRAPHFLOW_TEST_RESULTS=results_dir, **(env or {}))
    if os.geteuid() == 0:  # containers run as root; Open MPI refuses that unless told
        environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run(["mpirun", "-np", str(n), sys.executable, PROGRAMS, *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=environ)
    if check and proc.returncode != 0:
        raise AssertionError(f"mpirun failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    results = []
    for name in sorted(os.listdir(results_dir)):
        with open(os.path.join(results_dir, name)) as f:
            results.append(json.load(f))
    shutil.rmtree(results_dir)
    return sorted(results, key=lambda r: r["rank"]), proc


@pytest.mark.parametrize("n", [2, 3])
def test_collective_values(n):
    results, _ = mpirun(n, "collectives")
    assert len(results) == n
    total = sum(r + 1.0 for r in range(n))
    gathered = [[float(r)] * 2 for r in range(n) for _ in range(r + 1)]
    for res in results:
        assert res["size"] == n
        np.testing.assert_allclose(res["total"], np.full((2, 3), total))
        np.testing.assert_allclose(res["mean"], np.full((2, 3), total / n))
        assert res["gathered"] == gathered
        assert res["bcast"] == [n - 1, (n - 1) * 10]
        assert res["kept"] == [[k * n] * 4 for k in (0.0, 1.0, 2.0, 7.0, 8.0)]


@pytest.mark.parametrize("n", [2, 3])
def test_collective_gradients(n):
    results, _ = mpirun(n, "gradients")
    weights = sum(r + 1.0 for r in range(n))
    for res in results:
        r = res["rank"]
        # y = sum over ranks of x_r^2: dy/dx_r = 2 x_r, reduced over the ranks that used y
        np.testing.assert_allclose(res["gx"], n * 2 * (np.arange(3) + r))
        # z_k = (k+1) * sum(gathered rows): every rank's rows get the sum of all weights
        np.testing.assert_allclose(res["grows"], np.full((r + 1, 2), weights))


@pytest.mark.parametrize("n,options", [(2, []), (3, []), (2, ["small_buckets"]), (2, ["fp16"]),
                                       (3, ["small_buckets", "no_overlap"])])
def test_training_matches_one_process_on_the_whole_batch(n, options):
    results, _ = mpirun(n, "train", *options)
    tolerance = 2e-2 if "fp16" in options else 1e-10
    for res in results:
        for dist, single in zip(res["distributed"], res["single"]):
            np.testing.assert_allclose(dist, single, rtol=tolerance, atol=tolerance)
        # tensor fusion: one allreduce for all gradients, or one per 64-byte bucket
        assert res["allreduces"] == (1 if "small_buckets" not in options else 2)  # [w] [v, b]


@pytest.mark.parametrize("n", [2, 3])
def test_overlapped_reduction_gives_the_same_values(n):
    results, _ = mpirun(n, "overlap", 1024)  # 1 KiB buckets: several of them
    for res in results:
        on, off = res["on"], res["off"]
        assert on["variables"] == off["variables"]  # bit-identical
        assert on["grads"] == off["grads"]
        assert on["shapes_agree"] and off["shapes_agree"]  # the wait's static shapes
        assert on["order"].count("MpiAllreduceStart") >= 3
        # overlapped: the first bucket is posted while gradients are still being computed, and
        # the first wait comes after the last gradient; not overlapped: every start after them
        last_grad = max(i for i, t in enumerate(on["order"]) if t == "MatMul")
        assert on["order"].index("MpiAllreduceStart") < last_grad < on["order"].index(
            "MpiAllreduceWait")
        last_grad = max(i for i, t in enumerate(off["order"]) if t == "MatMul")
        assert off["order"].index("MpiAllreduceStart") > last_grad
    assert results[0]["on"]["variables"] == results[-1]["on"]["variables"]  # ranks agree


def test_broadcast_global_variables():
    results, _ = mpirun(3, "broadcast_start")
    assert [r["w"] for r in results] == [[1.0, 1.0, 1.0]] * 3


def test_a_process_that_never_joins_gives_a_timeout_error_and_changes_nothing():
    results, _ = mpirun(2, "straggler", env={"GRAPHFLOW_MPI_TIMEOUT": "2",
                                             "GRAPHFLOW_MPI_ABORT_ON_TIMEOUT": "0"}, timeout=60)
    first = results[0]
    assert "allreduce 'allreduce'" in first["error"] and "mpi_programs.py" in first["error"]  # op, line
    assert "did not complete within 2 s on rank 0 of 2" in first["error"]
    assert first["seconds"] < 10
    assert first["w"] == [1.0, 1.0]


@pytest.mark.parametrize("n", [2, 3])
def test_assigned_reductions_are_kept_without_copies_and_failed_runs_change_nothing(n):
    results, _ = mpirun(n, "adopted")
    ranks = sum(r + 1.0 for r in range(n))
    for res in results:
        assert res["adopting"] == ["store_mean", "store_part0", "store_part1"]
        assert res["back_to_back"]  # the bucket's variables hold views of one reduced buffer
        for step, (value, parts) in enumerate(zip(res["history"], res["parts"])):
            np.testing.assert_allclose(value, np.arange(6) * ranks / n + step)
            # steps 2 and 3 average the mean of step 1 again: the same value
            mean = sum(min(step, 1) + r for r in range(n)) / n
            np.testing.assert_allclose(parts[0], [mean] * 2, rtol=1e-6)
            np.testing.assert_allclose(parts[1], [mean] * 3, rtol=1e-6)
        assert "bad step" in res["error"]
        last = res["history"][-1]
        np.testing.assert_allclose(res["after"][0], last)  # the failed run assigned nothing
        assert res["after"][1] == res["parts"][-1]  # (the same float32 values, exactly)
        np.testing.assert_allclose(res["recovered"], 100.0)


def test_a_process_that_dies_ends_the_job():
    _, proc = mpirun(2, "dies", timeout=60, check=False)
    assert proc.returncode != 0


def test_rank_zero_checkpoint_restores_on_every_rank(tmp_path):
    results, _ = mpirun(2, "checkpoint", tmp_path)
    assert [r["w"] for r in results] == [[1.0, 5.0], [1.0, 5.0]]
    assert sorted(os.listdir(tmp_path))[0] == "checkpoint"


def test_collectives_save_load_and_run_in_every_process(tmp_path):
    results, _ = mpirun(2, "saved", tmp_path)
    total = 1 * 2 * 1.0 + 2 * 2 * 4.0  # rank 0: one row of 1s, rank 1: two rows of 2s
    for res in results:
        r = res["rank"]
        assert res["total"] == 2 * total  # every rank reduces the same gathered sum
        # allreduce's gradient (2 processes) * d(g^2)/dg (2g) * allgather's gradient, summed over
        # the 2 processes that used the gathered rows: 8 * rows of this rank
        np.testing.assert_allclose(res["grad"], np.full((r + 1, 2), 8 * (r + 1.0)))
        assert res["start"] == [7.0]
        assert res["mean"] == (2 * 1.0 + 2 * 2 * 2.0) / 2 and res["pair"] == [1.0, 2.0]


def test_train_digits_distributed(tmp_path):
    """The README's example in two processes: it learns, rank 0 saves, and the file reloads."""
    environ = dict(os.environ, PYTHONPATH=ROOT, OMPI_MCA_rmaps_base_oversubscribe="1")
    if os.geteuid() == 0:
        environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run(["mpirun", "-np", "2", sys.executable, os.path.join(ROOT, "examples",
                           "train_digits.py"), "--distributed", "--quick", "--quiet", "--model", "mlp",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300,
                          env=environ)
    assert proc.returncode == 0, proc.stderr
    accuracy = float(proc.stdout.split("reloaded test accuracy ")[1].split()[0])
    assert accuracy > 0.9 and (tmp_path / "digits_mlp.gfz").exists()
