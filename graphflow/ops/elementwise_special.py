"""Rows of the elementwise table (ops/elementwise_spec.py, which appends them to `ROWS`) for TF's
inverse trigonometric and hyperbolic functions, the zero-guarded products and quotients (xlogy,
xdivy, xlog1py, div_no_nan, multiply_no_nan), the special functions (erfc, erfinv, ndtri, the
Bessel functions I0, I1 and their scaled forms, the regularized incomplete gamma and beta
functions, Hurwitz's zeta) and atan2, nextafter, rint, is_inf, with their numpy implementations.

The special functions are scipy.special's (computed in float64, given back in the operands'
dtype) with TF's values where its kernels define the domain differently (Eigen's rules):
igamma(a, x) is 0 at x = 0 and NaN for a <= 0 or x < 0; igammac is NaN for a <= 0 or x < 0;
betainc(a, b, x) is NaN for a <= 0 or b <= 0 and otherwise 0 at x = 0 and 1 at x = 1;
zeta(x, q) is inf at x = 1, NaN for x < 1, at whole q <= 0 inf for even whole (or infinite) x and
NaN otherwise, and 0 for x = inf, q > 1. The derivative of igamma in a
(IgammaGradA, TF's gradient helper) is computed here: forward-mode differentiation of the
series (x < a + 1) and of the continued fraction (elsewhere) that evaluate igamma.
The C expressions call the `gf_*` functions of `kernels/cuda/special.cuh`, the same formulas.
"""

import math

import numpy as np

from graphflow.ops import elementwise_row as spec
from graphflow.ops import no_onnx


def _scipy_special():
    from scipy import special  # noqa: PLC0415 - imported when a row first runs (as elementwise_spec)
    return special


def _in_float64(compute):
    """`fn(*xs, out=None)`: `compute` on float64 copies of the operands, given back in their
    dtype (scipy has no float16 loops; float32 results are the float64 ones rounded)."""
    def fn(*xs, out=None):
        dtype = np.result_type(*xs)
        with np.errstate(all="ignore"):
            value = np.asarray(compute(*[np.asarray(x, np.float64) for x in xs]))
        return spec._into(out, value.astype(dtype, copy=False))
    fn.__name__ = compute.__name__
    return fn


def _guarded(compute):
    """`fn(*xs, out=None)` computed in the operands' own dtype, floating-point warnings off."""
    def fn(*xs, out=None):
        with np.errstate(all="ignore"):
            value = np.asarray(compute(*[np.asarray(x) for x in xs]))
        return spec._into(out, value.astype(np.result_type(*xs), copy=False))
    fn.__name__ = compute.__name__
    return fn


# ---------------------------------------------------------------- zero-guarded products, quotients
@_guarded
def _xlogy(x, y):
    return np.where(x == 0, np.zeros((), x.dtype), x * np.log(y))


@_guarded
def _xlog1py(x, y):
    return np.where(x == 0, np.zeros((), x.dtype), x * np.log1p(y))


@_guarded
def _xdivy(x, y):
    return np.where(x == 0, np.zeros((), x.dtype), x / y)


@_guarded
def _div_no_nan(x, y):
    return np.where(y == 0, np.zeros((), x.dtype), x / np.where(y == 0, np.ones((), y.dtype), y))


@_guarded
def _mul_no_nan(x, y):
    return np.where(y == 0, np.zeros((), x.dtype), x * y)


# ---------------------------------------------------------------- special functions
@_in_float64
def _erfc(x):
    return _scipy_special().erfc(x)


@_in_float64
def _erfinv(x):
    return _scipy_special().erfinv(x)


@_in_float64
def _ndtri(p):
    return _scipy_special().ndtri(p)


@_in_float64
def _bessel_i0e(x):
    return _scipy_special().i0e(x)


@_in_float64
def _bessel_i1e(x):
    return _scipy_special().i1e(x)


@_in_float64
def _bessel_i0(x):
    return _scipy_special().i0(x)


@_in_float64
def _bessel_i1(x):
    return _scipy_special().i1(x)


def _both_infinite(a, x):
    return np.isposinf(a) & np.isposinf(x)


@_in_float64
def _igamma(a, x):
    value = _scipy_special().gammainc(a, x)
    value = np.where((a <= 0) | (x < 0), np.nan, value)
    return np.where((x == 0) | _both_infinite(a, x), 0.0, value)


@_in_float64
def _igammac(a, x):
    value = _scipy_special().gammaincc(a, x)
    value = np.where((a <= 0) | (x < 0), np.nan, value)
    return np.where(_both_infinite(a, x), 0.0, value)


@_in_float64
def _zeta(x, q):
    value = _scipy_special().zeta(x, q)
    pole = (q <= 0) & (q == np.floor(q))  # inf for even whole x (as TF's kernel), NaN otherwise
    even = (x == np.floor(x)) & ((np.fmod(x, 2) == 0) | np.isinf(x))
    value = np.where(pole, np.where(even, np.inf, np.nan), value)
    value = np.where(np.isposinf(x) & (q > 1), 0.0, value)
    return np.where(x == 1, np.inf, np.where(x < 1, np.nan, value))


@_in_float64
def _betainc(a, b, x):
    value = _scipy_special().betainc(a, b, x)
    inside = (x > 0) & (x < 1)
    value = np.where(inside & (np.isinf(a) | np.isinf(b)), np.nan, value)
    value = np.where(x == 0, 0.0, np.where(x == 1, 1.0, value))
    return np.where((a <= 0) | (b <= 0), np.nan, value)


_TINY = 1e-300
_EPS = 1e-16
_MAX_STEPS = 2000


def _igamma_grad_a_series(a, x):
    """dP/da where the series P = e^-x x^a / Gamma(a + 1) sum_n x^n / ((a+1)..(a+n)) converges
    fast (x < a + 1): the prefactor's derivative (log x - digamma(a + 1)) and the sum's,
    term_n' = term_(n-1)' x/(a+n) - term_n/(a+n), term by term (each step vectorised)."""
    special = _scipy_special()
    term = np.ones_like(a)
    dterm = np.zeros_like(a)
    total, dtotal = term.copy(), dterm.copy()
    denom = a.copy()
    active = np.ones(a.shape, bool)
    for _ in range(_MAX_STEPS):
        if not active.any():
            break
        denom = denom + 1
        ratio = x / denom
        dterm = np.where(active, dterm * ratio - term * ratio / denom, dterm)
        term = np.where(active, term * ratio, term)
        total = total + np.where(active, term, 0)
        dtotal = dtotal + np.where(active, dterm, 0)
        active &= (np.abs(term) > _EPS * np.abs(total)) | (np.abs(dterm) > _EPS * np.abs(dtotal))
    log_prefactor = a * np.log(x) - x - special.gammaln(a + 1)
    prefactor = np.exp(log_prefactor)
    return prefactor * (dtotal + (np.log(x) - special.psi(a + 1)) * total)


def _igamma_grad_a_fraction(a, x):
    """dP/da = -dQ/da where Q = e^-x x^a / Gamma(a) h comes from the continued fraction h
    (modified Lentz), differentiated alongside it: each quantity carries its derivative in a."""
    special = _scipy_special()
    b = x + 1 - a
    db = -np.ones_like(a)
    c = np.full_like(a, 1 / _TINY)
    dc = np.zeros_like(a)
    d = 1 / b
    dd = -db / (b * b)
    h, dh = d.copy(), dd.copy()
    active = np.ones(a.shape, bool)
    for i in range(1, _MAX_STEPS):
        if not active.any():
            break
        an, dan = -i * (i - a), np.full_like(a, float(i))
        b = b + 2
        pre = an * d + b
        dpre = dan * d + an * dd + db
        pre = np.where(np.abs(pre) < _TINY, _TINY, pre)
        new_d, new_dd = 1 / pre, -dpre / (pre * pre)
        new_c = b + an / c
        new_dc = db + dan / c - an * dc / (c * c)
        new_c = np.where(np.abs(new_c) < _TINY, _TINY, new_c)
        delta = new_d * new_c
        ddelta = new_dd * new_c + new_d * new_dc
        new_h, new_dh = h * delta, dh * delta + h * ddelta
        d, dd = np.where(active, new_d, d), np.where(active, new_dd, dd)
        c, dc = np.where(active, new_c, c), np.where(active, new_dc, dc)
        h, dh = np.where(active, new_h, h), np.where(active, new_dh, dh)
        active &= (np.abs(delta - 1) > _EPS) | (np.abs(ddelta) * np.abs(h) > _EPS * np.abs(dh))
    log_prefactor = a * np.log(x) - x - special.gammaln(a)
    prefactor = np.exp(log_prefactor)
    dq = prefactor * (dh + (np.log(x) - special.psi(a)) * h)
    return -dq


@_in_float64
def _igamma_grad_a(a, x):
    a, x = np.broadcast_arrays(a, x)
    out = np.full(a.shape, np.nan)
    valid = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    series = valid & (x < a + 1)
    fraction = valid & ~series
    if series.any():
        out[series] = _igamma_grad_a_series(a[series], x[series])
    if fraction.any():
        out[fraction] = _igamma_grad_a_fraction(a[fraction], x[fraction])
    out[(x == 0) & (a > 0)] = 0.0
    return out


# ---------------------------------------------------------------- gradient rules (m: math ops)
def _atan2_grad(m, g, y, x, z):
    scale = g / (y * y + x * x)
    return x * scale, -y * scale


def _nonzero(m, x):
    return m.cast(m.not_equal(x, m.zeros(x)), x.dtype)


def _xlogy_grad(m, g, x, y, z):
    return g * m.xlogy(_nonzero(m, x), y), g * m.xdivy(x, y)


def _xlog1py_grad(m, g, x, y, z):
    return g * m.xlog1py(_nonzero(m, x), y), g * m.xdivy(x, y + 1)


def _xdivy_grad(m, g, x, y, z):
    return g * m.xdivy(_nonzero(m, x), y), g * m.xdivy(-x, y * y)


def _div_no_nan_grad(m, g, x, y, z):
    return m.div_no_nan(g, y), g * m.div_no_nan(m.div_no_nan(-x, y), y)


def _mul_no_nan_grad(m, g, x, y, z):
    return m.multiply_no_nan(g, y), m.multiply_no_nan(x, g)


def _igamma_partials(m, a, x):
    return m.igamma_grad_a(a, x), m.exp(-x + (a - 1) * m.log(x) - m.lgamma(a))


def _igamma_grad(m, g, a, x, z):
    da, dx = _igamma_partials(m, a, x)
    return g * da, g * dx


def _igammac_grad(m, g, a, x, z):
    da, dx = _igamma_partials(m, a, x)
    return -(g * da), -(g * dx)


def _bessel_i1e_dydx(m, x, y):
    safe = m.where(m.equal(x, m.zeros(x)), m.ones(x), x)
    slope = m.bessel_i0e(x) - y * (m.sign(x) + m.reciprocal(safe))
    return m.where(m.equal(x, m.zeros(x)), 0.5 * m.ones(x), slope)


def _bessel_i1_dydx(m, x, y):
    safe = m.where(m.equal(x, m.zeros(x)), m.ones(x), x)
    slope = m.bessel_i0(x) - y / safe
    return m.where(m.equal(x, m.zeros(x)), m.ones(x), slope)


_SPECIAL = no_onnx.none("ONNX has no special functions beyond Erf (no inverse error function, "
                        "Bessel, incomplete gamma or beta, or zeta function)")
_GUARDED = no_onnx.none("ONNX has no zero-guarded product or quotient (xlogy, xdivy, "
                        "div_no_nan: Where over Mul/Div would evaluate NaN branches first)")
_E = spec.Elementwise
_F1 = dict(arity=1, dtypes="float")
_F2 = dict(arity=2, dtypes="float")
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
ROWS = (
    # ---- inverse trigonometric and hyperbolic
    _E("Acos", "acos", **_F1, numpy="arccos", c="gf_acos({0})", onnx="Acos",
       dydx=lambda m, x, y: -m.rsqrt(1 - x * x)),
    _E("Asin", "asin", **_F1, numpy="arcsin", c="gf_asin({0})", onnx="Asin",
       dydx=lambda m, x, y: m.rsqrt(1 - x * x)),
    _E("Atan", "atan", **_F1, numpy="arctan", c="gf_atan({0})", onnx="Atan",
       dydx=lambda m, x, y: m.reciprocal(1 + x * x)),
    _E("Acosh", "acosh", **_F1, numpy="arccosh", c="gf_acosh({0})", onnx="Acosh",
       dydx=lambda m, x, y: m.reciprocal(m.sinh(y))),
    _E("Asinh", "asinh", **_F1, numpy="arcsinh", c="gf_asinh({0})", onnx="Asinh",
       dydx=lambda m, x, y: m.reciprocal(m.cosh(y))),
    _E("Atanh", "atanh", **_F1, numpy="arctanh", c="gf_atanh({0})", onnx="Atanh",
       dydx=lambda m, x, y: m.reciprocal(1 - x * x)),
    _E("Cosh", "cosh", **_F1, numpy="cosh", c="gf_cosh({0})", onnx="Cosh",
       dydx=lambda m, x, y: m.sinh(x)),
    _E("Sinh", "sinh", **_F1, numpy="sinh", c="gf_sinh({0})", onnx="Sinh",
       dydx=lambda m, x, y: m.cosh(x)),
    _E("Atan2", "atan2", **_F2, numpy="arctan2", c="gf_atan2({0}, {1})", grad=_atan2_grad,
       onnx=no_onnx.none("ONNX has no atan2 (Atan of y / x loses the quadrant)")),
    # ---- rounding and classification
    _E("Rint", "rint", **_F1, numpy="rint", c="gf_round({0})", grad=spec.ZERO, onnx="Round"),
    _E("IsInf", "is_inf", 1, "float", "bool", numpy="isinf", c="gf_isinf({0})",
       grad=spec.NO_GRADIENT, onnx="IsInf"),
    _E("NextAfter", "nextafter", **_F2, public=("math",), numpy="nextafter", c="gf_nextafter({0}, {1})",
       grad=spec.NO_GRADIENT,
       onnx=no_onnx.none("ONNX has no op stepping to the adjacent floating-point value")),
    # ---- zero-guarded products and quotients (TF: 0 where the guard is 0, NaN or inf aside)
    _E("Xlogy", "xlogy", **_F2, public=("math",), numpy=_xlogy,
       c="({0} == ({T})0 ? ({T})0 : {0} * gf_log({1}))",
       grad=_xlogy_grad, onnx=_GUARDED),
    _E("Xlog1py", "xlog1py", **_F2, public=("math",), numpy=_xlog1py,
       c="({0} == ({T})0 ? ({T})0 : {0} * gf_log1p({1}))", grad=_xlog1py_grad, onnx=_GUARDED),
    _E("Xdivy", "xdivy", **_F2, public=("math",), numpy=_xdivy, c="({0} == ({T})0 ? ({T})0 : {0} / {1})",
       grad=_xdivy_grad, onnx=_GUARDED),
    _E("DivNoNan", "div_no_nan", **_F2, numpy=_div_no_nan,
       c="({1} == ({T})0 ? ({T})0 : {0} / {1})", grad=_div_no_nan_grad, onnx=_GUARDED),
    _E("MulNoNan", "multiply_no_nan", **_F2, public=("math",), numpy=_mul_no_nan,
       c="({1} == ({T})0 ? ({T})0 : {0} * {1})", grad=_mul_no_nan_grad, onnx=_GUARDED),
    # ---- special functions
    _E("Erfc", "erfc", **_F1, numpy=_erfc, c="gf_erfc({0})",
       dydx=lambda m, x, y: -_TWO_OVER_SQRT_PI * m.exp(-(x * x)),
       onnx=no_onnx.none("ONNX has Erf only: 1 - Erf(x) loses erfc's precision for large x")),
    _E("Erfinv", "erfinv", **_F1, public=("math",), numpy=_erfinv, c="gf_erfinv({0})", onnx=_SPECIAL,
       dydx=lambda m, x, y: (math.sqrt(math.pi) / 2) * m.exp(y * y)),
    _E("Ndtri", "ndtri", **_F1, public=("math",), numpy=_ndtri, c="gf_ndtri({0})", onnx=_SPECIAL,
       dydx=lambda m, x, y: math.sqrt(2 * math.pi) * m.exp(0.5 * (y * y))),
    _E("BesselI0e", "bessel_i0e", **_F1, public=("math",), numpy=_bessel_i0e, c="gf_bessel_i0e({0})",
       onnx=_SPECIAL, dydx=lambda m, x, y: m.bessel_i1e(x) - m.sign(x) * y),
    _E("BesselI1e", "bessel_i1e", **_F1, public=("math",), numpy=_bessel_i1e, c="gf_bessel_i1e({0})",
       onnx=_SPECIAL, dydx=_bessel_i1e_dydx),
    _E("BesselI0", "bessel_i0", **_F1, public=("math",), numpy=_bessel_i0, c="gf_bessel_i0({0})",
       onnx=_SPECIAL, dydx=lambda m, x, y: m.bessel_i1(x)),
    _E("BesselI1", "bessel_i1", **_F1, public=("math",), numpy=_bessel_i1, c="gf_bessel_i1({0})",
       onnx=_SPECIAL, dydx=_bessel_i1_dydx),
    _E("Igamma", "igamma", **_F2, numpy=_igamma, c="gf_igamma({0}, {1})", grad=_igamma_grad,
       onnx=_SPECIAL),
    _E("Igammac", "igammac", **_F2, numpy=_igammac, c="gf_igammac({0}, {1})",
       grad=_igammac_grad, onnx=_SPECIAL),
    # TF's gradient helper (tf.raw_ops.IgammaGradA), no gradient of its own as in TF
    _E("IgammaGradA", "igamma_grad_a", **_F2, numpy=_igamma_grad_a, public=(),
       c="gf_igamma_grad_a({0}, {1})", grad=spec.NO_GRADIENT, onnx=_SPECIAL),
    # d/dq zeta(x, q) = -x zeta(x + 1, q); none in x (TF has none either)
    _E("Zeta", "zeta", **_F2, numpy=_zeta, c="gf_zeta({0}, {1})", onnx=_SPECIAL,
       grad=lambda m, g, x, q, z: (None, g * (-x) * m.zeta(x + 1, q))),
    # three operands: its OpDef, constructor and gradient are in ops/special_math_ops.py
    _E("Betainc", "betainc", 3, "float", numpy=_betainc, custom=True,
       c="gf_betainc({0}, {1}, {2})"),
)
del _E
