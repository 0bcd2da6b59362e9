"""A training batch norm split for fusion: its statistics as one op, its y as elementwise ops.

    FusedBatchNorm(x, scale, offset, eps, is_training) -> y, batch_mean, batch_variance, mean, var
      = mean, var, batch_variance = FusedBatchNormStats(x)
        y = (x - mean) * (1 / sqrt(var + eps) * scale) + offset      (per channel, broadcast)
        batch_mean = mean

The same bits: FusedBatchNormStats is the kernel's statistics, and y is the kernel's formula in
its order, in x's dtype (float32 and float64 only; a float16 batch norm computes in float32 and is
left whole). Elementwise fusion, which runs next, then puts y's ops into one program with their
readers: the ReLU (and the residual add) after a batch norm read x and write their result, and y
is never written out and read back (on [64, 32, 32, 16] float32, 8 MB less memory traffic per
layer). Left whole: an op with control inputs, or whose statistics outputs are fetched.
"""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import fused_ops
from graphflow.optimizer_passes.rewrite import Editor, move_control_outputs, move_output, replace_uses

_DTYPES = ("float32", "float64")


def split_training_batch_norms(graph, preserve):
    editor = Editor(graph, preserve)
    count = 0
    for op in graph.get_operations():
        if (not fused_ops.is_training_batch_norm(op) or op.control_inputs or op in preserve
                or op.outputs[0].dtype.name not in _DTYPES
                or any(t in preserve for t in op.outputs[1:])):
            continue
        x, scale, offset = op.inputs[:3]
        channels = op.outputs[1].shape
        if not channels.is_fully_defined():
            continue
        _split(editor, op, x, scale, offset, channels)
        count += 1
    editor.commit()
    return count


def _split(editor, op, x, scale, offset, channels):
    dtype, fmt = x.dtype, op.attrs["data_format"]
    vector = [(dtype, channels)]

    def add(op_type, inputs, specs, attrs=None, suffix=None):
        return editor.add_op(op_type, inputs, attrs or {}, specs, anchor=op,
                             name=f"{op.name}/{suffix or op_type}", source=op.source,
                             device=op.device)

    def const(value, suffix):
        value = np.array(value, dtype.as_numpy_dtype)
        value.flags.writeable = False
        return add("Const", [], [(dtype, TensorShape(value.shape))], {"value": value},
                   suffix).outputs[0]

    stats = add("FusedBatchNormStats", [x], vector * 3, {"data_format": fmt}, "stats")
    mean, variance, batch_variance = stats.outputs
    # inv = 1 / sqrt(variance + eps), gain = inv * scale: as the kernel computes them
    shifted = add("Add", [variance, const(op.attrs["epsilon"], "epsilon")], vector).outputs[0]
    root = add("Sqrt", [shifted], vector).outputs[0]
    inv = add("RealDiv", [const(1.0, "one"), root], vector, suffix="inv").outputs[0]
    gain = add("Mul", [inv, scale], vector, suffix="gain").outputs[0]
    if fmt == "NCHW":  # [C] -> [C, 1, 1], broadcast over H and W
        shape = np.array([-1, 1, 1], np.int32)
        shape.flags.writeable = False
        shape_t = add("Const", [], [(dtypes.int32, TensorShape([3]))], {"value": shape},
                      "channels").outputs[0]
        column = [(dtype, TensorShape([channels[0], 1, 1]))]
        mean_b, gain_b, offset_b = (add("Reshape", [v, shape_t], column).outputs[0]
                                    for v in (mean, gain, offset))
    else:
        mean_b, gain_b, offset_b = mean, gain, offset
    full = [(dtype, op.outputs[0].shape)]
    centered = add("Sub", [x, mean_b], full).outputs[0]
    scaled = add("Mul", [centered, gain_b], full).outputs[0]
    y = add("Add", [scaled, offset_b], full, suffix="y")
    move_output(op.outputs[0], y)
    for k, value in ((1, mean), (2, batch_variance), (3, mean), (4, variance)):
        replace_uses(op.outputs[k], value)
    move_control_outputs(op, stats)
