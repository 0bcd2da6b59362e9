// graphflow CUDA kernels: reductions over any axes (Sum, Mean, Prod, Max, Min, All, Any) and
// ArgMax/ArgMin. The launcher collapses the input to one of three layouts:
//   short   [rows, cols]      cols <= 32: one thread per row (no block reduction for a tiny row)
//   rows    [rows, cols]      reduce the contiguous inner block: blocks of a row-chunk, warp shuffles
//                             + shared memory (gf_block_reduce); `split` > 1 gives partial results
//                             per chunk, reduced again by a second pass (large all-reductions)
//   cols    [outer, R, inner] reduce a middle axis: threadIdx.x walks `inner` (coalesced),
//                             threadIdx.y splits R, shared memory combines the y partials
//   general any other pattern: one block per output, offsets from the kept/reduced strides
// finalize: 0 none, 1 divide by `count` (float mean), 2 integer-divide by `count` (int mean,
// truncating like TF), 3 multiply by `scale`.
#include "common.cuh"

template <typename T>
__device__ __forceinline__ T gf_finalize(T v, int mode, double scale, long long count) {
    if (mode == 1) return (T)(v / (T)count);                      // float mean
    if (mode == 2) return (T)(count ? (T)(v / (T)count) : (T)0);  // integer mean, truncating
    if (mode == 3) return (T)(v * (T)scale);                      // scaled sum (l2_loss)
    return v;
}

template <typename Op, typename T>
__device__ void gf_reduce_rows_impl(const T *in, T *out, long long rows, long long cols, long long split,
                                    long long chunk, int mode, double scale, long long count) {
    __shared__ T shared[GF_WARP];
    const long long b = blockIdx.x;  // chunk of the row
    const long long c0 = b * chunk;
    const long long c1 = (c0 + chunk < cols) ? c0 + chunk : cols;
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
        const T *row = in + r * cols;
        T acc = Op::identity();
        for (long long c = c0 + threadIdx.x; c < c1; c += blockDim.x) acc = Op::combine(acc, row[c]);
        acc = gf_block_reduce<Op>(acc, shared);
        if (threadIdx.x == 0) out[r * split + b] = (split == 1) ? gf_finalize(acc, mode, scale, count) : acc;
    }
}

template <typename Op, typename T>
__device__ void gf_reduce_short_rows_impl(const T *in, T *out, long long rows, long long cols, int mode,
                                          double scale, long long count) {
    for (long long r = gf_global_id(); r < rows; r += gf_global_stride()) {
        const T *row = in + r * cols;
        T acc = Op::identity();
        for (long long c = 0; c < cols; ++c) acc = Op::combine(acc, row[c]);
        out[r] = gf_finalize(acc, mode, scale, count);
    }
}

template <typename Op, typename T>
__device__ void gf_reduce_cols_impl(const T *in, T *out, long long outer, long long R, long long inner,
                                    long long split, long long chunk, int mode, double scale,
                                    long long count) {
    // block (32, 8): x over inner, y over R; grid (ceil(inner / 32), split, outer)
    __shared__ T shared[8][GF_WARP + 1];
    const long long i = (long long)blockIdx.x * GF_WARP + threadIdx.x;
    const long long s = blockIdx.y;
    const long long r0 = s * chunk;
    const long long r1 = (r0 + chunk < R) ? r0 + chunk : R;
    for (long long o = blockIdx.z; o < outer; o += gridDim.z) {
        T acc = Op::identity();
        if (i < inner) {
            const T *base = in + o * R * inner + i;
            for (long long r = r0 + threadIdx.y; r < r1; r += blockDim.y) acc = Op::combine(acc, base[r * inner]);
        }
        shared[threadIdx.y][threadIdx.x] = acc;
        __syncthreads();
        if (threadIdx.y == 0 && i < inner) {
            for (int y = 1; y < (int)blockDim.y; ++y) acc = Op::combine(acc, shared[y][threadIdx.x]);
            const long long dst = (o * split + s) * inner + i;
            out[dst] = (split == 1) ? gf_finalize(acc, mode, scale, count) : acc;
        }
        __syncthreads();
    }
}

template <typename Op, typename T>
__device__ void gf_reduce_general_impl(const T *in, T *out, long long n_out, long long R,
                                       const gf_shape &kept, const gf_strides &kept_st,
                                       const gf_shape &red, const gf_strides &red_st, int mode,
                                       double scale, long long count) {
    __shared__ T shared[GF_WARP];
    for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {
        const T *base = in + gf_offset(o, kept, kept_st);
        T acc = Op::identity();
        for (long long r = threadIdx.x; r < R; r += blockDim.x) acc = Op::combine(acc, base[gf_offset(r, red, red_st)]);
        acc = gf_block_reduce<Op>(acc, shared);
        if (threadIdx.x == 0) out[o] = gf_finalize(acc, mode, scale, count);
    }
}

#define GF_REDUCE(NAME, OP, TNAME, T)                                                             \
    extern "C" __global__ void gf_reduce_rows_##NAME##_##TNAME(                                   \
        const T *in, T *out, long long rows, long long cols, long long split, long long chunk,     \
        long long mode, double scale, long long count) {                                          \
        gf_reduce_rows_impl<OP<T>, T>(in, out, rows, cols, split, chunk, (int)mode, scale, count); \
    }                                                                                             \
    extern "C" __global__ void gf_reduce_short_rows_##NAME##_##TNAME(                             \
        const T *in, T *out, long long rows, long long cols, long long mode, double scale,         \
        long long count) {                                                                        \
        gf_reduce_short_rows_impl<OP<T>, T>(in, out, rows, cols, (int)mode, scale, count);         \
    }                                                                                             \
    extern "C" __global__ void gf_reduce_cols_##NAME##_##TNAME(                                   \
        const T *in, T *out, long long outer, long long R, long long inner, long long split,       \
        long long chunk, long long mode, double scale, long long count) {                         \
        gf_reduce_cols_impl<OP<T>, T>(in, out, outer, R, inner, split, chunk, (int)mode, scale,    \
                                      count);                                                     \
    }                                                                                             \
    extern "C" __global__ void gf_reduce_general_##NAME##_##TNAME(                                \
        const T *in, T *out, long long n_out, long long R, const gf_shape kept,                    \
        const gf_strides kept_st, const gf_shape red, const gf_strides red_st, long long mode,     \
        double scale, long long count) {                                                          \
        gf_reduce_general_impl<OP<T>, T>(in, out, n_out, R, kept, kept_st, red, red_st, (int)mode, \
                                         scale, count);                                           \
    }

#define GF_REDUCE_NUMERIC(NAME, OP)                                                               \
    GF_REDUCE(NAME, OP, f32, float)                                                               \
    GF_REDUCE(NAME, OP, f64, double)                                                              \
    GF_REDUCE(NAME, OP, i32, int)                                                                 \
    GF_REDUCE(NAME, OP, i64, long long)

GF_REDUCE_NUMERIC(sum, gf_sum_op)
GF_REDUCE_NUMERIC(prod, gf_prod_op)
GF_REDUCE_NUMERIC(max, gf_max_op)
GF_REDUCE_NUMERIC(min, gf_min_op)
GF_REDUCE(all, gf_all_op, u8, unsigned char)
GF_REDUCE(any, gf_any_op, u8, unsigned char)

// ---- ArgMax / ArgMin over the middle axis of [outer, R, inner]; TF's CPU rule: the first
//      extreme value wins, a NaN never wins, nor a value not above the type's finite lowest value
//      (not below its highest, for min): TF's running best starts there at index 0, so a row with
//      no other value gives 0 (TF 2.21: argmax([1, nan, 3]) = 2, argmax([nan, -inf]) = 0) ----
template <typename T> struct gf_arg_limits {
    static __device__ __forceinline__ T lowest() { return gf_limits<T>::lowest(); }
    static __device__ __forceinline__ T highest() { return gf_limits<T>::highest(); }
};
template <> struct gf_arg_limits<float> {
    static __device__ __forceinline__ float lowest() { return -0x1.fffffep+127f; }
    static __device__ __forceinline__ float highest() { return 0x1.fffffep+127f; }
};
template <> struct gf_arg_limits<double> {
    static __device__ __forceinline__ double lowest() { return -0x1.fffffffffffffp+1023; }
    static __device__ __forceinline__ double highest() { return 0x1.fffffffffffffp+1023; }
};

template <bool IS_MAX, typename T>
__device__ __forceinline__ bool gf_arg_none(T v) {  // never the answer (unless nothing else is)
    return IS_MAX ? !(v > gf_arg_limits<T>::lowest()) : !(v < gf_arg_limits<T>::highest());
}

template <bool IS_MAX, typename T>
__device__ __forceinline__ bool gf_arg_better(T a, long long ia, T b, long long ib) {
    const bool na = gf_arg_none<IS_MAX>(a), nb = gf_arg_none<IS_MAX>(b);
    if (na || nb) return na ? (nb && ia < ib) : true;
    if (IS_MAX ? (a > b) : (a < b)) return true;
    return a == b && ia < ib;
}

template <bool IS_MAX, typename T, typename I>
__device__ void gf_arg_rows_impl(const T *in, I *out, long long rows, long long R) {
    __shared__ T sv[GF_WARP];
    __shared__ long long si[GF_WARP];
    const int lane = threadIdx.x % GF_WARP, warp = threadIdx.x / GF_WARP;
    const int nwarps = (blockDim.x + GF_WARP - 1) / GF_WARP;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *row = in + r * R;
        T best = row[0];
        long long bi = 0;
        for (long long c = threadIdx.x; c < R; c += blockDim.x) {
            if (gf_arg_better<IS_MAX>(row[c], c, best, bi)) { best = row[c]; bi = c; }
        }
#pragma unroll
        for (int off = GF_WARP / 2; off > 0; off >>= 1) {
            const T v = __shfl_xor_sync(0xffffffffu, best, off);
            const long long vi = __shfl_xor_sync(0xffffffffu, bi, off);
            if (gf_arg_better<IS_MAX>(v, vi, best, bi)) { best = v; bi = vi; }
        }
        __syncthreads();
        if (lane == 0) { sv[warp] = best; si[warp] = bi; }
        __syncthreads();
        if (warp == 0) {
            best = (lane < nwarps) ? sv[lane] : row[0];
            bi = (lane < nwarps) ? si[lane] : 0;
#pragma unroll
            for (int off = GF_WARP / 2; off > 0; off >>= 1) {
                const T v = __shfl_xor_sync(0xffffffffu, best, off);
                const long long vi = __shfl_xor_sync(0xffffffffu, bi, off);
                if (gf_arg_better<IS_MAX>(v, vi, best, bi)) { best = v; bi = vi; }
            }
            if (lane == 0) out[r] = (I)bi;
        }
    }
}

template <bool IS_MAX, typename T, typename I>
__device__ void gf_arg_cols_impl(const T *in, I *out, long long outer, long long R, long long inner) {
    const long long n = outer * inner;
    for (long long e = gf_global_id(); e < n; e += gf_global_stride()) {
        const long long i = e % inner, o = e / inner;
        const T *base = in + o * R * inner + i;
        T best = base[0];
        long long bi = 0;
        for (long long r = 1; r < R; ++r) {
            const T v = base[r * inner];
            if (gf_arg_better<IS_MAX>(v, r, best, bi)) { best = v; bi = r; }
        }
        out[e] = (I)bi;
    }
}

#define GF_ARG(NAME, IS_MAX, TNAME, T, INAME, I)                                                  \
    extern "C" __global__ void gf_arg_rows_##NAME##_##TNAME##_##INAME(const T *in, I *out,        \
                                                                     long long rows, long long R) { \
        gf_arg_rows_impl<IS_MAX, T, I>(in, out, rows, R);                                         \
    }                                                                                             \
    extern "C" __global__ void gf_arg_cols_##NAME##_##TNAME##_##INAME(                            \
        const T *in, I *out, long long outer, long long R, long long inner) {                     \
        gf_arg_cols_impl<IS_MAX, T, I>(in, out, outer, R, inner);                                 \
    }
#define GF_ARG_TYPES(NAME, IS_MAX, INAME, I)                                                      \
    GF_ARG(NAME, IS_MAX, f32, float, INAME, I)                                                    \
    GF_ARG(NAME, IS_MAX, f64, double, INAME, I)                                                   \
    GF_ARG(NAME, IS_MAX, i32, int, INAME, I)                                                      \
    GF_ARG(NAME, IS_MAX, i64, long long, INAME, I)
GF_ARG_TYPES(max, true, i32, int)
GF_ARG_TYPES(max, true, i64, long long)
GF_ARG_TYPES(min, false, i32, int)
GF_ARG_TYPES(min, false, i64, long long)
