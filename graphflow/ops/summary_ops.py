"""Summary ops: each one turns tensors into a serialized TensorBoard `Summary` protocol buffer, a
scalar `tf.string` tensor, exactly as TF1's summary ops do. The TF1 constructors (`tf.summary.*`)
live in `graphflow.tf1.summary`; the kernels (which use the `tensorboard` package's protos) in
`graphflow.kernels.cpu.reference.summary_kernels`.

Tags are attrs here (TF1 feeds them as string constants): they are known when the graph is built.
"""

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops import no_onnx
from graphflow.ops.registry import NUMERIC, define, no_gradient, require_dtype


def _summary_output():
    return [(dtypes.string, TensorShape([]))]


def _scalar_infer(inputs, attrs):
    (value,) = inputs
    require_dtype(value, NUMERIC + (dtypes.bool_,), "tf.summary.scalar's tensor")
    if value.shape.dims is not None and value.shape.num_elements() not in (None, 1):
        raise ValueError(f"tf.summary.scalar needs a single value, got shape {value.shape}")
    return _summary_output()


def _histogram_infer(inputs, attrs):
    require_dtype(inputs[0], NUMERIC + (dtypes.bool_,), "tf.summary.histogram's values")
    return _summary_output()


def _image_infer(inputs, attrs):
    (images,) = inputs
    require_dtype(images, (dtypes.uint8, dtypes.float16, dtypes.float32, dtypes.float64),
                  "tf.summary.image's tensor")
    dims = images.shape.dims
    if dims is not None and (len(dims) != 4 or dims[3] not in (None, 1, 3, 4)):
        raise ValueError("tf.summary.image needs a 4-D tensor [batch, height, width, channels] "
                         f"with 1, 3 or 4 channels, got shape {images.shape}")
    if attrs["max_outputs"] < 1:
        raise ValueError(f"max_outputs must be at least 1, got {attrs['max_outputs']}")
    return _summary_output()


def _audio_infer(inputs, attrs):
    (audio,) = inputs
    require_dtype(audio, (dtypes.float32, dtypes.float64), "tf.summary.audio's tensor")
    dims = audio.shape.dims
    if dims is not None and len(dims) not in (2, 3):
        raise ValueError("tf.summary.audio needs a [batch, frames] or [batch, frames, channels] "
                         f"tensor, got shape {audio.shape}")
    if attrs["sample_rate"] <= 0:
        raise ValueError(f"sample_rate must be positive, got {attrs['sample_rate']}")
    return _summary_output()


def _text_infer(inputs, attrs):
    require_dtype(inputs[0], (dtypes.string,), "tf.summary.text's tensor")
    return _summary_output()


def _merge_infer(inputs, attrs):
    if not inputs:
        raise ValueError("tf.summary.merge needs at least one summary tensor")
    for t in inputs:
        require_dtype(t, (dtypes.string,), "tf.summary.merge's inputs")
        if t.shape.dims is not None and t.shape.dims != [] and t.shape.dims != ():
            raise ValueError(f"tf.summary.merge takes scalar summaries, got {t.name} of shape "
                             f"{t.shape}")
    return _summary_output()


define("ScalarSummary", _scalar_infer, attrs="tag:string", onnx=no_onnx.SUMMARY)
define("HistogramSummary", _histogram_infer, attrs="tag:string", onnx=no_onnx.SUMMARY)
define("ImageSummary", _image_infer, attrs="tag:string max_outputs:int", onnx=no_onnx.SUMMARY)
define("AudioSummary", _audio_infer, attrs="tag:string sample_rate:float max_outputs:int",
       onnx=no_onnx.SUMMARY)
define("TextSummary", _text_infer, attrs="tag:string", onnx=no_onnx.SUMMARY)
define("MergeSummary", _merge_infer, onnx=no_onnx.SUMMARY)
no_gradient("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummary", "TextSummary",
            "MergeSummary")
