"""Generic forward harness over the whole op table.

For every `OpCase` (tests/op_cases): build the op from placeholders, run it, compare with the numpy
reference, and check the static shape/dtype inference against the kernel's actual output — once with
fully known input shapes (inferred shape must equal the real one) and once with shape-less
placeholders (inferred shape must be compatible). Also: every registered op type has a case.
"""

import numpy as np
import pytest

import graphflow as tf
from graphflow.ops import registry
from tests.op_cases import all_cases

CASES = all_cases()

# Op types exercised by dedicated tests instead of the generic harness (with the reason).
COVERED_ELSEWHERE = {
    "Placeholder": "every case feeds placeholders",
    "Const": "every case with Python constants; tests/test_core_ops.py",
    "NoOp": "tests/engine/test_session.py (group, control dependencies)",
    "VariableV2": "tests/ops/test_state_ops.py",
    "Assign": "tests/ops/test_state_ops.py",
    "AssignAdd": "tests/ops/test_state_ops.py",
    "AssignSub": "tests/ops/test_state_ops.py",
    "IsVariableInitialized": "tests/ops/test_state_ops.py",
    "ReadVariableOp": "tests/ops/test_state_ops.py",
    # collectives need several processes: values and gradients under mpirun
    "MpiAllreduce": "tests/interop/distribute/test_distribute.py",
    "MpiAllgather": "tests/interop/distribute/test_distribute.py",
    "MpiAllgatherGrad": "tests/interop/distribute/test_distribute.py",
    "MpiBroadcast": "tests/interop/distribute/test_distribute.py",
    "MpiAllreduceStart": "tests/interop/distribute/test_distribute.py (no gradient)",
    "MpiAllreduceWait": "tests/interop/distribute/test_distribute.py (no gradient)",
    "MakeIterator": "tests/tf1/data/test_iterator_ops.py (no outputs: the initializer op)",
    "CountUpTo": "tests/tf1/data/test_queues.py (needs an initialized variable)",
    "ReaderResetV2": "tests/tf1/data/test_readers_queued.py (no outputs)",
    "ScatterUpdate": "tests/ops/test_scatter_ops.py",
    "ScatterAdd": "tests/ops/test_scatter_ops.py",
    "ScatterSub": "tests/ops/test_scatter_ops.py",
}


def _build(case, known_shapes):
    placeholders = [tf.placeholder(tf.as_dtype(x.dtype), shape=x.shape if known_shapes else None,
                                   name=f"in{i}") for i, x in enumerate(case.inputs)]
    out = case.build(*placeholders)
    return placeholders, out


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _check_static(tensor, value, exact):
    if tensor.dtype == tf.string and isinstance(value, bytes):  # TF1 fetches a scalar as bytes
        value = np.array(value, dtype=object)
    value = np.asarray(value)
    assert tensor.dtype.as_numpy_dtype == value.dtype, (
        f"{tensor.name}: inferred dtype {tensor.dtype.name}, kernel produced {value.dtype}")
    if exact:
        assert tensor.shape.is_fully_defined(), f"{tensor.name}: shape {tensor.shape} not inferred"
        assert tuple(tensor.shape.dims) == value.shape, (
            f"{tensor.name}: inferred {tensor.shape}, kernel produced {value.shape}")
    else:
        assert tensor.shape.is_compatible_with(value.shape), (
            f"{tensor.name}: inferred {tensor.shape} incompatible with {value.shape}")


# every case with static input shapes; with unknown shapes only the cases that allow them
_SHAPE_MODES = [pytest.param(case, known, id=f"{'static' if known else 'dynamic'}-{case.name}")
                for known in (True, False) for case in CASES if known or case.unknown_shapes]


@pytest.mark.parametrize("case,known_shapes", _SHAPE_MODES)
def test_op_forward_and_shape_inference(case, known_shapes):
    placeholders, out = _build(case, known_shapes)
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert case.op_type in types, f"case {case.name} never builds a '{case.op_type}' op"
    outs = _as_list(out)
    with tf.Session() as sess:
        values = sess.run(outs, feed_dict=dict(zip(placeholders, case.inputs)))
    for tensor, value in zip(outs, values):
        _check_static(tensor, value, exact=known_shapes and not case.shape_from_values
                      and _inputs_static(tensor))
    if case.reference is not None:
        expected = _as_list(case.reference(*case.inputs))
        for got, want in zip(values, expected):
            want = np.asarray(want)
            if want.dtype.kind in "fc":
                np.testing.assert_allclose(np.asarray(got, np.float64), want.astype(np.float64),
                                           rtol=case.rtol, atol=case.atol, err_msg=case.name)
            else:
                np.testing.assert_array_equal(got, want, err_msg=case.name)


def _inputs_static(tensor):
    """Outputs whose shape depends on input *values* (Where, Unique...) are only compatible."""
    return not registry.lookup(tensor.op.type).value_dependent_shape


def test_every_registered_op_has_a_case():
    with_cases = {c.op_type for c in CASES}
    missing = [t for t in registry.registered_types()
               if t not in with_cases and t not in COVERED_ELSEWHERE]
    assert not missing, f"op types without a generic test case: {missing}"
