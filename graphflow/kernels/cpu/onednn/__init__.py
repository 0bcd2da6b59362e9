"""CPU kernels: oneDNN's primitives through ctypes (float32 convolutions, products, pooling gradients)."""
