"""`tf.data`: TF1 input pipelines (`Dataset`, `Iterator`) running in the session.

Modules: `dataset` (the `Dataset` API and the run context), `sources` (from_tensor_slices,
from_tensors, from_generator, range), `transforms` (map, filter, shuffle, repeat, take, skip, zip,
concatenate, cache, prefetch), `batching` (batch, padded_batch), `nested` (flat_map, interleave),
`readers` (TFRecordDataset, TextLineDataset), `function` (user functions traced into graph
functions), `threads`
(parallel map, prefetch producer), `iterator_ops` (iterators and their ops), `queue_runners`
(TF1's QueueRunner, start_queue_runners, Coordinator), `input_producers` (TF1's queue-based
producers and batchers: string_input_producer, shuffle_batch, ...), `nest` (element
structures), `experimental` (shuffle_and_repeat, map_and_batch, unbatch).
"""

from graphflow.tf1.data import experimental as _experimental_module  # noqa: F401
from graphflow.tf1.data.dataset import Dataset
from graphflow.tf1.data.iterator_ops import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from graphflow.tf1.data.readers import TextLineDataset, TFRecordDataset
from graphflow.tf1.namespace import PublicNamespace

__all__ = ["Dataset", "TFRecordDataset", "TextLineDataset", "Iterator", "make_one_shot_iterator",
           "make_initializable_iterator",
           "get_output_types", "get_output_shapes", "get_output_classes", "experimental"]

# tf.data.experimental shows its API only
experimental = PublicNamespace("tf.data.experimental", ["graphflow.tf1.data.experimental"])
