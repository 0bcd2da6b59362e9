"""The instructions of a FusedElementwise program on the CPU: for each elementwise op type, a numpy
function `fn(*operands, out=buffer)` computing exactly what the op's own numpy kernel computes, but
into a given buffer. Both come from the op's row of the elementwise table
(`graphflow/ops/elementwise_spec.py`): a numpy ufunc (which has this calling convention already) or
the row's `fn(*operands, out=None)`, which is also the unfused kernel (`math_kernels.py`). The
compiled program (`numba/fused_program.py`) passes `compiled`, the compiled float32 functions
(`fused_jit.kernel_function`) that its unfused kernels use too (float32 Sigmoid).
Used by `fused_kernels.py`.
"""

import numpy as np

from graphflow.ops.elementwise_spec import ROW, ROWS, numpy_function

# Clamping activations the compiled program lowers to Maximum/Minimum against constant bounds.
CLAMPS = {r.op: r.clamp for r in ROWS if r.clamp}


def instruction(op_type, attrs, in_dtypes, out_dtype, compiled=None):
    """(fn(*operands, out), alias_ok) computing one program instruction exactly like the op's
    unfused CPU kernel; `alias_ok`: out may be the buffer of one of the operands. `compiled(op_type,
    dtype)`: a compiled function standing in for the numpy one, or None. Raises KeyError for op
    types no fused kernel implements."""
    row = ROW.get(op_type)
    if row is None or not row.fusible or row.numpy is None:
        raise KeyError(f"No fused CPU implementation for elementwise op type '{op_type}'")
    if not isinstance(row.numpy, str):
        fn = compiled(op_type, out_dtype) if compiled is not None else None
        if fn is not None and all(np.dtype(d) == out_dtype for d in in_dtypes):
            return fn, row.alias_ok
    return numpy_function(row, attrs, in_dtypes), row.alias_ok
