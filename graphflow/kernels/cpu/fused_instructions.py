"""The instructions of a FusedElementwise program on the CPU: for each elementwise op type, a numpy
function `fn(*operands, out=buffer)` computing exactly what the op's own CPU kernel computes, but
into a given buffer (numpy ufuncs have this calling convention already; the others are written
out here). Used by `fused_kernels.py`.
"""

import numpy as np
from scipy import special as _special

from graphflow.kernels.cpu.math_kernels import _SELU_ALPHA, _SELU_SCALE, BINARY_KERNELS, UNARY_KERNELS


# Each is `fn(*operands, out=buffer)` writing the result into the buffer (numpy ufuncs have exactly
# this calling convention). `alias_ok`: out may be the buffer of one of the operands.
def _sigmoid(x, *, out):
    np.multiply(x, 0.5, out=out)
    np.tanh(out, out=out)
    np.add(out, 1, out=out)
    np.multiply(out, 0.5, out=out)


def _relu(x, *, out):
    np.maximum(x, 0, out=out)


def _relu6(x, *, out):
    np.maximum(x, 0, out=out)
    np.minimum(out, 6, out=out)


# np.where is faster than np.copyto(..., where=mask) on unpredictable masks: the selecting
# instructions compute np.where and copy its result into the buffer.
def _elu(x, *, out):
    positive = np.greater(x, 0)
    np.minimum(x, 0, out=out)
    np.expm1(out, out=out)
    np.copyto(out, np.where(positive, x, out))


def _selu(x, *, out):
    positive = np.greater(x, 0)
    np.minimum(x, 0, out=out)
    np.expm1(out, out=out)
    np.multiply(out, _SELU_ALPHA, out=out)
    np.multiply(np.where(positive, x, out), _SELU_SCALE, out=out)


def _softplus(x, *, out):
    np.logaddexp(x, 0, out=out)


def _softsign(x, *, out):
    np.abs(x, out=out)
    np.add(1, out, out=out)
    np.true_divide(x, out, out=out)


def _rsqrt(x, *, out):
    np.sqrt(x, out=out)
    np.reciprocal(out, out=out)


def _erf(x, *, out):
    _special.erf(x, out=out)


def _squared_difference(x, y, *, out):
    np.subtract(x, y, out=out)
    np.square(out, out=out)


def _add_n(*xs, out):
    np.add(xs[0], xs[1], out=out)
    for x in xs[2:]:
        np.add(out, x, out=out)


def _select(cond, x, y, *, out):
    bits = _select_bits(out.dtype, x, y)
    if bits is None:
        np.copyto(out, np.where(cond, x, y))
        return
    # Bitwise select, exactly np.where's values (NaN payloads and -0.0 included) without its
    # data-dependent branch, which costs ~3.5 ns per element on random masks: with m all ones
    # where cond holds and zeros elsewhere, out = (x & m) | (y & ~m).
    mask = np.asarray(cond).astype(bits)
    np.negative(mask, out=mask)
    x_bits = np.asarray(x).view(bits)
    y_bits = np.asarray(y).view(bits)
    if y_bits.any():
        rest = np.bitwise_and(y_bits, np.invert(mask))  # taken before out (which may alias y) is written
        np.bitwise_and(x_bits, mask, out=out.view(bits))
        np.bitwise_or(out.view(bits), rest, out=out.view(bits))
    else:
        np.bitwise_and(x_bits, mask, out=out.view(bits))


def _select_bits(dtype, x, y):
    """The integer type whose bit patterns stand for `dtype` values in a bitwise select, or None."""
    if dtype.kind not in "fiu" or np.asarray(x).dtype != dtype or np.asarray(y).dtype != dtype:
        return None
    return np.dtype(f"i{dtype.itemsize}")


_select.alloc = np.where  # whole-array evaluation: no buffer to fill


def _cast(x, *, out):
    np.copyto(out, x, casting="unsafe")


def _clip(t, lo, hi, *, out):
    np.clip(t, lo, hi, out=out)


# Clamping activations the compiled program lowers to Maximum/Minimum against constant bounds.
_CLAMPS = {"Relu": (0,), "Relu6": (0, 6)}

# op type -> (fn, alias_ok) for the ops whose unfused kernel is not a plain ufunc.
_COMPOSITE = {
    "Sigmoid": (_sigmoid, True), "Relu": (_relu, True), "Relu6": (_relu6, True),
    "Elu": (_elu, False), "Selu": (_selu, False), "Softplus": (_softplus, True),
    "Softsign": (_softsign, False), "Rsqrt": (_rsqrt, True), "Erf": (_erf, True),
    "SquaredDifference": (_squared_difference, True), "AddN": (_add_n, False),
    "Select": (_select, True), "Cast": (_cast, True), "ClipByValue": (_clip, True),
    "Round": (np.rint, True),  # np.round with no decimals is the rint ufunc
}


def _leaky_relu(attrs, dtype):
    alpha = np.asarray(attrs.get("alpha", 0.2), dtype=dtype)

    def leaky_relu(x, *, out):
        positive = np.greater(x, 0)
        np.multiply(x, alpha, out=out)
        np.copyto(out, np.where(positive, x, out))
    return leaky_relu


def _real_div(in_dtype, out_dtype):
    if np.dtype(in_dtype).kind == "f":
        return np.true_divide

    def int_div(x, y, *, out):
        np.true_divide(x, y, out=out, dtype=out_dtype)
    return int_div


# instructions whose function depends on attrs or dtypes: op type -> build(attrs, in_dtypes, out)
_BUILT = {"LeakyRelu": lambda attrs, in_dtypes, out_dtype: (_leaky_relu(attrs, out_dtype), False),
          "RealDiv": lambda attrs, in_dtypes, out_dtype: (_real_div(in_dtypes[0], out_dtype), True)}


def instruction(op_type, attrs, in_dtypes, out_dtype):
    """(fn(*operands, out), alias_ok) computing one program instruction exactly like the op's
    unfused CPU kernel. Raises KeyError for op types no fused kernel implements."""
    special = _BUILT.get(op_type)
    if special is not None:
        return special(attrs, in_dtypes, out_dtype)
    if op_type in _COMPOSITE:
        return _COMPOSITE[op_type]
    fn = UNARY_KERNELS.get(op_type, BINARY_KERNELS.get(op_type))
    if isinstance(fn, np.ufunc) and fn.nout == 1:
        return fn, True
    raise KeyError(f"No fused CPU implementation for elementwise op type '{op_type}'")


