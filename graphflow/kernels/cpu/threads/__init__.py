"""CPU kernels: how work is spread over threads: the intra-op pool, BLAS threads, oneDNN's OpenMP team."""
