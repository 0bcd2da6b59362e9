"""CPU kernels: the numpy reference kernels, one module per op family: the definition every other
implementation is tested against."""
