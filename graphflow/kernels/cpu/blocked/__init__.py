"""CPU kernels: numpy variants of the references: the convolutions in blocks of images, gathered or
as tap products, and sums as products with a vector of ones."""
