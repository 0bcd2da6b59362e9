"""CPU kernels: blocked numpy variants of the convolutions (im2col per block of images, gathered taps)."""
