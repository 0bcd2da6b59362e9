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
from graphflow.framework import errors
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
from graphflow.ops.state_ops import *
from graphflow.engine import config
from graphflow.engine.config import ConfigProto, GPUOptions
from graphflow.engine.gradients import UnconnectedGradients, gradients, hessians
from graphflow.engine.session import InteractiveSession, Session, get_default_session
from graphflow.optimizer_passes import optimize
from graphflow.fileformat.serialization import import_graph, load, save
from graphflow.tf1 import layers, losses, nn, random, train
from graphflow.tf1.clip_ops import clip_by_global_norm, clip_by_norm, global_norm
from graphflow.tf1.init_ops import (constant_initializer, glorot_normal_initializer,
                                    glorot_uniform_initializer, ones_initializer,
                                    random_normal_initializer, random_uniform_initializer,
                                    truncated_normal_initializer, variance_scaling_initializer,
                                    zeros_initializer)
from graphflow.tf1.variable_scope import (AUTO_REUSE, VariableScope, get_variable, get_variable_scope,
                                          no_regularizer, variable_scope)
from graphflow.tools import viz

__version__ = "0.1.0"

# --- control flow: functional If/While ops, TensorArray (graphflow/ops/control_flow_ops.py) ---
from graphflow.framework.dtypes import variant
from graphflow.ops.control_flow_ops import case, cond, while_loop
from graphflow.ops.functional_ops import foldl, foldr, map_fn, scan
from graphflow.ops.tensor_array_ops import TensorArray

# recurrent networks: the cells are tf.nn.rnn_cell.*, the rnn functions tf.nn.*_rnn
from graphflow.tf1.rnn import reverse_sequence  # noqa: E402
