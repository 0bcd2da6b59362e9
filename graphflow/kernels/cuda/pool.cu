// graphflow CUDA kernels: max and average pooling (NHWC) and their gradients.
// Windows follow the CPU kernels exactly: max pooling sees padding as the lowest value, the max
// propagates NaN, the gradient goes to the first maximum in row-major window order (a padded tap
// included); average pooling divides by the number of real (non-padding) elements.
// MaxPoolGrad scatters each output gradient to its argmax with atomicAdd (dx zero-filled first);
// AvgPoolGrad gathers, for each input element, the shares of the windows containing it.
// FusedMaxPoolGradReluMask is MaxPoolGrad that skips the add where the argmax's value is not > 0
// (NaN included): the ReLU gradient where(x > 0, dx, 0) of its result, with the same bits.
#include "common.cuh"

struct gf_pool_geom {  // 16 x int64 = 128 bytes
    long long n, h, w, c, oh, ow, kh, kw, sh, sw, pt, pl, pad0, pad1, pad2, pad3;
};

template <typename T> __device__ __forceinline__ T gf_pool_max(T a, T b) { return (gf_isnan(a) || a > b) ? a : b; }

template <typename T>
__device__ void gf_max_pool_impl(const T *__restrict__ x, T *__restrict__ y, const gf_pool_geom &g) {
    const long long total = g.n * g.oh * g.ow * g.c;
    for (long long e = gf_global_id(); e < total; e += gf_global_stride()) {
        const long long c = e % g.c;
        long long t = e / g.c;
        const long long ow = t % g.ow; t /= g.ow;
        const long long oh = t % g.oh;
        const long long n = t / g.oh;
        T best = gf_limits<T>::lowest();
        bool first = true;
        for (long long kh = 0; kh < g.kh; ++kh) {
            const long long h = oh * g.sh - g.pt + kh;
            for (long long kw = 0; kw < g.kw; ++kw) {
                const long long w = ow * g.sw - g.pl + kw;
                const T v = (h >= 0 && h < g.h && w >= 0 && w < g.w) ? x[((n * g.h + h) * g.w + w) * g.c + c]
                                                                  : gf_limits<T>::lowest();
                best = first ? v : gf_pool_max(best, v);
                first = false;
            }
        }
        y[e] = best;
    }
}

template <typename T>
__device__ void gf_avg_pool_impl(const T *__restrict__ x, T *__restrict__ y, const gf_pool_geom &g) {
    const long long total = g.n * g.oh * g.ow * g.c;
    for (long long e = gf_global_id(); e < total; e += gf_global_stride()) {
        const long long c = e % g.c;
        long long t = e / g.c;
        const long long ow = t % g.ow; t /= g.ow;
        const long long oh = t % g.oh;
        const long long n = t / g.oh;
        const long long h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl;
        const long long hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
        const long long he = (h0 + g.kh < g.h) ? h0 + g.kh : g.h;
        const long long we = (w0 + g.kw < g.w) ? w0 + g.kw : g.w;
        T acc = T(0);
        for (long long h = hs; h < he; ++h)
            for (long long w = ws; w < we; ++w) acc += x[((n * g.h + h) * g.w + w) * g.c + c];
        y[e] = acc / (T)((he - hs) * (we - ws));
    }
}

template <bool RELU_MASK, typename T>
__device__ void gf_max_pool_grad_impl(const T *__restrict__ x, const T *__restrict__ dy, T *__restrict__ dx,
                                      const gf_pool_geom &g) {
    const long long total = g.n * g.oh * g.ow * g.c;
    for (long long e = gf_global_id(); e < total; e += gf_global_stride()) {
        const long long c = e % g.c;
        long long t = e / g.c;
        const long long ow = t % g.ow; t /= g.ow;
        const long long oh = t % g.oh;
        const long long n = t / g.oh;
        T best = gf_limits<T>::lowest();
        long long best_h = -1, best_w = -1;
        bool first = true;
        for (long long kh = 0; kh < g.kh; ++kh) {
            const long long h = oh * g.sh - g.pt + kh;
            for (long long kw = 0; kw < g.kw; ++kw) {
                const long long w = ow * g.sw - g.pl + kw;
                const bool inside = h >= 0 && h < g.h && w >= 0 && w < g.w;
                const T v = inside ? x[((n * g.h + h) * g.w + w) * g.c + c] : gf_limits<T>::lowest();
                if (first || v > best) {  // the first strict maximum, as the CPU kernel
                    best = v;
                    best_h = inside ? h : -1;
                    best_w = inside ? w : -1;
                }
                first = false;
            }
        }
        if (best_h >= 0 && (!RELU_MASK || best > T(0)))
            atomicAdd(&dx[((n * g.h + best_h) * g.w + best_w) * g.c + c], dy[e]);
    }
}

template <typename T>
__device__ void gf_avg_pool_grad_impl(const T *__restrict__ dy, T *__restrict__ dx, const gf_pool_geom &g) {
    const long long total = g.n * g.h * g.w * g.c;
    for (long long e = gf_global_id(); e < total; e += gf_global_stride()) {
        const long long c = e % g.c;
        long long t = e / g.c;
        const long long w = t % g.w; t /= g.w;
        const long long h = t % g.h;
        const long long n = t / g.h;
        // windows oh with oh*sh - pt <= h < oh*sh - pt + kh
        long long oh_lo = h + g.pt - g.kh + 1;
        oh_lo = oh_lo <= 0 ? 0 : (oh_lo + g.sh - 1) / g.sh;
        long long oh_hi = (h + g.pt) / g.sh;
        if (oh_hi > g.oh - 1) oh_hi = g.oh - 1;
        long long ow_lo = w + g.pl - g.kw + 1;
        ow_lo = ow_lo <= 0 ? 0 : (ow_lo + g.sw - 1) / g.sw;
        long long ow_hi = (w + g.pl) / g.sw;
        if (ow_hi > g.ow - 1) ow_hi = g.ow - 1;
        T acc = T(0);
        for (long long oh = oh_lo; oh <= oh_hi; ++oh) {
            const long long h0 = oh * g.sh - g.pt;
            const long long ch = ((h0 + g.kh < g.h) ? h0 + g.kh : g.h) - (h0 > 0 ? h0 : 0);
            for (long long ow = ow_lo; ow <= ow_hi; ++ow) {
                const long long w0 = ow * g.sw - g.pl;
                const long long cw = ((w0 + g.kw < g.w) ? w0 + g.kw : g.w) - (w0 > 0 ? w0 : 0);
                acc += dy[((n * g.oh + oh) * g.ow + ow) * g.c + c] / (T)(ch * cw);
            }
        }
        dx[e] = acc;
    }
}

#define GF_POOL(TNAME, T)                                                                         \
    extern "C" __global__ void gf_max_pool_##TNAME(const T *x, T *y, const gf_pool_geom g) { gf_max_pool_impl(x, y, g); } \
    extern "C" __global__ void gf_avg_pool_##TNAME(const T *x, T *y, const gf_pool_geom g) { gf_avg_pool_impl(x, y, g); } \
    extern "C" __global__ void gf_max_pool_grad_##TNAME(const T *x, const T *dy, T *dx, const gf_pool_geom g) {          \
        gf_max_pool_grad_impl<false>(x, dy, dx, g);                                               \
    }                                                                                             \
    extern "C" __global__ void gf_max_pool_grad_relu_mask_##TNAME(const T *x, const T *dy, T *dx,                \
                                                                 const gf_pool_geom g) {          \
        gf_max_pool_grad_impl<true>(x, dy, dx, g);                                                \
    }                                                                                             \
    extern "C" __global__ void gf_avg_pool_grad_##TNAME(const T *dy, T *dx, const gf_pool_geom g) {                       \
        gf_avg_pool_grad_impl(dy, dx, g);                                                         \
    }
GF_POOL(f32, float)
GF_POOL(f64, double)
