"""`tf.nn`: the neural-network ops under TF1's names (activations, softmax, losses, conv, pooling)."""

from graphflow.ops.candidate_sampling_ops import log_uniform_candidate_sampler, uniform_candidate_sampler
from graphflow.ops.conv3d_ops import (
    avg_pool3d,
    conv3d,
    conv3d_backprop_filter_v2,
    conv3d_transpose,
    max_pool3d,
)
from graphflow.ops.conv_composite_ops import (
    atrous_conv2d,
    depthwise_conv2d,
    depthwise_conv2d_native,
    depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input,
    separable_conv2d,
)
from graphflow.ops.conv_ops import (
    avg_pool,
    avg_pool2d,
    conv1d,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    max_pool,
    max_pool2d,
)
from graphflow.ops.ctc_ops import ctc_beam_search_decoder, ctc_greedy_decoder, ctc_loss
from graphflow.ops.index_ops import in_top_k, top_k
from graphflow.ops.lrn_ops import local_response_normalization, lrn
from graphflow.ops.math_ops import ELEMENTWISE_FUNCTIONS as _ELEMENTWISE
from graphflow.ops.math_ops import NN_FUNCTIONS as _NN_FUNCTIONS
from graphflow.ops.nn_norm_ops import fused_batch_norm
from graphflow.ops.nn_ops import (
    batch_normalization,
    bias_add,
    crelu,
    dropout,
    l2_loss,
    l2_normalize,
    log_softmax,
    moments,
    relu_layer,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
    swish,
    weighted_cross_entropy_with_logits,
    xw_plus_b,
    zero_fraction,
)
from graphflow.ops.pool_argmax_ops import max_pool_with_argmax
from graphflow.ops.reorder_ops import depth_to_space, space_to_depth
from graphflow.tf1.embedding_ops import embedding_lookup
from graphflow.tf1.embedding_sparse import embedding_lookup_sparse, safe_embedding_lookup_sparse
from graphflow.tf1.namespace import PublicNamespace as _PublicNamespace
from graphflow.tf1.nn_sampled import nce_loss, sampled_softmax_loss
from graphflow.tf1.nn_statistics import (
    log_poisson_loss,
    normalize_moments,
    sufficient_statistics,
    weighted_moments,
)
from graphflow.tf1.rnn import (  # recurrent networks: the functions that run a cell along time
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)

rnn_cell = _PublicNamespace("tf.nn.rnn_cell", ["graphflow.tf1.rnn_cell",
                                               "graphflow.tf1.rnn_cell_wrappers"])

# This module only re-exports: every name imported above is public (add an import, and it is in tf.nn).
# the activations of the elementwise table (relu, sigmoid, tanh, leaky_relu, ...)
globals().update({_name: _ELEMENTWISE[_name] for _name in _NN_FUNCTIONS})
__all__ = sorted(name for name in dir() if not name.startswith("_"))
