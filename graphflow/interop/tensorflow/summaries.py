"""Summary ops both ways: graphflow's `ScalarSummary` / `HistogramSummary` keep the tag as an
attr; TensorFlow's take it as their first input (a string tensor, a Const in every graph TF1's
`tf.summary.scalar` builds). `MergeSummary` is the same op on both sides (the table's default).
"""

import numpy as np

from graphflow.interop.tensorflow.export_lowerings import emit
from graphflow.interop.tensorflow.exporter import rule as export_rule
from graphflow.interop.tensorflow.import_core import rule as import_rule
from graphflow.ops import static_value
from graphflow.ops.registry import make_op


@export_rule("tagged_summary")
def _export(ctx, op, record):
    tag = ctx.const(np.asarray(op.attrs["tag"].encode(), dtype=object), f"{op.name}/tag",
                    "string")
    values = ctx.name(op.inputs[0]), op.inputs[0].dtype.name
    emit(ctx, op, record.tf, record.tf, [(tag, "string"), values], ["string"], last=True)
    ctx.set_outputs(op, ctx.nodes[-1])


@import_rule("tagged_summary")
def _import(ctx, node, inputs, record):
    if len(inputs) != 2:
        raise ctx.error(node, f"has {len(inputs)} inputs; TensorFlow's {node.op} takes 2")
    tag = static_value.constant_value(inputs[0])
    if tag is None or np.ndim(tag) != 0:
        raise ctx.error(node, "its tag must be a constant string scalar")
    tag = tag.item() if hasattr(tag, "item") else tag
    tag = tag.decode("utf-8", "replace") if isinstance(tag, bytes) else str(tag)
    return make_op(record.gf, [inputs[1]], {"tag": tag}, name=ctx.op_name(node)).outputs
