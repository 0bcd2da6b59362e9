"""docs/tensorflow_ops.md is the op table as it stands (regenerate: python -m
graphflow.interop.tensorflow.op_docs); every graphflow op type either exports or says why not."""

from graphflow.interop.tensorflow import op_docs, op_table
from graphflow.ops import registry


def test_docs_table_is_current():
    assert op_docs.PAGE.read_text() == op_docs.markdown(), (
        "docs/tensorflow_ops.md is stale: run python -m graphflow.interop.tensorflow.op_docs")


def test_every_op_type_exports_or_says_why():
    for op_type in registry.registered_types():
        if op_table.for_export(op_type) is None:
            assert op_table.why_unexportable(op_type), op_type


def test_records_name_real_ops():
    from graphflow.interop.tensorflow.signatures import signature
    for record in op_table.RECORDS:
        assert signature(record.tf) is not None, record.tf
        assert registry.find(record.gf) is not None, record.gf
