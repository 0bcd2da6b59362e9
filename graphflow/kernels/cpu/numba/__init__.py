"""CPU kernels: compiled numba loops, each tested against the numpy reference it replaces."""
