"""`tf.contrib.slim`: the TF-Slim names research code of the TF1 era imports as `slim` — the
contrib layers (`slim.conv2d`, `fully_connected`, `max_pool2d`, `batch_norm`, ...), `arg_scope`,
the variable helpers of contrib.framework, contrib's small layers (`dropout` with keep_prob,
`repeat`, `stack`, `one_hot_encoding`, `softmax`), and `slim.losses` (tf.contrib.losses: logits or
predictions first, graphflow/tf1/contrib_losses.py).

`slim.learning.train` (a training loop with queue runners and a supervisor) is not provided: use a
MonitoredTrainingSession or a plain Session loop.
"""

from graphflow.tf1 import contrib_framework, contrib_layers
from graphflow.tf1.arg_scope import add_arg_scope, arg_scope  # noqa: F401
from graphflow.tf1.contrib_framework import *  # noqa: F401,F403
from graphflow.tf1.contrib_layers import *  # noqa: F401,F403

_own = ["arg_scope", "add_arg_scope"]
__all__ = sorted(set(contrib_layers.__all__) | set(contrib_framework.__all__) | set(_own))
