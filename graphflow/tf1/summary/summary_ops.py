"""`tf.summary.scalar/histogram/image/audio/text/merge/merge_all`: graph ops whose value is a
serialized TensorBoard `Summary` (a scalar `tf.string`), added to `tf.GraphKeys.SUMMARIES`.

As in TF1, each summary opens a name scope named after it: the tag is the scoped name ('loss',
'layer1/weights', 'loss_1' for a second 'loss') and the op carries that exact name.
"""

import re

from graphflow.framework import dtypes
from graphflow.framework.graph import GraphKeys, get_default_graph
from graphflow.ops.core_ops import convert_to_tensor
from graphflow.ops.registry import make_tensor

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def clean_tag(name):
    """TF1's tag cleaning: characters other than letters, digits, '_', '-', '.', '/' become '_'
    and leading slashes go."""
    if not name:
        return name
    return _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")


def _summary(op_type, name, tensor, attrs, collections, family, dtype=None):
    tensor = convert_to_tensor(tensor, dtype=dtype)
    graph = tensor.graph
    name, family = clean_tag(name), clean_tag(family)
    with graph.name_scope(f"{family}/{name}" if family else name) as scope:
        # TF1 prefixes the family once more so that TensorBoard groups the tag under it
        tag = f"{family}/{scope[:-1]}" if family else scope[:-1]
        out = make_tensor(op_type, (tensor,), {"tag": tag, **attrs}, name=scope)
    _collect(graph, out, collections)
    return out


def _collect(graph, summary, collections):
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        graph.add_to_collection(key, summary)


def scalar(name, tensor, collections=None, family=None):
    """A summary of one number (Scalars tab). `tensor` must hold exactly one value."""
    return _summary("ScalarSummary", name, tensor, {}, collections, family)


def histogram(name, values, collections=None, family=None):
    """A histogram of all of `values` (Histograms and Distributions tabs), in TF1's buckets."""
    return _summary("HistogramSummary", name, values, {}, collections, family)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` images of a [batch, height, width, 1|3|4] tensor (Images tab). uint8
    values are used as they are; floats are scaled as TF1 does (see summary_encoding)."""
    return _summary("ImageSummary", name, tensor, {"max_outputs": int(max_outputs)}, collections,
                    family)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` clips of a [batch, frames(, channels)] float tensor in [-1, 1] (Audio
    tab), written as 16-bit WAV at `sample_rate` Hz (a Python number here)."""
    return _summary("AudioSummary", name, tensor,
                    {"sample_rate": float(sample_rate), "max_outputs": int(max_outputs)},
                    collections, family)


def text(name, tensor, collections=None):
    """A summary of a `tf.string` tensor (or Python strings) for the Text tab (Markdown)."""
    if not hasattr(tensor, "dtype"):
        from graphflow.ops.core_ops import constant
        tensor = constant(tensor, dtype=dtypes.string)
    return _summary("TextSummary", name, tensor, {}, collections, None, dtype=dtypes.string)


def merge(inputs, collections=None, name=None):
    """One summary holding the values of all `inputs` (duplicate tags are an error when run)."""
    inputs = [convert_to_tensor(t, dtype=dtypes.string) for t in inputs]
    graph = inputs[0].graph if inputs else get_default_graph()
    with graph.name_scope(name or "Merge"):
        out = make_tensor("MergeSummary", inputs, name="MergeSummary")
    _collect(graph, out, collections if collections is not None else [])
    return out


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """`merge` of every summary in collection `key` (whose name matches `scope`), or None if there
    are none (as in TF1)."""
    graph = get_default_graph()
    summaries = graph.get_collection(key, scope) if scope is not None else graph.get_collection(key)
    if not summaries:
        return None
    return merge(summaries, name=name)
