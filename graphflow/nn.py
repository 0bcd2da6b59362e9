"""`tf.nn`: the neural-network ops under TF1's names (activations, softmax, losses, conv, pooling)."""

from graphflow.ops.math_ops import (elu, leaky_relu, relu, relu6, selu, sigmoid, softplus, softsign,
                                    tanh)
