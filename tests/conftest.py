"""Shared fixtures: every test starts from a fresh default graph, with fused programs on threads
whenever their size allows, whatever their work (`fused_kernels.PARALLEL_MIN_WORK`), so that the
threaded route is the one tested (tests/kernels/cpu/reference/test_fused_kernels.py tests the rule).
Tests marked `slow` run only when GRAPHFLOW_RUN_SLOW=1 (CI sets it, see .ci/run) or when `-m` selects
markers explicitly."""

import os

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels.cpu.reference import fused_kernels


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
SLOW = {
    "tests/engine/test_session.py::test_100k_node_chain_builds_and_runs": "100k-op graph, 35 s",
    "tests/ops/test_gradients.py::test_long_chain_differentiates_and_runs": "long chain, 14 s",
    "tests/interop/distribute/": "MPI jobs of 2-3 processes, 25 tests, ~60 s",
    "tests/interop/onnx/test_conformance.py": "1274 ONNX conformance cases, ~70 s with collection",
    "tests/tools/test_viz.py::test_big_graphs_are_walked_without_recursion": "big graphs, 11 s",
    "tests/test_train_digits.py::test_train_digits_quick": "trains two models, 12 s",
    "tests/test_train_digits.py::test_saved_cnn_holds_only_what_its_output_needs": "trains, 8 s",
    "tests/tools/test_cli.py::test_usage_errors_exit_with_status_2": "12 processes, 7 s",
    "tests/tools/test_cli.py::test_inspect_prints_signatures_variables_and_ops": "processes, 7 s",
}
# CUDA kernels against the CPU on values: on the GPU, or without one on the C++ emulation of the
# kernels (~100 s); the host-side launch checks (tests/test_cuda_kernels.py) stay in the default run.
_SLOW_FIXTURE = ("tests/test_cuda_kernels_values.py::", "gpu")


def _is_slow(item):
    nodeid = item.nodeid
    if any(nodeid.startswith(prefix) for prefix in SLOW):
        return True
    prefix, fixture = _SLOW_FIXTURE
    return nodeid.startswith(prefix) and fixture in getattr(item, "fixturenames", ())


def _run_slow(config):
    return os.environ.get("GRAPHFLOW_RUN_SLOW") == "1" or bool(config.getoption("-m"))


@pytest.fixture(scope="session")
def run_slow(request):
    """Whether this run includes the tests marked slow (for tests that leave out slow parts)."""
    return _run_slow(request.config)


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
    if _run_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
