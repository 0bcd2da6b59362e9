// graphflow CUDA kernels: softmax, log_softmax and the fused softmax cross-entropies.
// The class axis is the middle axis of [outer, C, inner] (inner == 1 when it is the last axis):
// row r is o = r / inner, i = r % inner, its elements sit at (o * C + c) * inner + i.
// Two schedules, one row per warp (C <= 1024: 8 rows per block, shuffles only) or one row per
// block (shared-memory block reductions); both make three passes over the row: max, sum of
// exp(x - max), then write. The cross-entropy kernels fuse loss and backprop (softmax - labels)
// into the last pass, so one launch produces both outputs.
// Sparse labels outside [0, C) give a NaN loss and a NaN backprop row (as TF on GPUs).
#include "common.cuh"

__device__ __forceinline__ float gf_exp_(float x) { return expf(x); }
__device__ __forceinline__ double gf_exp_(double x) { return exp(x); }
__device__ __forceinline__ float gf_log_(float x) { return logf(x); }
__device__ __forceinline__ double gf_log_(double x) { return log(x); }
template <typename T> __device__ __forceinline__ T gf_nan_();
template <> __device__ __forceinline__ float gf_nan_<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double gf_nan_<double>() { return __longlong_as_double(0x7ff8000000000000LL); }

// MODE: 0 softmax, 1 log_softmax, 2 dense cross-entropy, 3 sparse cross-entropy
template <int MODE, typename T, typename L, bool WARP_ROW>
__device__ void gf_softmax_impl(const T *__restrict__ x, const L *__restrict__ labels, T *__restrict__ out,
                                T *__restrict__ loss, long long rows, long long C, long long inner) {
    __shared__ T shared[GF_WARP];
    const long long lane = WARP_ROW ? threadIdx.x % GF_WARP : threadIdx.x;
    const long long width = WARP_ROW ? GF_WARP : blockDim.x;
    const long long first = WARP_ROW ? (long long)blockIdx.x * (blockDim.x / GF_WARP) + threadIdx.x / GF_WARP
                                     : blockIdx.x;
    const long long step = WARP_ROW ? (long long)gridDim.x * (blockDim.x / GF_WARP) : gridDim.x;
    for (long long r = first; r < rows; r += step) {
        // (every thread of a block-per-row schedule runs the same iterations: block reductions are safe)
        const long long o = r / inner, i = r - (r / inner) * inner;
        const long long base = o * C * inner + i;
        T m = gf_limits<T>::lowest();
        for (long long c = lane; c < C; c += width) m = gf_max_op<T>::combine(m, x[base + c * inner]);
        m = WARP_ROW ? gf_warp_reduce<gf_max_op<T>>(m) : gf_block_reduce<gf_max_op<T>>(m, shared);
        T s = T(0);
        for (long long c = lane; c < C; c += width) s += gf_exp_(x[base + c * inner] - m);
        s = WARP_ROW ? gf_warp_reduce<gf_sum_op<T>>(s) : gf_block_reduce<gf_sum_op<T>>(s, shared);
        const T lse = gf_log_(s);
        if (MODE == 0) {
            const T inv = T(1) / s;
            for (long long c = lane; c < C; c += width) out[base + c * inner] = gf_exp_(x[base + c * inner] - m) * inv;
        } else if (MODE == 1) {
            for (long long c = lane; c < C; c += width) out[base + c * inner] = x[base + c * inner] - m - lse;
        } else if (MODE == 2) {
            T acc = T(0);
            for (long long c = lane; c < C; c += width) {
                const long long e = base + c * inner;
                const T logp = x[e] - m - lse;
                const T lab = (T)labels[e];
                acc += lab * logp;
                out[e] = gf_exp_(logp) - lab;
            }
            acc = WARP_ROW ? gf_warp_reduce<gf_sum_op<T>>(acc) : gf_block_reduce<gf_sum_op<T>>(acc, shared);
            if (lane == 0) loss[r] = -acc;
        } else {
            const long long k = (long long)labels[r];
            const bool ok = k >= 0 && k < C;
            for (long long c = lane; c < C; c += width) {
                const long long e = base + c * inner;
                const T p = gf_exp_(x[e] - m - lse);
                out[e] = ok ? (c == k ? p - T(1) : p) : gf_nan_<T>();
            }
            if (lane == 0) loss[r] = ok ? lse - (x[base + k * inner] - m) : gf_nan_<T>();
        }
    }
}

#define GF_SOFTMAX(TNAME, T)                                                                      \
    extern "C" __global__ void gf_softmax_warp_##TNAME(const T *x, T *out, long long rows,        \
                                                       long long C, long long inner) {            \
        gf_softmax_impl<0, T, T, true>(x, nullptr, out, nullptr, rows, C, inner);                 \
    }                                                                                             \
    extern "C" __global__ void gf_softmax_block_##TNAME(const T *x, T *out, long long rows,       \
                                                        long long C, long long inner) {           \
        gf_softmax_impl<0, T, T, false>(x, nullptr, out, nullptr, rows, C, inner);                \
    }                                                                                             \
    extern "C" __global__ void gf_log_softmax_warp_##TNAME(const T *x, T *out, long long rows,    \
                                                           long long C, long long inner) {        \
        gf_softmax_impl<1, T, T, true>(x, nullptr, out, nullptr, rows, C, inner);                 \
    }                                                                                             \
    extern "C" __global__ void gf_log_softmax_block_##TNAME(const T *x, T *out, long long rows,   \
                                                            long long C, long long inner) {       \
        gf_softmax_impl<1, T, T, false>(x, nullptr, out, nullptr, rows, C, inner);                \
    }                                                                                             \
    extern "C" __global__ void gf_xent_warp_##TNAME(const T *x, const T *labels, T *loss,         \
                                                    T *backprop, long long rows, long long C,      \
                                                    long long inner) {                            \
        gf_softmax_impl<2, T, T, true>(x, labels, backprop, loss, rows, C, inner);                \
    }                                                                                             \
    extern "C" __global__ void gf_xent_block_##TNAME(const T *x, const T *labels, T *loss,        \
                                                     T *backprop, long long rows, long long C,     \
                                                     long long inner) {                           \
        gf_softmax_impl<2, T, T, false>(x, labels, backprop, loss, rows, C, inner);               \
    }
#define GF_SPARSE_XENT(TNAME, T, INAME, I)                                                        \
    extern "C" __global__ void gf_sparse_xent_warp_##TNAME##_##INAME(                             \
        const T *x, const I *labels, T *loss, T *backprop, long long rows, long long C) {          \
        gf_softmax_impl<3, T, I, true>(x, labels, backprop, loss, rows, C, 1);                    \
    }                                                                                             \
    extern "C" __global__ void gf_sparse_xent_block_##TNAME##_##INAME(                            \
        const T *x, const I *labels, T *loss, T *backprop, long long rows, long long C) {          \
        gf_softmax_impl<3, T, I, false>(x, labels, backprop, loss, rows, C, 1);                   \
    }

GF_SOFTMAX(f32, float)
GF_SOFTMAX(f64, double)
GF_SPARSE_XENT(f32, float, i32, int)
GF_SPARSE_XENT(f32, float, i64, long long)
GF_SPARSE_XENT(f64, double, i32, int)
GF_SPARSE_XENT(f64, double, i64, long long)
