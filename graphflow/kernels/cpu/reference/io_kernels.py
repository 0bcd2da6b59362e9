"""numpy kernels for the file and image-decoding ops (graphflow/ops/io_ops.py); images via Pillow."""

import io
import os

import numpy as np

from graphflow.kernels.cpu import cpu_kernel


def _bytes_of(value):
    return value[()] if isinstance(value, np.ndarray) else value


def _text_of(value):
    return os.fsdecode(_bytes_of(value))


def _string_scalar(data):
    out = np.empty((), dtype=object)
    out[()] = data
    return out


@cpu_kernel("ReadFile")
def _read_file(node):
    def read(filename):
        path = _text_of(filename)
        try:
            with open(path, "rb") as f:
                return _string_scalar(f.read())
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: No such file or directory") from None
    return read


@cpu_kernel("WriteFile")
def _write_file(node):
    def write(filename, contents):
        path = _text_of(filename)
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "wb") as f:
            f.write(_bytes_of(contents))
    return write


# ---------------------------------------------------------------- images
def _open(data, kind):
    from graphflow.ops.io_ops import require_pillow
    Image = require_pillow(f"decoding a {kind} image")
    try:
        image = Image.open(io.BytesIO(data))
    except Exception as exc:  # Pillow raises several types for bad data
        raise ValueError(f"Invalid {kind} data: {exc}") from None
    return Image, image


def _load(image, kind):
    try:
        image.load()
    except Exception as exc:
        raise ValueError(f"Invalid {kind} data: {exc}") from None
    return image


def _rgb_to_gray(rgb):
    """libpng's RGB -> gray (TF's decode_png asks for weights 0.299, 0.587; libpng truncates them
    to 15-bit fixed point): bit-identical to TF."""
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    return ((r * 9797 + g * 19234 + b * 3737) >> 15).astype(rgb.dtype)


def _to_channels(image, channels):
    """Pixels [h, w, c] of a Pillow image in `channels` (0: as stored, with palettes expanded)."""
    if image.mode in ("I;16", "I;16B", "I"):
        pixels = np.asarray(image)
        return pixels[:, :, None] if channels in (0, 1) else np.repeat(pixels[:, :, None],
                                                                        channels, axis=2)
    if image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif image.mode not in ("L", "LA", "RGB", "RGBA"):
        image = image.convert("RGB")
    pixels = np.asarray(image)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    stored = pixels.shape[2]
    if channels == 0 or channels == stored:
        return pixels
    color, alpha = pixels[:, :, :3 if stored >= 3 else 1], None
    if stored in (2, 4):
        alpha = pixels[:, :, -1:]
    if channels == 1:
        return _rgb_to_gray(color)[:, :, None] if color.shape[2] == 3 else color
    rgb = color if color.shape[2] == 3 else np.repeat(color, 3, axis=2)
    if channels == 3:
        return rgb
    return np.concatenate([rgb, alpha if alpha is not None else np.full_like(rgb[:, :, :1], 255)], 2)


def _decode_jpeg_bytes(data, channels, ratio=1):
    Image, image = _open(data, "JPEG")
    if image.format != "JPEG":
        raise ValueError(f"Invalid JPEG data: the contents are {image.format or 'not an image'}")
    width, height = image.size
    want = {1: "L", 3: "RGB"}.get(channels, "L" if image.mode == "L" else "RGB")
    # libjpeg converts colour spaces and downscales while decoding, as TF's decoder asks it to
    image.draft(want, (max(1, width // ratio), max(1, height // ratio)))
    image = _load(image, "JPEG")
    if image.mode != want:
        image = image.convert(want)
    pixels = np.asarray(image)
    return pixels[:, :, None] if pixels.ndim == 2 else pixels


@cpu_kernel("DecodeJpeg")
def _decode_jpeg(node):
    channels, ratio = node.attrs["channels"], node.attrs["ratio"]
    return lambda contents: _decode_jpeg_bytes(_bytes_of(contents), channels, ratio)


def _png_bit_depth(data):
    return data[24] if len(data) > 25 and data[:8] == b"\x89PNG\r\n\x1a\n" else 8


def _decode_png_bytes(data, channels, dtype):
    Image, image = _open(data, "PNG")
    image = _load(image, image.format or "PNG")
    sixteen = image.mode in ("I;16", "I;16B", "I")
    if np.dtype(dtype) == np.uint16 and _png_bit_depth(data) == 16 and not sixteen:
        raise NotImplementedError("decode_png: 16-bit colour PNGs cannot be read as uint16 here "
                                  "(Pillow reduces them to 8 bits); grayscale 16-bit PNGs can")
    pixels = _to_channels(image, channels)
    if sixteen:
        if np.dtype(dtype) == np.uint16:
            return pixels.astype(np.uint16)
        return (pixels.astype(np.uint32) // 257).astype(np.uint8)  # TF: 16 -> 8 bits
    if np.dtype(dtype) == np.uint16:
        return pixels.astype(np.uint16) * 257
    return pixels.astype(np.uint8)


@cpu_kernel("DecodePng")
def _decode_png(node):
    channels, dtype = node.attrs["channels"], node.out_dtypes[0]
    return lambda contents: _decode_png_bytes(_bytes_of(contents), channels, dtype)


@cpu_kernel("DecodeBmp")
def _decode_bmp(node):
    channels = node.attrs["channels"]

    def decode(contents):
        Image, image = _open(_bytes_of(contents), "BMP")
        return _to_channels(_load(image, "BMP"), channels).astype(np.uint8)
    return decode


def _gif_frames(data):
    Image, image = _open(data, "GIF")
    frames = []
    try:
        while True:
            frames.append(np.asarray(_load(image, "GIF").convert("RGB")))
            image.seek(image.tell() + 1)
    except EOFError:
        pass
    return np.stack(frames).astype(np.uint8)


@cpu_kernel("DecodeGif")
def _decode_gif(node):
    return lambda contents: _gif_frames(_bytes_of(contents))


@cpu_kernel("DecodeImage")
def _decode_image(node):
    channels = node.attrs["channels"]
    expand = node.attrs["expand_animations"]
    out = np.dtype(node.out_dtypes[0])

    def decode(contents):
        data = _bytes_of(contents)
        if data[:3] == b"\xff\xd8\xff":
            pixels = _decode_jpeg_bytes(data, channels)
        elif data[:6] in (b"GIF87a", b"GIF89a"):
            pixels = _gif_frames(data)
            if not expand:
                pixels = pixels[0]
            if channels == 1:
                raise ValueError("decode_image: a GIF has 3 channels; channels=1 is not possible")
        elif data[:2] == b"BM":
            Image, image = _open(data, "BMP")
            pixels = _to_channels(_load(image, "BMP"), channels)
        elif data[:8] == b"\x89PNG\r\n\x1a\n":
            pixels = _decode_png_bytes(data, channels, np.uint16 if out == np.uint16 else np.uint8)
        else:
            raise ValueError("Unknown image file format. One of JPEG, PNG, GIF, BMP required.")
        if out == np.float32:
            scale = 65535.0 if pixels.dtype == np.uint16 else 255.0
            return (pixels.astype(np.float32) / np.float32(scale)).astype(np.float32)
        if out == np.uint16 and pixels.dtype == np.uint8:
            return pixels.astype(np.uint16) * 257
        return pixels
    return decode
