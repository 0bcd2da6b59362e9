"""numpy kernels for the math ops: the elementwise table's (unary, binary, comparisons, logic,
select, cast, clip, add_n), matmul, reductions.

float16 sums and means accumulate in float32 and round to float16 once, at the end
(`accumulation_dtype`), as TF's GPU kernels and PyTorch do: a float16 running sum stops growing at
2048 (+1 rounds away) and overflows at 65504, so the mean of 70,000 ones would be inf. The ops built
on these sums (l2_loss, softmax, the losses, batch norm moments) do the same."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel, simple
from graphflow.ops import elementwise_spec


def elementwise_kernel(row):
    """The kernel builder of an elementwise row: its numpy ufunc, or its `fn(*xs, out=None)` (also
    the fused CPU instruction, see `fused_instructions.py`), which gives a new array here (a row
    marked `compiled_float32` also has a compiled float32 implementation: `numba/fused_jit.py`);
    integer division checks its divisors (`elementwise_spec.numpy_function`)."""
    return lambda node: elementwise_spec.numpy_function(row, node.attrs, node.in_dtypes)


# The numpy kernels of the elementwise table (ops/elementwise_spec.py), Cast/Select/AddN included.
for _row in elementwise_spec.ROWS:
    if _row.numpy is not None:
        cpu_kernel(_row.op)(elementwise_kernel(_row))


simple("Where", lambda cond: np.argwhere(cond).astype(np.int64))


def oriented(a, b, transpose_a, transpose_b):
    """The operands of a product as `np.matmul` takes them: each transposed (a view) where its
    attr says so; operands of rank below 2 are an error."""
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul needs inputs of rank >= 2, got shapes {a.shape} and {b.shape}")
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    return a, b


def product_dims(node):
    """(m, k, n) of a MatMul or FusedMatMul node whose operands are 2-D with every dim known
    (after its transposes); None otherwise (the predicates of the other implementations)."""
    shapes = node.in_shapes
    if shapes is None or len(shapes) < 2:
        return None
    sa, sb = shapes[0], shapes[1]
    if sa is None or sb is None or len(sa) != 2 or len(sb) != 2 or None in sa or None in sb:
        return None
    m, k = reversed(sa) if node.attrs.get("transpose_a", False) else sa
    k2, n = reversed(sb) if node.attrs.get("transpose_b", False) else sb
    return (m, k, n) if k == k2 else None


def product_ranks(node):
    """(rank of a, rank of b) where both are known, else None."""
    shapes = node.in_shapes
    if shapes is None or len(shapes) < 2 or shapes[0] is None or shapes[1] is None:
        return None
    return len(shapes[0]), len(shapes[1])


@cpu_kernel("MatMul")
def _matmul(node):
    ta = node.attrs.get("transpose_a", False)
    tb = node.attrs.get("transpose_b", False)
    return lambda a, b: np.matmul(*oriented(a, b, ta, tb))


def _axis(attrs):
    axis = attrs.get("axis")
    return tuple(axis) if isinstance(axis, list) else axis


def run_time_axes(x, axes):
    """The axes of a reduction given as a tensor (TF1's `reduction_indices`): an int scalar or
    vector, each in [-rank, rank), duplicates allowed (as TF1 allows them)."""
    values = np.asarray(axes)
    if values.dtype.kind not in "iu" or values.ndim > 1:
        raise ValueError(f"reduction axes must be an integer scalar or vector, got {values!r}")
    rank = np.ndim(x)
    out = set()
    for a in values.ravel().tolist():
        if not -rank <= a < max(rank, 1):
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
        out.add(a % rank if rank else 0)
    return tuple(sorted(out)) if rank else None


def accumulation_dtype(dtype):
    """The dtype a sum of `dtype` values accumulates in: float32 for float16 (the result is rounded
    to float16 once), the dtype itself otherwise."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# Reductions call the ufunc's reduce directly (cheaper than np.sum & co on small arrays).
_UFUNC_REDUCTIONS = {"Sum": np.add, "Prod": np.multiply, "Max": np.maximum, "Min": np.minimum,
                     "All": np.logical_and, "Any": np.logical_or}


def _extreme(dtype, lowest):
    if dtype.kind == "f":
        return -np.inf if lowest else np.inf
    info = np.iinfo(dtype)
    return info.min if lowest else info.max


_EMPTY_IDENTITY = {np.maximum: lambda dtype: _extreme(dtype, True),
                   np.minimum: lambda dtype: _extreme(dtype, False)}


def _make_reduction(ufunc):
    def build(node):
        static_axis = _axis(node.attrs)
        keepdims = node.attrs.get("keepdims", False)
        out_dtype = node.out_dtypes[0]
        if ufunc is np.add and accumulation_dtype(out_dtype) != out_dtype:  # float16: in float32
            acc = accumulation_dtype(out_dtype)

            def reduce(x, axis=static_axis):
                return np.asarray(ufunc.reduce(x, axis=axis, keepdims=keepdims, dtype=acc),
                                  out_dtype)
        elif ufunc is np.add or ufunc is np.multiply:  # accumulate in the output dtype, as TF does
            def reduce(x, axis=static_axis):
                return ufunc.reduce(x, axis=axis, keepdims=keepdims, dtype=out_dtype)
        elif ufunc in _EMPTY_IDENTITY:
            def reduce(x, axis=static_axis):
                if x.size == 0:  # TF1: the max of nothing is the lowest value (-inf), min the highest
                    initial = _EMPTY_IDENTITY[ufunc](x.dtype)
                    return ufunc.reduce(x, axis=axis, keepdims=keepdims, initial=initial)
                return ufunc.reduce(x, axis=axis, keepdims=keepdims)
        else:
            def reduce(x, axis=static_axis):
                return ufunc.reduce(x, axis=axis, keepdims=keepdims)
        if len(node.in_dtypes) == 2:  # axes read at run time (TF1's reduction_indices)
            return lambda x, axes: reduce(x, run_time_axes(x, axes))
        return reduce
    return build


for _type, _ufunc in _UFUNC_REDUCTIONS.items():
    cpu_kernel(_type)(_make_reduction(_ufunc))


@cpu_kernel("Mean")
def _mean(node):
    static_axis = _axis(node.attrs)
    keepdims = node.attrs.get("keepdims", False)
    out_dtype = node.out_dtypes[0]
    if np.dtype(out_dtype).kind == "f":
        acc = accumulation_dtype(out_dtype)

        def mean(x, axis=static_axis):
            return np.asarray(np.mean(x, axis=axis, keepdims=keepdims, dtype=acc), out_dtype)
    else:
        def mean(x, axis=static_axis):  # TF: integer mean truncates toward zero
            total = np.sum(x, axis=axis, keepdims=keepdims, dtype=np.int64)
            count = max(x.size, 1) // max(np.asarray(total).size, 1)
            return np.asarray(np.trunc(total / max(count, 1))).astype(out_dtype)
    if len(node.in_dtypes) == 2:
        return lambda x, axes: mean(x, run_time_axes(x, axes))
    return mean


_ARG = {"ArgMax": np.argmax, "ArgMin": np.argmin}


def tf_arg(x, axis, is_max):
    """ArgMax (`is_max`) / ArgMin as TF's CPU kernels compute it: the first extreme value wins; a
    NaN never wins, nor a value not above the dtype's finite lowest value (not below its highest,
    for ArgMin), since TF's running best starts there at index 0: a row of nothing else gives 0.
    TF 2.21: argmax([1, nan, 3]) = 2, argmin([nan, 5, nan, -1]) = 3, argmax([nan, nan]) = 0,
    argmax([nan, -inf]) = 0, argmax([-inf, lowest]) = 0. numpy's answer (the first NaN) is kept
    where no row has a NaN or only such values: checked on the chosen values, one per output."""
    fn = np.argmax if is_max else np.argmin
    index = fn(x, axis=axis)
    if x.dtype.kind != "f" or x.size == 0:
        return index
    picked = np.take_along_axis(x, np.expand_dims(index, axis), axis)
    bound = np.finfo(x.dtype).min if is_max else np.finfo(x.dtype).max
    if not (np.isnan(picked).any() or (picked <= bound if is_max else picked >= bound).any()):
        return index
    never = np.isnan(x) | ((x <= bound) if is_max else (x >= bound))
    return fn(np.where(never, -np.inf if is_max else np.inf, x), axis=axis)


@cpu_kernel(*_ARG)
def _arg(node):
    axis = node.attrs["axis"]
    out_dtype = node.out_dtypes[0]
    is_max = _ARG[node.type] is np.argmax
    return lambda x: np.asarray(tf_arg(x, axis, is_max)).astype(out_dtype)
