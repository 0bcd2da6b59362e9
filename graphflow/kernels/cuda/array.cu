// graphflow CUDA kernels: data movement. One strided copy (by element size) covers transpose,
// slice, strided slice, reverse, broadcast_to, tile, concat/stack (windows of the destination),
// split/unstack (windows of the source), pad and strided-slice gradients; plus fill, gather,
// scatter-add (gather gradient, unsorted segment sum) and one_hot.
#include "common.cuh"

// ---- fill: every element of `out` gets the raw bits `bits` (element size 1, 2, 4 or 8 bytes) ----
template <typename U>
__device__ void gf_fill_impl(long long n, U *out, unsigned long long bits) {
    const U v = (U)bits;
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) out[i] = v;
}
extern "C" __global__ void gf_fill_1(long long n, unsigned char *out, unsigned long long bits) { gf_fill_impl(n, out, bits); }
extern "C" __global__ void gf_fill_2(long long n, unsigned short *out, unsigned long long bits) { gf_fill_impl(n, out, bits); }
extern "C" __global__ void gf_fill_4(long long n, unsigned int *out, unsigned long long bits) { gf_fill_impl(n, out, bits); }
extern "C" __global__ void gf_fill_8(long long n, unsigned long long *out, unsigned long long bits) { gf_fill_impl(n, out, bits); }

// fill from a device scalar (Fill with a value computed on the GPU)
template <typename U>
__device__ void gf_fill_from_impl(long long n, U *out, const U *value) {
    const U v = value[0];
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) out[i] = v;
}
extern "C" __global__ void gf_fill_from_1(long long n, unsigned char *out, const unsigned char *v) { gf_fill_from_impl(n, out, v); }
extern "C" __global__ void gf_fill_from_2(long long n, unsigned short *out, const unsigned short *v) { gf_fill_from_impl(n, out, v); }
extern "C" __global__ void gf_fill_from_4(long long n, unsigned int *out, const unsigned int *v) { gf_fill_from_impl(n, out, v); }
extern "C" __global__ void gf_fill_from_8(long long n, unsigned long long *out, const unsigned long long *v) { gf_fill_from_impl(n, out, v); }

// ---- strided copy: for every coordinate c of `shape` (row-major linear index i),
//      dst[dst_off + <c, dst_st>] = src[src_off + <c, src_st>]  (strides in elements, may be 0 or <0)
template <typename U>
__device__ void gf_copy_impl(long long n, const gf_shape &shape, const U *src, long long src_off,
                             const gf_strides &src_st, U *dst, long long dst_off,
                             const gf_strides &dst_st) {
    for (long long i = gf_global_id(); i < n; i += gf_global_stride()) {
        long long r = i, so = src_off, dso = dst_off;
#pragma unroll
        for (int d = GF_MAX_DIMS - 1; d >= 0; --d) {
            if (d < shape.ndim) {
                const long long dim = shape.dims[d];
                const long long q = r / dim;
                const long long c = r - q * dim;
                so += c * src_st.s[d];
                dso += c * dst_st.s[d];
                r = q;
            }
        }
        dst[dso] = src[so];
    }
}
#define GF_COPY(SIZE, U)                                                                          \
    extern "C" __global__ void gf_copy_##SIZE(long long n, const gf_shape shape, const U *src,    \
                                              long long src_off, const gf_strides src_st, U *dst,  \
                                              long long dst_off, const gf_strides dst_st) {         \
        gf_copy_impl(n, shape, src, src_off, src_st, dst, dst_off, dst_st);                        \
    }
GF_COPY(1, unsigned char)
GF_COPY(2, unsigned short)
GF_COPY(4, unsigned int)
GF_COPY(8, unsigned long long)

// ---- gather: out[o, j, i] = params[o, idx[j], i]; out-of-range indices give 0 (as TF on GPUs) ----
template <typename U, typename I>
__device__ void gf_gather_impl(long long n, const U *params, const I *idx, U *out, long long axis_dim,
                               long long n_idx, long long inner) {
    for (long long e = gf_global_id(); e < n; e += gf_global_stride()) {
        const long long i = e % inner;
        const long long t = e / inner;
        const long long j = t % n_idx;
        const long long o = t / n_idx;
        const long long k = (long long)idx[j];
        out[e] = (k >= 0 && k < axis_dim) ? params[(o * axis_dim + k) * inner + i] : (U)0;
    }
}
#define GF_GATHER(SIZE, U, INAME, I)                                                              \
    extern "C" __global__ void gf_gather_##SIZE##_##INAME(long long n, const U *params, const I *idx, \
                                                         U *out, long long axis_dim,               \
                                                         long long n_idx, long long inner) {       \
        gf_gather_impl(n, params, idx, out, axis_dim, n_idx, inner);                               \
    }
GF_GATHER(1, unsigned char, i32, int)
GF_GATHER(2, unsigned short, i32, int)
GF_GATHER(4, unsigned int, i32, int)
GF_GATHER(8, unsigned long long, i32, int)
GF_GATHER(1, unsigned char, i64, long long)
GF_GATHER(2, unsigned short, i64, long long)
GF_GATHER(4, unsigned int, i64, long long)
GF_GATHER(8, unsigned long long, i64, long long)

// ---- scatter-add: out[o, idx[j], i] += grad[o, j, i] (out zero-filled first; negative or
//      out-of-range ids are dropped, like unsorted_segment_sum) ----
__device__ __forceinline__ void gf_atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void gf_atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void gf_atomic_add(int *p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void gf_atomic_add(long long *p, long long v) {
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
template <typename T, typename I>
__device__ void gf_scatter_add_impl(long long n, const T *grad, const I *idx, T *out,
                                    long long axis_dim, long long n_idx, long long inner) {
    for (long long e = gf_global_id(); e < n; e += gf_global_stride()) {
        const long long i = e % inner;
        const long long t = e / inner;
        const long long j = t % n_idx;
        const long long o = t / n_idx;
        const long long k = (long long)idx[j];
        if (k >= 0 && k < axis_dim) gf_atomic_add(&out[(o * axis_dim + k) * inner + i], grad[e]);
    }
}
#define GF_SCATTER(TNAME, T, INAME, I)                                                            \
    extern "C" __global__ void gf_scatter_add_##TNAME##_##INAME(long long n, const T *grad,       \
                                                               const I *idx, T *out,             \
                                                               long long axis_dim,               \
                                                               long long n_idx, long long inner) { \
        gf_scatter_add_impl(n, grad, idx, out, axis_dim, n_idx, inner);                            \
    }
GF_SCATTER(f32, float, i32, int)
GF_SCATTER(f64, double, i32, int)
GF_SCATTER(i32, int, i32, int)
GF_SCATTER(i64, long long, i32, int)
GF_SCATTER(f32, float, i64, long long)
GF_SCATTER(f64, double, i64, long long)
GF_SCATTER(i32, int, i64, long long)
GF_SCATTER(i64, long long, i64, long long)

// ---- one_hot: out[o, d, i] = (idx[o, i] == d) ? on : off, for the one-hot axis of size depth ----
template <typename U, typename I>
__device__ void gf_one_hot_impl(long long n, const I *idx, const U *on, const U *off, U *out,
                                long long depth, long long inner) {
    const U von = on[0], voff = off[0];
    for (long long e = gf_global_id(); e < n; e += gf_global_stride()) {
        const long long i = e % inner;
        const long long t = e / inner;
        const long long d = t % depth;
        const long long o = t / depth;
        out[e] = ((long long)idx[o * inner + i] == d) ? von : voff;
    }
}
#define GF_ONE_HOT(SIZE, U, INAME, I)                                                             \
    extern "C" __global__ void gf_one_hot_##SIZE##_##INAME(long long n, const I *idx, const U *on, \
                                                          const U *off, U *out, long long depth,   \
                                                          long long inner) {                      \
        gf_one_hot_impl(n, idx, on, off, out, depth, inner);                                       \
    }
GF_ONE_HOT(1, unsigned char, i32, int)
GF_ONE_HOT(4, unsigned int, i32, int)
GF_ONE_HOT(8, unsigned long long, i32, int)
GF_ONE_HOT(1, unsigned char, i64, long long)
GF_ONE_HOT(4, unsigned int, i64, long long)
GF_ONE_HOT(8, unsigned long long, i64, long long)
GF_ONE_HOT(1, unsigned char, u8, unsigned char)
GF_ONE_HOT(4, unsigned int, u8, unsigned char)
GF_ONE_HOT(8, unsigned long long, u8, unsigned char)
