"""The elementwise op table: one row per elementwise op type, the single place its facts live.

Everything else is derived from these rows:

- `ops/math_ops.py`: the OpDef (dtype rule, attrs, in-place inputs) and the public constructor
  (`tf.<fn>`, and `tf.nn.<fn>` for rows with `nn=True`);
- `ops/math_grad.py`: the gradient rule (`dydx`, `grad`, or the `ZERO` / `NO_GRADIENT` markers);
- `kernels/cpu/reference/math_kernels.py` and `kernels/cpu/reference/fused_instructions.py`: the
  numpy kernel, unfused and as an instruction of a `FusedElementwise` program (one implementation
  serves both);
- `kernels/cuda/codegen.py`: the C expression the CUDA code generator composes into kernels;
- `ops/elementwise_program.py`: the dtype rule again, checking fused programs.

A row's fields (see `Elementwise`):

- `op`, `fn`: op type and public function name; `arity`: operand count (0: any number, AddN).
- `dtypes`: the operands' allowed dtypes (a key of `DTYPE_SETS`); `result`: the result dtype rule,
  "same" (the operands' dtype), "bool", "truediv" (`TRUEDIV` for integers), "cast" (attr DstT),
  "select" (operand 1's dtype; operand 0 is the bool condition).
- `numpy`: a numpy ufunc name, or `fn(*operands, out=None) -> result` writing into `out` when
  given (a fused program's instruction) and into a new array otherwise (the op's own kernel), or
  with `numpy_for_attrs`, `build(attrs, in_dtypes) -> fn` (LeakyRelu's alpha, integer RealDiv, Cast).
  `alias_ok`: `out` may be one of the operands' buffers. `clamp`: bounds a fused CPU program
  lowers the op to (Maximum/Minimum against constants). `compiled_float32`: with numba, the float32
  CPU kernel (and fused instruction) is the compiled function of `kernels/cpu/numba/jit_math.py` instead
  of `numpy` (one pass where numpy needs several calls; `kernels/cpu/fused_jit.kernel_function`).
- `c`: C expression; `{0}`, `{1}`.. are the operands, `{T}` the C type of the (value) operand,
  float attrs appear by name as literals of that type. The functions `gf_*` are the numpy-exact
  scalar functions of `kernels/cuda/elementwise.cuh`.
- `dydx(m, x, y)`: derivative of a unary op (its rule is `grad * dydx`); or `grad`: a full rule,
  unary `grad(m, g, x, y, attrs) -> dx`, binary `grad(m, g, x, y, z) -> (dx, dy)` (broadcast
  inputs get their gradient summed back to their shape); or `ZERO` (zeros, piecewise constant
  ops) or `NO_GRADIENT` (bool/integer results). `m` offers the math ops plus `zeros`, `ones`,
  `mask(cond, g)` (g where cond, else 0).
- `attrs`: (name, type, default) of each attr; `custom`: the OpDef, constructor and gradient are
  written elsewhere (they take mixed dtypes or live in another op family); the row still gives the
  CPU kernels (when it has `numpy`; otherwise the op family has its own) and the C expression.
  `commutative`: swapping the two operands changes no output bit (IEEE + and * commute; AddN is
  not, a different summation order rounds differently); CSE merges `f(a, b)` with `f(b, a)`.
  `fusible`: a FusedElementwise program may contain the op. `public`: the TF1 namespaces that
  export `fn` ("tf": `tf.<fn>` and `tf.math.<fn>`, "nn": `tf.nn.<fn>`, "math": `tf.math.<fn>`
  only).
- `onnx`: how the op is written as ONNX, the OpDef's `onnx` fact (see `registry.OpDef`): an ONNX
  op name, `{"converter": name}` (`_via`) or a reason (`ops/no_onnx.py`); custom rows declare it
  on their own OpDef. `shape_arithmetic`: shape inference evaluates the op on integer operands
  known at build time (`tf.shape(x)[0] * 2`), with `numpy` (`ops/static_value.py`).
- `zero_divisor`: integer division (operand 1 divides): on integer operands a zero divisor raises
  `Integer division by zero` (TF's InvalidArgumentError) in every implementation, fused or not:
  the numpy function is `checked_division(fn)` (`numpy_function`), the CUDA kernel raises a flag
  the launcher reads (`kernels/cuda/codegen.py`). Float operands are not checked (IEEE inf/NaN).

Adding an activation is one row here plus its case in `tests/op_cases/math_cases.py`
(docs/architecture.md, "Adding an activation", walks through it).
"""

import math

import numpy as np

from graphflow.framework import dtypes
from graphflow.ops import no_onnx
from graphflow.ops.elementwise_row import (  # noqa: F401 - the table's public names
    DTYPE_SETS,
    INTEGER_DIVISION_BY_ZERO,
    NO_GRADIENT,
    SELU_ALPHA,
    SELU_SCALE,
    TRUEDIV,
    ZERO,
    Attr,
    Elementwise,
    _into,
    checked_division,
    numpy_function,
)


def _scipy_special():
    """scipy.special, imported when a row that needs it first runs: importing it costs more than
    the rest of `import graphflow` (it loads numpy.testing and numpy.f2py)."""
    from scipy import special  # noqa: PLC0415
    return special


def _sigmoid(x, *, out=None):
    # 1/(1+e^-x) without overflow and with full relative precision where it is tiny: m = e^-|x| in
    # (0, 1], then 1/(1+m) for x >= 0 and m/(1+m) = e^x/(1+e^x) for x < 0 (the formula through
    # tanh, (tanh(x/2) + 1)/2, gave 0 for x < -17 in float32 and was 2e-4 off at -10). The
    # numerator is maximum(m, x >= 0): 1 where x >= 0 (m <= 1 there), m elsewhere, NaN kept
    # (np.where took 3.4 ns per float32 element on random signs, this 0.1)
    x = np.asarray(x)
    m = np.exp(-np.abs(x))
    numerator = np.maximum(m, x >= 0)
    return np.divide(numerator, m + 1, out=out)


def _relu(x, *, out=None):
    return np.maximum(x, 0, out=out)


def _relu6(x, *, out=None):
    out = np.asarray(np.maximum(x, 0, out=out))
    return np.minimum(out, 6, out=out)


# np.where is faster than np.copyto(..., where=mask) on unpredictable masks: the selecting
# functions compute np.where (and copy its result into the buffer).
def _elu(x, *, out=None):
    positive = np.greater(x, 0)
    negative = np.asarray(np.minimum(x, 0, out=out))
    np.expm1(negative, out=negative)
    return _into(out, np.where(positive, x, negative))


def _selu(x, *, out=None):
    positive = np.greater(x, 0)
    out = np.asarray(np.minimum(x, 0, out=out))
    np.expm1(out, out=out)
    np.multiply(out, SELU_ALPHA, out=out)
    return np.multiply(np.where(positive, x, out), SELU_SCALE, out=out)


def _softsign(x, *, out=None):
    out = np.asarray(np.abs(x, out=out))
    np.add(1, out, out=out)
    return np.true_divide(x, out, out=out)


def _rsqrt(x, *, out=None):
    out = np.asarray(np.sqrt(x, out=out))
    return np.reciprocal(out, out=out)


def _erf(x, *, out=None):
    if out is None:  # scipy has no float16 loop: computed in float32, given back in x's dtype
        return _scipy_special().erf(x).astype(x.dtype, copy=False)
    return _scipy_special().erf(x, out=out)


def _lgamma(x, *, out=None):  # log |Gamma(x)|, as TF's lgamma (float16: computed in float32)
    if out is None:
        return _scipy_special().gammaln(x).astype(x.dtype, copy=False)
    return _scipy_special().gammaln(x, out=out)


def _digamma(x, *, out=None):
    if out is None:
        return _scipy_special().psi(x).astype(x.dtype, copy=False)
    return _scipy_special().psi(x, out=out)


def _polygamma(n, x, *, out=None):
    """TF's polygamma(n, x): the n-th derivative of digamma, for whole n >= 0 (NaN otherwise):
    digamma for n = 0, (-1)^(n+1) n! zeta(n + 1, x) beyond."""
    dtype = np.result_type(n, x)
    n64, x64 = np.asarray(n, np.float64), np.asarray(x, np.float64)
    whole = (n64 >= 0) & (np.floor(n64) == n64)
    order = np.where(whole, n64, 1.0)
    special = _scipy_special()
    with np.errstate(invalid="ignore", over="ignore"):
        higher = (-1.0) ** (order + 1) * special.gamma(order + 1) * special.zeta(order + 1, x64)
        value = np.where(whole, np.where(order == 0, special.psi(x64), higher), np.nan)
    return _into(out, value.astype(dtype, copy=False))


def _softplus(x, *, out=None):
    if out is None:
        return np.logaddexp(x, 0).astype(x.dtype, copy=False)
    return np.logaddexp(x, 0, out=out)


def _squared_difference(x, y, *, out=None):
    out = np.asarray(np.subtract(x, y, out=out))
    return np.square(out, out=out)


def _add_n(*xs, out=None):
    out = np.asarray(np.add(xs[0], xs[1], out=out))
    for x in xs[2:]:
        np.add(out, x, out=out)
    return out


def _leaky_relu(attrs, in_dtypes):
    alpha = np.asarray(attrs["alpha"], dtype=in_dtypes[0])

    def leaky_relu(x, *, out=None):
        positive = np.greater(x, 0)
        return _into(out, np.where(positive, x, np.multiply(x, alpha, out=out)))
    return leaky_relu


def _real_div(attrs, in_dtypes):
    if np.dtype(in_dtypes[0]).kind == "f":
        return np.true_divide
    out_dtype = np.dtype(TRUEDIV[np.dtype(in_dtypes[0]).name])

    def int_div(x, y, *, out=None):
        return np.true_divide(x, y, out=out, dtype=out_dtype)
    return int_div


def _select(cond, x, y, *, out=None):
    if out is None:
        return np.where(cond, x, y)
    bits = _select_bits(out.dtype, x, y)
    if bits is None:
        np.copyto(out, np.where(cond, x, y))
        return out
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
    return out


def _select_bits(dtype, x, y):
    """The integer type whose bit patterns stand for `dtype` values in a bitwise select, or None."""
    if dtype.kind not in "fiu" or np.asarray(x).dtype != dtype or np.asarray(y).dtype != dtype:
        return None
    return np.dtype(f"i{dtype.itemsize}")


_select.alloc = np.where  # whole-array evaluation of a fused program: no buffer to fill


def _cast(attrs, in_dtypes):
    # (an instruction of a fused program writes into a buffer of its dtype: it needs no DstT)
    dst = dtypes.as_dtype(attrs["DstT"]).as_numpy_dtype if "DstT" in attrs else None

    def cast(x, *, out=None):
        if out is None:
            return np.asarray(x).astype(dst)
        np.copyto(out, x, casting="unsafe")
        return out
    return cast


def _clip(t, lo, hi, *, out=None):
    return np.clip(t, lo, hi, out=out)


# ---------------------------------------------------------------- gradient rules (m: math ops)
def _pow_grad(m, g, x, y, z):
    positive = x > 0
    log_x = m.where(positive, m.log(m.where(positive, x, m.ones(x))), m.zeros(x))
    return g * y * m.pow(x, y - 1), g * z * log_x


def _maximum_grad(m, g, x, y, z):
    x_wins = x >= y  # ties go to x
    return m.mask(x_wins, g), m.mask(m.logical_not(x_wins), g)


def _minimum_grad(m, g, x, y, z):
    x_wins = x <= y  # ties go to x
    return m.mask(x_wins, g), m.mask(m.logical_not(x_wins), g)


def _squared_difference_grad(m, g, x, y, z):
    scaled = (2 * g) * (x - y)
    return scaled, -scaled


def _via(name):  # the `onnx` fact of a row written by the ONNX converter `name` (several nodes)
    return {"converter": name}


_E = Elementwise
_FLOAT_UNARY = dict(arity=1, dtypes="float")
ROWS = (
    # ---- unary
    _E("Neg", "negative", 1, "signed", numpy="negative", c="(-{0})",
       grad=lambda m, g, x, y, attrs: -g, onnx="Neg", shape_arithmetic=True),
    _E("Abs", "abs", 1, "signed", numpy="abs", c="gf_abs({0})", dydx=lambda m, x, y: m.sign(x), onnx="Abs"),
    _E("Sign", "sign", 1, "signed", numpy="sign", c="gf_sign({0})", grad=ZERO, onnx="Sign"),
    _E("Square", "square", 1, "numeric", numpy="square", c="({0} * {0})",
       dydx=lambda m, x, y: 2 * x, onnx=_via("square")),
    _E("Exp", "exp", **_FLOAT_UNARY, numpy="exp", c="gf_exp({0})", dydx=lambda m, x, y: y, onnx="Exp"),
    _E("Expm1", "expm1", **_FLOAT_UNARY, numpy="expm1", c="gf_expm1({0})",
       dydx=lambda m, x, y: m.exp(x), onnx=_via("expm1")),
    _E("Log", "log", **_FLOAT_UNARY, numpy="log", c="gf_log({0})",
       dydx=lambda m, x, y: m.reciprocal(x), onnx="Log"),
    _E("Log1p", "log1p", **_FLOAT_UNARY, numpy="log1p", c="gf_log1p({0})",
       dydx=lambda m, x, y: m.reciprocal(1 + x), onnx=_via("log1p")),
    _E("Sqrt", "sqrt", **_FLOAT_UNARY, numpy="sqrt", c="gf_sqrt({0})", dydx=lambda m, x, y: 0.5 / y,
       onnx="Sqrt"),
    _E("Rsqrt", "rsqrt", **_FLOAT_UNARY, numpy=_rsqrt, c="gf_rsqrt({0})",
       dydx=lambda m, x, y: -0.5 * (y * y * y), onnx=_via("rsqrt")),
    _E("Reciprocal", "reciprocal", **_FLOAT_UNARY, numpy="reciprocal", c="(({T})1 / {0})",
       dydx=lambda m, x, y: -(y * y), onnx="Reciprocal"),
    _E("Sin", "sin", **_FLOAT_UNARY, numpy="sin", c="gf_sin({0})", dydx=lambda m, x, y: m.cos(x), onnx="Sin"),
    _E("Cos", "cos", **_FLOAT_UNARY, numpy="cos", c="gf_cos({0})", dydx=lambda m, x, y: -m.sin(x),
       onnx="Cos"),
    _E("Tan", "tan", **_FLOAT_UNARY, numpy="tan", c="gf_tan({0})", dydx=lambda m, x, y: 1 + y * y,
       onnx="Tan"),
    _E("Tanh", "tanh", **_FLOAT_UNARY, numpy="tanh", c="gf_tanh({0})", public=("tf", "nn"),
       dydx=lambda m, x, y: 1 - y * y, onnx="Tanh"),
    _E("Sigmoid", "sigmoid", **_FLOAT_UNARY, numpy=_sigmoid, compiled_float32=True,
       public=("tf", "nn"),
       c="gf_sigmoid({0})", dydx=lambda m, x, y: y * (1 - y), onnx="Sigmoid"),
    _E("Erf", "erf", **_FLOAT_UNARY, numpy=_erf, c="gf_erf({0})",
       dydx=lambda m, x, y: (2 / math.sqrt(math.pi)) * m.exp(-(x * x)), onnx="Erf"),
    _E("Lgamma", "lgamma", **_FLOAT_UNARY, numpy=_lgamma, c="gf_lgamma({0})",
       dydx=lambda m, x, y: m.digamma(x), onnx=no_onnx.SPECIAL),
    _E("Digamma", "digamma", **_FLOAT_UNARY, numpy=_digamma, c="gf_digamma({0})",
       dydx=lambda m, x, y: m.polygamma(m.ones(x), x), onnx=no_onnx.SPECIAL),
    _E("Floor", "floor", **_FLOAT_UNARY, numpy="floor", c="gf_floor({0})", grad=ZERO, onnx="Floor"),
    _E("Ceil", "ceil", **_FLOAT_UNARY, numpy="ceil", c="gf_ceil({0})", grad=ZERO, onnx="Ceil"),
    _E("Round", "round", **_FLOAT_UNARY, numpy="rint", c="gf_round({0})", grad=ZERO,  # half to even
       onnx="Round"),
    # Relu reads its output (as TF's ReluGrad does): fusion can then fold the activation into the
    # producer of x, which is read only once.
    _E("Relu", "relu", 1, "numeric", numpy=_relu, clamp=(0,), c="gf_relu({0})", public=("nn",),
       grad=lambda m, g, x, y, attrs: m.mask(y > 0, g), onnx="Relu"),
    _E("Relu6", "relu6", 1, "numeric", numpy=_relu6, clamp=(0, 6), public=("nn",),
       c="gf_minimum(gf_maximum({0}, ({T})0), ({T})6)",
       grad=lambda m, g, x, y, attrs: m.mask(m.logical_and(x > 0, x < 6), g), onnx=_via("relu6")),
    _E("Elu", "elu", **_FLOAT_UNARY, numpy=_elu, alias_ok=False, public=("nn",),
       c="({0} > ({T})0 ? {0} : gf_expm1({0} < ({T})0 ? {0} : ({T})0))",
       grad=lambda m, g, x, y, attrs: m.where(x > 0, g, g * (y + 1)), onnx="Elu"),
    _E("Selu", "selu", **_FLOAT_UNARY, numpy=_selu, alias_ok=False, public=("nn",),
       c=f"(({{T}}){SELU_SCALE!r} * ({{0}} > ({{T}})0 ? {{0}} : ({{T}}){SELU_ALPHA!r} * "
         "gf_expm1({0} < ({T})0 ? {0} : ({T})0)))",
       grad=lambda m, g, x, y, attrs: m.where(x > 0, g * SELU_SCALE,
                                              g * (y + SELU_SCALE * SELU_ALPHA)), onnx="Selu"),
    # softplus(x) = log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|))
    _E("Softplus", "softplus", **_FLOAT_UNARY, numpy=_softplus, public=("nn",),
       c="(({0} > ({T})0 ? {0} : ({T})0) + gf_log1p(gf_exp(-gf_abs({0}))))",
       dydx=lambda m, x, y: m.sigmoid(x), onnx="Softplus"),
    _E("Softsign", "softsign", **_FLOAT_UNARY, numpy=_softsign, alias_ok=False, public=("nn",),
       c="({0} / (({T})1 + gf_abs({0})))",
       dydx=lambda m, x, y: m.reciprocal(m.square(1 + m.abs(x))), onnx="Softsign"),
    _E("LeakyRelu", "leaky_relu", **_FLOAT_UNARY, numpy=_leaky_relu, numpy_for_attrs=True,
       alias_ok=False, attrs=(Attr("alpha", "float", 0.2),), public=("nn",),
       c="({0} > ({T})0 ? {0} : {0} * {alpha})",
       grad=lambda m, g, x, y, attrs: m.where(x > 0, g, g * attrs["alpha"]), onnx=_via("leaky_relu")),
    _E("LogicalNot", "logical_not", 1, "bool", "bool", numpy="logical_not", c="(!{0})",
       grad=NO_GRADIENT, onnx="Not"),
    _E("IsNan", "is_nan", 1, "float", "bool", numpy="isnan", c="gf_isnan_({0})", grad=NO_GRADIENT,
       onnx="IsNaN"),
    _E("IsFinite", "is_finite", 1, "float", "bool", numpy="isfinite", c="gf_isfinite({0})",
       grad=NO_GRADIENT, onnx=_via("is_finite")),
    # ---- binary
    _E("Add", "add", 2, "numeric", commutative=True,
       numpy="add", c="({0} + {1})", grad=lambda m, g, x, y, z: (g, g), onnx="Add", shape_arithmetic=True),
    _E("Sub", "subtract", 2, "numeric", numpy="subtract", c="({0} - {1})",
       grad=lambda m, g, x, y, z: (g, -g), onnx="Sub", shape_arithmetic=True),
    _E("Mul", "multiply", 2, "numeric", commutative=True, numpy="multiply", c="({0} * {1})",
       grad=lambda m, g, x, y, z: (g * y, x * g), onnx="Mul", shape_arithmetic=True),
    _E("RealDiv", "truediv", 2, "numeric", "truediv", numpy=_real_div, numpy_for_attrs=True,
       c="({0} / {1})", grad=lambda m, g, x, y, z: (g / y, g * (-x / y / y)), onnx=_via("real_div")),
    _E("FloorDiv", "floordiv", 2, "numeric", numpy="floor_divide", c="gf_floordiv({0}, {1})",
       grad=ZERO, onnx=_via("floor_div"), shape_arithmetic=True, zero_divisor=True),
    # x mod y = x - floor(x / y) * y
    _E("FloorMod", "mod", 2, "numeric", numpy="mod", c="gf_floormod({0}, {1})",
       grad=lambda m, g, x, y, z: (g, -g * m.floordiv(x, y)), onnx=_via("floor_mod"),
       zero_divisor=True),
    # the gradient with respect to the exponent is 0 where the base is <= 0
    _E("Pow", "pow", 2, "numeric", numpy="power", c="gf_pow({0}, {1})", grad=_pow_grad, onnx="Pow"),
    # d/dx polygamma(n, x) = polygamma(n + 1, x); none for the order n (TF1 has none either)
    _E("Polygamma", "polygamma", 2, "float", numpy=_polygamma, c="gf_polygamma({0}, {1})",
       grad=lambda m, g, n, x, z: (None, g * m.polygamma(n + 1, x)), onnx=no_onnx.SPECIAL),
    _E("Maximum", "maximum", 2, "numeric", commutative=True, numpy="maximum", c="gf_maximum({0}, {1})",
       grad=_maximum_grad, onnx="Max", shape_arithmetic=True),
    _E("Minimum", "minimum", 2, "numeric", commutative=True, numpy="minimum", c="gf_minimum({0}, {1})",
       grad=_minimum_grad, onnx="Min", shape_arithmetic=True),
    _E("SquaredDifference", "squared_difference", 2, "numeric", commutative=True, numpy=_squared_difference,
       c="(({0} - {1}) * ({0} - {1}))", grad=_squared_difference_grad, onnx=_via("squared_difference")),
    _E("Equal", "equal", 2, "numeric|bool|string", "bool", commutative=True, numpy="equal", c="({0} == {1})",
       grad=NO_GRADIENT, onnx=_via("equal")),
    _E("NotEqual", "not_equal", 2, "numeric|bool|string", "bool", commutative=True,
       numpy="not_equal", c="({0} != {1})",
       grad=NO_GRADIENT, onnx=_via("not_equal")),
    _E("Less", "less", 2, "numeric", "bool", numpy="less", c="({0} < {1})", grad=NO_GRADIENT, onnx="Less"),
    _E("LessEqual", "less_equal", 2, "numeric", "bool", numpy="less_equal", c="({0} <= {1})",
       grad=NO_GRADIENT, onnx="LessOrEqual"),
    _E("Greater", "greater", 2, "numeric", "bool", numpy="greater", c="({0} > {1})",
       grad=NO_GRADIENT, onnx="Greater"),
    _E("GreaterEqual", "greater_equal", 2, "numeric", "bool", numpy="greater_equal",
       c="({0} >= {1})", grad=NO_GRADIENT, onnx="GreaterOrEqual"),
    _E("LogicalAnd", "logical_and", 2, "bool", "bool", commutative=True, numpy="logical_and",
       c="({0} && {1})", grad=NO_GRADIENT, onnx="And"),
    _E("LogicalOr", "logical_or", 2, "bool", "bool", commutative=True, numpy="logical_or", c="({0} || {1})",
       grad=NO_GRADIENT, onnx="Or"),
    _E("LogicalXor", "logical_xor", 2, "bool", "bool", commutative=True, numpy="logical_xor",
       c="({0} != {1})", grad=NO_GRADIENT, onnx="Xor"),
    # ---- written by hand in math_ops / math_grad (mixed dtypes, attrs, any arity)
    _E("AddN", "add_n", 0, "any", numpy=_add_n, alias_ok=False, custom=True,
       c="({0} + {1})"),
    _E("Select", "where", 3, "any", "select", numpy=_select, custom=True, c="({0} ? {1} : {2})"),
    _E("Cast", "cast", 1, "any", "cast", numpy=_cast, numpy_for_attrs=True, custom=True, c=""),
    _E("ClipByValue", "clip_by_value", 3, "numeric", numpy=_clip, custom=True,
       c="gf_minimum(gf_maximum({0}, {1}), {2})"),
    # ---- elementwise ops of other families with a CUDA expression (no fused CPU instruction)
    _E("Identity", "identity", 1, "any", c="{0}", custom=True, fusible=False),
    _E("StopGradient", "stop_gradient", 1, "any", c="{0}", grad=NO_GRADIENT, custom=True,
       fusible=False),
    _E("ZerosLike", "zeros_like", 1, "any", c="((void){0}, ({T})0)", grad=NO_GRADIENT, custom=True,
       fusible=False),
    _E("OnesLike", "ones_like", 1, "any", c="((void){0}, ({T})1)", grad=NO_GRADIENT, custom=True,
       fusible=False),
    # (not an elementwise OpDef: the bias follows the channel axis; in NCHW the CUDA launcher reads
    # it through a reshape to [C, 1, ..])
    _E("BiasAdd", "bias_add", 2, "numeric", c="({0} + {1})", custom=True, fusible=False),
    _E("SigmoidCrossEntropyWithLogits", "sigmoid_cross_entropy_with_logits", 2, "float",
       c="(gf_maximum({0}, ({T})0) - {0} * {1} + gf_log1p(gf_exp(-gf_abs({0}))))", custom=True,
       fusible=False),
)
del _E

# TF's inverse trigonometric and hyperbolic functions, special functions and zero-guarded
# divisions: rows of their own module (built on elementwise_row.py, as these are)
from graphflow.ops.elementwise_special import ROWS as _SPECIAL_ROWS  # noqa: E402

ROWS = ROWS + _SPECIAL_ROWS

ROW = {row.op: row for row in ROWS}
if len(ROW) != len(ROWS):
    raise ValueError("elementwise_spec: an op type has two rows")


def row(op_type):
    """The row of `op_type`; KeyError naming it when it has none."""
    try:
        return ROW[op_type]
    except KeyError:
        raise KeyError(f"'{op_type}' is not an elementwise op of the table") from None


# Op types a FusedElementwise program may contain (besides the "Const" pseudo-instruction).
FUSIBLE = frozenset(r.op for r in ROWS if r.fusible)
