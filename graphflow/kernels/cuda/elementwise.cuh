// graphflow CUDA kernels: scalar device functions with numpy semantics, which the C expressions of
// the elementwise table (graphflow/ops/elementwise_spec.py) call. The code generator (codegen.py)
// composes those expressions into one kernel per (fused) expression program; overloads cover
// float, double and the integer types, bool is `bool`. Activations built from these (sigmoid, elu,
// softplus, ...) are written as expressions in their table rows, not here.
#pragma once

// ---- arithmetic with numpy's integer/float corner cases ----------------------------------------
// x < 0 without "pointless comparison" diagnostics for unsigned types
template <typename T> __device__ __forceinline__ bool gf_neg(T x) { return x < T(0); }
__device__ __forceinline__ bool gf_neg(unsigned char) { return false; }
__device__ __forceinline__ bool gf_neg(bool) { return false; }

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
__device__ __forceinline__ float gf_erf(float x) { return erff(x); }
__device__ __forceinline__ double gf_erf(double x) { return erf(x); }
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
