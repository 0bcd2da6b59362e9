"""Shared fixtures: every test starts from a fresh default graph, with fused programs on threads
whenever their size allows, whatever their work (`fused_kernels.PARALLEL_MIN_WORK`), so that the
threaded route is the one tested (tests/kernels/cpu/reference/test_fused_kernels.py tests the rule).
Tests marked `slow` run only when GRAPHFLOW_RUN_SLOW=1 (CI sets it, see .ci/run) or when `-m` selects
markers explicitly (`-m "not slow"` is the default run's selection). Marked slow: the node ids listed
in SLOW below, and of each parametrized test the parametrizations beyond a representative slice
(tests/selection.py: every parameter value once; one op case of each op type). The fuzz tests try
1/8 of their mutants unless the slow tests run (the `fuzz_share` fixture)."""

import os

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.reference import fused_kernels
from tests import selection


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(autouse=True)
def threads_as_given(monkeypatch):
    monkeypatch.setattr(fused_kernels, "PARALLEL_MIN_WORK", 0)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# The slow few: left out of the default run (`python -m pytest -q`), run by CI (.ci/run sets
# GRAPHFLOW_RUN_SLOW=1) and by `-m slow`. Node-id prefix -> what makes it slow (seconds measured
# on a shared 2-core machine).
_PROGRAMS = "tests/tf1/test_programs_as_written.py::test_program_runs_as_written"
SLOW = {
    "tests/engine/test_session.py::test_100k_node_chain_builds_and_runs": "100k-op graph, 35 s",
    "tests/ops/test_gradients.py::test_long_chain_differentiates_and_runs": "long chain, 14 s",
    "tests/interop/distribute/": "MPI jobs of 2-3 processes, 25 tests, ~60 s",
    "tests/interop/onnx/test_conformance.py": "1274 ONNX conformance cases, ~70 s with collection",
    "tests/tools/test_viz.py::test_big_graphs_are_walked_without_recursion": "big graphs, 11 s",
    "tests/test_train_digits.py::test_train_digits_quick": "trains two models, 12 s",
    "tests/test_train_digits.py::test_saved_cnn_holds_only_what_its_output_needs": "trains, 8 s",
    "tests/test_train_digits.py::test_saved_models_export_to_onnx_and_match_graphflow_run":
        "trains both models (one epoch, shared with the test above), exports, runs: 20 s",
    "tests/tools/test_cli.py::test_usage_errors_exit_with_status_2": "12 processes, 7 s",
    "tests/tools/test_cli.py::test_inspect_prints_signatures_variables_and_ops": "processes, 7 s",
    # the longest of the default run's rest (seconds on a busy 2-core machine); what they cover
    # the default run still reaches through the other tests of their modules
    _PROGRAMS + "[cifar10_queue_input.py]": "4.7 s",
    _PROGRAMS + "[char_rnn.py]": "2.9 s",
    _PROGRAMS + "[estimator_cnn.py]": "2.5 s",
    _PROGRAMS + "[word2vec.py]": "2.1 s",
    _PROGRAMS + "[mechanics101.py]": "2.0 s",
    _PROGRAMS + "[gan.py]": "1.7 s",
    "tests/fileformat/test_checkpoint.py::test_saver_killed_at_random_moments_always_leaves_a_"
    "restorable_checkpoint[": "4 kill schedules, 2-3 s each ([None] stays)",
    "tests/kernels/cpu/threads/test_omp_team.py::test_pool_records_for_training_on_the_team_give_"
    "the_one_thread_bits[False]": "4.5 s ([True] stays)",
    "tests/test_cuda_compile.py::test_every_elementwise_op_generates_compilable_kernels": "nvcc, 4 s",
    "tests/kernels/cpu/numba/test_jit_cache.py::test_second_process_loads_every_loop_from_the_cache":
        "a process compiling every loop, 3-12 s",
    "tests/fileformat/test_control_flow_files.py::test_load_and_run_in_a_fresh_process": "4.2 s",
    "tests/test_train_digits_summaries.py::": "trains, 2.8 s",
    "tests/optimizer_passes/test_pipeline.py::test_optimizing_a_large_graph_is_iterative": "2.4 s",
}
# What the default run keeps of the prefixes above: one quick test each, so that every area runs.
SMOKE = {
    "tests/interop/distribute/test_distribute.py::test_collective_values[2]",
    "tests/fileformat/test_checkpoint.py::test_saver_killed_at_random_moments_always_leaves_a_"
    "restorable_checkpoint[None]",
}
# CUDA kernels against the CPU on values: on the GPU, or without one on the C++ emulation of the
# kernels (~100 s); the host-side launch checks (tests/test_cuda_kernels.py) stay in the default run.
_SLOW_FIXTURE = ("tests/test_cuda_kernels_values.py::", "gpu")


def _is_slow(item):
    nodeid = item.nodeid
    if any(nodeid.startswith(prefix) for prefix in SLOW) and nodeid not in SMOKE:
        return True
    prefix, fixture = _SLOW_FIXTURE
    return nodeid.startswith(prefix) and fixture in getattr(item, "fixturenames", ())


def _run_slow(config):
    return os.environ.get("GRAPHFLOW_RUN_SLOW") == "1" or bool(config.getoption("-m"))


@pytest.fixture(scope="session")
def run_slow(request):
    """Whether this run includes the tests marked slow (for tests that leave out slow parts)."""
    return _run_slow(request.config)


@pytest.fixture(scope="session")
def fuzz_share(run_slow):
    """The share of their mutants the fuzz tests try (`tooling.sampled`): 1/8 by default, all
    of them where the tests marked slow run (CI)."""
    return 1.0 if run_slow else 1 / 8


def pytest_report_header(config):
    if not _run_slow(config):
        return "tests marked slow are deselected: GRAPHFLOW_RUN_SLOW=1 (or -m slow) runs them"
    return None


def pytest_ignore_collect(collection_path, config):
    """A slow module whose collection alone is slow is not even imported by the default run."""
    if _run_slow(config):
        return None
    rel = collection_path.as_posix()
    return True if rel.endswith("/tests/interop/onnx/test_conformance.py") else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
    keep = selection.representatives([i for i in items if i.get_closest_marker("slow") is None])
    for item in items:
        if getattr(item, "callspec", None) is not None and item.nodeid not in keep \
                and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow(reason="a further parametrization (tests/selection.py)"))
    if _run_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
