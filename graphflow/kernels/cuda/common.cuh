// graphflow CUDA kernels: shared definitions (index types, strided shapes, warp/block reductions).
// The module cache pastes this text in place of the include line (no preprocessor run per load).
#pragma once

#define GF_MAX_DIMS 8
#define GF_WARP 32

typedef long long gf_i64;

// A shape of up to GF_MAX_DIMS dims, passed by value as a kernel parameter (72 bytes, 8-aligned).
struct gf_shape {
    gf_i64 ndim;
    gf_i64 dims[GF_MAX_DIMS];
};

// Element strides (not bytes) of one operand over the dims of a gf_shape; 0 on broadcast dims.
struct gf_strides {
    gf_i64 s[GF_MAX_DIMS];
};

// Offset into an operand with `strides` of the element at linear (row-major) index `i` of `shape`.
// (Unrolled over GF_MAX_DIMS so the structs stay in the parameter bank: no local-memory copy.)
__device__ __forceinline__ gf_i64 gf_offset(gf_i64 i, const gf_shape &shape, const gf_strides &strides) {
    gf_i64 off = 0;
#pragma unroll
    for (int d = GF_MAX_DIMS - 1; d >= 0; --d) {
        if (d < shape.ndim) {
            const gf_i64 n = shape.dims[d];
            const gf_i64 q = i / n;
            off += (i - q * n) * strides.s[d];
            i = q;
        }
    }
    return off;
}

__device__ __forceinline__ gf_i64 gf_global_id() {
    return (gf_i64)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ gf_i64 gf_global_stride() {
    return (gf_i64)gridDim.x * blockDim.x;
}

// ---- reduction functors: identity(), combine(a, b) -------------------------------------------------
template <typename T> struct gf_limits;
template <> struct gf_limits<float> {
    static __device__ __forceinline__ float lowest() { return -__int_as_float(0x7f800000); }
    static __device__ __forceinline__ float highest() { return __int_as_float(0x7f800000); }
};
template <> struct gf_limits<double> {
    static __device__ __forceinline__ double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
    static __device__ __forceinline__ double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};
template <> struct gf_limits<int> {
    static __device__ __forceinline__ int lowest() { return (int)0x80000000; }
    static __device__ __forceinline__ int highest() { return 0x7fffffff; }
};
template <> struct gf_limits<gf_i64> {
    static __device__ __forceinline__ gf_i64 lowest() { return (gf_i64)0x8000000000000000ULL; }
    static __device__ __forceinline__ gf_i64 highest() { return 0x7fffffffffffffffLL; }
};
template <> struct gf_limits<unsigned char> {
    static __device__ __forceinline__ unsigned char lowest() { return 0; }
    static __device__ __forceinline__ unsigned char highest() { return 255; }
};

template <typename T> __device__ __forceinline__ bool gf_isnan(T) { return false; }
template <> __device__ __forceinline__ bool gf_isnan<float>(float x) { return x != x; }
template <> __device__ __forceinline__ bool gf_isnan<double>(double x) { return x != x; }

template <typename T> struct gf_sum_op {
    static __device__ __forceinline__ T identity() { return T(0); }
    static __device__ __forceinline__ T combine(T a, T b) { return a + b; }
};
template <typename T> struct gf_prod_op {
    static __device__ __forceinline__ T identity() { return T(1); }
    static __device__ __forceinline__ T combine(T a, T b) { return a * b; }
};
// max/min propagate NaN like numpy.max / numpy.min
template <typename T> struct gf_max_op {
    static __device__ __forceinline__ T identity() { return gf_limits<T>::lowest(); }
    static __device__ __forceinline__ T combine(T a, T b) { return (gf_isnan(a) || a > b) ? a : b; }
};
template <typename T> struct gf_min_op {
    static __device__ __forceinline__ T identity() { return gf_limits<T>::highest(); }
    static __device__ __forceinline__ T combine(T a, T b) { return (gf_isnan(a) || a < b) ? a : b; }
};
template <typename T> struct gf_all_op {
    static __device__ __forceinline__ T identity() { return T(1); }
    static __device__ __forceinline__ T combine(T a, T b) { return (a && b) ? T(1) : T(0); }
};
template <typename T> struct gf_any_op {
    static __device__ __forceinline__ T identity() { return T(0); }
    static __device__ __forceinline__ T combine(T a, T b) { return (a || b) ? T(1) : T(0); }
};

// Warp-level tree reduction with shuffles: every lane ends with the combined value.
template <typename Op, typename T>
__device__ __forceinline__ T gf_warp_reduce(T v) {
#pragma unroll
    for (int offset = GF_WARP / 2; offset > 0; offset >>= 1)
        v = Op::combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// Block-level reduction: warp shuffles, one partial per warp in shared memory, then a final warp.
// Every thread of the block must call it; the result is valid in all threads.
template <typename Op, typename T>
__device__ __forceinline__ T gf_block_reduce(T v, T *shared /* >= 32 elements */) {
    const int lane = threadIdx.x % GF_WARP;
    const int warp = threadIdx.x / GF_WARP;
    const int nwarps = (blockDim.x + GF_WARP - 1) / GF_WARP;
    v = gf_warp_reduce<Op>(v);
    __syncthreads();  // `shared` may still be read by a previous call
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = (threadIdx.x < nwarps) ? shared[threadIdx.x] : Op::identity();
    if (warp == 0) v = gf_warp_reduce<Op>(v);
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    return shared[0];
}
