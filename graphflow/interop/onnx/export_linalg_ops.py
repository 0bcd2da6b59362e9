"""Converters for the cumulative and matrix ops (same `converter` registry as `export_ops.py`):
Cumsum is ONNX CumSum, MatrixBandPart one or two Trilu nodes (opset 14), MatrixDeterminant
Det, and the diagonal ops (of known matrix sizes) Where nodes against a constant identity mask,
so non-finite entries off the diagonal never leak into the result (0 * inf would)."""

import numpy as np

from graphflow.interop.onnx.export_ops import _out, _scalar, converter


@converter("cumsum")
def _cumsum(ctx, op):
    x = op.inputs[0]
    axis = (ctx.name(op.inputs[1]) if op.attrs["axis"] is None  # an axis fed at run time
            else ctx.const(np.array(op.attrs["axis"], np.int64), "axis"))
    ctx.one("CumSum", [ctx.name(x), axis],
            _out(ctx, op), exclusive=int(op.attrs["exclusive"]), reverse=int(op.attrs["reverse"]))


@converter("band_part")
def _band_part(ctx, op):
    """keep i - j <= lower and j - i <= upper: Trilu(upper=0, k=upper) keeps j - i <= k,
    Trilu(upper=1, k=-lower) keeps j - i >= -lower; a negative bound drops its node."""
    if ctx.opset < 14:
        raise ValueError("MatrixBandPart exports as Trilu, which needs opset 14 or newer")
    lower, upper = op.attrs["num_lower"], op.attrs["num_upper"]
    value = ctx.name(op.inputs[0])
    steps = [(0, upper)] if upper >= 0 else []
    steps += [(1, -lower)] if lower >= 0 else []
    if not steps:
        ctx.one("Identity", [value], _out(ctx, op))
        return
    for n, (which, k) in enumerate(steps):
        out = _out(ctx, op) if n == len(steps) - 1 else None
        value = ctx.one("Trilu", [value, ctx.const(np.array(k, np.int64), "k")], out, upper=which)


def _sizes(x, what):
    dims = x.shape.dims
    if dims is None or len(dims) < 2 or dims[-1] is None or dims[-2] is None:
        raise ValueError(f"{what} exports only for matrices of known sizes, got shape {x.shape}")
    return dims[-2], dims[-1]


def _eye(ctx, rows, cols):
    return ctx.const(np.eye(rows, cols, dtype=bool), "eye")


@converter("matrix_diag")
def _matrix_diag(ctx, op):  # where(I, d[..., :, None], 0)
    d = op.inputs[0]
    n = d.shape.dims[-1] if d.shape.dims else None
    if n is None:
        raise ValueError("MatrixDiag exports only for diagonals of known length")
    column = ctx.one("Unsqueeze", [ctx.name(d), ctx.const(np.array([-1], np.int64))])
    ctx.one("Where", [_eye(ctx, n, n), column, _scalar(ctx, 0, d, "zero")], _out(ctx, op))


@converter("matrix_diag_part")
def _matrix_diag_part(ctx, op):  # sum of where(I, x, 0) over the longer axis
    x = op.inputs[0]
    rows, cols = _sizes(x, "MatrixDiagPart")
    masked = ctx.one("Where", [_eye(ctx, rows, cols), ctx.name(x), _scalar(ctx, 0, x, "zero")])
    axis = -1 if rows <= cols else -2
    ctx.one("ReduceSum", [masked, ctx.const(np.array([axis], np.int64))], _out(ctx, op), keepdims=0)


@converter("matrix_set_diag")
def _matrix_set_diag(ctx, op):  # where(I, d along the shorter axis, x)
    x, d = op.inputs
    rows, cols = _sizes(x, "MatrixSetDiag")
    spread = ctx.one("Unsqueeze", [ctx.name(d), ctx.const(np.array([-1 if rows <= cols else -2],
                                                                    np.int64))])
    ctx.one("Where", [_eye(ctx, rows, cols), spread, ctx.name(x)], _out(ctx, op))
