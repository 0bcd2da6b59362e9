"""`tf.contrib.slim`: the TF-Slim names research code of the TF1 era imports as `slim` — the
contrib layers (`slim.conv2d`, `conv2d_transpose`, `separable_conv2d`, `fully_connected`,
`max_pool2d`, `batch_norm`, `instance_norm`, `group_norm`, ...), `arg_scope`, the variable helpers
of contrib.framework, contrib's small layers (`dropout` with keep_prob, `repeat`, `stack`,
`one_hot_encoding`, `softmax`), `optimize_loss` and the activation summaries, `slim.losses`
(tf.contrib.losses: logits or predictions first, graphflow/tf1/contrib_losses.py),
`slim.learning` (`create_train_op` and the Supervisor training loop `train`,
graphflow/tf1/slim_learning.py) and `slim.initializers` (contrib's xavier and variance-scaling
initializers).
"""

from graphflow.tf1 import (
    contrib_framework,
    contrib_layers,
    contrib_layers_conv,
    contrib_layers_norm,
    contrib_optimizers,
    contrib_summaries,
)
from graphflow.tf1.arg_scope import add_arg_scope, arg_scope  # noqa: F401
from graphflow.tf1.contrib_framework import *  # noqa: F401,F403
from graphflow.tf1.contrib_layers import *  # noqa: F401,F403
from graphflow.tf1.contrib_layers_conv import *  # noqa: F401,F403
from graphflow.tf1.contrib_layers_norm import *  # noqa: F401,F403
from graphflow.tf1.contrib_optimizers import *  # noqa: F401,F403
from graphflow.tf1.contrib_summaries import *  # noqa: F401,F403

_own = ["arg_scope", "add_arg_scope"]
__all__ = sorted(set(contrib_layers.__all__) | set(contrib_layers_conv.__all__)
                 | set(contrib_layers_norm.__all__) | set(contrib_optimizers.__all__)
                 | set(contrib_summaries.__all__) | set(contrib_framework.__all__) | set(_own))
