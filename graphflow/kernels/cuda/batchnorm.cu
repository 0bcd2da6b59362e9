// graphflow CUDA kernels: FusedBatchNorm and FusedBatchNormGrad.
// x is seen as [outer, C, inner]: NHWC is [N*H*W, C, 1], NCHW is [N, C, H*W]; element
// (o, c, i) sits at (o * C + c) * inner + i. Statistics: one block per channel (block-stride over
// channels), two passes (mean, then the sum of squared deviations: no cancellation), block
// reductions in shared memory. The normalization and dx are grid-stride elementwise kernels.
#include "common.cuh"

__device__ __forceinline__ float gf_rsqrt_(float x) { return 1.0f / sqrtf(x); }
__device__ __forceinline__ double gf_rsqrt_(double x) { return 1.0 / sqrt(x); }

// per channel: mean, biased variance (reserve space), unbiased variance (batch_variance)
template <typename T>
__device__ void gf_bn_stats_impl(const T *__restrict__ x, T *__restrict__ mean, T *__restrict__ var,
                                 T *__restrict__ batch_var, long long outer, long long C, long long inner) {
    __shared__ T shared[GF_WARP];
    const long long n = outer * inner;
    for (long long c = blockIdx.x; c < C; c += gridDim.x) {
        T s = T(0);
        for (long long k = threadIdx.x; k < n; k += blockDim.x) {
            const long long o = k / inner, i = k - o * inner;
            s += x[(o * C + c) * inner + i];
        }
        s = gf_block_reduce<gf_sum_op<T>>(s, shared);
        const T m = s / (T)n;
        T q = T(0);
        for (long long k = threadIdx.x; k < n; k += blockDim.x) {
            const long long o = k / inner, i = k - o * inner;
            const T d = x[(o * C + c) * inner + i] - m;
            q += d * d;
        }
        q = gf_block_reduce<gf_sum_op<T>>(q, shared);
        if (threadIdx.x == 0) {
            mean[c] = m;
            var[c] = q / (T)n;
            batch_var[c] = q / (T)(n > 1 ? n - 1 : 1);
        }
    }
}

// y = (x - mean[c]) * rsqrt(var[c] + eps) * scale[c] + offset[c]
template <typename T>
__device__ void gf_bn_apply_impl(const T *__restrict__ x, const T *__restrict__ scale,
                                 const T *__restrict__ offset, const T *__restrict__ mean,
                                 const T *__restrict__ var, T *__restrict__ y, long long total,
                                 long long C, long long inner, T eps) {
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        const long long c = (e / inner) % C;
        y[e] = (x[e] - mean[c]) * gf_rsqrt_(var[c] + eps) * scale[c] + offset[c];
    }
}

// per channel: sum(dy) (offset_backprop) and sum(dy * x_hat) (scale_backprop)
template <typename T>
__device__ void gf_bn_grad_reduce_impl(const T *__restrict__ dy, const T *__restrict__ x,
                                       const T *__restrict__ mean, const T *__restrict__ var,
                                       T *__restrict__ d_scale, T *__restrict__ d_offset,
                                       long long outer, long long C, long long inner, T eps) {
    __shared__ T shared[GF_WARP];
    const long long n = outer * inner;
    for (long long c = blockIdx.x; c < C; c += gridDim.x) {
        const T m = mean[c], inv = gf_rsqrt_(var[c] + eps);
        T a = T(0), b = T(0);
        for (long long k = threadIdx.x; k < n; k += blockDim.x) {
            const long long o = k / inner, i = k - o * inner;
            const long long e = (o * C + c) * inner + i;
            a += dy[e];
            b += dy[e] * (x[e] - m) * inv;
        }
        a = gf_block_reduce<gf_sum_op<T>>(a, shared);
        b = gf_block_reduce<gf_sum_op<T>>(b, shared);
        if (threadIdx.x == 0) {
            d_offset[c] = a;
            d_scale[c] = b;
        }
    }
}

// training: dx = scale * inv / n * (n * dy - d_offset - x_hat * d_scale); inference: dy * scale * inv
template <typename T, bool TRAINING>
__device__ void gf_bn_grad_apply_impl(const T *__restrict__ dy, const T *__restrict__ x,
                                      const T *__restrict__ scale, const T *__restrict__ mean,
                                      const T *__restrict__ var, const T *__restrict__ d_scale,
                                      const T *__restrict__ d_offset, T *__restrict__ dx,
                                      long long total, long long C, long long inner, T eps) {
    const T n = (T)(total / (C > 0 ? C : 1));
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        const long long c = (e / inner) % C;
        const T inv = gf_rsqrt_(var[c] + eps);
        const T gain = scale[c] * inv;
        if (TRAINING) {
            const T x_hat = (x[e] - mean[c]) * inv;
            dx[e] = gain * (dy[e] - d_offset[c] / n - x_hat * d_scale[c] / n);
        } else {
            dx[e] = gain * dy[e];
        }
    }
}

#define GF_BATCHNORM(TNAME, T)                                                                    \
    extern "C" __global__ void gf_bn_stats_##TNAME(const T *x, T *mean, T *var, T *batch_var,      \
                                                   long long outer, long long C, long long inner) { \
        gf_bn_stats_impl<T>(x, mean, var, batch_var, outer, C, inner);                            \
    }                                                                                             \
    extern "C" __global__ void gf_bn_apply_##TNAME(const T *x, const T *scale, const T *offset,    \
                                                   const T *mean, const T *var, T *y,              \
                                                   long long total, long long C, long long inner,  \
                                                   double eps) {                                        \
        gf_bn_apply_impl<T>(x, scale, offset, mean, var, y, total, C, inner, (T)eps);                \
    }                                                                                             \
    extern "C" __global__ void gf_bn_grad_reduce_##TNAME(const T *dy, const T *x, const T *mean,  \
                                                         const T *var, T *d_scale, T *d_offset,    \
                                                         long long outer, long long C,             \
                                                         long long inner, double eps) {                 \
        gf_bn_grad_reduce_impl<T>(dy, x, mean, var, d_scale, d_offset, outer, C, inner, (T)eps);     \
    }                                                                                             \
    extern "C" __global__ void gf_bn_grad_train_##TNAME(                                          \
        const T *dy, const T *x, const T *scale, const T *mean, const T *var, const T *d_scale,    \
        const T *d_offset, T *dx, long long total, long long C, long long inner, double eps) {          \
        gf_bn_grad_apply_impl<T, true>(dy, x, scale, mean, var, d_scale, d_offset, dx, total, C,   \
                                       inner, (T)eps);                                               \
    }                                                                                             \
    extern "C" __global__ void gf_bn_grad_infer_##TNAME(                                          \
        const T *dy, const T *x, const T *scale, const T *mean, const T *var, const T *d_scale,    \
        const T *d_offset, T *dx, long long total, long long C, long long inner, double eps) {          \
        gf_bn_grad_apply_impl<T, false>(dy, x, scale, mean, var, d_scale, d_offset, dx, total, C,  \
                                        inner, (T)eps);                                              \
    }

GF_BATCHNORM(f32, float)
GF_BATCHNORM(f64, double)
