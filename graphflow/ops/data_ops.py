"""Iterator ops: how a `tf.data` input pipeline enters a graph.

Two op types, as in TF1:
  MakeIterator     (no outputs) starts (or restarts) the session's iterator `iterator` over the
                   dataset `dataset`; its inputs are the tensors the dataset captured (a fed
                   placeholder in `from_tensor_slices(x_ph)`, a `batch_size` tensor ...), whose
                   values the pipeline reads when it starts.
  IteratorGetNext  outputs the next element of the session's iterator `iterator` (its components
                   flattened); past the end its kernel raises `tf.errors.OutOfRangeError`. With a
                   `one_shot` dataset it starts that iterator itself on first use.

A dataset is a Python pipeline (`graphflow.tf1.data`), so the ops name it by a token: the
`DATASETS` registry maps tokens to the objects that start iterators. The graph that made the
iterator holds the dataset alive (see `keep_alive`); the registry itself holds weak references.
Tokens are random (uuid4), so a graph file loaded in another process can never run somebody else's
pipeline: there the kernels report that the dataset is not available (pipelines hold Python
functions and generators, which never travel in graph files).
"""

import uuid
import weakref

from graphflow.framework import dtypes
from graphflow.framework.tensor_shape import as_shape
from graphflow.ops import no_onnx
from graphflow.ops.registry import define, no_gradient

DATASETS = weakref.WeakValueDictionary()
_KEEP_ALIVE_COLLECTION = "graphflow_datasets"


def register_dataset(source, graph):
    """A new token for `source` (an object with `start(capture_values) -> Python iterator`), kept
    alive as long as `graph` (the graph whose ops name it) lives."""
    token = uuid.uuid4().hex
    DATASETS[token] = source
    keep_alive(source, graph)
    return token


def keep_alive(source, graph):
    graph.get_collection_ref(_KEEP_ALIVE_COLLECTION).append(source)


def forget_dataset(token, graph):
    """Stop keeping the source of `token` alive for `graph` (an eager iterator that finished)."""
    source = DATASETS.pop(token, None)
    kept = graph.get_collection_ref(_KEEP_ALIVE_COLLECTION)
    for i, item in enumerate(kept):
        if item is source:
            del kept[i]
            break


def lookup_dataset(token, op_name):
    source = DATASETS.get(token)
    if source is None:
        raise LookupError(f"'{op_name}' names dataset {token}, which this process does not hold: "
                          "a tf.data pipeline (Python code, generators) is not part of a saved graph "
                          "file; build the pipeline again, or feed the model's inputs")
    return source


_HANDLE_SEPARATOR = "\n"


def iterator_handle(iterator_name, one_shot_token=""):
    """The value of `Iterator.string_handle()`: the iterator's name (and a one-shot iterator's
    dataset token, so that reading through the handle can start it)."""
    return f"{iterator_name}{_HANDLE_SEPARATOR}{one_shot_token}".encode()


def parse_iterator_handle(handle, op_name):
    """(iterator name, one-shot token) from a handle value; a clear error for anything else."""
    text = handle.decode() if isinstance(handle, bytes) else str(handle)
    name, sep, token = text.partition(_HANDLE_SEPARATOR)
    if not sep or not name:
        raise ValueError(f"'{op_name}' was fed {handle!r}, which is not an iterator's "
                         "string_handle() value")
    return name, token


def _make_iterator_infer(inputs, attrs):
    if not attrs.get("iterator") or not attrs.get("dataset"):
        raise ValueError("MakeIterator needs the attrs 'iterator' and 'dataset'")
    return []


def _get_next_infer(inputs, attrs):
    if inputs and (len(inputs) != 1 or inputs[0].dtype != dtypes.string):
        raise TypeError("IteratorGetNext takes no input, or one scalar string handle")
    types, shapes = attrs["output_types"], attrs["output_shapes"]
    if len(types) != len(shapes) or not types:
        raise ValueError(f"output_types {types} and output_shapes {shapes} must be non-empty lists "
                         "of the same length")
    return [(dtypes.as_dtype(t), as_shape(s)) for t, s in zip(types, shapes)]


# Stateful: they move an iterator, so they are never folded, merged or pruned when fetched.
# returns_state: an element may be a view of a user array (from_tensor_slices), so it is copied
# before it reaches the user.
_UNSAVEABLE = ("it reads a tf.data pipeline (Python code and data of the program that built "
               "it), which a graph file cannot carry. Save the model with an input placeholder "
               "(e.g. x = tf.placeholder_with_default(next_images, shape) and inputs={'x': x})")
define("MakeIterator", _make_iterator_infer, stateful=True, attrs="iterator:string dataset:string",
       unsaveable=_UNSAVEABLE,
       onnx=no_onnx.none("starts a tf.data pipeline (host-side Python iterator state)"))
define("IteratorGetNext", _get_next_infer, stateful=True, returns_state=True,
       attrs="iterator:string output_types:list(dtype) output_shapes:list(shape) one_shot:string",
       unsaveable=_UNSAVEABLE, onnx=no_onnx.DATA)
no_gradient("IteratorGetNext")

__all__ = []
