"""The elementwise table (graphflow/ops/elementwise_spec.py): every elementwise OpDef has a row, and
every row has all the pieces derived from it — OpDef, public function, CPU kernel, fused CPU
instruction, CUDA expression, gradient rule (or the explicit NO_GRADIENT marker) and an op case —
which agree with each other on dtypes."""

import numpy as np
import pytest

import graphflow as tf
from graphflow.kernels import cpu as cpu_kernels
from graphflow.kernels.cpu.reference import fused_instructions
from graphflow.kernels.cuda import codegen
from graphflow.ops import elementwise_program, elementwise_spec, fused_ops, math_ops, registry
from graphflow.ops.elementwise_spec import NO_GRADIENT, ROWS
from tests.op_cases import all_cases

_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
_CASE_TYPES = {c.op_type for c in all_cases()}


def _operand_dtypes(row, dtype):
    n = 2 if row.arity == 0 else row.arity
    return ["bool"] + [dtype] * (n - 1) if row.result == "select" else [dtype] * n


def _attrs(row):
    return {"DstT": "float32"} if row.result == "cast" else {}


def test_every_elementwise_opdef_has_a_row():
    elementwise = {t for t in registry.registered_types() if registry.lookup(t).elementwise}
    missing = elementwise - set(elementwise_spec.ROW) - {"FusedElementwise"}
    assert not missing, f"elementwise ops without a row in elementwise_spec.ROWS: {sorted(missing)}"


@pytest.mark.parametrize("row", ROWS, ids=[r.op for r in ROWS])
def test_every_row_has_all_its_pieces(row):
    op_def = registry.lookup(row.op)
    assert op_def.elementwise or not row.fusible, f"{row.op}: the OpDef is not marked elementwise"
    assert row.op in cpu_kernels.TABLE, f"{row.op}: no CPU kernel"
    assert row.op in codegen.SUPPORTED_OPS, f"{row.op}: no CUDA expression"
    if row.grad == NO_GRADIENT:
        assert op_def.no_gradient and op_def.grad is None
    else:
        assert op_def.grad is not None, f"{row.op}: no gradient rule and no NO_GRADIENT marker"
    assert row.op in _CASE_TYPES, f"{row.op}: no case in tests/op_cases"
    assert (row.op in fused_ops.ELEMENTWISE_INSTRUCTIONS) == row.fusible
    dtype = next(d for d in _DTYPES if row.allowed is None or d in row.allowed)
    in_dtypes = _operand_dtypes(row, dtype)
    if row.fusible:
        fn, alias_ok = fused_instructions.instruction(row.op, _attrs(row),
                                                      [np.dtype(d) for d in in_dtypes],
                                                      np.dtype(row.result_dtype(in_dtypes, _attrs(row))))
        assert callable(fn) and alias_ok == row.alias_ok
    if dtype != "float16":  # CUDA has no half type
        program = codegen.normalize(elementwise_program.single_op(row.op, in_dtypes, _attrs(row)))
        source, name, _ = codegen.generate_kernel(program, ["c"] * len(in_dtypes), 1)
        assert name in source
    if not row.custom:
        public = math_ops.ELEMENTWISE_FUNCTIONS[row.fn]
        assert ("tf" in row.public) == (getattr(tf, row.fn, None) is public)
        assert ("nn" in row.public) == (getattr(tf.nn, row.fn, None) is public)


@pytest.mark.parametrize("row", [r for r in ROWS if not r.custom], ids=lambda r: r.op)
def test_opdef_program_check_and_kernels_agree_on_dtypes(row):
    """For every dtype: the OpDef accepts it iff the program validator does, both give the same
    result dtype, and so do the unfused and the fused CPU kernels."""
    for dtype in _DTYPES:
        in_dtypes = _operand_dtypes(row, dtype)
        tf.reset_default_graph()
        placeholders = [tf.placeholder(tf.as_dtype(d), [3]) for d in in_dtypes]
        try:
            out = registry.make_tensor(row.op, placeholders)
        except (TypeError, ValueError):
            out = None
        try:
            checked = elementwise_program.check(elementwise_program.single_op(row.op, in_dtypes))
        except elementwise_program.ProgramError:
            checked = None
        assert (out is None) == (checked is None), f"{row.op}({dtype}): OpDef and validator differ"
        if out is None:
            continue
        assert out.dtype.name == checked["instructions"][0][3]
        arrays = [np.ones(3, d) for d in in_dtypes]
        with tf.Session(optimize=False) as sess:
            got = sess.run(out, dict(zip(placeholders, arrays)))
        assert got.dtype.name == out.dtype.name


def test_rows_are_unique_and_fusible_ones_have_numpy():
    assert len({r.op for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert not r.fusible or r.numpy is not None, r.op
        assert r.c or r.result == "cast", r.op
        assert r.result in ("same", "bool", "truediv", "cast", "select"), r.op
        assert r.dtypes in elementwise_spec.DTYPE_SETS, r.op
