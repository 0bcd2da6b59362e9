"""`tf.image`'s measures of images, composed as TF composes them: total variation, image
gradients, Sobel edges, PSNR, SSIM (Gaussian-windowed, per channel, then averaged) and
multi-scale SSIM.

Images are [..., height, width, channels] (4-D where TF asks for a batch); integer images are
converted to [0, 1] floats first where TF converts them (psnr, ssim)."""

import numpy as np

from graphflow.framework import dtypes
from graphflow.framework.graph import name_scope
from graphflow.ops import array_ops, conv_composite_ops, conv_ops, math_ops, nn_ops, shape_ops
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.tf1.image_utils import convert_image_dtype


def total_variation(images, name=None):
    """`tf.image.total_variation`: the sum of absolute differences of neighbouring pixels, over
    height, width and channels: a scalar for one 3-D image, one value per image of a 4-D batch."""
    with name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.shape.ndims
        if ndims == 3:
            dy = images[1:, :, :] - images[:-1, :, :]
            dx = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dy = images[:, 1:, :, :] - images[:, :-1, :, :]
            dx = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError(f"total_variation: 'images' must be either 3 or 4-dimensional, got "
                             f"shape {images.shape}")
        return (math_ops.reduce_sum(math_ops.abs(dy), axis=axis)
                + math_ops.reduce_sum(math_ops.abs(dx), axis=axis))


def image_gradients(image):
    """`tf.image.image_gradients`: (dy, dx), the forward differences along height and width of a
    4-D batch, zero in the last row (dy) / column (dx); each the image's shape."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.shape}.")
    shape = shape_ops.shape(image)
    batch, height, width, depth = shape[0], shape[1], shape[2], shape[3]
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = shape_ops.concat([dy, shape_ops.zeros(shape_ops.stack([batch, 1, width, depth]),
                                               image.dtype)], 1)
    dx = shape_ops.concat([dx, shape_ops.zeros(shape_ops.stack([batch, height, 1, depth]),
                                               image.dtype)], 2)
    return shape_ops.reshape(dy, shape), shape_ops.reshape(dx, shape)


def sobel_edges(image):
    """`tf.image.sobel_edges`: the vertical and horizontal 3x3 Sobel responses of each channel of
    a 4-D batch (reflect-padded): [batch, h, w, channels, 2]."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"sobel_edges: 'image' must be 4-D [batch, h, w, d], got shape "
                         f"{image.shape}")
    kernels = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                        [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])
    filters = np.expand_dims(np.transpose(kernels, (1, 2, 0)), -2)  # [3, 3, 1, 2]
    shape = shape_ops.shape(image)
    filters = array_ops.tile(convert_to_tensor(filters, dtype=image.dtype),
                             shape_ops.stack([1, 1, shape[-1], 1]))
    padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = conv_composite_ops.depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    out = shape_ops.reshape(out, shape_ops.concat([shape, [2]], 0))
    out.set_shape(image.shape.concatenate([2]))
    return out


def psnr(a, b, max_val, name=None):
    """`tf.image.psnr`: 20 log10(max_val) - 10 log10(mean squared error) over each image's
    height, width and channels (float32)."""
    with name_scope(name, "PSNR", [a, b]):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        max_val = convert_image_dtype(math_ops.cast(max_val, a.dtype), dtypes.float32)
        a = convert_image_dtype(a, dtypes.float32)
        b = convert_image_dtype(b, dtypes.float32)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        return math_ops.subtract(20 * math_ops.log(max_val) / math_ops.log(10.0),
                                 np.float32(10 / np.log(10)) * math_ops.log(mse), name="psnr")


def _gaussian_window(size, sigma, dtype):
    """TF's SSIM window: a size x size Gaussian of `sigma`, normalised to sum 1, [size, size,
    1, 1] (built as TF builds it: a softmax of the exponents)."""
    coords = convert_to_tensor(np.arange(size) - (size - 1) / 2.0, dtype=dtype)
    sigma = convert_to_tensor(sigma, dtype=dtype)
    g = math_ops.square(coords) * (-0.5 / math_ops.square(sigma))
    g = shape_ops.reshape(g, [1, -1]) + shape_ops.reshape(g, [-1, 1])
    g = nn_ops.softmax(shape_ops.reshape(g, [1, -1]))
    return shape_ops.reshape(g, [size, size, 1, 1])


def _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2):
    """(SSIM, contrast-structure) of each channel, averaged over the valid window positions."""
    shape = shape_ops.shape(img1)
    window = array_ops.tile(_gaussian_window(filter_size, filter_sigma, img1.dtype),
                            shape_ops.stack([1, 1, shape[-1], 1]))

    def reducer(x):
        x_shape = shape_ops.shape(x)
        x = shape_ops.reshape(x, shape_ops.concat([[-1], x_shape[-3:]], 0))
        y = conv_composite_ops.depthwise_conv2d(x, window, [1, 1, 1, 1], "VALID")
        return shape_ops.reshape(y, shape_ops.concat([x_shape[:-3], shape_ops.shape(y)[1:]], 0))

    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(math_ops.square(img1) + math_ops.square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance * cs, cs


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """`tf.image.ssim`: the structural similarity of two images (or batches): a Gaussian window
    of `filter_size` and `filter_sigma`, averaged over positions and then channels (or, with
    return_index_map, the per-position map averaged over channels)."""
    with name_scope(None, "SSIM", [img1, img2]):
        img1 = convert_to_tensor(img1, name="img1")
        img2 = convert_to_tensor(img2, name="img2")
        for img in (img1, img2):
            if img.shape.ndims is not None and img.shape.ndims < 3:
                raise ValueError(f"ssim: images must have at least 3 dimensions, got shape "
                                 f"{img.shape}")
        if not img1.shape.is_compatible_with(img2.shape):
            raise ValueError(f"ssim: the two images' shapes differ: {img1.shape} and "
                             f"{img2.shape}")
        for dim in img1.shape.dims[-3:-1] if img1.shape.ndims else []:
            if dim is not None and dim < filter_size:
                raise ValueError(f"ssim: the images' height and width ({img1.shape}) must be at "
                                 f"least filter_size ({filter_size})")
        max_val = convert_image_dtype(math_ops.cast(max_val, img1.dtype), dtypes.float32)
        img1 = convert_image_dtype(img1, dtypes.float32)
        img2 = convert_image_dtype(img2, dtypes.float32)
        ssim_map, cs = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2)
        if not return_index_map:
            ssim_map = math_ops.reduce_mean(ssim_map, [-3, -2])
        return math_ops.reduce_mean(ssim_map, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """`tf.image.ssim_multiscale`: MS-SSIM, the product over scales (each half the size of the
    one before: 2x2 average pooling after symmetric padding to even sizes) of the contrast-
    structure term raised to its power factor, with the full SSIM at the last scale; averaged
    over channels."""
    with name_scope(None, "MS-SSIM", [img1, img2]):
        img1 = convert_to_tensor(img1, name="img1")
        img2 = convert_to_tensor(img2, name="img2")
        if img1.shape.ndims is not None and img1.shape.ndims < 3:
            raise ValueError(f"ssim_multiscale: images must have at least 3 dimensions, got "
                             f"shape {img1.shape}")
        if not img1.shape.is_compatible_with(img2.shape):
            raise ValueError(f"ssim_multiscale: the two images' shapes differ: {img1.shape} and "
                             f"{img2.shape}")
        max_val = convert_image_dtype(math_ops.cast(max_val, img1.dtype), dtypes.float32)
        imgs = [convert_image_dtype(img1, dtypes.float32), convert_image_dtype(img2, dtypes.float32)]
        head = shape_ops.shape(imgs[0])[:-3]
        static = imgs[0].shape.as_list() if imgs[0].shape.ndims is not None else None
        if static is None:
            raise ValueError("ssim_multiscale needs images of known rank")
        mcs = []
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}"):
                if k > 0:
                    tail = shape_ops.shape(imgs[0])[-3:]
                    flat = [shape_ops.reshape(x, shape_ops.concat([[-1], tail], 0)) for x in imgs]
                    rem = math_ops.mod(tail[:2], 2)
                    paddings = shape_ops.stack([[0, 0], shape_ops.stack([0, rem[0]]),
                                                shape_ops.stack([0, rem[1]]), [0, 0]])
                    flat = [array_ops.pad(x, paddings, mode="SYMMETRIC") for x in flat]
                    small = [conv_ops.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") for x in flat]
                    imgs = [shape_ops.reshape(x, shape_ops.concat([head, shape_ops.shape(x)[1:]], 0))
                            for x in small]
                    for x in imgs:  # keep what is known statically: the batch dims, channels
                        x.set_shape(static[:-3] + [None, None, static[-1]])
                ssim_per_channel, cs = _ssim_per_channel(imgs[0], imgs[1], max_val, filter_size,
                                                         filter_sigma, k1, k2)
                ssim_per_channel = math_ops.reduce_mean(ssim_per_channel, [-3, -2])
                mcs.append(math_ops.relu(math_ops.reduce_mean(cs, [-3, -2])))
        mcs.pop()  # the last scale contributes its full SSIM instead
        values = shape_ops.stack(mcs + [math_ops.relu(ssim_per_channel)], axis=-1)
        factors = convert_to_tensor(list(power_factors), dtype=dtypes.float32)
        return math_ops.reduce_mean(math_ops.reduce_prod(math_ops.pow(values, factors), [-1]),
                                    [-1])


__all__ = ["total_variation", "image_gradients", "sobel_edges", "psnr", "ssim", "ssim_multiscale"]
