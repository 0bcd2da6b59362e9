"""`tf.nn`: the neural-network ops under TF1's names (activations, softmax, losses, conv, pooling)."""

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
from graphflow.ops.math_ops import elu, leaky_relu, relu, relu6, selu, sigmoid, softplus, softsign, tanh
from graphflow.ops.nn_ops import (
    batch_normalization,
    bias_add,
    dropout,
    embedding_lookup,
    l2_loss,
    l2_normalize,
    log_softmax,
    moments,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
    weighted_cross_entropy_with_logits,
    xw_plus_b,
)

# recurrent networks: tf.nn.rnn_cell.* and the functions that run a cell along time
from graphflow.tf1 import rnn_cell  # noqa: E402
from graphflow.tf1.rnn import (  # noqa: E402
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)
