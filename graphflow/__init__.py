"""graphflow: a static-graph, deferred-execution deep-learning framework with TF1 names.

    import graphflow as tf
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(x * 2.0)
    with tf.Session() as sess:
        print(sess.run(y, feed_dict={x: [[1, 2, 3]]}))

This module is the public face: it re-exports each op family's `__all__` under TF1 names.
Subsystems load on first use: the namespaces (tf.keras, tf.estimator, tf.data, ...) import their
modules on the first lookup, and the names in `_LAZY_NAMES` (tf.Session, tf.save, ...) through
this module's `__getattr__` (docs/architecture.md).
"""

import importlib as _importlib

from graphflow import compat
from graphflow.compat import (disable_eager_execution, disable_resource_variables,
                              disable_v2_behavior, disable_v2_tensorshape, enable_eager_execution,
                              enable_v2_behavior, executing_eagerly)
from graphflow.framework.dtypes import (DType, as_dtype, double, float16, float32, float64, half, int8,
                                        int16, int32, int64, uint8)
from graphflow.framework.dtypes import bool_ as bool
from graphflow.framework.graph import (Graph, GraphKeys, Operation, Tensor, add_to_collection,
                                       control_dependencies, device, get_collection, get_collection_ref,
                                       get_default_graph, name_scope, reset_default_graph,
                                       set_random_seed)
from graphflow.framework.tensor_shape import TensorShape
from graphflow.ops.array_ops import *
from graphflow.ops.core_ops import *
from graphflow.ops.gradient_ops import stop_gradient
from graphflow.ops.math_ops import *
from graphflow.ops.cumulative_ops import *
from graphflow.ops.linalg_ops import *
from graphflow.ops.linalg_decomp_ops import *
from graphflow.ops.linalg_solve_ops import *
from graphflow.ops.special_math_ops import *
from graphflow.ops.math_composites import *
from graphflow.ops.segment_ops import *
from graphflow.ops.random_ops import *
from graphflow.ops.partition_ops import *
from graphflow.ops.reorder_ops import *
from graphflow.ops.sort_ops import *
from graphflow.ops.state_ops import *
from graphflow.ops.queue_ops import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue
from graphflow.ops.reader_ops import (FixedLengthRecordReader, ReaderBase, TextLineReader,
                                      TFRecordReader, WholeFileReader)
from graphflow.framework.config import ConfigProto, GPUOptions
from graphflow.ops.gradients import UnconnectedGradients, gradients, hessians
from graphflow.tf1.custom_gradients import RegisterGradient, custom_gradient
from graphflow.tf1.initialization import (AggregationMethod, report_uninitialized_variables,
                                          tables_initializer)
from graphflow.framework.default_session import get_default_session
from graphflow.tf1.clip_ops import clip_by_global_norm, clip_by_norm, global_norm
from graphflow.tf1.init_ops import (constant_initializer, glorot_normal_initializer,
                                    glorot_uniform_initializer, ones_initializer,
                                    orthogonal_initializer,
                                    random_normal_initializer, random_uniform_initializer,
                                    truncated_normal_initializer, variance_scaling_initializer,
                                    zeros_initializer)
from graphflow.tf1.variable_scope import (AUTO_REUSE, VariableScope, get_variable, get_variable_scope,
                                          no_regularizer, variable_scope)
from graphflow.tf1.partitioned_variables import (fixed_size_partitioner,
                                                 min_max_variable_partitioner,
                                                 variable_axis_size_partitioner)
from graphflow.tf1.template import make_template


__version__ = "0.1.0"

# ---- layers and ops: batch normalization, index ops, einsum, image ops, inference files
from graphflow.ops.index_ops import boolean_mask, gather_nd, scatter_nd, sequence_mask
from graphflow.ops.einsum_ops import einsum
from graphflow.ops.scatter_ops import scatter_add, scatter_sub, scatter_update

# --- TF1 surface: dtype names, strings, devices, contrib, logging, app/flags, file io -------------
from graphflow.framework.dtypes import (complex64, complex128, string, uint16, uint32, uint64)
from graphflow.ops.sparse_tensor import SparseTensor, SparseTensorValue
from graphflow.ops.indexed_slices import (IndexedSlices, IndexedSlicesValue,
                                          convert_to_tensor_or_indexed_slices)
from graphflow.ops.string_ops import (as_string, string_join, string_split, string_to_hash_bucket,
                                      string_to_hash_bucket_fast, string_to_hash_bucket_strong,
                                      string_to_number)
from graphflow.framework.device_spec import DeviceSpec
from graphflow.framework.graph import NodeDef
from graphflow.tf1.legacy_ops import arg_max, arg_min
from graphflow.ops import io_ops as _io_ops
from graphflow.ops.io_ops import read_file, write_file
from graphflow.ops.sparse_ops import sparse_tensor_to_dense, sparse_to_dense
from graphflow.ops.sparse_index import (sparse_merge, sparse_placeholder, sparse_reorder,
                                        sparse_retain)
from graphflow.ops.sparse_math import *
from graphflow.ops.sparse_reshape import (sparse_concat, sparse_fill_empty_rows, sparse_reshape,
                                          sparse_slice, sparse_split, sparse_to_indicator,
                                          sparse_transpose)
from graphflow.ops.sparse_segment import *
from graphflow.ops.edit_distance_ops import edit_distance
from graphflow.ops import parsing_ops as _parsing_ops
from graphflow.ops.parsing_ops import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature,
                                       decode_raw, parse_example, parse_single_example)
from graphflow.ops.csv_ops import decode_csv
from graphflow.tf1.namespace import PublicNamespace as _Namespace
from graphflow.tf1.namespace import NotImplementedInGraphflow as _NotImplementedInGraphflow
from graphflow.tf1.namespace import lazy as _lazy
from graphflow.tf1.namespace import not_implemented as _not_implemented
from graphflow.tf1.namespace import register_importable as _register_importable
from graphflow.framework.graph import install_graph_def_writer as _install_graph_def_writer

_install_graph_def_writer(_lazy("graphflow.interop.tensorflow", "export_graph_def"))

_IMAGE_DECODERS = ("decode_jpeg", "decode_png", "decode_bmp", "decode_gif", "decode_image")

# Each public module exports only its API: the names its implementation lists in `__all__`.
# A namespace imports its modules on first use (tf1/namespace.py): `import graphflow` stays fast and
# loads tf.keras, tf.estimator, tf.data, tf.summary, ... only when a program touches them.
layers = _Namespace("tf.layers", ["graphflow.tf1.layers"])
losses = _Namespace("tf.losses", ["graphflow.tf1.losses"])
nn = _Namespace("tf.nn", ["graphflow.tf1.nn"])
random = _Namespace("tf.random", ["graphflow.tf1.random"])
_EXAMPLE_MESSAGES = {n: "graphflow.framework.example_proto" for n in (
    "Example", "SequenceExample", "Features", "Feature", "FeatureList", "FeatureLists",
    "BytesList", "FloatList", "Int64List")}  # protobuf messages, built on first use
_WRITE_GRAPH = _lazy("graphflow.interop.tensorflow.graph_io", "write_graph")
train = _Namespace("tf.train", ["graphflow.tf1.train", "graphflow.tf1.summary_hooks",
                                "graphflow.tf1.summary.reading"], optional=_EXAMPLE_MESSAGES,
                   members={"write_graph": _WRITE_GRAPH, "import_meta_graph": _lazy(
                       "graphflow.interop.tensorflow.meta_graph", "import_meta_graph"),
                       "Checkpoint": _lazy("graphflow.tf1.contrib_eager", "Checkpoint")})
queue = _Namespace("tf.queue", members={"QueueBase": QueueBase, "FIFOQueue": FIFOQueue,
                                        "PaddingFIFOQueue": PaddingFIFOQueue,
                                        "RandomShuffleQueue": RandomShuffleQueue})
strings = _Namespace("tf.strings", ["graphflow.tf1.strings"])
sparse = _Namespace("tf.sparse", ["graphflow.tf1.sparse"])
config = _Namespace("tf.config", ["graphflow.framework.config"])
errors = _Namespace("tf.errors", ["graphflow.framework.errors"])
viz = _Namespace("tf.viz", ["graphflow.tools.viz"])
logging = _Namespace("tf.logging", ["graphflow.tf1.tf_logging"])
flags = _Namespace("tf.flags", ["graphflow.tf1.flags"])
app = _Namespace("tf.app", ["graphflow.tf1.app"], members={"flags": flags})
gfile = _Namespace("tf.gfile", ["graphflow.tf1.gfile:V1_NAMES"])
image = _Namespace("tf.image", ["graphflow.tf1.image"],
                   members={n: getattr(_io_ops, n) for n in _IMAGE_DECODERS})
math = _Namespace("tf.math", ["graphflow.tf1.math"])
linalg = _Namespace("tf.linalg", ["graphflow.tf1.linalg"])
graph_util = _Namespace("tf.graph_util", ["graphflow.interop.tensorflow.graph_util"])
io = _Namespace("tf.io", ["graphflow.fileformat.tfrecord"], members={
    "gfile": _Namespace("tf.io.gfile", ["graphflow.tf1.gfile:V2_NAMES"]),
    **{n: getattr(_io_ops, n) for n in ("read_file", "write_file", *_IMAGE_DECODERS)},
    **{n: getattr(_parsing_ops, n) for n in _parsing_ops.__all__},
    "decode_csv": decode_csv, "write_graph": _WRITE_GRAPH})
python_io = _Namespace("tf.python_io", ["graphflow.fileformat.tfrecord"])

_RNN_CELLS = {"RNNCell": "rnn_cell", "BasicRNNCell": "rnn_cell", "BasicLSTMCell": "rnn_cell",
              "LSTMCell": "rnn_cell", "GRUCell": "rnn_cell", "LSTMStateTuple": "rnn_cell",
              "MultiRNNCell": "rnn_cell_wrappers", "DropoutWrapper": "rnn_cell_wrappers",
              "static_rnn": "rnn", "static_bidirectional_rnn": "rnn",
              "ResidualWrapper": "rnn_cell_wrappers", "DeviceWrapper": "rnn_cell_wrappers",
              "stack_bidirectional_rnn": "rnn_stack", "stack_bidirectional_dynamic_rnn": "rnn_stack",
              **dict.fromkeys(("LSTMBlockCell", "LSTMBlockFusedCell", "GRUBlockCell",
                               "GRUBlockCellV2", "LayerNormBasicLSTMCell",
                               "IntersectionRNNCell"), "rnn_cell_contrib"),
              **dict.fromkeys(("ConvLSTMCell", "Conv1DLSTMCell", "Conv2DLSTMCell",
                               "Conv3DLSTMCell"), "rnn_cell_conv"),
              **dict.fromkeys(("HighwayWrapper", "AttentionCellWrapper", "EmbeddingWrapper",
                               "InputProjectionWrapper", "OutputProjectionWrapper"),
                              "rnn_cell_contrib_wrappers")}
_SEQ2SEQ = "graphflow.tf1.seq2seq"
_SEQ2SEQ_MODULES = ("helpers", "decoder", "attention", "beam_search")  # graphflow.tf1.seq2seq_*
distributions = _Namespace("tf.distributions", ["graphflow.tf1.distributions"])
# contrib's losses take predictions or logits first (slim.losses.softmax_cross_entropy(logits, labels))
_CONTRIB_LOSSES = _Namespace("tf.contrib.losses", ["graphflow.tf1.contrib_losses"])
_CONTRIB_LAYERS = ["graphflow.tf1.contrib_layers", "graphflow.tf1.contrib_layers_conv",
                   "graphflow.tf1.contrib_layers_norm", "graphflow.tf1.contrib_optimizers",
                   "graphflow.tf1.contrib_summaries"]
contrib = _Namespace("tf.contrib", members={
    "layers": _Namespace("tf.contrib.layers", _CONTRIB_LAYERS),
    "framework": _Namespace("tf.contrib.framework", ["graphflow.tf1.contrib_framework"]),
    "rnn": _Namespace("tf.contrib.rnn", optional={
        n: f"graphflow.tf1.{m}" for n, m in _RNN_CELLS.items()}),
    "distributions": _Namespace("tf.contrib.distributions", ["graphflow.tf1.distributions"]),
    "seq2seq": _Namespace("tf.contrib.seq2seq", [f"{_SEQ2SEQ}_{m}" for m in _SEQ2SEQ_MODULES],
                          members={"sequence_loss": _lazy(_SEQ2SEQ, "sequence_loss")}),
    "legacy_seq2seq": _Namespace("tf.contrib.legacy_seq2seq", members={
        "sequence_loss_by_example": _lazy(_SEQ2SEQ, "sequence_loss_by_example"),
        "sequence_loss": _lazy(_SEQ2SEQ, "legacy_sequence_loss")}),
    "losses": _CONTRIB_LOSSES,
    "eager": _Namespace("tf.contrib.eager", ["graphflow.tf1.contrib_eager"]),
    "factorization": _Namespace("tf.contrib.factorization", ["graphflow.tf1.factorization"]),
    "metrics": _Namespace("tf.contrib.metrics", ["graphflow.tf1.contrib_metrics"]),
    "slim": _Namespace("tf.contrib.slim", ["graphflow.tf1.slim"], members={
        "losses": _CONTRIB_LOSSES,
        "learning": _Namespace("tf.contrib.slim.learning", ["graphflow.tf1.slim_learning"]),
        "initializers": _Namespace("tf.contrib.slim.initializers",
                                   ["graphflow.tf1.contrib_layers:SLIM_INITIALIZERS"])})},
    any_hint="graphflow provides tf.contrib.layers, rnn, framework, distributions, seq2seq "
             "(decoders, attention, beam search, sequence_loss), legacy_seq2seq (its sequence "
             "losses), losses, eager, factorization (KMeans), metrics and slim only")
for _name in ("layers", "framework", "rnn", "distributions", "seq2seq", "legacy_seq2seq", "slim",
              "losses", "eager", "factorization", "metrics"):
    # `from tensorflow.contrib import rnn` works too
    _register_importable(getattr(contrib, _name), f"graphflow.contrib.{_name}")
_register_importable(contrib, "graphflow.contrib")


test = _Namespace("tf.test", ["graphflow.tf1.testing"])
from graphflow.framework import dtypes as _dtypes_module
from graphflow.ops import math_ops as _math_ops

dtypes = _Namespace("tf.dtypes", members={
    **{d.name if d.name != "bool" else "bool": d for d in _dtypes_module.ALL_DTYPES},
    "double": _dtypes_module.float64, "half": _dtypes_module.float16,
    "DType": _dtypes_module.DType, "as_dtype": _dtypes_module.as_dtype,
    "cast": _math_ops.cast, "saturate_cast": _math_ops.saturate_cast})

# --- SavedModel export and load (TensorFlow's directories; older graphflow ones still load) ---
_SAVED_MODEL = "graphflow.tf1.saved_model"
_SAVED_MODEL_LOADER = "graphflow.interop.tensorflow.saved_model"  # TensorFlow's directories too

saved_model = _Namespace("tf.saved_model", members={
    "simple_save": _lazy(_SAVED_MODEL, "simple_save"),
    "tag_constants": _lazy(_SAVED_MODEL, "tag_constants"),
    "signature_constants": _lazy(_SAVED_MODEL, "signature_constants"),
    "SERVING": _lazy(_SAVED_MODEL, "tag_constants.SERVING"),
    "TRAINING": _lazy(_SAVED_MODEL, "tag_constants.TRAINING"),
    "DEFAULT_SERVING_SIGNATURE_DEF_KEY":
        _lazy(_SAVED_MODEL, "signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY"),
    "PREDICT_METHOD_NAME": _lazy(_SAVED_MODEL, "signature_constants.PREDICT_METHOD_NAME"),
    "build_tensor_info": _lazy(_SAVED_MODEL, "build_tensor_info"),
    "predict_signature_def": _lazy(_SAVED_MODEL, "predict_signature_def"),
    "build_signature_def": _lazy(_SAVED_MODEL, "build_signature_def"),
    "Builder": _lazy(_SAVED_MODEL, "SavedModelBuilder"),
    "builder": _Namespace("tf.saved_model.builder", members={
        "SavedModelBuilder": _lazy(_SAVED_MODEL, "SavedModelBuilder")}),
    "loader": _Namespace("tf.saved_model.loader", members={
        "load": _lazy(_SAVED_MODEL_LOADER, "load"),
        "maybe_saved_model_directory": _lazy(_SAVED_MODEL_LOADER,
                                             "maybe_saved_model_directory")}),
    "load": _lazy(_SAVED_MODEL_LOADER, "load"),
    "maybe_saved_model_directory": _lazy(_SAVED_MODEL_LOADER, "maybe_saved_model_directory"),
    "signature_def_utils": _Namespace("tf.saved_model.signature_def_utils", members={
        "predict_signature_def": _lazy(_SAVED_MODEL, "predict_signature_def"),
        "build_signature_def": _lazy(_SAVED_MODEL, "build_signature_def")}),
    "utils": _Namespace("tf.saved_model.utils", members={
        "build_tensor_info": _lazy(_SAVED_MODEL, "build_tensor_info")})})


# --- Input pipelines: tf.data (graphflow/tf1/data); queue-based tf.train names are in tf1/train.py
data = _Namespace("tf.data", ["graphflow.tf1.data"])

# --- estimator, metrics, monitored sessions, sampled losses, layer classes (tf.estimator work) ---
metrics = _Namespace("tf.metrics", ["graphflow.tf1.metrics"])
feature_column = _Namespace("tf.feature_column", ["graphflow.tf1.feature_column"])
estimator = _Namespace("tf.estimator", ["graphflow.tf1.estimator"], members={
    "inputs": _Namespace("tf.estimator.inputs", ["graphflow.tf1.estimator.inputs"])})


# --- tf.keras in graph mode (graphflow/tf1/keras/): layers, models, compile/fit, backend session ---
_KERAS = "graphflow.tf1.keras."
_keras_layers = _Namespace("tf.keras.layers", [_KERAS + m for m in (
    "base_layer", "layers_core", "layers_conv", "layers_recurrent", "layers_recurrent_more",
    "layers_conv_more", "layers_merge", "layers_activation", "layers_reshaping", "layers_noise",
    "layers_conv3d")])
_keras_models = _Namespace("tf.keras.models", members={
    "Sequential": _lazy(_KERAS + "sequential", "Sequential"),
    "Model": _lazy(_KERAS + "training", "Model"),
    "load_model": _lazy(_KERAS + "loading", "load_model"),
    "save_model": _lazy(_KERAS + "saving", "save_model")})
keras = _Namespace("tf.keras", members={
    "layers": _keras_layers,
    "models": _keras_models,
    "Sequential": _lazy(_KERAS + "sequential", "Sequential"),
    "Model": _lazy(_KERAS + "training", "Model"),
    "Input": _lazy(_KERAS + "base_layer", "Input"),  # what tf.keras.layers.Input resolves to
    "backend": _Namespace("tf.keras.backend", [_KERAS + m for m in (
        "backend", "backend_math", "backend_nn", "backend_graph")]),
    "optimizers": _Namespace("tf.keras.optimizers", [_KERAS + "optimizers",
                                                      _KERAS + "optimizers_more"]),
    "losses": _Namespace("tf.keras.losses", [_KERAS + "losses", _KERAS + "losses_classes"]),
    "metrics": _Namespace("tf.keras.metrics", [_KERAS + "losses:METRICS_ALL",
                                                _KERAS + "metrics_classes"]),
    "activations": _Namespace("tf.keras.activations", [_KERAS + "activations"]),
    "initializers": _Namespace("tf.keras.initializers", [_KERAS + "initializers"]),
    "regularizers": _Namespace("tf.keras.regularizers",
                               [_KERAS + "initializers:REGULARIZERS_ALL"]),
    "utils": _Namespace("tf.keras.utils", [_KERAS + "utils", _KERAS + "data_adapter",
                                           _KERAS + "progbar"]),
    "callbacks": _Namespace("tf.keras.callbacks", [_KERAS + "callbacks",
                                                 _KERAS + "callbacks_tensorboard"])},
    hints={"datasets": "tf.keras.datasets downloads its data and graphflow works offline: load "
                       "the arrays with numpy instead"})
for _name in ("layers", "models", "backend", "optimizers", "losses", "metrics", "activations",
              "initializers", "regularizers", "utils", "callbacks"):
    _register_importable(getattr(keras, _name), f"graphflow.keras.{_name}")
_register_importable(keras, "graphflow.keras")

# --- TensorBoard, debugging and profiling: tf.summary, tf.Print/print/debugging, tracing ---
summary = _Namespace("tf.summary", ["graphflow.tf1.summary"])
from graphflow.ops.logging_ops import Assert, Print, add_check_numerics_ops, check_numerics
from graphflow.ops.logging_ops import print_v2 as print
from graphflow.ops.script_ops import numpy_function, py_func, py_function
from graphflow.ops.repeat_ops import is_tensor, repeat
debugging = _Namespace("tf.debugging", ["graphflow.tf1.debugging"])
from graphflow.engine.tracing import RunMetadata, RunOptions
timeline = _Namespace("tf.timeline", ["graphflow.fileformat.timeline"])

# --- data-parallel training over MPI, also importable as `graphflow.horovod` (Horovod's names)
import sys as _sys

distribute = horovod = _Namespace("tf.distribute", ["graphflow.interop.distribute"])
_sys.modules[__name__ + ".horovod"] = horovod


# --- control flow: functional If/While ops, TensorArray (graphflow/ops/control_flow_ops.py) ---
from graphflow.framework.dtypes import variant
from graphflow.ops.control_flow_ops import case, cond, while_loop
from graphflow.ops.functional_ops import foldl, foldr, map_fn, scan
from graphflow.ops.tensor_array_ops import TensorArray

# --- tf.X names whose modules load on first use (each is then a plain attribute): the Session
# brings the plan compile, the optimizer passes and the kernel tables; save/load the file format.
# (recurrent networks: the cells are tf.nn.rnn_cell.*, the rnn functions tf.nn.*_rnn)
_LAZY_NAMES = {
    **dict.fromkeys(("Session", "InteractiveSession"), "graphflow.engine.session"),
    "optimize": "graphflow.optimizer_passes",
    "GradientTape": "graphflow.engine.tape",
    "function": "graphflow.engine.eager_function",
    **dict.fromkeys(("import_graph", "load", "save"), "graphflow.fileformat.serialization"),
    "random_crop": "graphflow.tf1.image_utils",
    "extract_image_patches": "graphflow.ops.patches_ops",
    "moving_average_variables": "graphflow.tf1.moving_averages",
    **dict.fromkeys(("assert_equal", "assert_greater", "assert_greater_equal", "assert_less",
                     "assert_less_equal", "assert_negative", "assert_non_negative",
                     "assert_non_positive", "assert_none_equal", "assert_positive", "assert_rank",
                     "assert_type"), "graphflow.tf1.debugging"),
    "reverse_sequence": "graphflow.tf1.rnn",
    # TensorFlow's GraphDef: the protobuf class and the reader (graphflow/interop/tensorflow/)
    **dict.fromkeys(("GraphDef", "import_graph_def"), "graphflow.interop.tensorflow"),
    "python": None,  # the package graphflow.python (`tensorflow.python...` import paths)
    # TensorBoard's protos as TF1 exported them at the top (tf.Summary(value=[tf.Summary.Value]))
    **dict.fromkeys(("Summary", "SummaryMetadata", "HistogramProto", "Event", "SessionLog"),
                    "graphflow.tf1.summary"),
    # graphflow's own packages, attributes here once imported (as when they loaded at import)
    **dict.fromkeys(("engine", "fileformat", "interop", "kernels", "optimizer_passes", "tools"))}

_TOP_LEVEL_HINTS = {}


def __getattr__(name):
    """A lazily loaded `tf.X` (`_LAZY_NAMES`), imported and kept on first use; any other `tf.X`:
    'graphflow does not implement tf.X (see docs/compat.md)'."""
    if name in _LAZY_NAMES:
        module = _LAZY_NAMES[name] or f"{__name__}.{name}"  # None: the package itself
        try:
            imported = _importlib.import_module(module)
        except ImportError as exc:  # an AttributeError, as for any absent name (hasattr is False)
            raise _NotImplementedInGraphflow(f"tf.{name} comes from {module}, which this graphflow "
                                             f"cannot import ({exc})") from exc
        value = imported if _LAZY_NAMES[name] is None else getattr(imported, name)
        globals()[name] = value
        return value
    if name.startswith("__"):
        raise AttributeError(name)
    raise _not_implemented(f"tf.{name}", _TOP_LEVEL_HINTS.get(name), __dir__)


def __dir__():
    return sorted(set(globals()) | set(_LAZY_NAMES))


# `tf.tuple` last: from here on the module's `tuple` is TF1's, not the builtin
from graphflow.ops.core_ops import tuple_ as tuple  # noqa: A004, E402

# `from graphflow import *` gives every public name, the lazily loaded ones too (loading them)
__all__ = sorted({n for n in globals() if not n.startswith("_")} | set(_LAZY_NAMES))
