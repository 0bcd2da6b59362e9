// graphflow CUDA kernels: 2-D convolution as im2col + GEMM (NHWC input, HWIO filter).
// im2col writes col[(n, oh, ow), (kh, kw, c)] so that col @ filter.reshape(KH*KW*C, OC) is the NHWC
// output; the backprop to the input is dcol = dout @ filter^T followed by col2im, written as a
// gather (each input element sums the columns that read it: no atomics, deterministic); the
// backprop to the filter is col^T @ dout. The GEMMs are the tiled kernels of matmul.cu.
#include "common.cuh"

struct gf_conv_geom {  // 16 x int64 = 128 bytes
    long long n, h, w, c, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, pad0, pad1;
};

template <typename T>
__device__ void gf_im2col_impl(const T *__restrict__ x, T *__restrict__ col, const gf_conv_geom &g) {
    const long long kkc = g.kh * g.kw * g.c;
    const long long total = g.n * g.oh * g.ow * kkc;
    for (long long e = gf_global_id(); e < total; e += gf_global_stride()) {
        const long long c = e % g.c;
        long long t = e / g.c;
        const long long kw = t % g.kw; t /= g.kw;
        const long long kh = t % g.kh; t /= g.kh;
        const long long ow = t % g.ow; t /= g.ow;
        const long long oh = t % g.oh;
        const long long n = t / g.oh;
        const long long h = oh * g.sh - g.pt + kh * g.dh;
        const long long w = ow * g.sw - g.pl + kw * g.dw;
        col[e] = (h >= 0 && h < g.h && w >= 0 && w < g.w) ? x[((n * g.h + h) * g.w + w) * g.c + c] : T(0);
    }
}

template <typename T>
__device__ void gf_col2im_impl(const T *__restrict__ dcol, T *__restrict__ dx, const gf_conv_geom &g) {
    const long long total = g.n * g.h * g.w * g.c;
    const long long kkc = g.kh * g.kw * g.c;
    for (long long e = gf_global_id(); e < total; e += gf_global_stride()) {
        const long long c = e % g.c;
        long long t = e / g.c;
        const long long w = t % g.w; t /= g.w;
        const long long h = t % g.h;
        const long long n = t / g.h;
        T acc = T(0);
        for (long long kh = 0; kh < g.kh; ++kh) {
            const long long hh = h + g.pt - kh * g.dh;
            if (hh < 0 || hh % g.sh) continue;
            const long long oh = hh / g.sh;
            if (oh >= g.oh) continue;
            for (long long kw = 0; kw < g.kw; ++kw) {
                const long long ww = w + g.pl - kw * g.dw;
                if (ww < 0 || ww % g.sw) continue;
                const long long ow = ww / g.sw;
                if (ow >= g.ow) continue;
                acc += dcol[((n * g.oh + oh) * g.ow + ow) * kkc + (kh * g.kw + kw) * g.c + c];
            }
        }
        dx[e] = acc;
    }
}

extern "C" __global__ void gf_im2col_f32(const float *x, float *col, const gf_conv_geom g) { gf_im2col_impl(x, col, g); }
extern "C" __global__ void gf_im2col_f64(const double *x, double *col, const gf_conv_geom g) { gf_im2col_impl(x, col, g); }
extern "C" __global__ void gf_col2im_f32(const float *dcol, float *dx, const gf_conv_geom g) { gf_col2im_impl(dcol, dx, g); }
extern "C" __global__ void gf_col2im_f64(const double *dcol, double *dx, const gf_conv_geom g) { gf_col2im_impl(dcol, dx, g); }
