// graphflow CUDA kernels: the scalar functions of the elementwise rows of
// graphflow/ops/elementwise_special.py (inverse trigonometric and hyperbolic functions, erfc,
// erfinv, ndtri, the Bessel functions I0/I1 and their scaled forms, the regularized incomplete
// gamma and beta functions and igamma's derivative in a, Hurwitz's zeta), with TF's values at the
// edges of their domains. Only the C standard math library is called (CUDA's device library and
// the host's alike); the special functions are computed in double, float overloads round the
// result. Included by elementwise.cuh (which defines gf_digamma and gf_hurwitz_zeta).
#pragma once

#define GF_UNARY_LIBM(name, f, d) \
    __device__ __forceinline__ float name(float x) { return f(x); } \
    __device__ __forceinline__ double name(double x) { return d(x); }
GF_UNARY_LIBM(gf_acos, acosf, acos)
GF_UNARY_LIBM(gf_asin, asinf, asin)
GF_UNARY_LIBM(gf_atan, atanf, atan)
GF_UNARY_LIBM(gf_acosh, acoshf, acosh)
GF_UNARY_LIBM(gf_asinh, asinhf, asinh)
GF_UNARY_LIBM(gf_atanh, atanhf, atanh)
GF_UNARY_LIBM(gf_cosh, coshf, cosh)
GF_UNARY_LIBM(gf_sinh, sinhf, sinh)
GF_UNARY_LIBM(gf_erfc, erfcf, erfc)
#undef GF_UNARY_LIBM
__device__ __forceinline__ float gf_atan2(float y, float x) { return atan2f(y, x); }
__device__ __forceinline__ double gf_atan2(double y, double x) { return atan2(y, x); }
__device__ __forceinline__ float gf_nextafter(float x, float y) { return nextafterf(x, y); }
__device__ __forceinline__ double gf_nextafter(double x, double y) { return nextafter(x, y); }
__device__ __forceinline__ bool gf_isinf(float x) { return x == INFINITY || x == -INFINITY; }
__device__ __forceinline__ bool gf_isinf(double x) { return x == INFINITY || x == -INFINITY; }

#define GF_FLOAT_VIA_DOUBLE1(name) \
    __device__ __forceinline__ float name(float x) { return (float)name((double)x); }
#define GF_FLOAT_VIA_DOUBLE2(name) \
    __device__ __forceinline__ float name(float a, float b) { return (float)name((double)a, (double)b); }

// ---- inverse normal CDF and inverse error function ----------------------------------------------
// ndtri: Acklam's rational approximation (relative error 1e-9), then one Halley step on
// 0.5 erfc(-y / sqrt 2) - p, which brings it to double precision
__device__ inline double gf_ndtri(double p) {
    if (p != p || p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0) return -INFINITY;
    if (p == 1.0) return INFINITY;
    const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                         1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                         6.680131188771972e+01, -1.328068155288572e+01};
    const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                         -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                         3.754408661907416e+00};
    double y;
    if (p < 0.02425 || p > 1.0 - 0.02425) {
        double q = sqrt(-2.0 * log(p < 0.5 ? p : 1.0 - p));
        y = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
        if (p > 0.5) y = -y;
    } else {
        double q = p - 0.5, r = q * q;
        y = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    }
    for (int i = 0; i < 2; ++i) {  // Halley: e = Phi(y) - p, u = e / phi(y)
        double e = (p < 0.5 ? 0.5 * erfc(-y * 0.70710678118654752440) - p
                            : (1.0 - p) - 0.5 * erfc(y * 0.70710678118654752440));
        if (p >= 0.5) e = -e;
        double u = e * 2.50662827463100050242 * exp(0.5 * y * y);
        y = y - u / (1.0 + 0.5 * y * u);
    }
    return y;
}
GF_FLOAT_VIA_DOUBLE1(gf_ndtri)

// erfinv: a start from ndtri ((1 + x) / 2 for |x| > 0.5, the series x sqrt(pi)/2 (1 + pi x^2/12)
// near 0), then Newton steps on erf (|x| <= 0.5) or erfc (beyond, where 1 - |x| is exact)
__device__ inline double gf_erfinv(double x) {
    if (x != x || x < -1.0 || x > 1.0) return NAN;
    if (x == 1.0) return INFINITY;
    if (x == -1.0) return -INFINITY;
    const double sqrt_pi_2 = 0.88622692545275801365, two_over_sqrt_pi = 1.12837916709551257390;
    double ax = fabs(x), y;
    if (ax <= 0.5) {
        y = ax * sqrt_pi_2 * (1.0 + 0.78539816339744830962 * ax * ax / 3.0);
        for (int i = 0; i < 4; ++i) y -= (erf(y) - ax) / (two_over_sqrt_pi * exp(-y * y));
    } else {
        double rest = 1.0 - ax;  // exact for ax in [0.5, 1]
        y = -gf_ndtri(0.5 * rest) * 0.70710678118654752440;
        for (int i = 0; i < 4; ++i) y += (erfc(y) - rest) / (two_over_sqrt_pi * exp(-y * y));
    }
    return x < 0.0 ? -y : y;
}
GF_FLOAT_VIA_DOUBLE1(gf_erfinv)

// ---- modified Bessel functions of the first kind, orders 0 and 1 --------------------------------
// the power series sum (x/2)^(2k+nu) / (k! (k+nu)!) for |x| <= 20 (positive terms), the asymptotic
// expansion e^|x| / sqrt(2 pi |x|) sum_k (-1)^k prod_j (4 nu^2 - (2j-1)^2) / (k! (8|x|)^k) beyond
// (about 1e-20 at |x| = 20); the scaled forms carry the factor e^-|x|
__device__ inline double gf_bessel_scaled(double x, int nu) {
    if (x != x) return x;
    double ax = fabs(x), value;
    if (ax > 20.0) {
        if (ax == INFINITY) return 0.0;
        double term = 1.0, sum = 1.0, mu = 4.0 * nu * nu;
        for (int k = 1; k < 60; ++k) {
            double odd = 2.0 * k - 1.0;
            term *= -(mu - odd * odd) / (k * 8.0 * ax);
            sum += term;
            if (fabs(term) < 1e-17 * fabs(sum)) break;
        }
        value = sum / sqrt(6.28318530717958647693 * ax);
    } else {
        double q = 0.25 * ax * ax, term = nu == 0 ? 1.0 : 0.5 * ax, sum = term;
        for (int k = 1; k < 200; ++k) {
            term *= q / (k * (double)(k + nu));
            sum += term;
            if (term < 1e-17 * sum) break;
        }
        value = sum * exp(-ax);
    }
    return (nu == 1 && x < 0.0) ? -value : value;
}
__device__ inline double gf_bessel_i0e(double x) { return gf_bessel_scaled(x, 0); }
__device__ inline double gf_bessel_i1e(double x) { return gf_bessel_scaled(x, 1); }
__device__ inline double gf_bessel_i0(double x) { return gf_bessel_scaled(x, 0) * exp(fabs(x)); }
__device__ inline double gf_bessel_i1(double x) { return gf_bessel_scaled(x, 1) * exp(fabs(x)); }
GF_FLOAT_VIA_DOUBLE1(gf_bessel_i0e)
GF_FLOAT_VIA_DOUBLE1(gf_bessel_i1e)
GF_FLOAT_VIA_DOUBLE1(gf_bessel_i0)
GF_FLOAT_VIA_DOUBLE1(gf_bessel_i1)

// ---- regularized incomplete gamma functions -----------------------------------------------------
// P(a, x) by its series for x < a + 1, Q(a, x) by its continued fraction (modified Lentz) beyond;
// each also carries its derivative in a (forward mode) for igamma_grad_a
#define GF_TINY 1e-300
__device__ inline void gf_igamma_series(double a, double x, double *p, double *dp) {
    double term = 1.0, dterm = 0.0, sum = 1.0, dsum = 0.0, denom = a;
    for (int n = 0; n < 2000; ++n) {
        denom += 1.0;
        double ratio = x / denom;
        dterm = dterm * ratio - term * ratio / denom;
        term *= ratio;
        sum += term;
        dsum += dterm;
        if (fabs(term) <= 1e-16 * fabs(sum) && fabs(dterm) <= 1e-16 * fabs(dsum)) break;
    }
    double prefactor = exp(a * log(x) - x - lgamma(a + 1.0));
    *p = prefactor * sum;
    *dp = prefactor * (dsum + (log(x) - gf_digamma(a + 1.0)) * sum);
}
__device__ inline void gf_igammac_fraction(double a, double x, double *q, double *dq) {
    double b = x + 1.0 - a, db = -1.0, c = 1.0 / GF_TINY, dc = 0.0;
    double d = 1.0 / b, dd = 1.0 / (b * b), h = d, dh = dd;
    for (int i = 1; i < 2000; ++i) {
        double an = -i * (i - a), dan = (double)i;
        b += 2.0;
        double pre = an * d + b, dpre = dan * d + an * dd + db;
        if (fabs(pre) < GF_TINY) pre = GF_TINY;
        d = 1.0 / pre;
        dd = -dpre / (pre * pre);
        double c_new = b + an / c, dc_new = db + dan / c - an * dc / (c * c);
        if (fabs(c_new) < GF_TINY) c_new = GF_TINY;
        c = c_new;
        dc = dc_new;
        double delta = d * c, ddelta = dd * c + d * dc;
        dh = dh * delta + h * ddelta;
        h *= delta;
        if (fabs(delta - 1.0) <= 1e-16 && fabs(ddelta * h) <= 1e-16 * fabs(dh)) break;
    }
    double prefactor = exp(a * log(x) - x - lgamma(a));
    *q = prefactor * h;
    *dq = prefactor * (dh + (log(x) - gf_digamma(a)) * h);
}
__device__ inline double gf_igamma(double a, double x) {
    if (x == 0.0) return 0.0;
    if (x < 0.0 || a <= 0.0) return NAN;
    if (a != a || x != x) return NAN;
    if (a == INFINITY) return 0.0;
    if (x == INFINITY) return 1.0;
    double v, dv;
    if (x < a + 1.0) { gf_igamma_series(a, x, &v, &dv); return v; }
    gf_igammac_fraction(a, x, &v, &dv);
    return 1.0 - v;
}
__device__ inline double gf_igammac(double a, double x) {
    if (x < 0.0 || a <= 0.0) return NAN;
    if (a != a || x != x) return NAN;
    if (x == 0.0) return 1.0;
    if (a == INFINITY) return x == INFINITY ? 0.0 : 1.0;
    if (x == INFINITY) return 0.0;
    double v, dv;
    if (x < a + 1.0) { gf_igamma_series(a, x, &v, &dv); return 1.0 - v; }
    gf_igammac_fraction(a, x, &v, &dv);
    return v;
}
__device__ inline double gf_igamma_grad_a(double a, double x) {
    if (a != a || x != x || a <= 0.0 || x < 0.0 || a == INFINITY || x == INFINITY) return NAN;
    if (x == 0.0) return 0.0;
    double v, dv;
    if (x < a + 1.0) { gf_igamma_series(a, x, &v, &dv); return dv; }
    gf_igammac_fraction(a, x, &v, &dv);
    return -dv;
}
GF_FLOAT_VIA_DOUBLE2(gf_igamma)
GF_FLOAT_VIA_DOUBLE2(gf_igammac)
GF_FLOAT_VIA_DOUBLE2(gf_igamma_grad_a)

// ---- Hurwitz zeta, TF's domain: NaN for x < 1, inf at x = 1, at whole q <= 0 inf for even whole (or
// infinite) x and NaN otherwise; a negative q
// (whole x only, else NaN) is shifted to q + m > 0 by the first m terms of the sum ----------------
__device__ inline double gf_zeta(double x, double q) {
    if (x != x || q != q) return NAN;
    if (x == 1.0) return INFINITY;
    if (x < 1.0) return NAN;
    if (q <= 0.0 && q == floor(q))
        return (x == INFINITY || (x == floor(x) && fmod(x, 2.0) == 0.0)) ? INFINITY : NAN;
    if (x == INFINITY) return q > 1.0 ? 0.0 : (q == 1.0 ? 1.0 : INFINITY);
    double head = 0.0;
    if (q < 0.0) {
        if (x != floor(x)) return NAN;
        int m = (int)ceil(-q);
        for (int k = 0; k < m; ++k) head += pow(q + k, -x);
        q += m;
    }
    return head + gf_hurwitz_zeta(x, q);
}
GF_FLOAT_VIA_DOUBLE2(gf_zeta)

// ---- regularized incomplete beta function: the continued fraction (modified Lentz) on the side
// of x where it converges fast, I_x(a, b) = 1 - I_(1-x)(b, a) on the other ------------------------
__device__ inline double gf_beta_fraction(double a, double b, double x) {
    double qab = a + b, qap = a + 1.0, qam = a - 1.0, c = 1.0, d = 1.0 - qab * x / qap;
    if (fabs(d) < GF_TINY) d = GF_TINY;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m < 3000; ++m) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d; if (fabs(d) < GF_TINY) d = GF_TINY;
        c = 1.0 + aa / c; if (fabs(c) < GF_TINY) c = GF_TINY;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d; if (fabs(d) < GF_TINY) d = GF_TINY;
        c = 1.0 + aa / c; if (fabs(c) < GF_TINY) c = GF_TINY;
        d = 1.0 / d;
        double delta = d * c;
        h *= delta;
        if (fabs(delta - 1.0) < 1e-16) break;
    }
    return h;
}
__device__ inline double gf_betainc(double a, double b, double x) {
    if (a <= 0.0 || b <= 0.0) return NAN;
    if (x == 0.0) return 0.0;
    if (x == 1.0) return 1.0;
    if (a != a || b != b || x != x || x < 0.0 || x > 1.0) return NAN;
    if (a == INFINITY || b == INFINITY) return NAN;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) return front * gf_beta_fraction(a, b, x) / a;
    return 1.0 - front * gf_beta_fraction(b, a, 1.0 - x) / b;
}
__device__ __forceinline__ float gf_betainc(float a, float b, float x) {
    return (float)gf_betainc((double)a, (double)b, (double)x);
}
#undef GF_TINY
#undef GF_FLOAT_VIA_DOUBLE1
#undef GF_FLOAT_VIA_DOUBLE2
