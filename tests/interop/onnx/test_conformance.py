"""ONNX's own conformance cases (`onnx.backend.test.BackendTest`) run on graphflow's ONNX backend.

Which cases run, and which are expected to fail and why, is decided in
`graphflow.interop.onnx.conformance` / `expected_failures`; a listed case that passes is an
"unexpected success", which fails the run, so the list cannot go stale. docs/onnx.md's table is
generated from the same selection and checked here."""

import re
import warnings

import onnx.backend.test

from graphflow.interop.onnx import conformance
from graphflow.interop.onnx.backend import GraphflowBackend
from graphflow.interop.onnx.expected_failures import EXPECTED_FAILURES

with warnings.catch_warnings():  # onnx's case generators warn about the overflows they test
    warnings.simplefilter("ignore")
    _SELECTION = conformance.select_cases()

_backend_test = onnx.backend.test.BackendTest(GraphflowBackend, __name__)
_names = [name for selected, _ in _SELECTION.values() for name in selected]
_backend_test.include("^(" + "|".join(re.escape(n) for n in _names) + ")_cpu$")
for _name in EXPECTED_FAILURES:
    _backend_test.xfail("^" + re.escape(_name) + "_cpu$")
_wanted = {f"{n}_cpu" for n in _names}
_case_classes = _backend_test.test_cases  # (a property that builds new classes on each access)
for _case_class in _case_classes.values():  # only the selected cases are generated
    for _attr in [a for a in vars(_case_class) if a.startswith("test_") and a not in _wanted]:
        delattr(_case_class, _attr)
globals().update(_case_classes)


def test_every_expected_failure_is_a_selected_case():
    assert set(EXPECTED_FAILURES) <= set(_names)


def test_docs_table_is_current():
    with open(conformance.DOC) as f:
        text = f.read()
    assert conformance.table(_SELECTION) in text, (
        "docs/onnx.md is out of date: run python -m graphflow.interop.onnx.conformance --write")


def test_model_suites_run_whole():
    for suite in ("simple", "pytorch-converted", "pytorch-operator"):
        assert not _SELECTION[suite][1]
