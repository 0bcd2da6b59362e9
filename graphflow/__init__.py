"""graphflow: a static-graph, deferred-execution deep-learning framework with TF1 names.

    import graphflow as tf
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(x * 2.0)
    with tf.Session() as sess:
        print(sess.run(y, feed_dict={x: [[1, 2, 3]]}))

This module is the public face: it re-exports each op family's `__all__` under TF1 names.
"""

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
from graphflow.ops.random_ops import *
from graphflow.ops.partition_ops import *
from graphflow.ops.reorder_ops import *
from graphflow.ops.sort_ops import *
from graphflow.ops.state_ops import *
from graphflow.engine.config import ConfigProto, GPUOptions
from graphflow.engine.gradients import UnconnectedGradients, gradients, hessians
from graphflow.engine.session import InteractiveSession, Session
from graphflow.framework.default_session import get_default_session
from graphflow.optimizer_passes import optimize
from graphflow.fileformat.serialization import import_graph, load, save
from graphflow.tf1.clip_ops import clip_by_global_norm, clip_by_norm, global_norm
from graphflow.tf1.init_ops import (constant_initializer, glorot_normal_initializer,
                                    glorot_uniform_initializer, ones_initializer,
                                    orthogonal_initializer,
                                    random_normal_initializer, random_uniform_initializer,
                                    truncated_normal_initializer, variance_scaling_initializer,
                                    zeros_initializer)
from graphflow.tf1.image_utils import random_crop
from graphflow.tf1.moving_averages import moving_average_variables
from graphflow.tf1.variable_scope import (AUTO_REUSE, VariableScope, get_variable, get_variable_scope,
                                          no_regularizer, variable_scope)


__version__ = "0.1.0"

# ---- layers and ops: batch normalization, index ops, einsum, image ops, inference files
from graphflow.ops.index_ops import boolean_mask, gather_nd, scatter_nd, sequence_mask
from graphflow.ops.einsum_ops import einsum
from graphflow.ops.scatter_ops import scatter_add, scatter_sub, scatter_update

# --- TF1 surface: dtype names, strings, devices, contrib, logging, app/flags, file io -------------
from graphflow.framework.dtypes import (complex64, complex128, string, uint16, uint32, uint64)
from graphflow.framework.sparse_tensor import SparseTensor, SparseTensorValue
from graphflow.ops.string_ops import as_string, string_join, string_split, string_to_number
from graphflow.framework.device_spec import DeviceSpec
from graphflow.framework.graph import NodeDef
from graphflow.tf1.legacy_ops import arg_max, arg_min
from graphflow.ops import io_ops as _io_ops
from graphflow.ops.io_ops import read_file, write_file
from graphflow.ops.sparse_ops import sparse_tensor_to_dense, sparse_to_dense
from graphflow.tf1 import gfile as _gfile
from graphflow.tf1.namespace import PublicNamespace as _Namespace
from graphflow.tf1.namespace import not_implemented as _not_implemented
from graphflow.tf1.namespace import register_importable as _register_importable

_IMAGE_DECODERS = ("decode_jpeg", "decode_png", "decode_bmp", "decode_gif", "decode_image")

# Each public module exports only its API: the names its implementation lists in `__all__`.
layers = _Namespace("tf.layers", ["graphflow.tf1.layers"])
losses = _Namespace("tf.losses", ["graphflow.tf1.losses"])
nn = _Namespace("tf.nn", ["graphflow.tf1.nn"])
random = _Namespace("tf.random", ["graphflow.tf1.random"])
_QUEUE_HINT = ("graphflow has no queue runners: build the input pipeline with tf.data "
               "(Dataset.from_tensor_slices(...).shuffle(...).batch(...))")
train = _Namespace("tf.train", ["graphflow.tf1.train"], hints={
    n: _QUEUE_HINT for n in ("string_input_producer", "input_producer", "range_input_producer",
                             "slice_input_producer", "batch", "shuffle_batch", "batch_join",
                             "shuffle_batch_join", "start_queue_runners", "QueueRunner",
                             "Coordinator", "add_queue_runner", "limit_epochs")})
strings = _Namespace("tf.strings", ["graphflow.tf1.strings"])
sparse = _Namespace("tf.sparse", members={"to_dense": sparse_tensor_to_dense,
                                          "SparseTensor": SparseTensor})
config = _Namespace("tf.config", ["graphflow.engine.config"])
errors = _Namespace("tf.errors", ["graphflow.framework.errors"])
viz = _Namespace("tf.viz", ["graphflow.tools.viz"])
logging = _Namespace("tf.logging", ["graphflow.tf1.tf_logging"])
flags = _Namespace("tf.flags", ["graphflow.tf1.flags"])
app = _Namespace("tf.app", ["graphflow.tf1.app"], members={"flags": flags})
gfile = _Namespace("tf.gfile", members={n: getattr(_gfile, n) for n in _gfile.V1_NAMES})
image = _Namespace("tf.image", ["graphflow.tf1.image"],
                   members={n: getattr(_io_ops, n) for n in _IMAGE_DECODERS})
math = _Namespace("tf.math", ["graphflow.tf1.math"])
graph_util = _Namespace("tf.graph_util", ["graphflow.tf1.graph_util"])
io = _Namespace("tf.io", members={
    "gfile": _Namespace("tf.io.gfile", members={n: getattr(_gfile, n) for n in _gfile.V2_NAMES}),
    **{n: getattr(_io_ops, n) for n in ("read_file", "write_file", *_IMAGE_DECODERS)}})

_RNN_CELLS = {"RNNCell": "rnn_cell", "BasicRNNCell": "rnn_cell", "BasicLSTMCell": "rnn_cell",
              "LSTMCell": "rnn_cell", "GRUCell": "rnn_cell", "LSTMStateTuple": "rnn_cell",
              "MultiRNNCell": "rnn_cell_wrappers", "DropoutWrapper": "rnn_cell_wrappers",
              "static_rnn": "rnn", "static_bidirectional_rnn": "rnn"}
contrib = _Namespace("tf.contrib", members={
    "layers": _Namespace("tf.contrib.layers", ["graphflow.tf1.contrib_layers"]),
    "framework": _Namespace("tf.contrib.framework", ["graphflow.tf1.contrib_framework"]),
    "rnn": _Namespace("tf.contrib.rnn", optional={
        n: f"graphflow.tf1.{m}" for n, m in _RNN_CELLS.items()})},
    any_hint="graphflow provides tf.contrib.layers, tf.contrib.rnn and tf.contrib.framework only")
for _name in ("layers", "framework", "rnn"):  # `from tensorflow.contrib import rnn` works too
    _register_importable(getattr(contrib, _name), f"graphflow.contrib.{_name}")
_register_importable(contrib, "graphflow.contrib")


# --- Input pipelines: tf.data (graphflow/tf1/data); queue-based tf.train names are in tf1/train.py
data = _Namespace("tf.data", ["graphflow.tf1.data"])

# --- estimator, metrics, monitored sessions, sampled losses, layer classes (tf.estimator work) ---
metrics = _Namespace("tf.metrics", ["graphflow.tf1.metrics"])
estimator = _Namespace("tf.estimator", ["graphflow.tf1.estimator"], members={
    "inputs": _Namespace("tf.estimator.inputs", ["graphflow.tf1.estimator.inputs"])})


# --- TensorBoard, debugging and profiling: tf.summary, tf.Print/print/debugging, tracing ---
summary = _Namespace("tf.summary", ["graphflow.tf1.summary"])
from graphflow.ops.logging_ops import Assert, Print, add_check_numerics_ops, check_numerics
from graphflow.ops.logging_ops import print_v2 as print
from graphflow.ops.script_ops import numpy_function, py_func
debugging = _Namespace("tf.debugging", ["graphflow.tf1.debugging"])
from graphflow.tf1.debugging import (assert_equal, assert_greater, assert_greater_equal, assert_less,
                                     assert_less_equal, assert_negative, assert_non_negative,
                                     assert_non_positive, assert_none_equal, assert_positive,
                                     assert_rank, assert_type)
from graphflow.engine.tracing import RunMetadata, RunOptions
from graphflow import python
timeline = _Namespace("tf.timeline", ["graphflow.tools.timeline"])

# --- data-parallel training over MPI, also importable as `graphflow.horovod` (Horovod's names)
import sys as _sys

distribute = horovod = _Namespace("tf.distribute", ["graphflow.interop.distribute"])
_sys.modules[__name__ + ".horovod"] = horovod


# --- control flow: functional If/While ops, TensorArray (graphflow/ops/control_flow_ops.py) ---
from graphflow.framework.dtypes import variant
from graphflow.ops.control_flow_ops import case, cond, while_loop
from graphflow.ops.functional_ops import foldl, foldr, map_fn, scan
from graphflow.ops.tensor_array_ops import TensorArray

# recurrent networks: the cells are tf.nn.rnn_cell.*, the rnn functions tf.nn.*_rnn
from graphflow.tf1.rnn import reverse_sequence


def __getattr__(name):
    """Any other `tf.X`: 'graphflow does not implement tf.X (see docs/compat.md)'."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise _not_implemented(f"tf.{name}")


# `tf.tuple` last: from here on the module's `tuple` is TF1's, not the builtin
from graphflow.ops.core_ops import tuple_ as tuple  # noqa: A004, E402
