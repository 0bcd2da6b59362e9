"""Generic forward harness over the whole op table.

For every `OpCase` (tests/op_cases): build the op from placeholders, run it, compare with the numpy
reference, and check the static shape/dtype inference against the kernel's actual output — once with
fully known input shapes (inferred shape must equal the real one) and once with shape-less
placeholders (inferred shape must be compatible). Also: every registered op type has a case.
"""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import KernelNode, SessionState
from graphflow.kernels import cpu as cpu_kernels
from graphflow.ops import registry
from tests.op_cases import OpCase, all_cases

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


def _values_with_inputs(case, op_type):
    """The op's CPU kernel called directly on the values its inputs have in the case: its outputs
    and those inputs (a session would copy fetched views)."""
    placeholders, _ = _build(case, known_shapes=True)
    op = next(o for o in tf.get_default_graph().get_operations() if o.type == op_type)
    with tf.Session(optimize=False) as sess:
        inputs = sess.run(list(op.inputs), feed_dict=dict(zip(placeholders, case.inputs)))
    run = cpu_kernels.reference_builder(op_type)(KernelNode.describing(op, SessionState()))
    outputs = run(*inputs)
    return _as_list(outputs) if len(op.outputs) > 1 else [outputs], inputs


def _shares_an_input(outputs, inputs):
    arrays = [np.asarray(v) for v in inputs if isinstance(v, np.ndarray)]
    return any(isinstance(out, np.ndarray) and np.shares_memory(out, a)
               for out in outputs for a in arrays)


_FRESH_CASES = [pytest.param(c, id=c.name) for c in CASES
                if registry.lookup(c.op_type).fresh_output and c.op_type not in COVERED_ELSEWHERE]


@pytest.mark.parametrize("case", _FRESH_CASES)
def test_fresh_output_ops_never_return_an_input_buffer(case):
    """`fresh_output` lets the memory plan write a later op's result over this op's output: a
    kernel that handed back a view of an input would have that input overwritten."""
    outputs, inputs = _values_with_inputs(case, case.op_type)
    assert not _shares_an_input(outputs, inputs), f"{case.name}: output is a view of an input"


def test_the_fresh_output_check_sees_a_view():
    reshape = next(c for c in CASES if c.op_type == "Reshape")
    assert registry.lookup("Reshape").may_alias_input
    outputs, inputs = _values_with_inputs(reshape, "Reshape")
    assert _shares_an_input(outputs, inputs)


def _edge(op_type, build, *shapes):
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return pytest.param(op_type, build, inputs, id=f"{op_type}-{'x'.join(map(str, shapes))}")


# Kernel paths the small op cases do not reach: identity-sized windows, 1x1 filters, NCHW, and
# sizes large enough for the compiled and oneDNN paths.
_FRESH_EDGES = [
    _edge("MaxPool", lambda x: tf.nn.max_pool(x, [1, 1, 1, 1], [1, 1, 1, 1], "VALID"), (2, 4, 4, 3)),
    _edge("AvgPool", lambda x: tf.nn.avg_pool(x, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"), (2, 4, 4, 3)),
    _edge("MaxPool", lambda x: tf.nn.max_pool(x, [1, 1, 1, 1], [1, 1, 1, 1], "VALID",
                                              data_format="NCHW"), (2, 3, 4, 4)),
    _edge("MaxPool", lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), (64, 28, 28, 16)),
    _edge("Conv2D", lambda x, f: tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID"), (2, 4, 4, 3), (1, 1, 3, 3)),
    _edge("Conv2D", lambda x, f: tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME"), (64, 28, 28, 1), (5, 5, 1, 16)),
    _edge("Conv2D", lambda x, f: tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", data_format="NCHW"),
          (8, 16, 16, 16), (3, 3, 16, 32)),
]


@pytest.mark.parametrize("op_type,build,inputs", _FRESH_EDGES)
def test_fresh_output_kernel_paths_never_return_an_input_buffer(op_type, build, inputs):
    case = OpCase(op_type, build, inputs)
    outputs, values = _values_with_inputs(case, op_type)
    assert not _shares_an_input(outputs, values)
