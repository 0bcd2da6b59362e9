"""Cases for the elementwise rows of ops/elementwise_special.py (inverse trigonometric and
hyperbolic functions, atan2, rint, is_inf, nextafter, the zero-guarded products and quotients,
erfc, erfinv, ndtri, the Bessel functions, igamma/igammac and igamma's derivative in a, zeta) and
Betainc with the composites of ops/special_math_ops.py. References are numpy's and scipy's own
functions; TF's values at many points, edges of the domains included, are compared in
tests/ops/test_special_math_ops.py."""

import numpy as np
from scipy import special

import graphflow as tf
from tests.op_cases import OpCase, positive, rand

f32 = np.float32


def _unary(op_type, fn, ref, data, **kw):
    return OpCase(op_type, fn, [data], ref, **kw)


def _zero_guarded(x, value):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, value)


def _d_da_gammainc(a, x, h=1e-5):
    return (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)


_WITH_ZEROS = np.array([[0.0, 1.5, -0.7], [2.0, 0.0, 0.3]])
_POSITIVE = positive(2, 3, low=0.5, high=3.0)

CASES = [
    _unary("Acos", tf.acos, np.arccos, rand(5, low=-0.9, high=0.9)),
    _unary("Asin", tf.math.asin, np.arcsin, rand(2, 3, low=-0.9, high=0.9)),
    _unary("Atan", tf.atan, np.arctan, rand(4)),
    _unary("Acosh", tf.acosh, np.arccosh, positive(4, low=1.2, high=4.0)),
    _unary("Asinh", tf.asinh, np.arcsinh, rand(3, 2)),
    _unary("Atanh", tf.math.atanh, np.arctanh, rand(5, low=-0.9, high=0.9)),
    _unary("Cosh", tf.cosh, np.cosh, rand(4)),
    _unary("Sinh", tf.sinh, np.sinh, rand(2, 2)),
    _unary("Acos", tf.acos, np.arccos, rand(6, dtype=f32, low=-1, high=1), rtol=1e-6,
           name="Acos[float32]"),
    OpCase("Atan2", tf.atan2, [rand(2, 3), rand(3)], np.arctan2),
    _unary("Rint", tf.rint, np.rint, np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 2.6]),
           grad=False, name="Rint[halves to even]"),
    _unary("Rint", tf.math.rint, np.rint, np.array([-2.2, -0.7, 0.3, 1.6])),
    _unary("IsInf", tf.is_inf, np.isinf, np.array([1.0, np.inf, -np.inf, np.nan, 0.0]),
           grad=False),
    OpCase("NextAfter", tf.math.nextafter, [rand(4, dtype=f32), rand(4, dtype=f32)],
           np.nextafter, grad=False),
    # where the guard is 0 the functions have a jump (TF's gradient there is 0): finite
    # differences run over the other operand only, and over both on the zero-free cases
    OpCase("Xlogy", tf.math.xlogy, [_WITH_ZEROS, _POSITIVE],
           lambda x, y: _zero_guarded(x, x * np.log(y)), grad_inputs=[1],
           name="Xlogy[zeros]"),
    OpCase("Xlogy", tf.math.xlogy, [rand(3), _POSITIVE], lambda x, y: x * np.log(y)),
    OpCase("Xlog1py", tf.math.xlog1py, [_WITH_ZEROS, _POSITIVE],
           lambda x, y: _zero_guarded(x, x * np.log1p(y)), grad_inputs=[1],
           name="Xlog1py[zeros]"),
    OpCase("Xlog1py", tf.math.xlog1py, [rand(2, 3), _POSITIVE], lambda x, y: x * np.log1p(y)),
    OpCase("Xdivy", tf.math.xdivy, [_WITH_ZEROS, _POSITIVE], lambda x, y: _zero_guarded(x, x / y),
           grad_inputs=[1], name="Xdivy[zeros]"),
    OpCase("Xdivy", tf.math.xdivy, [rand(3), _POSITIVE], lambda x, y: x / y),
    OpCase("DivNoNan", tf.div_no_nan, [_POSITIVE, _WITH_ZEROS],
           lambda x, y: _zero_guarded(y, x / np.where(y == 0, 1, y)), grad_inputs=[0],
           name="DivNoNan[zeros]"),
    OpCase("DivNoNan", tf.math.divide_no_nan, [rand(3), _POSITIVE], lambda x, y: x / y),
    OpCase("DivNoNan", tf.math.reciprocal_no_nan, [_WITH_ZEROS],
           lambda x: _zero_guarded(x, 1 / np.where(x == 0, 1, x)), grad=False,
           name="DivNoNan[reciprocal_no_nan]"),
    OpCase("MulNoNan", tf.math.multiply_no_nan, [np.array([np.inf, 2.0, np.nan]),
                                                  np.array([0.0, 3.0, 0.0])],
           lambda x, y: np.array([0.0, 6.0, 0.0]), grad=False, name="MulNoNan[guards NaN]"),
    OpCase("MulNoNan", tf.math.multiply_no_nan, [_POSITIVE, _WITH_ZEROS],
           lambda x, y: _zero_guarded(y, x * y)),
    _unary("Erfc", tf.erfc, special.erfc, rand(2, 4)),
    _unary("Erfinv", tf.math.erfinv, special.erfinv, rand(5, low=-0.95, high=0.95)),
    _unary("Ndtri", tf.math.ndtri, special.ndtri, positive(2, 3, low=0.02, high=0.98)),
    _unary("Ndtri", tf.math.erfcinv, special.erfcinv, positive(4, low=0.1, high=1.9),
           name="Ndtri[erfcinv]"),
    _unary("BesselI0e", tf.math.bessel_i0e, special.i0e, rand(6, low=-30, high=30)),
    _unary("BesselI1e", tf.math.bessel_i1e, special.i1e, rand(2, 3, low=-25, high=25)),
    _unary("BesselI0", tf.math.bessel_i0, special.i0, rand(5, low=-5, high=5)),
    _unary("BesselI1", tf.math.bessel_i1, special.i1, rand(5, low=-5, high=5)),
    OpCase("Igamma", tf.igamma, [positive(2, 3, low=0.5, high=4.0), positive(3, low=0.2, high=6.0)],
           special.gammainc, second_order=False),
    OpCase("Igammac", tf.igammac, [positive(4, low=0.5, high=4.0), positive(4, low=0.2, high=6.0)],
           special.gammaincc, second_order=False),
    OpCase("IgammaGradA", lambda a, x: tf.gradients(tf.igamma(a, x), [a])[0],
           [np.array([0.5, 1.0, 2.5, 4.0, 10.0, 0.7]), np.array([0.3, 2.0, 1.0, 9.0, 4.0, 30.0])],
           _d_da_gammainc, rtol=1e-6, atol=1e-9, grad=False),
    OpCase("Zeta", tf.zeta, [positive(3, low=1.5, high=4.0), positive(2, 3, low=0.5, high=3.0)],
           special.zeta, grad_inputs=[1]),
    OpCase("Add", lambda x: tf.math.polyval([2.0, -1.0, 0.5], x), [rand(2, 3)],
           lambda x: np.polyval([2.0, -1.0, 0.5], x), name="Add[polyval]"),
    OpCase("Mul", lambda x: tf.math.scalar_mul(3.0, x), [rand(4)], lambda x: 3.0 * x,
           name="Mul[scalar_mul]"),
    OpCase("Betainc", tf.betainc, [positive(3, low=0.5, high=3.0), positive(2, 3, low=0.5, high=3.0),
                                   positive(3, low=0.1, high=0.9) / 1.0],
           special.betainc, grad_inputs=[2]),
]
