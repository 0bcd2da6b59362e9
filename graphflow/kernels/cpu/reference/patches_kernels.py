"""numpy kernel for ExtractImagePatches: the zero-padded image sliced once per window tap
(strided slices, no per-pixel loop), the taps stacked in (row, column) order before the
channels."""

import numpy as np

from graphflow.kernels.cpu import cpu_kernel
from graphflow.ops.patches_ops import out_size


@cpu_kernel("ExtractImagePatches")
def _extract_image_patches(node):
    k, s, r = node.attrs["ksizes"], node.attrs["strides"], node.attrs["rates"]
    padding = node.attrs["padding"]

    def extract_image_patches(images):
        if images.ndim != 4:
            raise ValueError(f"images must be 4-D, got shape {images.shape}")
        b, h, w, d = images.shape
        oh, top = out_size(h, k[1], s[1], r[1], padding)
        ow, left = out_size(w, k[2], s[2], r[2], padding)
        span_h = (oh - 1) * s[1] + (k[1] - 1) * r[1] + 1 if oh else 0
        span_w = (ow - 1) * s[2] + (k[2] - 1) * r[2] + 1 if ow else 0
        padded = np.zeros((b, max(span_h, h + top), max(span_w, w + left), d), images.dtype)
        padded[:, top:top + h, left:left + w] = images
        taps = [padded[:, i * r[1]:i * r[1] + (oh - 1) * s[1] + 1:s[1],
                       j * r[2]:j * r[2] + (ow - 1) * s[2] + 1:s[2]]
                for i in range(k[1]) for j in range(k[2])] if oh and ow else []
        if not taps:
            return np.zeros((b, oh, ow, k[1] * k[2] * d), images.dtype)
        return np.stack(taps, axis=3).reshape(b, oh, ow, k[1] * k[2] * d)
    return extract_image_patches
