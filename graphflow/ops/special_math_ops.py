"""TF's special-function ops that the generated elementwise constructors do not cover: Betainc
(three operands, broadcast together; its numpy function and C expression are rows of the
elementwise table, ops/elementwise_special.py), and TF1's Python composites over elementwise
ops: `tf.math.reciprocal_no_nan`, `tf.math.erfcinv`, `tf.math.polyval`, `tf.math.scalar_mul`,
`tf.lbeta` and, for graphflow's real
tensors, `tf.real`, `tf.imag`, `tf.conj` and `tf.angle`."""

import math

from graphflow.framework.graph import Tensor, name_scope
from graphflow.ops import math_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor, identity
from graphflow.ops.grad_util import unbroadcast
from graphflow.ops.registry import (
    FLOATS,
    broadcast_static,
    define,
    make_tensor,
    register_gradient,
    require_dtype,
    same_dtype,
)

_F = math_ops.ELEMENTWISE_FUNCTIONS


def _betainc_infer(inputs, attrs):
    dt = same_dtype(inputs, "a, b and x")
    require_dtype(inputs[0], FLOATS, "a")
    shape = broadcast_static(broadcast_static(inputs[0].shape, inputs[1].shape), inputs[2].shape)
    return [(dt, shape)]


define("Betainc", _betainc_infer, elementwise=True, inplace_inputs=(0, 1, 2),
       onnx={"none": "ONNX has no special functions beyond Erf (no incomplete beta function)"})


def betainc(a, b, x, name=None):
    """`tf.betainc`: the regularized incomplete beta function I_x(a, b), broadcast over a, b, x
    (NaN for a <= 0 or b <= 0, 0 at x = 0 and 1 at x = 1, as TF's kernel)."""
    with name_scope(name, "Betainc"):
        a = convert_to_tensor(a)
        b, x = (v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=a.dtype) for v in (b, x))
        return make_tensor("Betainc", (a, b, x))


@register_gradient("Betainc")
def _betainc_grad(op, grad):
    """TF's rule: d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b); none in a and b (TF has none)."""
    a, b, x = op.inputs
    log_beta = math_ops.lgamma(a) + math_ops.lgamma(b) - math_ops.lgamma(a + b)
    partial_x = math_ops.exp(_F["xlog1py"](b - 1, -x) + _F["xlogy"](a - 1, x) - log_beta)
    return None, None, unbroadcast(grad * partial_x, x)


def reciprocal_no_nan(x, name=None):
    """`tf.math.reciprocal_no_nan`: 1 / x, and 0 where x is 0."""
    with name_scope(name, "reciprocal_no_nan"):
        x = convert_to_tensor(x)
        return _F["div_no_nan"](shape_ops.ones_like(x), x)


def erfcinv(x, name=None):
    """`tf.math.erfcinv`: the inverse of erfc on (0, 2), as TF computes it: -ndtri(x / 2) / sqrt(2)."""
    with name_scope(name, "erfcinv"):
        x = convert_to_tensor(x)
        return _F["ndtri"](0.5 * x) * (-math.sqrt(0.5))


def lbeta(x, name=None):
    """`tf.lbeta`: log |B(x)| over the last dimension, sum(lgamma(x)) - lgamma(sum(x)), [..., N]
    -> [...]."""
    with name_scope(name, "lbeta"):
        x = convert_to_tensor(x)
        return (math_ops.reduce_sum(math_ops.lgamma(x), axis=-1)
                - math_ops.lgamma(math_ops.reduce_sum(x, axis=-1)))


def polyval(coeffs, x, name=None):
    """`tf.math.polyval`: the polynomial sum_i coeffs[i] x^(n-1-i) (highest degree first) at each
    element of x, by Horner's rule; zeros for no coefficients."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"coeffs must be a list of tensors or numbers, got {type(coeffs).__name__}")
    with name_scope(name, "polyval"):
        x = convert_to_tensor(x)
        if not coeffs:
            return shape_ops.zeros_like(x)
        value = convert_to_tensor(coeffs[0], dtype=x.dtype)
        for c in coeffs[1:]:
            value = convert_to_tensor(c, dtype=x.dtype) + value * x
        return value


def scalar_mul(scalar, x, name=None):
    """`tf.math.scalar_mul`: scalar * x, for a scalar (0-d) `scalar`."""
    with name_scope(name, "scalar_mul"):
        x = convert_to_tensor(x)
        scalar = convert_to_tensor(scalar, dtype=x.dtype)
        if scalar.shape.ndims not in (None, 0):
            raise ValueError(f"scalar_mul needs a scalar, got shape {scalar.shape}")
        return scalar * x


def real(input, name=None):
    """`tf.real`: the real part; graphflow tensors are real, so the input itself."""
    return convert_to_tensor(input) if name is None else identity(input, name=name)


def imag(input, name=None):
    """`tf.imag`: the imaginary part of a real tensor: zeros of its shape and dtype."""
    return shape_ops.zeros_like(convert_to_tensor(input), name=name or "Imag")


def conj(x, name=None):
    """`tf.conj`: the complex conjugate; of a real tensor, the tensor itself."""
    return convert_to_tensor(x) if name is None else identity(x, name=name)


def angle(input, name=None):
    """`tf.angle`: the argument of each element; for real numbers pi where negative, else 0."""
    with name_scope(name, "Angle"):
        x = convert_to_tensor(input)
        zeros = shape_ops.zeros_like(x)
        return math_ops.where(_F["less"](x, zeros), zeros + math.pi, zeros)


__all__ = ["betainc", "lbeta", "real", "imag", "conj", "angle"]
