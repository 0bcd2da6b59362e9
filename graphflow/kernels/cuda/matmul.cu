// graphflow CUDA kernels: matrix multiply C = op(A) @ op(B), batched with broadcast batch dims.
// Tiled shared-memory GEMM: a block computes a BM x BN tile of C, looping over K in steps of BK;
// each of the 256 threads accumulates a TM x TN sub-tile in registers. Tiles of A and B are staged
// through shared memory (A transposed to As[k][m], padded against bank conflicts), and the next
// tile's global loads are issued into registers before the current tile is consumed (software
// pipelining). Thread sub-tiles are split into groups of 4 rows/cols spaced BM/2 (BN/2) apart so
// the shared-memory reads of a warp are contiguous 16-byte vectors.
// op(A) is A or A^T (TA), op(B) is B or B^T (TB); lda/ldb/ldc are row strides of the stored
// matrices; batch offsets come from the broadcast batch shape and per-operand batch strides.
#include "common.cuh"

template <typename T, bool TA, bool TB, int BM, int BN, int BK, int TM, int TN>
__device__ void gf_gemm_impl(long long M, long long N, long long K, const T *__restrict__ A, long long lda,
                             const T *__restrict__ B, long long ldb, T *__restrict__ C, long long ldc,
                             long long batch, const gf_shape &bshape, const gf_strides &a_bst,
                             const gf_strides &b_bst, const gf_strides &c_bst, T alpha, T beta) {
    constexpr int NT = (BM / TM) * (BN / TN);     // threads per block
    constexpr int A_LOADS = BM * BK / NT;         // elements of A each thread stages per tile
    constexpr int B_LOADS = BN * BK / NT;
    constexpr int TX = BN / TN;                   // threads along N
    constexpr int GM = TM / 4, GN = TN / 4;       // groups of 4 rows / cols per thread
    __shared__ __align__(16) T As[BK][BM + 4];
    __shared__ __align__(16) T Bs[BK][BN + 4];
    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;

    // Staging pattern: element l of a thread's share of the A tile is (m, k) with
    //   A not transposed: k = tid % BK fixed, m = tid / BK + l * (NT / BK)
    //   A transposed:     m = tid % BM fixed, k = tid / BM + l * (NT / BM)
    // (and likewise for B), so each thread keeps one pointer per operand and steps it along K.
    static_assert(NT % BK == 0 && NT % BM == 0 && NT % BN == 0, "tile shape");
    const int a_fixed = TA ? tid % BM : tid % BK;
    const int a_base = TA ? tid / BM : tid / BK;
    constexpr int A_STEP = TA ? NT / BM : NT / BK;
    const int b_fixed = TB ? tid % BK : tid % BN;
    const int b_base = TB ? tid / BK : tid / BN;
    constexpr int B_STEP = TB ? NT / BK : NT / BN;

    for (long long b = blockIdx.z; b < batch; b += gridDim.z) {
        const T *Ab = A + gf_offset(b, bshape, a_bst);
        const T *Bb = B + gf_offset(b, bshape, b_bst);
        T *Cb = C + gf_offset(b, bshape, c_bst);
        T acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
        T ra[A_LOADS], rb[B_LOADS];
        // rows of A (cols of B) outside the matrix never change along K: one mask each
        unsigned a_ok = 0, b_ok = 0;
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l)
            if (TA ? (m0 + a_fixed < M) : (m0 + a_base + l * A_STEP < M)) a_ok |= 1u << l;
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l)
            if (TB ? (n0 + b_base + l * B_STEP < N) : (n0 + b_fixed < N)) b_ok |= 1u << l;
        const T *a_ptr = TA ? Ab + (long long)a_base * lda + m0 + a_fixed
                            : Ab + (m0 + a_base) * lda + a_fixed;
        const T *b_ptr = TB ? Bb + (n0 + b_base) * ldb + b_fixed
                            : Bb + (long long)b_base * ldb + n0 + b_fixed;
        const long long a_lstep = (long long)A_STEP * lda;
        const long long b_lstep = (long long)B_STEP * ldb;
        const long long a_kstep = TA ? (long long)BK * lda : BK;
        const long long b_kstep = TB ? BK : (long long)BK * ldb;

        auto load_tiles = [&](long long k0) {
#pragma unroll
            for (int l = 0; l < A_LOADS; ++l) {
                const long long gk = k0 + (TA ? a_base + l * A_STEP : a_fixed);
                ra[l] = ((a_ok >> l & 1u) && gk < K) ? a_ptr[l * a_lstep] : T(0);
            }
#pragma unroll
            for (int l = 0; l < B_LOADS; ++l) {
                const long long gk = k0 + (TB ? b_fixed : b_base + l * B_STEP);
                rb[l] = ((b_ok >> l & 1u) && gk < K) ? b_ptr[l * b_lstep] : T(0);
            }
            a_ptr += a_kstep;
            b_ptr += b_kstep;
        };
        auto store_tiles = [&]() {
#pragma unroll
            for (int l = 0; l < A_LOADS; ++l) {
                if (TA) As[a_base + l * A_STEP][a_fixed] = ra[l];
                else As[a_fixed][a_base + l * A_STEP] = ra[l];
            }
#pragma unroll
            for (int l = 0; l < B_LOADS; ++l) {
                if (TB) Bs[b_fixed][b_base + l * B_STEP] = rb[l];
                else Bs[b_base + l * B_STEP][b_fixed] = rb[l];
            }
        };

        load_tiles(0);
        for (long long k0 = 0; k0 < K; k0 += BK) {
            __syncthreads();  // the previous tile is no longer read
            store_tiles();
            __syncthreads();
            if (k0 + BK < K) load_tiles(k0 + BK);  // in flight while this tile is multiplied
#pragma unroll
            for (int k = 0; k < BK; ++k) {
                T a[TM], bv[TN];
#pragma unroll
                for (int g = 0; g < GM; ++g)
#pragma unroll
                    for (int q = 0; q < 4; ++q) a[g * 4 + q] = As[k][g * (BM / GM) + ty * 4 + q];
#pragma unroll
                for (int g = 0; g < GN; ++g)
#pragma unroll
                    for (int q = 0; q < 4; ++q) bv[g * 4 + q] = Bs[k][g * (BN / GN) + tx * 4 + q];
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * bv[j];
            }
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long gm = m0 + (i / 4) * (BM / GM) + ty * 4 + (i % 4);
            if (gm >= M) continue;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const long long gn = n0 + (j / 4) * (BN / GN) + tx * 4 + (j % 4);
                if (gn < N) {
                    T *dst = &Cb[gm * ldc + gn];
                    *dst = (beta == T(0)) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *dst;
                }
            }
        }
        __syncthreads();
    }
}

#define GF_GEMM(NAME, T, TA, TB, BM, BN, BK, TM, TN)                                              \
    extern "C" __global__ void __launch_bounds__((BM / TM) * (BN / TN))                           \
    gf_gemm_##NAME(long long M, long long N, long long K, const T *A, long long lda, const T *B,  \
                   long long ldb, T *C, long long ldc, long long batch, const gf_shape bshape,     \
                   const gf_strides a_bst, const gf_strides b_bst, const gf_strides c_bst,         \
                   double alpha, double beta) {                                                   \
        gf_gemm_impl<T, TA, TB, BM, BN, BK, TM, TN>(M, N, K, A, lda, B, ldb, C, ldc, batch, bshape, \
                                                    a_bst, b_bst, c_bst, (T)alpha, (T)beta);       \
    }

// float: 128x128 tiles, 8x8 per thread; double: 64x64 tiles, 4x4 per thread (256 threads each)
GF_GEMM(f32_nn, float, false, false, 128, 128, 8, 8, 8)
GF_GEMM(f32_tn, float, true, false, 128, 128, 8, 8, 8)
GF_GEMM(f32_nt, float, false, true, 128, 128, 8, 8, 8)
GF_GEMM(f32_tt, float, true, true, 128, 128, 8, 8, 8)
GF_GEMM(f64_nn, double, false, false, 64, 64, 8, 4, 4)
GF_GEMM(f64_tn, double, true, false, 64, 64, 8, 4, 4)
GF_GEMM(f64_nt, double, false, true, 64, 64, 8, 4, 4)
GF_GEMM(f64_tt, double, true, true, 64, 64, 8, 4, 4)
// small problems (M or N <= 64): 64x64 float tiles, 4x4 per thread, more blocks in flight
GF_GEMM(f32s_nn, float, false, false, 64, 64, 8, 4, 4)
GF_GEMM(f32s_tn, float, true, false, 64, 64, 8, 4, 4)
GF_GEMM(f32s_nt, float, false, true, 64, 64, 8, 4, 4)
GF_GEMM(f32s_tt, float, true, true, 64, 64, 8, 4, 4)

// Split-K: C = alpha * sum_s partial[s] + beta * C, partial [count, M, N] packed, C with row stride
// ldc; the chunks are summed in order (deterministic).
template <typename T>
__device__ void gf_sum_chunks_impl(const T *__restrict__ partial, long long count, long long M, long long N,
                                   T *__restrict__ C, long long ldc, T alpha, T beta) {
    const long long total = M * N;
    for (long long e = gf_global_id(); e < total; e += gf_global_stride()) {
        T acc = T(0);
        for (long long s = 0; s < count; ++s) acc += partial[s * total + e];
        T *dst = &C[(e / N) * ldc + e % N];
        *dst = (beta == T(0)) ? alpha * acc : alpha * acc + beta * *dst;
    }
}

extern "C" __global__ void gf_sum_chunks_f32(const float *partial, long long count, long long M, long long N,
                                             float *C, long long ldc, double alpha, double beta) {
    gf_sum_chunks_impl<float>(partial, count, M, N, C, ldc, (float)alpha, (float)beta);
}
extern "C" __global__ void gf_sum_chunks_f64(const double *partial, long long count, long long M, long long N,
                                             double *C, long long ldc, double alpha, double beta) {
    gf_sum_chunks_impl<double>(partial, count, M, N, C, ldc, alpha, beta);
}
