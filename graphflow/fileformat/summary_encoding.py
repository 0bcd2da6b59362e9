"""Encoders behind the summary kernels: TF1's histogram buckets, image scaling, PNG and WAV bytes,
and the TensorBoard `Summary` protocol buffers (from the `tensorboard` package, imported on first use
so that graphs without summaries never need it).
"""

import io
import struct
import wave
import zlib

import numpy as np

INSTALL_HINT = ("tf.summary needs the tensorboard package (its protocol buffers and event-file "
                "writer): pip install 'graphflow[summary]'")


def protos():
    """The `tensorboard.compat.proto` module holding `summary_pb2` etc., or a clear ImportError."""
    try:
        from tensorboard.compat import proto
        from tensorboard.compat.proto import (  # noqa: F401
            attr_value_pb2,
            event_pb2,
            graph_pb2,
            summary_pb2,
            tensor_pb2,
            tensor_shape_pb2,
            types_pb2,
        )
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return proto


def _default_bucket_limits():
    """TF1's histogram bucket upper limits: +-1e-12 growing by 10% up to 1e20, 0 and +-DBL_MAX."""
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(np.finfo(np.float64).max)
    negative = [-x for x in reversed(positive)]
    return np.array(negative + [0.0] + positive, dtype=np.float64)


BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values):
    """A `HistogramProto` of `values` as TF1's HistogramSummary builds it: counts per default
    bucket, runs of empty buckets collapsed into one (TF's Histogram::EncodeToProto)."""
    summary_pb2 = protos().summary_pb2
    flat = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(flat)):
        raise ValueError("Nan in summary histogram: the values hold NaN or Inf")
    proto = summary_pb2.HistogramProto()
    if flat.size == 0:
        proto.min, proto.max = np.finfo(np.float64).max, -np.finfo(np.float64).max
        counts = np.zeros(len(BUCKET_LIMITS))
    else:
        proto.min, proto.max = float(flat.min()), float(flat.max())
        index = np.searchsorted(BUCKET_LIMITS, flat, side="right")
        counts = np.bincount(np.minimum(index, len(BUCKET_LIMITS) - 1),
                             minlength=len(BUCKET_LIMITS)).astype(np.float64)
    proto.num = float(flat.size)
    proto.sum = float(flat.sum())
    proto.sum_squares = float(np.dot(flat, flat))
    limits, buckets = [], []
    i, n = 0, len(counts)
    while i < n:
        end, count = BUCKET_LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = BUCKET_LIMITS[i], counts[i]
                i += 1
        limits.append(float(end))
        buckets.append(float(count))
    proto.bucket_limit.extend(limits)
    proto.bucket.extend(buckets)
    return proto


def image_to_uint8(image):
    """One [h, w, c] image as uint8 the way TF1's ImageSummary scales floats: all values >= 0 are
    scaled so the largest is 255, otherwise the largest magnitude maps to 127 around 128;
    non-finite pixels become red."""
    if image.dtype == np.uint8:
        return image
    image = image.astype(np.float32)
    finite = np.isfinite(image)
    good = image[finite]
    low = float(good.min()) if good.size else 0.0
    high = float(good.max()) if good.size else 0.0
    relu = low >= 0
    bound = high if relu else max(abs(low), abs(high))
    scale = ((255.0 if relu else 127.0) / bound) if bound > 0 else 0.0
    offset = 0.0 if relu else 128.0
    with np.errstate(invalid="ignore"):
        out = np.where(finite, image * scale + offset, 0.0).astype(np.uint8)
    bad = ~finite.all(axis=-1)
    if bad.any():
        red = np.zeros(image.shape[-1], np.uint8)
        red[0] = 255
        out[bad] = red
    return out


def png_bytes(image):
    """PNG file bytes of one uint8 [h, w, c] image (c = 1 grey, 3 RGB, 4 RGBA), no filtering."""
    height, width, channels = image.shape
    color_type = {1: 0, 3: 2, 4: 6}[channels]
    rows = np.ascontiguousarray(image).reshape(height, width * channels)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
            + chunk(b"IEND", b""))


def wav_bytes(clip, sample_rate):
    """16-bit PCM WAV bytes of one [frames, channels] float clip with values in [-1, 1]."""
    pcm = (np.clip(clip, -1.0, 1.0) * 32767.0).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(clip.shape[1])
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def text_tensor_proto(array):
    """A string `TensorProto` of a numpy array of bytes/str (the text plugin's payload)."""
    proto = protos()
    tensor = proto.tensor_pb2.TensorProto(dtype=proto.types_pb2.DT_STRING)
    for dim in array.shape:
        tensor.tensor_shape.dim.add(size=dim)
    tensor.string_val.extend(x if isinstance(x, bytes) else str(x).encode("utf-8")
                             for x in array.ravel())
    return tensor
