"""Every op case of tests/op_cases whose op has several CPU implementations, run as a session runs
it (the plan's own choice, optimization passes on, two intra-op threads) against the same case run
with the numpy reference only (`TABLE.restricted_to()`): the same values, within the case's
tolerance. The families' own tests (tests/kernels/cpu/...) run the accelerated implementations on
sizes above their thresholds; this one checks the choice never changes what an op case computes."""

import numpy as np
import pytest

from graphflow.kernels import cpu as cpu_kernels
from graphflow.ops import registry
from tests.op_cases import all_cases, run_build


def _several_implementations(op_type):
    return op_type in cpu_kernels.TABLE and len(cpu_kernels.TABLE.implementations(op_type)) > 1


_CASES = [pytest.param(c, id=c.name) for c in all_cases()
          if _several_implementations(c.op_type) and not registry.lookup(c.op_type).random
          and not registry.lookup(c.op_type).stateful]


def _flat(value):
    return [v for x in value for v in _flat(x)] if isinstance(value, (list, tuple)) else [value]


def test_some_op_cases_have_several_implementations():
    assert len(_CASES) >= 10, [c.id for c in _CASES]


@pytest.mark.parametrize("case", _CASES)
def test_the_chosen_implementation_gives_the_references_values(case):
    chosen = run_build(case.build, case.inputs, threads=2)
    with cpu_kernels.TABLE.restricted_to():
        reference = run_build(case.build, case.inputs, threads=2)
    for got, want in zip(_flat(chosen), _flat(reference)):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, case.name
        if np.issubdtype(want.dtype, np.inexact):
            np.testing.assert_allclose(got, want, rtol=max(case.rtol, 1e-5), atol=max(case.atol, 1e-5),
                                       err_msg=case.name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=case.name)
