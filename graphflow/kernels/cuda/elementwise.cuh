// graphflow CUDA kernels: scalar device functions with numpy semantics, which the C expressions of
// the elementwise table (graphflow/ops/elementwise_spec.py) call. The code generator (codegen.py)
// composes those expressions into one kernel per (fused) expression program; overloads cover
// float, double and the integer types, bool is `bool`. Activations built from these (elu, softplus,
// ...) are written as expressions in their table rows, not here; sigmoid, which reads e^-|x| twice,
// is a function below. The special functions (erfinv, Bessel, incomplete gamma and beta, zeta) are
// in special.cuh, included at the end.
#pragma once

// ---- arithmetic with numpy's integer/float corner cases ----------------------------------------
// x < 0 without "pointless comparison" diagnostics for unsigned types
template <typename T> __device__ __forceinline__ bool gf_neg(T x) { return x < T(0); }
__device__ __forceinline__ bool gf_neg(unsigned char) { return false; }
__device__ __forceinline__ bool gf_neg(bool) { return false; }

// The divisor of a checked integer division (codegen.py): a zero one sets *err to `code` (the
// launcher raises TF's "Integer division by zero") and reads as 1, so the division stays defined.
template <typename T> __device__ __forceinline__ T gf_divisor(T b, int *err, int code) {
    if (b == T(0)) {
        *err = code;
        return T(1);
    }
    return b;
}

template <typename T> __device__ __forceinline__ T gf_floordiv(T a, T b) {  // integers
    if (b == 0) return T(0);  // numpy: 0 (with a warning)
    T q = a / b;
    if ((a % b != 0) && (gf_neg(a) != gf_neg(b))) q -= 1;
    return q;
}
template <typename T> __device__ __forceinline__ T gf_floordiv_f(T a, T b) {  // npy_divmod
    if (b == T(0)) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div != T(0)) {
        T fl = floor(div);
        if (div - fl > T(0.5)) fl += T(1);
        return fl;
    }
    return copysign(T(0), a / b);
}
__device__ __forceinline__ float gf_floordiv(float a, float b) { return gf_floordiv_f(a, b); }
__device__ __forceinline__ double gf_floordiv(double a, double b) { return gf_floordiv_f(a, b); }

template <typename T> __device__ __forceinline__ T gf_floormod(T a, T b) {  // integers
    if (b == 0) return T(0);
    T r = a % b;
    if (r != 0 && (gf_neg(r) != gf_neg(b))) r += b;
    return r;
}
template <typename T> __device__ __forceinline__ T gf_floormod_f(T a, T b) {
    if (b == T(0)) return fmod(a, b);
    T mod = fmod(a, b);
    if (mod != T(0)) {
        if ((b < T(0)) != (mod < T(0))) mod += b;
    } else {
        mod = copysign(T(0), b);
    }
    return mod;
}
__device__ __forceinline__ float gf_floormod(float a, float b) { return gf_floormod_f(a, b); }
__device__ __forceinline__ double gf_floormod(double a, double b) { return gf_floormod_f(a, b); }

template <typename T> __device__ __forceinline__ T gf_pow(T a, T b) {  // integers: repeated squaring
    if (gf_neg(b)) return (a == T(1)) ? T(1) : ((a == (T)(-1)) ? ((b & 1) ? (T)(-1) : T(1)) : T(0));
    T result = 1;
    while (b) {
        if (b & 1) result *= a;
        a *= a;
        b >>= 1;
    }
    return result;
}
__device__ __forceinline__ float gf_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double gf_pow(double a, double b) { return pow(a, b); }

// numpy.maximum / numpy.minimum propagate NaN
template <typename T> __device__ __forceinline__ T gf_maximum(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T gf_minimum(T a, T b) { return a < b ? a : b; }
__device__ __forceinline__ float gf_maximum(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ double gf_maximum(double a, double b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float gf_minimum(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ double gf_minimum(double a, double b) { return (a != a || a < b) ? a : b; }

template <typename T> __device__ __forceinline__ T gf_abs(T x) { return gf_neg(x) ? T(-x) : x; }
__device__ __forceinline__ float gf_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double gf_abs(double x) { return fabs(x); }

template <typename T> __device__ __forceinline__ T gf_sign(T x) { return T((x > T(0)) - gf_neg(x)); }
__device__ __forceinline__ float gf_sign(float x) { return x != x ? x : float((x > 0.f) - (x < 0.f)); }
__device__ __forceinline__ double gf_sign(double x) { return x != x ? x : double((x > 0.0) - (x < 0.0)); }

template <typename T> __device__ __forceinline__ T gf_relu(T x) { return x > T(0) ? x : T(0); }
__device__ __forceinline__ float gf_relu(float x) { return x != x ? x : fmaxf(x, 0.f); }
__device__ __forceinline__ double gf_relu(double x) { return x != x ? x : fmax(x, 0.0); }

// ---- transcendental (float and double overloads) ------------------------------------------------
__device__ __forceinline__ float gf_exp(float x) { return expf(x); }
__device__ __forceinline__ double gf_exp(double x) { return exp(x); }
__device__ __forceinline__ float gf_expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double gf_expm1(double x) { return expm1(x); }
__device__ __forceinline__ float gf_log(float x) { return logf(x); }
__device__ __forceinline__ double gf_log(double x) { return log(x); }
__device__ __forceinline__ float gf_log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double gf_log1p(double x) { return log1p(x); }
__device__ __forceinline__ float gf_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double gf_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float gf_rsqrt(float x) { return 1.0f / sqrtf(x); }
__device__ __forceinline__ double gf_rsqrt(double x) { return 1.0 / sqrt(x); }
__device__ __forceinline__ float gf_sin(float x) { return sinf(x); }
__device__ __forceinline__ double gf_sin(double x) { return sin(x); }
__device__ __forceinline__ float gf_cos(float x) { return cosf(x); }
__device__ __forceinline__ double gf_cos(double x) { return cos(x); }
__device__ __forceinline__ float gf_tan(float x) { return tanf(x); }
__device__ __forceinline__ double gf_tan(double x) { return tan(x); }
__device__ __forceinline__ float gf_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double gf_tanh(double x) { return tanh(x); }
// 1/(1+e^-x) with full relative precision where it is tiny (as elementwise_spec._sigmoid): m = e^-|x|,
// 1/(1+m) for x >= 0, m/(1+m) for x < 0; a NaN propagates
template <typename T> __device__ __forceinline__ T gf_sigmoid(T x) {
    T m = gf_exp(-gf_abs(x));
    return (x >= T(0) ? T(1) : m) / (T(1) + m);
}
__device__ __forceinline__ float gf_erf(float x) { return erff(x); }
__device__ __forceinline__ double gf_erf(double x) { return erf(x); }
__device__ __forceinline__ float gf_lgamma(float x) { return lgammaf(x); }
__device__ __forceinline__ double gf_lgamma(double x) { return lgamma(x); }

// digamma: reflection below 0, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
// asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k); scipy's values at the poles (0: -inf,
// negative whole numbers: NaN)
__device__ inline double gf_digamma(double x) {
    if (x != x || x == INFINITY) return x;
    if (x == 0.0) return -INFINITY;
    double shift = 0.0;
    if (x < 0.0) {
        if (x == floor(x)) return NAN;
        const double pi = 3.14159265358979323846;
        shift = -pi / tan(pi * x);
        x = 1.0 - x;
    }
    while (x < 10.0) { shift -= 1.0 / x; x += 1.0; }
    double f = 1.0 / (x * x);
    double series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132
                    - f * (691.0 / 32760 - f / 12))))));
    return shift + log(x) - 0.5 / x - series;
}
__device__ __forceinline__ float gf_digamma(float x) { return (float)gf_digamma((double)x); }

// Hurwitz zeta(s, q) for s > 1 by Euler-Maclaurin summation: the first 10 terms, the integral of
// the tail and 8 Bernoulli corrections at a = q + 10 (relative error near 1e-16)
__device__ inline double gf_hurwitz_zeta(double s, double q) {
    if (q <= 0.0 && q == floor(q)) return INFINITY;
    double sum = 0.0;
    for (int k = 0; k < 10; ++k) sum += pow(q + k, -s);
    double a = q + 10.0, term = pow(a, -s);
    sum += a * term / (s - 1.0) + 0.5 * term;
    // B_2j / (2j)!, j = 1..8
    const double b[8] = {1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160,
                         -691.0 / 1307674368000.0, 1.0 / 74724249600.0,
                         -3617.0 / 10670622842880000.0};
    double rising = s, power = term / a;  // s (s+1) ... (s+2j-2), a^(-s-2j+1)
    for (int j = 0; j < 8; ++j) {
        sum += b[j] * rising * power;
        rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
        power /= a * a;
    }
    return sum;
}

// polygamma(n, x): digamma for n = 0, (-1)^(n+1) n! zeta(n + 1, x) for whole n >= 1, NaN otherwise
__device__ inline double gf_polygamma(double n, double x) {
    if (n != n || x != x || n < 0.0 || n != floor(n)) return NAN;
    if (n == 0.0) return gf_digamma(x);
    double sign = fmod(n, 2.0) == 0.0 ? -1.0 : 1.0;
    return sign * exp(lgamma(n + 1.0)) * gf_hurwitz_zeta(n + 1.0, x);
}
__device__ __forceinline__ float gf_polygamma(float n, float x) {
    return (float)gf_polygamma((double)n, (double)x);
}

__device__ __forceinline__ float gf_floor(float x) { return floorf(x); }
__device__ __forceinline__ double gf_floor(double x) { return floor(x); }
__device__ __forceinline__ float gf_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double gf_ceil(double x) { return ceil(x); }
__device__ __forceinline__ float gf_round(float x) { return rintf(x); }  // half to even, like numpy
__device__ __forceinline__ double gf_round(double x) { return rint(x); }
__device__ __forceinline__ bool gf_isnan_(float x) { return x != x; }
__device__ __forceinline__ bool gf_isnan_(double x) { return x != x; }
__device__ __forceinline__ bool gf_isfinite(float x) { return isfinite(x); }
__device__ __forceinline__ bool gf_isfinite(double x) { return isfinite(x); }

#include "special.cuh"
