"""numpy kernels for the summary ops: each returns a scalar object array holding the serialized
TensorBoard `Summary` (see `summary_encoding` for the buckets, image scaling and file encodings)."""

import numpy as np

from graphflow.fileformat.summary_encoding import (
    histogram_proto,
    image_to_uint8,
    png_bytes,
    protos,
    text_tensor_proto,
    wav_bytes,
)
from graphflow.kernels.cpu import cpu_kernel


def _serialized(summary):
    return np.array(summary.SerializeToString(), dtype=object)


def _summary(**value_fields):
    pb = protos().summary_pb2
    return pb.Summary(value=[pb.Summary.Value(**value_fields)])


@cpu_kernel("ScalarSummary")
def _scalar(node):
    tag = node.attrs["tag"]
    return lambda x: _serialized(_summary(tag=tag, simple_value=float(np.asarray(x).reshape(()))))


@cpu_kernel("HistogramSummary")
def _histogram(node):
    tag = node.attrs["tag"]
    return lambda x: _serialized(_summary(tag=tag, histo=histogram_proto(x)))


def _item_tags(tag, kind, count, max_outputs):
    """TF1's tags: 'name/image' for a single output, else 'name/image/0', 'name/image/1', ..."""
    if max_outputs == 1:
        return [f"{tag}/{kind}"][:count]
    return [f"{tag}/{kind}/{i}" for i in range(count)]


@cpu_kernel("ImageSummary")
def _image(node):
    tag, max_outputs = node.attrs["tag"], node.attrs["max_outputs"]

    def run(images):
        if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
            raise ValueError(f"images must be [batch, height, width, 1|3|4], got {images.shape}")
        pb = protos().summary_pb2
        summary = pb.Summary()
        count = min(images.shape[0], max_outputs)
        for item_tag, image in zip(_item_tags(tag, "image", count, max_outputs), images[:count]):
            pixels = image_to_uint8(image)
            encoded = pb.Summary.Image(height=pixels.shape[0], width=pixels.shape[1],
                                       colorspace=pixels.shape[2],
                                       encoded_image_string=png_bytes(pixels))
            summary.value.add(tag=item_tag, image=encoded)
        return _serialized(summary)
    return run


@cpu_kernel("AudioSummary")
def _audio(node):
    tag, max_outputs = node.attrs["tag"], node.attrs["max_outputs"]
    rate = float(node.attrs["sample_rate"])

    def run(audio):
        clips = audio if audio.ndim == 3 else audio[:, :, None]
        pb = protos().summary_pb2
        summary = pb.Summary()
        count = min(clips.shape[0], max_outputs)
        for item_tag, clip in zip(_item_tags(tag, "audio", count, max_outputs), clips[:count]):
            encoded = pb.Summary.Audio(sample_rate=rate, num_channels=clip.shape[1],
                                       length_frames=clip.shape[0],
                                       encoded_audio_string=wav_bytes(clip, rate),
                                       content_type="audio/wav")
            summary.value.add(tag=item_tag, audio=encoded)
        return _serialized(summary)
    return run


@cpu_kernel("TextSummary")
def _text(node):
    tag = node.attrs["tag"]

    def run(text):
        pb = protos().summary_pb2
        metadata = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="text"))
        return _serialized(_summary(tag=tag, metadata=metadata,
                                    tensor=text_tensor_proto(np.asarray(text, dtype=object))))
    return run


@cpu_kernel("MergeSummary")
def _merge(node):
    def run(*serialized):
        pb = protos().summary_pb2
        merged = pb.Summary()
        for item in serialized:
            merged.MergeFromString(bytes(np.asarray(item, dtype=object).reshape(())[()]))
        tags = [value.tag for value in merged.value]
        duplicates = sorted({t for t in tags if tags.count(t) > 1})
        if duplicates:
            raise ValueError(f"Duplicate tag(s) {duplicates} found in summary inputs")
        return _serialized(merged)
    return run
