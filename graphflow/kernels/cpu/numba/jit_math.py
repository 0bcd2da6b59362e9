"""A float32 tanh and sigmoid that numba vectorizes, for the compiled runs of fused elementwise
programs (`fused_jit.py`; optional like numba itself). `GRAPHFLOW_JIT_MATH=0` keeps the numpy
functions instead (numpy's tanh, `elementwise_spec._sigmoid`).

Why: numba calls libm's scalar tanhf/expf, which LLVM cannot vectorize (numba's SVML route needs an
SVML-patched LLVM, which llvmlite 0.50's wheels are not), so a fused program's tanh stayed a numpy
call between compiled runs: a pass of its own over the chunk, and one more Python call per chunk that
needs the GIL while the other thread wants it. Functions written in arithmetic join the run around
them, and the whole benchmark chain `tanh(x*2+1)*sigmoid(x) - x*x` becomes one loop that reads x
and writes the result once.

Both functions are float32 code with explicit fused multiply-adds (`llvm.fma`, exact and the same on
any CPU; LLVM does not contract the other operations, numba runs without fast-math), sharing one
e^y: e^y = 2^k e^r with k = round(y/ln 2), r = y - k ln 2 (ln 2 in two float32 parts, |r| <= 0.35)
and e^r a polynomial of degree 6 (1 + r + r^2 Q(r), Q fitted: 3.8e-9 relative).

tanh:
  |x| < 0.625:  x + x^3 P(x^2), P of degree 4 fitted (minimax in ulps of tanh, Lawson's reweighted
                least squares in float64, coefficients rounded to float32) to (tanh(x) - x)/x^3:
                model error 0.07 ulp;
  |x| >= 0.625: 1 - 2/(e^(2|x|) + 1); |x| is clamped to 10, where tanh is 1.0 in float32;
then the sign of x. A NaN takes the polynomial and comes back as itself, quieted (numpy's tanh
returns its default NaN instead).

sigmoid: m = e^(-|x|) in (0, 1], then 1/(1 + m) for x >= 0 and m/(1 + m) for x < 0: full relative
precision where the sigmoid is tiny (sigmoid(-20) = 2.06e-9; the earlier formula through tanh,
(tanh(x/2) + 1)/2, gave 0 there and was 2e-4 off at -10). |x| is clamped to 104, where e^-|x|
rounds to 0 in float32, and 2^k is built as 2^(k+24) * 2^-24 so that results below the normal range
come out as denormals, rounded once. A NaN propagates.

The polynomials are one multiply-add shorter each than they were (P of degree 5, a model error of
0.04 ulp and 0.13% of inputs 1 ulp off; e^r the Taylor polynomial of degree 7): the benchmark chain
below 8% faster, the same accuracy bounds (the measurements are in the git history of
docs/performance.md; `benchmarks/check_jit_math_accuracy.py` prints the bounds).

Cost before that (one thread, operands in the cache, as loops over an array): tanh 0.37 ns per element
(numpy's 0.23), sigmoid 0.31 (the numpy form 1.1); in a fused run, the benchmark chain 0.63 ns
per element against 0.76 with the sigmoid computed through tanh. A lone tanh with no arithmetic
around it stays numpy's (`fused_jit_group.group`), a lone sigmoid does not; in a run the tanh saves the
pass and the call. The float32 Sigmoid op's own kernel is this sigmoid too
(`fused_jit.kernel_function`). A single tanh formula without the small-|x| branch, m / (m + 2) with
m = e^(2|x|) - 1, ran faster but was 2 ulp from the correctly rounded tanh and not monotonic
(steps back of 2 ulp): not taken.

Accuracy, over every float32 (checked exhaustively by `benchmarks/check_jit_math_accuracy.py`,
all 2^32 inputs, against float64 rounded to float32): tanh is at most 1 ulp from the correctly
rounded value (6.9M inputs, 0.16% of the non-NaN ones, are 1 ulp off, none more); numpy 2.4's own
float32 tanh (AVX-512 here) is also within 1 ulp of it (63.3M inputs, 1.48%), so the two differ by
at most 2 ulp. The sigmoid: at most 2 ulp from the correctly rounded value (the same script). TF1's tanh
and sigmoid are Eigen's float32 approximations, themselves not numpy's bits. The fused programs'
tests compare a compiled run against the numpy instructions with these functions in place of the
numpy ones, bit for bit, and these functions against the numpy ones within a few ulp
(tests/kernels/cpu/numba/test_jit_math.py).
"""

import math
import os
import threading

import numpy as np

# minimax fit of (tanh(x) - x) / x^3 as a polynomial in x^2 on [0, 0.625] (the error weighted in ulps of
# tanh), float32 coefficients (benchmarks/fit_jit_math_polynomials.py)
_SMALL = (-0.333332896232605, 0.13331611454486847, -0.05375238135457039, 0.020678730681538582,
          -0.005748537369072437)
_LN2_HI = float(np.float32(math.log(2.0)))
_LN2_LO = float(np.float32(math.log(2.0) - _LN2_HI))
_MAGIC = 12582912.0  # 1.5 * 2^23: y + _MAGIC rounds y to an integer held in the low mantissa bits

# e^r = 1 + r + r^2 Q(r) on |r| <= ln(2)/2, Q of degree 4 fitted (minimax of e^r's relative error,
# coefficients rounded to float32: benchmarks/fit_jit_math_polynomials.py prints both fits): model
# error 3.8e-9 relative, one multiply-add fewer than the Taylor polynomial of degree 7 it replaced
_EXP_Q = (0.4999999403953552, 0.1666652113199234, 0.04166838899254799, 0.008368716575205326,
          0.001381459878757596)

# e^y = 2^k e^r (k and r as in the module docstring): lines shared by both functions, which leave
# t (k + 1.5 * 2^23, for pow2) and e (e^r) defined
_EXP = f"""
    t = fma(y, F({1 / math.log(2.0)!r}), F({_MAGIC!r}))
    k = t - F({_MAGIC!r})
    r = fma(k, F({-_LN2_HI!r}), y)
    r = fma(k, F({-_LN2_LO!r}), r)
    e = fma(r, F({_EXP_Q[4]!r}), F({_EXP_Q[3]!r}))
    e = fma(e, r, F({_EXP_Q[2]!r}))
    e = fma(e, r, F({_EXP_Q[1]!r}))
    e = fma(e, r, F({_EXP_Q[0]!r}))
    e = fma(e, r, F(1))
    e = fma(e, r, F(1))"""

_SOURCE = f"""
def tanhf(x):
    a = abs(x)
    z = a * a
    p = fma(z, F({_SMALL[4]!r}), F({_SMALL[3]!r}))
    p = fma(p, z, F({_SMALL[2]!r}))
    p = fma(p, z, F({_SMALL[1]!r}))
    p = fma(p, z, F({_SMALL[0]!r}))
    small = fma(a * z, p, a)
    c = a if a <= F(10) else F(10)
    y = c + c{_EXP}
    e = e * pow2(t)
    big = F(1) - F(2) / (e + F(1))
    q = big if a >= F(0.625) else small  # a NaN takes the polynomial, which keeps its payload
    return copysign(q, x)


def sigmoidf(x):
    a = abs(x)
    c = F(104) if a > F(104) else a  # (a NaN stays)
    y = -c{_EXP}
    m = (e * pow2(t + F(24))) * F({2.0 ** -24!r})  # e^-|x|, a denormal rounded once
    n = F(1) if x >= F(0) else m
    return n / (F(1) + m)
"""

# op type -> the float32 function computing it, by name
CALLS = {"Tanh": "tanhf", "Sigmoid": "sigmoidf"}

_lock = threading.Lock()
_functions = None
_array_loops = {}


def enabled():
    """False when GRAPHFLOW_JIT_MATH=0 asks for the numpy functions in compiled runs."""
    return os.environ.get("GRAPHFLOW_JIT_MATH", "1").strip() not in ("0", "false", "no")


def functions():
    """{"tanhf": ..., "sigmoidf": ...}: the float32 functions as numba functions inlined into the
    loops that call them."""
    global _functions
    if _functions is None:
        with _lock:
            if _functions is None:
                _functions = _build()
    return _functions


def _build():
    from llvmlite import ir
    from numba import njit, types
    from numba.extending import intrinsic

    @intrinsic
    def fma(typingctx, a, b, c):
        if not (isinstance(a, types.Float) and a == b == c):
            return None

        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return a(a, b, c), codegen

    @intrinsic
    def pow2(typingctx, t):
        # t = k + 1.5 * 2^23 (float32, k a small integer): 2.0**k, built from its exponent bits
        if t != types.float32:
            return None

        def codegen(context, builder, signature, args):
            _prefer_wide_vectors(builder.function)
            i32 = ir.IntType(32)
            bits = builder.bitcast(args[0], i32)
            biased = builder.add(bits, ir.Constant(i32, 127 - 0x4B400000))
            return builder.bitcast(builder.shl(biased, ir.Constant(i32, 23)), ir.FloatType())
        return types.float32(t), codegen

    namespace = {"fma": fma, "pow2": pow2, "F": np.float32, "copysign": math.copysign}
    exec(compile(_SOURCE, "<jit_math>", "exec"), namespace)
    return {name: njit(inline="always", fastmath=False, error_model="numpy")(namespace[name])
            for name in CALLS.values()}


def array_call(op, x, out=None):
    """The compiled float32 function of `op` ("Tanh", "Sigmoid") over an array (what a compiled run
    computes for it), into `out` when given: used where a run falls back to numpy calls, and by
    tests."""
    name = CALLS[op]
    loop = _array_loops.get(name)
    if loop is None:
        function = functions()[name]  # (takes the lock itself)
        with _lock:
            loop = _array_loops.get(name)
            if loop is None:
                from numba import njit

                @njit(nogil=True, fastmath=False, error_model="numpy", boundscheck=False)
                def loop(a, b):
                    for i in range(a.shape[0]):
                        b[i] = function(a[i])
                _array_loops[name] = loop
    x = np.asarray(x, dtype=np.float32)
    if out is None:
        out = np.empty(x.shape, np.float32)
    if x.shape != out.shape:
        x = np.broadcast_to(x, out.shape)
    flat = np.ascontiguousarray(x).reshape(-1)
    if out.flags.c_contiguous:
        loop(flat, out.reshape(-1))
    else:
        result = np.empty(out.shape, np.float32)
        loop(flat, result.reshape(-1))
        np.copyto(out, result)
    return out


_wide_vectors = None


def wide_vectors():
    """A numba function of no arguments that, called in a compiled loop, asks LLVM for 512-bit
    vectors in that loop (`_prefer_wide_vectors`); it computes nothing."""
    global _wide_vectors
    if _wide_vectors is None:
        from numba import types
        from numba.extending import intrinsic

        @intrinsic
        def wide_vectors(typingctx):
            def codegen(context, builder, signature, args):
                _prefer_wide_vectors(builder.function)
                return context.get_dummy_value()
            return types.none(), codegen
        _wide_vectors = wide_vectors
    return _wide_vectors


def _prefer_wide_vectors(function):
    """Ask LLVM for 512-bit vectors in the loop that computes the tanh: it prefers 256 bits on
    AVX-512 server CPUs, and 512 made the tanh ~11% faster (0.47 against 0.53 ns per element of a
    chunk in the cache, the loop called directly; numpy's tanh 0.33; loaded 2-core machine). The
    same operations on more lanes: the same bits. Where AVX-512 is missing LLVM keeps the widths it
    has. llvmlite accepts only the attribute names it knows, so the key-value attribute goes into
    its set as rendered text."""
    try:
        for attr in ('"prefer-vector-width"="512"', '"min-legal-vector-width"="512"'):
            set.add(function.attributes, attr)
    except (AttributeError, TypeError):  # another llvmlite: its default widths
        pass
